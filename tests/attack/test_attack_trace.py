"""Attacks on "Traces, and replaying them" and the CLI's set-up errors, with damaged traces.

README, The command line: "Set-up mistakes are one line on stderr and exit status 2, never a
traceback: a missing or unreadable file (a task file, a trace, a script, a model), ... a file that
is not a trace". Traces: "`--trace FILE.jsonl` writes one JSON line per event, flushed as it
happens: a crash or Ctrl-C loses nothing already done." "`react-text replay FILE` shows the run
again as it was shown live". "`react-text run --script FILE` plays the trace's replies ... through
the engine again with the trace's settings".
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from _support import cli

Events = list[dict[str, Any]]


@pytest.fixture(scope="module")
def trace(tmp_path_factory: pytest.TempPathFactory) -> Events:
    where = tmp_path_factory.mktemp("trace")
    (where / "replies.txt").write_text(
        "THOUGHT: compute\nACTION: calculator[17 * 23 + 5]\n---\nTHOUGHT: done\nFINAL: 396\n"
    )
    done = cli("run", "--script", "replies.txt", "--trace", "run.jsonl", "What is 17 * 23 + 5?", cwd=where)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in (where / "run.jsonl").read_text().splitlines()]


def first(events: Events, kind: str) -> int:
    return next(i for i, e in enumerate(events) if e["event"] == kind)


def setting(key: str, value: object) -> Callable[[Events], Events]:
    def change(events: Events) -> Events:
        events[0][key] = value
        return events

    return change


def field(kind: str, key: str, value: object) -> Callable[[Events], Events]:
    def change(events: Events) -> Events:
        events[first(events, kind)][key] = value
        return events

    return change


def drop(kind: str, key: str) -> Callable[[Events], Events]:
    def change(events: Events) -> Events:
        events[first(events, kind)].pop(key, None)
        return events

    return change


def insert(event: dict[str, Any]) -> Callable[[Events], Events]:
    def change(events: Events) -> Events:
        events.insert(3, event)
        return events

    return change


DAMAGE: dict[str, Callable[[Events], Events]] = {
    "limits is a string": setting("limits", "oops"),
    "prompting.example is a number": setting("prompting", {"example": 5}),
    "a reply's text is null": field("reply", "text", None),
    "a reply's text is a number": field("reply", "text", 5),
    "a reply's usage lacks completion_tokens": field("reply", "usage", {"prompt_tokens": 3}),
    "a step's parse is null": field("step", "parsed", None),
    "a step's parse has an unknown kind": field("step", "parsed", {"kind": "weird"}),
    "a step has no usage": drop("step", "usage"),
    "run_end's usage is null": field("run_end", "usage", None),
    "a model_error event with no fields": insert({"event": "model_error"}),
}


@pytest.mark.parametrize("command", ["replay", "run"])
@pytest.mark.parametrize("damage", list(DAMAGE), ids=list(DAMAGE))
def test_a_damaged_trace_is_one_line_and_exit_2_never_a_traceback(
    trace: Events, damage: str, command: str, tmp_path: Path
) -> None:
    """README: "Set-up mistakes are one line on stderr and exit status 2, never a traceback: a
    missing or unreadable file (a task file, a trace, ...) ..., a file that is not a trace"."""
    events = DAMAGE[damage](json.loads(json.dumps(trace)))
    (tmp_path / "bad.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    args = ["replay", "bad.jsonl"] if command == "replay" else ["run", "--script", "bad.jsonl"]
    done = cli(*args, cwd=tmp_path)
    assert "Traceback" not in done.stderr, done.stderr[-600:]
    if done.returncode != 0:  # a replay that copes is fine too; a refusal must be one clear line
        assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, (done.returncode, done.stderr)


@pytest.mark.parametrize("command", ["replay", "run"])
def test_a_deeply_nested_json_line_is_not_a_traceback(command: str, tmp_path: Path) -> None:
    """README: "... never a traceback: ... a file that is not a trace"."""
    (tmp_path / "deep.jsonl").write_text("[" * 100_000 + "]" * 100_000 + "\n")
    args = ["replay", "deep.jsonl"] if command == "replay" else ["run", "--script", "deep.jsonl"]
    done = cli(*args, cwd=tmp_path)
    assert "Traceback" not in done.stderr, done.stderr[-300:]
    assert done.returncode == 2


def test_replaying_an_empty_trace_says_why(tmp_path: Path) -> None:
    """README: "Set-up mistakes are one line on stderr and exit status 2 ... a file that is not a
    trace". `run --script` says "is empty: not a react-text trace" (exit 2); `replay` should too."""
    (tmp_path / "empty.jsonl").write_text("")
    done = cli("replay", "empty.jsonl", cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.strip(), (done.returncode, done.stderr)


def test_a_trace_cut_by_a_crash_replays_what_was_done(trace: Events, tmp_path: Path) -> None:
    """README: "flushed as it happens: a crash or Ctrl-C loses nothing already done", and
    "`react-text replay FILE` shows the run again as it was shown live"."""
    text = "".join(json.dumps(e) + "\n" for e in trace)
    (tmp_path / "cut.jsonl").write_text(text[: text.rindex('{"event": "run_end"') + 25])
    done = cli("replay", "cut.jsonl", cwd=tmp_path)
    assert "Traceback" not in done.stderr
    assert "calculator[17 * 23 + 5]" in done.stdout and "FINAL: 396" in done.stdout


def test_an_unchanged_trace_replays_to_the_same_answer(trace: Events, tmp_path: Path) -> None:
    """README: "so the steps and the answer are the same with no flag repeated"."""
    (tmp_path / "ok.jsonl").write_text("".join(json.dumps(e) + "\n" for e in trace))
    done = cli("run", "--script", "ok.jsonl", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["answer"] == "396"
