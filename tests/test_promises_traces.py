"""Issue 20, "Traces and replay": `react-text replay` and `react-text run --script` on a damaged or
hand-edited trace say, in one line and exit status 2, which line and which field is wrong; they
never end in a traceback.

The damage is generated, not listed: real traces (chat and completion, with a parse error, a tool
call, a model failure and a context-length failure) have every field of the first event of each
kind dropped, nulled and given another type, one at a time, and both commands are run on each.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from react_text import ContextLengthError, ModelError, ScriptedModel, cli, config
from react_text.config import Choices
from react_text.trace import Tracer, window
from react_text.types import Message, Request

REPLIES = ["I am not sure.", "THOUGHT: add\nACTION: calculator[2 + 2]", "FINAL: 4"]


def traced(path: Path, replies: list[Any], api: str = "chat") -> Path:
    """A trace as `react-text run --trace` writes it, of a run of these replies."""
    model = ScriptedModel(replies, api=api)  # type: ignore[arg-type]
    agent = config.agent(model, config.tools(), Choices())
    with Tracer(path) as tracer:
        tracer.start("What is 2 + 2?", config.describe(agent))
        run = agent.iter_steps("What is 2 + 2?", observer=tracer.observer)
        for step in run:
            tracer.step(step)
        tracer.end(run.result, context_window=window(agent.limits, model))
    return path


@pytest.fixture(scope="module")
def traces(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    folder = tmp_path_factory.mktemp("traces")
    return [
        traced(folder / "chat.jsonl", [*REPLIES[:2], ModelError("the server went away")]),
        traced(folder / "completion.jsonl", REPLIES, api="completion"),
        traced(folder / "window.jsonl", [REPLIES[1], ContextLengthError("too long", window=900)]),
    ]


def events(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def fields(value: dict[str, Any], prefix: tuple[str, ...] = (), depth: int = 0) -> Iterator[tuple[str, ...]]:
    """The path of every field of an event, into the objects it holds (two levels down)."""
    for key, inner in value.items():
        if not prefix and key == "event":
            continue
        yield (*prefix, key)
        if isinstance(inner, dict) and depth < 2:
            yield from fields(inner, (*prefix, key), depth + 1)


def other_type(value: object) -> object:
    if isinstance(value, bool):
        return "yes"
    if isinstance(value, int | float):
        return str(value)
    if isinstance(value, str):
        return 7
    return "x" if value is not None else 7


def damaged(event: dict[str, Any], path: tuple[str, ...], how: str) -> dict[str, Any]:
    event = copy.deepcopy(event)
    holder = event
    for key in path[:-1]:
        holder = holder[key]
    if how == "drop":
        del holder[path[-1]]
    elif how == "null":
        holder[path[-1]] = None
    else:
        holder[path[-1]] = other_type(holder[path[-1]])
    return event


def damages(trace: Path) -> Iterator[tuple[str, list[dict[str, Any]], int]]:
    """(what was done, the damaged events, the damaged line) for every field of the first event of
    each kind."""
    found = events(trace)
    seen: set[str] = set()
    for number, event in enumerate(found):
        if event["event"] in seen:
            continue
        seen.add(event["event"])
        for path in fields(event):
            for how in ("drop", "null", "retype"):
                changed = [*found[:number], damaged(event, path, how), *found[number + 1 :]]
                yield f"{trace.name}:{number + 1} {event['event']}.{'.'.join(path)} {how}", changed, number + 1


def write(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(e) + "\n" for e in lines))
    return path


def both_commands(path: Path, capsys: pytest.CaptureFixture[str]) -> Iterator[tuple[int, str]]:
    for args in (["replay", str(path)], ["run", "--script", str(path)]):
        code = cli.main(args)
        yield code, capsys.readouterr().err


def test_every_damage_to_a_trace_is_refused_in_one_line_or_played(
    traces: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tried = refused = 0
    wrong: list[str] = []
    for trace in traces:
        for what, changed, line in damages(trace):
            path = write(tmp_path / "damaged.jsonl", changed)
            for args in (["replay", str(path)], ["run", "--script", str(path)]):
                tried += 1
                try:
                    code = cli.main(args)
                except Exception as exc:  # noqa: BLE001 -- a traceback is what the test looks for
                    wrong.append(f"{what} ({args[0]}): {type(exc).__name__}: {exc}")
                    continue
                said = capsys.readouterr().err.splitlines()
                if code == 2:
                    refused += 1
                    if len(said) != 1 or f"damaged.jsonl:{line}:" not in said[0]:
                        wrong.append(f"{what} ({args[0]}): {said}")
                elif code not in (0, 1):
                    wrong.append(f"{what} ({args[0]}): exit {code}")
    assert not wrong, f"{len(wrong)} of {tried}:\n" + "\n".join(wrong[:12])
    assert tried > 500 and refused > tried // 3  # the damage reached the readers


@pytest.mark.parametrize(
    ("kind", "change", "field"),
    [
        ("reply", lambda e: e.pop("text"), "reply.text"),
        ("reply", lambda e: e.update(text=None), "reply.text"),
        ("reply", lambda e: e.update(usage="12"), "reply.usage"),
        ("model_error", lambda e: e.pop("error"), "model_error.error"),
        ("run_start", lambda e: e.update(limits="steps=3"), "run_start.limits"),
        ("run_start", lambda e: e.update(model="gpt-4o-mini"), "run_start.model"),
        ("run_start", lambda e: e["limits"].update(steps=0), "run_start.limits"),
        ("step", lambda e: e.pop("parsed"), "step.parsed"),
        ("step", lambda e: e["parsed"].update(kind="answer"), "step.parsed.kind"),
        ("run_end", lambda e: e.pop("usage"), "run_end.usage"),
    ],
)
def test_the_damage_the_review_found_names_the_line_and_the_field(
    traces: list[Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str, change: Any, field: str
) -> None:
    found = events(traces[0])
    number = next(n for n, e in enumerate(found) if e["event"] == kind)
    change(found[number])
    path = write(tmp_path / "run.jsonl", found)
    for code, err in both_commands(path, capsys):
        assert code == 2
        (said,) = err.splitlines()
        assert f"run.jsonl:{number + 1}:" in said and field in said, said


def test_a_damaged_trace_through_the_command_is_one_line_and_exit_2(traces: list[Path], tmp_path: Path) -> None:
    found = events(traces[0])
    next(e for e in found if e["event"] == "reply")["usage"] = "lots"
    path = write(tmp_path / "run.jsonl", found)
    for args in (["replay", str(path)], ["run", "--script", str(path)]):
        done = subprocess.run(
            [sys.executable, "-m", "react_text.cli", *args], capture_output=True, text=True, timeout=120, check=False
        )
        assert done.returncode == 2, done.stderr
        assert len(done.stderr.splitlines()) == 1 and "reply.usage" in done.stderr


def test_the_undamaged_traces_still_replay(traces: list[Path], capsys: pytest.CaptureFixture[str]) -> None:
    for trace in traces:
        assert [code for code, _ in both_commands(trace, capsys)] == ([0, 0] if "completion" in trace.name else [1, 1])


@pytest.mark.parametrize("asked", [None, True, False])
def test_a_replay_uses_the_grammar_as_the_recorded_run_did(tmp_path: Path, asked: bool | None) -> None:
    """A server that can take a grammar is sent none unless asked (off by default on a server): the
    trace records whether the run used it, and its replay plays the run that way, not by what the
    server could take."""
    from react_text import Agent, OpenAIChat, scripts
    from react_text.toolbox import calculator

    model = OpenAIChat("m", base_url="http://127.0.0.1:9/v1", server="llama.cpp", grammar=asked)
    agent = Agent(model, tools=[calculator])
    path = tmp_path / "run.jsonl"
    with Tracer(path) as tracer:
        tracer.start("What is 2 + 2?", config.describe(agent))
    start = json.loads(path.read_text().splitlines()[0])
    assert start["model"]["accepts_grammar"] is True and start["model"]["grammar"] is bool(asked)
    replay = scripts.Script(replies=("THOUGHT: so.\nFINAL: 4",), start=start).model()
    assert replay.accepts_grammar is bool(asked)  # a scripted model in process: the grammar on only if it was
    assert replay.generate(Request((Message("user", "hi"),), (), 64)).text.endswith("FINAL: 4")
