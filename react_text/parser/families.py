"""The reply families read apart from the labels: markup calls, code actions and unlabelled calls.

`first(text, labels, names)` finds where the first of them starts and reads it there when nothing
labelled comes first: a reply whose call opens before its first action or answer label is that
call, even when its arguments hold label words ("<parameter=x>FINAL: draft</parameter>",
`write_note(text="ACTION: file it")`); a reply whose label comes first is read by its labels. What
`first` found is also returned when the labels win, so an answer section ends where a call opens
on a later line ("FINAL: sunny\\n<tool_call>...": the answer is "sunny").

Where a family may start (each found by `str.find`, never by a searched pattern):
- a markup token (`markup.TOKENS`) anywhere on a line, unless the line opens with a label
  ("Thought: a call looks like <function=name>..." quotes it);
- a code action (`code`) at a line start;
- a call alone on its line, or a call list, at a line start (`calls`): only the first bracket of a
  line can open one, and at most `_LINES` such lines are looked at.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from react_text.core.types import Parsed
from react_text.parser import calls, code, markup
from react_text.parser.common import Names
from react_text.parser.labels import Labels, label_kind

__all__ = ["Found", "first"]

_LINES = 32  # lines with a bracket looked at for a call at their start
_CODE_TRIES = 16  # occurrences of "ode" looked at for a `Code:` label
_INDENT = re.compile(r"[ \t]*+")
_NAME = re.compile(r"[A-Za-z_][\w.\-]{0,63}+")  # all that comes before a call's bracket
_LABELLED = re.compile(r"[ \t>#*_\-]{0,12}+[^\W\d][\w \t\-]{0,30}+[:：]")  # a label opens the line

Reader = Callable[[str, int, str, "Names | None"], "Parsed | None"]


@dataclass(frozen=True, slots=True)
class Found:
    parsed: Parsed | None  # the call read, when nothing labelled came before it
    start: int  # where the first call that reads starts on a line of its own (len(text) if none)


def first(text: str, labels: Labels, names: Names | None) -> Found:
    starts = sorted(_starts(text, names), key=_position)
    if not starts:
        return Found(None, len(text))
    directive = labels.next_directive(0)
    limit = directive.start() if directive is not None else len(text)
    for at, reader, alone in starts:
        parsed = reader(text, at, _thought(text, at, labels), names)
        if parsed is None:
            continue
        if at < limit:
            return Found(parsed, at)
        if alone:  # after a label: where the label's section ends at the latest
            return Found(None, at)
    return Found(None, len(text))


def _starts(text: str, names: Names | None) -> list[tuple[int, Reader, bool]]:
    """(where, its reader, whether it opens its line) for the first start of each family."""
    found: list[tuple[int, Reader, bool]] = []
    token = markup.find(text, 0, len(text)) if "<" in text or "[TOOL_CALLS]" in text else None
    while token is not None:
        at, name = token
        line = text.rfind("\n", 0, at) + 1
        alone = not text[line:at].strip()
        if alone or _LABELLED.match(text, line, at) is None:
            found.append((at, _markup(name), alone))
            break
        token = markup.find(text, text.find("\n", at) + 1 or len(text), len(text))
    at_code = _code(text)
    if at_code is not None:
        found.append((at_code, code.code_action, True))
    found.extend(_line_calls(text, names))
    return found


def _markup(token: str) -> Reader:
    def read(text: str, at: int, thought: str, names: Names | None) -> Parsed | None:
        return markup.read(text, at, token, thought, names)

    return read


def _code(text: str) -> int | None:
    """Where the first code action begins (its `Code:` label's line, its fence or <code> tag), or None."""
    best: int | None = None
    pos = 0
    for _ in range(_CODE_TRIES if "ode" in text else 0):
        at = text.find("ode", pos)
        if at < 1:
            break
        pos = at + 3
        line = text.rfind("\n", 0, at) + 1
        if code.code_start(text, line) is not None:
            best = line
            break
    for tag in ("<code>", "<end_code>") if "code>" in text else ():
        at = text.find(tag)
        if at == -1:
            continue
        if tag == "<end_code>":  # the fence that the closing before it closes
            opener = text.rfind("```", 0, max(0, at - 4))
            at = text.rfind("\n", 0, opener) + 1 if opener != -1 else -1
        line = text.rfind("\n", 0, at) + 1 if at != -1 else -1
        if at != -1 and not text[line:at].strip() and code.code_start(text, at) is not None:
            best = at if best is None else min(best, at)
    return best


def _line_calls(text: str, names: Names | None) -> list[tuple[int, Reader, bool]]:
    """The first line that opens with a call alone on it or a call list (the first bracket of each
    line with one, at most _LINES of them, whose line has nothing but a name before it), or the
    rest of a call list (", f(x=1)]") that opens the text."""
    begins = _indent_end(text, 0)
    if text.startswith(",", begins):
        return [(begins, calls.call_list, True)]
    end = len(text)
    pos, square, round_ = 0, -1, -1
    for _ in range(_LINES):
        if square < pos and square != end:
            square = text.find("[", pos) % (end + 1)  # -1 (none) becomes `end`
        if round_ < pos and round_ != end:
            round_ = text.find("(", pos) % (end + 1)
        bracket = square if square < round_ else round_
        if bracket == end:
            return []
        line = text.rfind("\n", 0, bracket) + 1
        begins = _indent_end(text, line)
        if begins == bracket and text[bracket] == "[":
            return [(begins, calls.call_list, True)]
        if begins < bracket and _NAME.fullmatch(text, begins, bracket) is not None:
            return [(begins, _line_call, True)]
        line_end = text.find("\n", bracket)
        if line_end == -1:
            return []
        pos = line_end + 1
    return []


def _indent_end(text: str, line: int) -> int:
    m = _INDENT.match(text, line)
    return m.end() if m is not None else line


def _line_call(text: str, at: int, thought: str, names: Names | None) -> Parsed | None:
    return calls.line_call(text, at, thought, names) or calls.call_list(text, at, thought, names)


def _thought(text: str, at: int, labels: Labels) -> str:
    """The text before the call, without a thought label that opens it."""
    label = labels.next(0)
    if label is not None and label.start() < at and label_kind(label) == "thought":
        return text[label.end() : at].strip()
    return text[:at].strip()


def _position(start: tuple[int, Reader, bool]) -> int:
    return start[0]
