"""The guard cuts each reply once: the episode cuts it, records what it cut, and hands what it kept to
a parse that does not cut again (`parse_cut`); the reading is what `parse`, which cuts, reads of the
same text. Checked over the parser corpus, in each row's mode, through the episode itself."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from react_text import parse
from react_text.core import protocol
from react_text.core.commands import Emit, Replied, Send
from react_text.core.episode import Episode, EpisodeSpec
from react_text.core.types import Reply, Step
from react_text.evaluation.corpus import Case, bundled, load
from react_text.parser import guard
from react_text.parser.baselines import parse_strict
from react_text.parser.reading import parse_cut
from react_text.tools.tool import Tool

CASES = load(bundled())


def _written(case: Case) -> str:
    """The reply as the episode reads it: its thinking apart, after the thought cue in completion mode."""
    visible = guard.split_reasoning(case.text)[1]
    if case.mode == "chat":
        return visible
    return protocol.THOUGHT_CUE + ("" if visible[:1].isspace() else " ") + visible


def _first_step(case: Case, parser: Callable[..., Any] = parse) -> Step:
    tools = tuple(Tool(name, "A tool.", lambda: "", risky=True) for name in case.tools)  # declined: never run
    api = "chat" if case.mode == "chat" else "completion"
    spec = EpisodeSpec("You answer.", count=len, api=api, tools=tools, parser=parser)
    episode = Episode(spec, "the task")
    command = episode.start()
    assert isinstance(command, Send)
    # Cut at its allowance, so that a stop inside its thinking is not asked to go on.
    command = episode.send(Replied(Reply(case.text, finish_reason="length"), 0.0))
    assert isinstance(command, Emit)
    return command.step


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_a_reply_cut_once_reads_as_parse_reads_it(case: Case) -> None:
    kept = guard.cut(_written(case)).kept
    assert parse_cut(kept, tools=case.tools) == parse(kept, tools=case.tools)
    assert parse_cut(kept, strict=True, tools=case.tools) == parse_strict(kept, tools=case.tools)


@pytest.mark.parametrize("case", CASES[::7], ids=[c.id for c in CASES[::7]])
def test_the_episode_cuts_each_reply_once_and_reads_what_parse_reads(
    case: Case, monkeypatch: pytest.MonkeyPatch
) -> None:
    cuts: list[str] = []
    real = guard.cut

    def counted(text: str) -> guard.Cut:
        cuts.append(text)
        return real(text)

    monkeypatch.setattr(guard, "cut", counted)
    step = _first_step(case)
    assert cuts == [_written(case)]  # once, on the reply as read
    monkeypatch.setattr(guard, "cut", real)
    whole = real(_written(case))
    assert step.cut == whole.dropped
    assert step.parsed == parse(whole.kept, tools=case.tools)


def test_a_parser_of_the_users_own_is_handed_the_cut_reply() -> None:
    seen: list[str] = []

    def mine(text: str, *, tools: Any = ()) -> Any:
        seen.append(text)
        return parse(text, tools=tools)

    case = Case("x", "x", "x", "chat", "ACTION: add[2, 3]\nOBSERVATION: 5\nFINAL: 5", parse("FINAL: 5"))
    step = _first_step(case, mine)
    assert seen == ["ACTION: add[2, 3]\n"]
    assert step.cut == "OBSERVATION: 5\nFINAL: 5"
