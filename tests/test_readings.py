"""Every reading is what main's parser read before the fast paths of issue 34 (tests/data/readings.json),
and the fast paths read as the full reading does on generated replies."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st
from readings import FIXTURE, digest, key, replies

from react_text.core.types import Action, Final
from react_text.parser import parse
from react_text.parser.common import tool_names
from react_text.parser.reading import _read, parse_cut, parse_full


def test_every_reply_reads_as_it_read_before() -> None:
    frozen = json.loads(FIXTURE.read_text(encoding="utf-8"))
    changed = []
    checked = 0
    for text, tools in replies():
        was = frozen.get(key(text, tools))  # a reply added to a corpus or the bench since is not in it
        checked += was is not None
        if was is not None and was != digest(parse(text, tools=tools)):
            changed.append((text, tools))
    assert not changed, f"{len(changed)} replies read differently, the first: {changed[:3]!r}"
    assert checked > 6500


def test_the_fast_paths_make_readings_as_their_classes_do() -> None:
    # fast.py sets the fields of Action and Final without their __init__: nothing else may run there.
    assert not hasattr(Action, "__post_init__")
    assert not hasattr(Final, "__post_init__")
    quick = parse("THOUGHT: x\nACTION: lookup[y]")
    assert quick == Action("lookup", "y", "x")
    assert hash(quick) == hash(Action("lookup", "y", "x"))
    assert parse("FINAL: 3") == Final("3")


def test_the_fast_paths_read_as_the_full_reading_on_every_reply() -> None:
    for text, tools in replies():
        assert parse(text, tools=tools) == parse_full(text, tools=tools), (text, tools)


_PIECES = st.sampled_from(
    [*"abcXYZ 019.,?!-+*_'\"()/éü加:[]`\t\xa0<>{}#~\\|=\n", "Obs", "observation", "ACTION: ", "FINAL:", "```",
     "Thought:", "**", "Action Input:", "Final Answer:", "<think>", "</think>", "code", "Answer:", "\n\n", "AI:",
     "Observation:", "OBSERVATION: ", "Action: ", "lookup[", "add(", "[TOOL_CALLS]", "Code:", "<tool_call>"]
)  # fmt: skip
_LABELS = st.sampled_from(["THOUGHT: ", "Thought: ", "**Thought:** ", "thought: ", "", "Thought:", "THOUGHT:\t"])
_CALLS = st.sampled_from(
    ["ACTION: {t}[{v}]", "Action: {t}[{v}]", "**Action:** {t}[{v}]", "Action: {t}\nAction Input: {v}",
     "FINAL: {v}", "Final Answer: {v}", "**Final Answer:** {v}", "Action: {t}\nAction Input: {v}\n"]
)  # fmt: skip


@given(
    lead=st.sampled_from(["", "\n", " ", "<think>\nhm\n</think>\n", "<think></think>", "<think>x:[</think>\n\n"]),
    label=_LABELS,
    thought=st.lists(_PIECES, max_size=10).map("".join),
    call=_CALLS,
    tool=st.sampled_from(["lookup", "Lookup", "add", "Finish", "final_answer", "none", "web", "天气", "x.y", "_"]),
    value=st.lists(_PIECES, max_size=10).map("".join),
    tail=st.lists(_PIECES, max_size=6).map("".join),
    tools=st.sampled_from([(), ("lookup",), ("lookup", "add"), ("LOOKUP",), ("look",), ("finish",)]),
)
@settings(max_examples=3000, deadline=None)
def test_the_fast_paths_read_as_the_full_reading(
    lead: str, label: str, thought: str, call: str, tool: str, value: str, tail: str, tools: tuple[str, ...]
) -> None:
    text = f"{lead}{label}{thought}\n{call.format(t=tool, v=value)}{tail}"
    assert parse(text, tools=tools) == parse_full(text, tools=tools)
    crlf = text.replace("\n", "\r\n")
    assert parse(crlf, tools=tools) == parse_full(crlf, tools=tools)
    # A reply the guard has cut already: the fast paths read no made-up observation as one then.
    names = tool_names(tools) if tools else None
    full = _read(text, False, names, cut=False, fast=False, crlf_fast=False)
    assert parse_cut(text, tools=tools) == full


_JSON_PIECES = st.sampled_from(
    [*'ab :\n\t"{}[]()<>#`~*_', "Action: ", "Observation: ", "code", "http://x", "FINAL", "ACTION", "：", "\r\n", "obs"]
)


@given(
    members=st.lists(
        st.tuples(
            st.sampled_from(["action", "Action", "tool", "name", "action_input", "input", "args", "answer", "x y"]),
            st.one_of(st.lists(_JSON_PIECES, max_size=8).map("".join), st.integers(), st.none(), st.just({"a": 1})),
        ),
        max_size=4,
    ),
    indent=st.sampled_from([None, 2, "\t"]),
    wrap=st.sampled_from(["{}", "```json\n{}\n```", "```\n{}\n```", "  {}\n", "{}\nmore", "<think>x</think>{}"]),
    tools=st.sampled_from([(), ("lookup",), ("Action",)]),
)
@settings(max_examples=1500, deadline=None)
def test_the_fast_paths_read_blobs_as_the_full_reading(
    members: list[tuple[str, object]], indent: int | str | None, wrap: str, tools: tuple[str, ...]
) -> None:
    text = wrap.replace("{}", json.dumps(dict(members), indent=indent, ensure_ascii=False))
    assert parse(text, tools=tools) == parse_full(text, tools=tools)


def test_the_fast_paths_read_indented_labels_as_the_full_reading() -> None:
    # A line label may have at most 12 characters of decoration before it (`protocol.DECOR`): spaces
    # and tabs, and a bold label's "**" counts among them.
    for indent in ["", " ", "\t", " \t"]:
        for size in range(0, 16):
            lead = (indent * size)[:size] if indent else ""
            for thought, directive in [
                ("THOUGHT: a", "ACTION: lookup[x]"),
                ("Thought: a", "Action: lookup\nAction Input: x"),
                ("**Thought:** a", "**Action:** lookup[x]"),
                ("**Thought:** a", "**Final Answer:** 3"),
                ("THOUGHT: a", "FINAL: 3\n\nchatter here"),
                ("Thought: a", "Action: lookup[x]\nObservation: 1"),
            ]:
                for text in (
                    f"{lead}{thought}\n{lead}{directive}",
                    f"{thought}\n{lead}{directive}",
                    f"{lead}{thought}",
                ):
                    assert parse(text) == parse_full(text), text
                    assert parse(text, tools=("lookup",)) == parse_full(text, tools=("lookup",)), text
