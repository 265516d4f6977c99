"""The streaming reader (react_text/parser/stream.py): whatever the chunking of a reply into deltas,
it comes to the same events, and to the episode's own reading of the whole reply.

The oracle is `read_reply` run on the complete text (the guard and the parser as the episode runs
them), never the reader's own bookkeeping; and, independently of both, the text released at every
point must be a prefix of what the guard keeps of the whole reply (a made-up observation is never
released, however it is split).
"""

from __future__ import annotations

import itertools
import json
import time
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from pumping import cases

from react_text.core.types import Action, Actions, Reply
from react_text.parser import guard
from react_text.parser import stream as stream_module
from react_text.parser.stream import (
    ActionRead,
    Delta,
    Reader,
    Revised,
    Streamed,
    StreamEvent,
    StreamReader,
    joined,
    read_reply,
)

DATA = Path(__file__).resolve().parent / "data"
TOOLS = ("add", "lookup", "search", "calculator", "weather", "fx", "python")


def _corpus() -> list[tuple[str, str, str]]:
    rows = []
    for name in ("replies.jsonl", "unseen.jsonl"):
        for line in (DATA / name).read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                rows.append((row["id"], row.get("mode", "chat"), row["text"]))
    return rows


CORPUS = _corpus()


def stream(text: str, cuts: list[int], reader: Reader, reasoning: str | None = None) -> tuple[StreamEvent, ...]:
    """The events of `text` fed in pieces split at `cuts`, with a check at every step: the visible
    text released so far is a prefix of what the guard keeps of the whole reply."""
    kept = guard.cut(guard.split_reasoning(text)[1]).kept
    state = StreamReader(reader)
    events: list[StreamEvent] = []
    if reasoning:
        state, made = state.feed(reasoning, reasoning=True)
        events.extend(made)
    bounds = [0, *sorted({c for c in cuts if 0 < c < len(text)}), len(text)]
    for start, end in itertools.pairwise(bounds):
        state, made = state.feed(text[start:end])
        events.extend(made)
        if not lone_close(text):
            released = "".join(e.text for e in events if isinstance(e, Delta) and e.kind != "thinking")
            assert kept.startswith(released), (released, kept)
    events.extend(state.finish(Reply(text, reasoning=reasoning)))
    return tuple(events)


def expected(text: str, reader: Reader, reasoning: str | None = None) -> tuple[str, str, tuple[Action, ...]]:
    read = read_reply(text, reasoning, reader)
    parsed = read.parsed
    actions = parsed.actions if isinstance(parsed, Actions) else (parsed,) if isinstance(parsed, Action) else ()
    return read.reasoning, read.cut.kept, actions


def summary(streamed: Streamed) -> tuple[str, str, tuple[Action, ...]]:
    return streamed.thinking, "".join(d.text for d in streamed.visible), tuple(a.action for a in streamed.actions)


def lone_close(text: str) -> bool:
    """Whether the reply holds a `</think>` with no `<think>` before it (its earlier text is thinking)."""
    close = text.find("</think>")
    return close != -1 and text.find("<think>", 0, close) == -1


def check(text: str, cuts: list[int], reader: Reader, reasoning: str | None = None) -> None:
    whole = stream(text, [], reader, reasoning)
    pieces = stream(text, cuts, reader, reasoning)
    assert summary(joined(pieces)) == expected(text, reader, reasoning)
    assert joined(pieces) == joined(whole)
    if not lone_close(text):
        assert not any(isinstance(e, Revised) for e in pieces)


@pytest.mark.parametrize(("id_", "mode", "text"), CORPUS, ids=[r[0] for r in CORPUS])
def test_every_chunking_of_a_recorded_reply_comes_to_its_reading(id_: str, mode: str, text: str) -> None:
    for parallel in (False, True):
        reader = Reader(chat=mode != "completion", tools=TOOLS, parallel=parallel)
        sizes = (1, 4) if len(text) <= 600 else (7, 31)
        for size in sizes:
            check(text, list(range(size, len(text), size)), reader)


_FRAGMENTS = st.sampled_from(
    [
        "THOUGHT:",
        "ACTION:",
        "FINAL:",
        "OBSERVATION:",
        "Observation",
        "OBSERVATION 2:",
        "Obs",
        "**Observation:**",
        "[OBSERVATION]",
        "Tool Output:",
        "<think>",
        "</think>",
        "<th",
        "add[2, 3]",
        "add[",
        "]",
        "[",
        "(",
        ")",
        "\n",
        " ",
        "  ",
        "**",
        "### ",
        "- ",
        "> ",
        "：",
        ":",
        "Final Answer:",
        "Action:",
        "Action Input:",
        "```",
        "the sum is 5",
        "I think",
        "Paris",
        "O",
        "1",
        "{",
        '"action": "add"',
        "}",
    ]
)


@settings(max_examples=300, deadline=None)
@given(
    parts=st.lists(_FRAGMENTS, max_size=24),
    cuts=st.lists(st.integers(min_value=1, max_value=400), max_size=40),
    chat=st.booleans(),
    parallel=st.booleans(),
)
@example(parts=["ACTION:", " ", "add[2, 3]", "\n", "OBSERVATION:", " 5"], cuts=[22, 27], chat=True, parallel=False)
@example(parts=["THOUGHT:", " ", "I think", "</think>", "FINAL:", "Paris"], cuts=[3, 12], chat=True, parallel=False)
# a lone </think> in a later delta than the start of the line it ends: the label after it is read
# afresh (once read as the rest of a thought line "Obs..." that was never released)
@example(parts=["Obs", "THOUGHT:", "</think>", "THOUGHT:"], cuts=[3], chat=True, parallel=True)
def test_every_chunking_of_any_reply_comes_to_the_same_events(
    parts: list[str], cuts: list[int], chat: bool, parallel: bool
) -> None:
    check("".join(parts), cuts, Reader(chat=chat, tools=TOOLS, parallel=parallel))


@settings(max_examples=100, deadline=None)
@given(
    reasoning=st.text(alphabet="ab \n<>/thinkTHOUGHT:", max_size=30),
    parts=st.lists(_FRAGMENTS, max_size=12),
    cuts=st.lists(st.integers(min_value=1, max_value=200), max_size=20),
)
def test_the_servers_reasoning_channel_streams_as_thinking(reasoning: str, parts: list[str], cuts: list[int]) -> None:
    text = "".join(parts)
    if "<think>" in text or "</think>" in text:  # inline thinking after the server's: the step joins them
        text = text.replace("<think>", "").replace("</think>", "")
    check(text, cuts, Reader(tools=TOOLS), reasoning or None)


def test_a_label_split_across_deltas_is_recognised_and_never_released() -> None:
    text = "THOUGHT: add them\nACTION: add[2, 3]\nOBSER" + "VATION: 5\nFINAL: 5"
    state = StreamReader(Reader(tools=TOOLS))
    state, first = state.feed("THOUGHT: add them\nACTION: add[2, 3]\nOBSER")
    assert [e for e in first if isinstance(e, ActionRead)] == []  # not yet certain the reply ends here
    assert "OBSER" not in "".join(e.text for e in first if isinstance(e, Delta))
    state, second = state.feed("VATION: 5\nFINAL: 5")
    # the line break before the label was held with it; the action is known before the reply ends
    assert second == (Delta("action", "\n"), ActionRead(0, Action("add", "2, 3", "add them", "\n")))
    assert state.finish(Reply(text)) == ()


def test_thought_and_answer_are_released_as_they_come() -> None:
    text = "<think>first the sum</think>\nTHOUGHT: I know it now\nFINAL: the answer is 5"
    state = StreamReader(Reader())
    released: list[str] = []
    for char in text:
        state, made = state.feed(char)
        released.extend(f"{e.kind}:{e.text}" for e in made if isinstance(e, Delta))
        if char == "5":
            break
    kinds = {r.split(":", 1)[0] for r in released}
    assert kinds == {"thinking", "thought", "label", "answer"}
    answer = "".join(r.split(":", 1)[1] for r in released if r.startswith("answer:"))
    assert answer == " the answer is 5"  # all of it before finish: nothing held back but a label's start


def test_thinking_is_never_parsed() -> None:
    text = "<think>ACTION: add[1, 1]\nFINAL: 2</think>\nTHOUGHT: no\nACTION: add[2, 3]"
    events = stream(text, list(range(1, len(text))), Reader(tools=TOOLS))
    streamed = joined(events)
    assert streamed.thinking == "ACTION: add[1, 1]\nFINAL: 2"
    assert [a.action.input for a in streamed.actions] == ["2, 3"]
    assert all(d.kind != "answer" for d in streamed.visible)


def test_thinking_opened_by_the_prompt_streams_as_thinking() -> None:
    text = "the user wants a sum</think>\nTHOUGHT: add\nACTION: add[2, 3]"
    events = stream(text, list(range(1, len(text))), Reader(tools=TOOLS))
    assert not any(isinstance(e, Revised) for e in events)
    assert events[0] == Delta("thinking", "the user wants a sum")  # nothing visible before the close
    assert joined(events).thinking == "the user wants a sum"


def test_a_lone_close_after_a_label_revises_what_was_released() -> None:
    text = "THOUGHT: the user wants a sum</think>\nFINAL: 5"
    events = stream(text, list(range(1, len(text))), Reader(tools=TOOLS))
    assert sum(isinstance(e, Revised) for e in events) == 1
    assert summary(joined(events)) == expected(text, Reader(tools=TOOLS))


def test_a_delta_is_text() -> None:
    with pytest.raises(TypeError, match="delta is text"):
        StreamReader().feed(b"ACTION")  # type: ignore[arg-type]


def _cpu(run: object, text: str) -> float:
    best = float("inf")
    for _ in range(2):
        start = time.process_time()
        run(text)  # type: ignore[operator]
        best = min(best, time.process_time() - start)
    return best


_PATTERNS = {
    "line_rest": stream_module._LINE_REST,
    "inline_rest": stream_module._INLINE_REST,
    "section_label": stream_module._SECTION_LABEL,
    "separators": stream_module._SEPARATORS,
}


@pytest.mark.parametrize("name", sorted(_PATTERNS))
def test_pumped_reader_patterns_cost_linear_time(name: str) -> None:
    pattern = _PATTERNS[name]
    for case in cases(pattern.pattern, pattern.flags):
        for run in (pattern.match, pattern.search):
            small, big = _cpu(run, case.build(10_000)), _cpu(run, case.build(100_000))
            assert big < 1.0 and big < 30 * max(small, 2e-4), f"{name} {case.name}: {small:.4f}s, then {big:.4f}s"
