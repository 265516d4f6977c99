"""attack2: hand-edited and damaged traces through `replay` and `run --script` (docs/how-to/traces.md)."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

Events = list[Any]


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "react_text.cli", *args], capture_output=True, text=True, cwd=cwd, timeout=120
    )


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Events]:
    folder = tmp_path_factory.mktemp("trace")
    (folder / "mytools.py").write_text(
        'def shout(text: str) -> str:\n    """Say it louder."""\n    return text.upper() + "!"\n'
    )
    (folder / "r.txt").write_text("THOUGHT: t\nACTION: shout[a]\n---\nACTION: calculator[2+2]\n---\nFINAL: A!\n")
    done = _cli(
        "run",
        "--tools",
        "./mytools.py",
        "--script",
        "r.txt",
        "--trace",
        "base.jsonl",
        "--max-tokens",
        "5000",
        "Shout.",
        cwd=folder,
    )
    assert done.returncode == 0, done.stderr
    return folder, [json.loads(line) for line in (folder / "base.jsonl").read_text().splitlines()]


def _set(kind: str, key: str, value: object) -> Callable[[Events], Events]:
    def edit(events: Events) -> Events:
        for event in events:
            if event["event"] == kind:
                event[key] = value
        return events

    return edit


def _limits(key: str, value: object) -> Callable[[Events], Events]:
    def edit(events: Events) -> Events:
        events[0]["limits"][key] = value
        return events

    return edit


EDITS: dict[str, Callable[[Events], Events]] = {
    "a step before its request": lambda e: [e[0], e[3], e[2], e[1], *e[4:]],
    "run_start twice": lambda e: [e[0], *e],
    "no run_start": lambda e: e[1:],
    "run_end first": lambda e: [e[0], e[-1], *e[1:-1]],
    "an unknown event kind": lambda e: [*e[:2], {"event": "mystery", "x": 1}, *e[2:]],
    "a line that is an array": lambda e: [*e[:2], [1, 2], *e[2:]],
    "an event name that is a number": lambda e: [e[0], {**e[1], "event": 3}, *e[2:]],
    "limits.steps a word": _limits("steps", "ten"),
    "limits.steps 0": _limits("steps", 0),
    "limits.tokens negative": _limits("tokens", -5),
    "limits.actions 0": _limits("actions", 0),
    "limits unknown field": _limits("speed", 3),
    "reply text a huge number": _set("reply", "text", 10**40),
    "reply text an object": _set("reply", "text", {"a": [1]}),
    "reply usage negative": _set("reply", "usage", {"prompt_tokens": -1, "completion_tokens": -1}),
    "task null": lambda e: [{**e[0], "task": None}, *e[1:]],
    "tools module gone": lambda e: [
        {**e[0], "sources": {**e[0]["sources"], "modules": ["/nonexistent/nope.py"]}},
        *e[1:],
    ],
    "a future version": lambda e: [{**e[0], "react_text": "99.0"}, *e[1:]],
    "the last line cut": lambda e: e,  # cut as text below
}


# traces.md: "a hand-edited or damaged trace is one line naming the line and the field ..., exit 2,
# for `replay` and `run --script` alike"; guarantees.md: "... refused ... in one line ... exit status
# 2, never a traceback" (or played).
@pytest.mark.parametrize("command", ["replay", "run"])
@pytest.mark.parametrize("name", sorted(EDITS))
def test_a_hand_edited_trace_is_played_or_refused_in_one_line(
    recorded: tuple[Path, Events], name: str, command: str
) -> None:
    folder, events = recorded
    edited = EDITS[name](copy.deepcopy(events))
    text = "".join(json.dumps(event) + "\n" for event in edited)
    if name == "the last line cut":
        text = text[:-25]
    path = folder / f"edited-{abs(hash(name))}.jsonl"
    path.write_text(text)
    args = ("replay", path.name) if command == "replay" else ("run", "--script", path.name)
    done = _cli(*args, cwd=folder)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode in (0, 1, 2)
    if done.returncode == 2:
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr
        assert done.stderr.startswith("react-text: ")


# traces.md: "the task, the tools and every setting can be changed by giving its flag
# (`--max-steps 3` ...)"; cli.md: "The exit status is 0 when the run ended with a final answer, 1
# when it did not".
def test_a_replay_with_fewer_steps_stops_short_and_exits_1(recorded: tuple[Path, Events]) -> None:
    folder, _ = recorded
    done = _cli("run", "--script", "base.jsonl", "--max-steps", "1", "--json", cwd=folder)
    assert done.returncode == 1, done.stderr
    result = json.loads(done.stdout)
    assert result["stop_reason"] == "max_steps"
    assert result["steps"][0]["observation"] == "A!"
