"""Metamorphic tests: rewrites of every corpus reply that must not change how it reads.

For each case of the corpus (tests/data/replies.jsonl, and tests/data/unseen.jsonl and
tests/data/families.jsonl when present),
each transformation below is applied to what the model wrote (in completion mode, to the text after
the prompt's THOUGHT: cue, which is then put back). The transformed reply must read as the original
does: the same kind, tool and input or answer; an error stays an error (any reason).

The transformations are honest: they touch labels only where a label is (a label word at a line
start, before its colon), never the text of an input or an answer. Where one legitimately cannot
apply, a stated rule skips the case (`Skip`), computed from the case, never a hand list.
CRLF line ends change an input that spans lines, so inputs and answers are compared with line
ends normalised to "\\n" for that transformation (and only that one).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from react_text.evaluation.corpus import Case, load, reading
from react_text.parser import parse

DATA = Path(__file__).resolve().parent / "data"
CORPUS = [
    case
    for name in ("replies.jsonl", "unseen.jsonl", "families.jsonl")
    if (DATA / name).exists()
    for case in load(DATA / name)
]

# The label words as replies write them, longest first (so "Action Input" is one label, not "Action").
_WORDS = (
    "Final Answer", "Action Input", "Tool Input", "Tool Name", "Function Name", "Function Input",
    "Thought", "Action", "Final", "Answer", "Tool",
)  # fmt: skip
# A label at a line start: indentation, the word (any case), an optional step number, the colon.
_LABEL = re.compile(
    r"(?im)^(?P<indent>[ \t]{0,8})(?P<word>" + "|".join(w.replace(" ", "[ _]") for w in _WORDS) + r")"
    r"(?P<number>[ \t]?\d{1,3})?(?P<colon>[ \t]?[:：])"
)
_THINK = "<think>\nLet me work out the next step first.\n</think>\n"


class Skip(Exception):
    """The transformation does not apply to this case, for the reason given."""


def _labels(text: str) -> list[re.Match[str]]:
    return list(_LABEL.finditer(text))


def _written(parsed: dict[str, str]) -> str:
    return parsed.get("input", parsed.get("answer", ""))


def _texts(written: str) -> list[str]:
    """The input as written, and, when it is a JSON object (a markup call's parameters), the text
    of each of its string values: a label at a line start in one is a label in what was written."""
    texts = [written]
    try:
        decoded = json.loads(written)
    except ValueError:
        return texts
    if isinstance(decoded, dict):
        texts.extend(v for v in decoded.values() if isinstance(v, str))
    return texts


def _relabel(case: Case, change: Callable[[re.Match[str]], str]) -> str:
    """The reply with each label at a line start rewritten by `change`.

    Skips a case whose input or answer itself holds a label at a line start (rewriting it would
    change what was written), and a case with no label at a line start (nothing to rewrite).
    """
    original = reading(parse(case.sent, tools=case.tools))
    if any(_LABEL.search(text) for text in _texts(_written(original))):
        raise Skip("its input or answer holds a label at a line start")
    if not _labels(case.text):
        raise Skip("no label at a line start")
    return _LABEL.sub(change, case.text)


def _cased(how: Callable[[str], str]) -> Callable[[Case], str]:
    def transform(case: Case) -> str:
        return _relabel(case, lambda m: m["indent"] + how(m["word"]) + (m["number"] or "") + m["colon"])

    return transform


def _bold(case: Case) -> str:
    return _relabel(case, lambda m: f"{m['indent']}**{m['word']}{m['number'] or ''}:**")


def _heading(case: Case) -> str:
    return _relabel(case, lambda m: f"### {m['word']}{m['number'] or ''}:")


def _full_width(case: Case) -> str:
    return _relabel(case, lambda m: m["indent"] + m["word"] + (m["number"] or "") + "：")


def _crlf(case: Case) -> str:
    if "\n" not in case.text:
        raise Skip("a single line")
    return case.text.replace("\r\n", "\n").replace("\n", "\r\n")


def _spaced(case: Case) -> str:
    return " \n\n  " + case.text + "  \n\n "


def _thinking_first(case: Case) -> str:
    if "<think>" in case.text or "</think>" in case.text:
        raise Skip("it has think tags of its own, which a block before it would pair with")
    return _THINK + case.text


def _fenced(case: Case) -> str:
    if case.mode == "completion":
        raise Skip("a completion continues the prompt's THOUGHT: line, where no fence can open")
    longest = max((len(run) for run in re.findall(r"`+", case.text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{case.text}\n{fence}"


@dataclass(frozen=True)
class Transformation:
    name: str
    apply: Callable[[Case], str]
    at_least: int  # cases it must change (a little under the count today), so no skip rule can hollow it out
    line_ends: bool = False  # compare inputs and answers with line ends normalised


TRANSFORMATIONS = [
    Transformation("upper-case labels", _cased(str.upper), 100),
    Transformation("title-case labels", _cased(str.title), 200),
    Transformation("lower-case labels", _cased(str.lower), 290),
    Transformation("bold labels", _bold, 290),
    Transformation("heading labels", _heading, 290),
    Transformation("full-width colons", _full_width, 290),
    Transformation("CRLF line ends", _crlf, 290, line_ends=True),
    Transformation("leading and trailing whitespace", _spaced, 370),
    Transformation("a think block first", _thinking_first, 350),
    Transformation("a fence around the reply", _fenced, 240),
]


def _comparable(parsed: dict[str, str], line_ends: bool) -> dict[str, str]:
    if parsed["kind"] == "error":
        return {"kind": "error"}
    if not line_ends:
        return parsed
    return {k: v.replace("\r\n", "\n") for k, v in parsed.items()}


def _sent(case: Case, text: str) -> str:
    return "THOUGHT:" + text if case.mode == "completion" else text


@pytest.mark.parametrize("transformation", TRANSFORMATIONS, ids=lambda t: t.name)
def test_a_rewritten_reply_reads_as_the_original(transformation: Transformation) -> None:
    applied = 0
    wrong = []
    for case in CORPUS:
        try:
            text = transformation.apply(case)
        except Skip:
            continue
        if text == case.text:
            continue  # already written that way (its labels already upper case, say)
        applied += 1
        want = _comparable(reading(parse(case.sent, tools=case.tools)), transformation.line_ends)
        got = _comparable(reading(parse(_sent(case, text), tools=case.tools)), transformation.line_ends)
        if got != want:
            wrong.append(f"{case.id}: {text!r}\n    read {got}\n    not  {want}")
    assert not wrong, f"{len(wrong)} of {applied} read differently:\n" + "\n".join(wrong[:20])
    assert applied >= transformation.at_least


def test_the_label_rewrites_touch_labels_and_nothing_else() -> None:
    reply = "Thought: I need the price.\nAction: lookup\nAction Input: the Action: train\nThe End"
    case = Case("x", "c", "s", "chat", reply, {})
    assert (
        _cased(str.upper)(case)
        == "THOUGHT: I need the price.\nACTION: lookup\nACTION INPUT: the Action: train\nThe End"
    )
    assert _bold(case).splitlines()[:2] == ["**Thought:** I need the price.", "**Action:** lookup"]
    assert _heading(case).splitlines()[2] == "### Action Input: the Action: train"
    assert _full_width(case).splitlines()[0] == "Thought： I need the price."


def test_a_case_whose_input_holds_a_label_is_skipped_by_the_rule() -> None:
    case = Case("x", "c", "s", "chat", "ACTION: python[```\nprint(1)\nAction: no\n```]", {})
    with pytest.raises(Skip):
        _cased(str.lower)(case)
