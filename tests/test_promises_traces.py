"""Issue 20, "Traces and replay": `react-text replay` and `react-text run --script` on a damaged or
hand-edited trace say, in one line and exit status 2, which line and which field is wrong; they
never end in a traceback.

The damage is generated, not listed: real traces (chat and completion, with a parse error, a tool
call, a model failure and a context-length failure) have every field of the first event of each
kind dropped, nulled and given another type, one at a time, and both commands are run on each.
"""

from __future__ import annotations

import copy
import itertools
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from react_text import ContextLengthError, ModelError, ScriptedModel
from react_text.cli import main as cli
from react_text.core.types import Message, Request
from react_text.evaluation import config
from react_text.evaluation.config import Choices
from react_text.observers.trace import Tracer, window

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
    from react_text import Agent, OpenAIChat
    from react_text.evaluation import scripts
    from react_text.tools.toolbox import calculator

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


# --- the review's findings (attack5): text that is not valid Unicode, settings, files, the terminal --


def cli_in(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "react_text.cli", *args], cwd=cwd, capture_output=True, text=True, timeout=timeout
    )


def test_a_file_name_that_is_not_utf8_does_not_crash_the_trace(tmp_path: Path) -> None:
    """docs/how-to/traces.md: "`--trace FILE.jsonl` writes one JSON line per event, flushed as it
    happens: a crash or Ctrl-C loses nothing"; docs/reference/cli.md: never a traceback. With
    `--root` over a folder holding a file named in Latin-1 (`caf\\xe9.txt`, common on old disks),
    the search tool's observation carries a surrogate, the trace's write raises
    `UnicodeEncodeError` with a traceback, and the trace stops after three lines."""
    notes = tmp_path / "notes"
    notes.mkdir()
    with open(os.fsencode(notes) + b"/caf\xe9 prices.txt", "wb") as file:
        file.write(b"the train ticket costs 89\n")
    (tmp_path / "replies.txt").write_text("ACTION: search[train ticket]\n---\nFINAL: 89\n")
    done = cli_in(
        "run", "--root", "notes", "--script", "replies.txt", "--trace", "run.jsonl", "Ticket price?", cwd=tmp_path
    )
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 0
    events = [json.loads(line) for line in (tmp_path / "run.jsonl").read_text().splitlines()]
    assert events[-1]["event"] == "run_end" and events[-1]["answer"] == "89"


def test_a_task_in_latin1_does_not_crash_the_trace(tmp_path: Path) -> None:
    """docs/how-to/traces.md: "`--trace FILE.jsonl` writes one JSON line per event, flushed as it
    happens"; docs/reference/cli.md: never a traceback. A task typed in a Latin-1 terminal
    (`react-text run --trace run.jsonl "caf\\xe9?"`; Python reads the byte as a surrogate) runs
    without `--trace` but with it ends in a `UnicodeEncodeError` traceback, exit 1, and no run_end."""
    (tmp_path / "replies.txt").write_text("FINAL: 2\n")
    task = os.fsdecode(b"caf\xe9?")
    done = cli_in("run", "--script", "replies.txt", "--trace", "run.jsonl", task, cwd=tmp_path)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 0
    events = [json.loads(line) for line in (tmp_path / "run.jsonl").read_text().splitlines()]
    assert events[-1]["event"] == "run_end" and events[-1]["answer"] == "2"


def test_a_trace_holding_lone_surrogates_replays_to_the_same_steps(tmp_path: Path) -> None:
    """The trace keeps text that is not valid Unicode exactly (JSON escapes, written.json_text), so
    its replay reads the same file name, runs the same tool and records the same steps; what is
    printed shows the surrogate as an escape, never as bytes the terminal cannot take."""
    notes = tmp_path / "notes"
    notes.mkdir()
    with open(os.fsencode(notes) + b"/caf\xe9.txt", "wb") as file:
        file.write(b"the ticket costs 89\n")
    (tmp_path / "replies.txt").write_text("ACTION: search[ticket]\n---\nFINAL: 89\n")
    live = cli_in("run", "--root", "notes", "--script", "replies.txt", "--trace", "run.jsonl", "Price?", cwd=tmp_path)
    assert live.returncode == 0, live.stderr
    again = cli_in("run", "--script", "run.jsonl", "--trace", "again.jsonl", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    (tmp_path / "run.jsonl").read_text(encoding="utf-8")  # valid UTF-8 throughout

    def steps(name: str) -> list[dict[str, Any]]:
        found = [e for e in events(tmp_path / name) if e["event"] == "step"]
        return [{k: v for k, v in e.items() if k not in ("t", "seconds")} for e in found]

    assert steps("again.jsonl") == steps("run.jsonl")
    assert os.fsdecode(b"caf\xe9.txt") in steps("run.jsonl")[0]["observation"]
    assert "caf\\udce9.txt" in live.stdout and "caf\\udce9.txt" in again.stdout


def test_a_trace_naming_an_unknown_parser_is_refused(tmp_path: Path) -> None:
    """docs/how-to/traces.md: "Every trace event is checked when read ...: a hand-edited or damaged
    trace is one line naming the line and the field ..., exit 2, for `replay` and `run --script`
    alike", and `run --script` replays "with the trace's settings". A trace whose run_start says
    `"parser": "bogus"` is played, silently with the tolerant parser, exit 0."""
    (tmp_path / "replies.txt").write_text("ACTION: calculator[2 + 2]\n---\nFINAL: 4\n")
    cli_in("run", "--script", "replies.txt", "--trace", "run.jsonl", "What is 2 + 2?", cwd=tmp_path)
    events = [json.loads(line) for line in (tmp_path / "run.jsonl").read_text().splitlines()]
    assert events[0]["parser"] == "tolerant"
    events[0]["parser"] = "bogus"
    (tmp_path / "edited.jsonl").write_text("".join(json.dumps(event) + "\n" for event in events))
    done = cli_in("run", "--script", "edited.jsonl", cwd=tmp_path)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "edited.jsonl:1" in done.stderr and "parser" in done.stderr


def read_shouting(text: str, tools: tuple[str, ...] = ()) -> Any:
    from react_text import parse

    return parse(text.upper(), tools=tools)


def test_a_trace_of_a_parser_of_ones_own_is_read_and_its_replay_asks_for_one(tmp_path: Path) -> None:
    """Python may hand an Agent any parser: its trace names it `module:function`, which reads as a
    sound trace (replay shows it), and `run --script` says in one line that it cannot load it,
    rather than playing it with another parser unasked."""
    from react_text import Agent, ScriptedModel

    agent = Agent(ScriptedModel(["final: 4"]), parser=read_shouting)
    path = tmp_path / "run.jsonl"
    with Tracer(path) as tracer:
        tracer.start("What is 2 + 2?", config.describe(agent))
        run = agent.iter_steps("What is 2 + 2?", observer=tracer.observer)
        for step in run:
            tracer.step(step)
        tracer.end(run.result)
    assert events(path)[0]["parser"] == f"{__name__}:read_shouting"
    assert cli_in("replay", "run.jsonl", cwd=tmp_path).returncode == 0
    done = cli_in("run", "--script", "run.jsonl", cwd=tmp_path)
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1, done.stderr
    assert "read_shouting" in done.stderr and "tolerant" in done.stderr
    assert cli_in("run", "--script", "run.jsonl", "--parser", "tolerant", cwd=tmp_path).returncode == 0


def test_a_replay_does_not_write_its_trace_over_the_trace_it_plays(tmp_path: Path) -> None:
    """docs/how-to/traces.md: "`react-text run --script FILE` plays the trace's replies ... the task,
    the tools and every setting can be changed by giving its flag (`--max-steps 3`: what would the
    run have done with one more step?)". `run --script run.jsonl --max-steps 1 --trace run.jsonl`
    replaces the recorded run with the shortened replay, exit 1, without a word: the recording is
    lost (and `--script replies.txt --trace replies.txt` replaces a script with a trace)."""
    (tmp_path / "replies.txt").write_text(
        "ACTION: calculator[17 * 23]\n---\nACTION: calculator[391 + 5]\n---\nFINAL: 396\n"
    )
    cli_in("run", "--script", "replies.txt", "--trace", "run.jsonl", "What is 17 * 23 + 5?", cwd=tmp_path)
    recorded = (tmp_path / "run.jsonl").read_text()
    done = cli_in("run", "--script", "run.jsonl", "--max-steps", "1", "--trace", "run.jsonl", cwd=tmp_path)
    assert (tmp_path / "run.jsonl").read_text() == recorded
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr


@pytest.mark.parametrize(
    "flags",
    [
        ["--script", "replies.txt", "--trace", "replies.txt"],  # a script made a trace
        ["--script", "replies.txt", "--trace", "pointer.txt"],  # through a symbolic link
        ["--script", "replies.txt", "--trace", "linked.txt"],  # a hard link
        ["--script", "replies.txt", "--tools", "./mytools.py", "--trace", "mytools.py"],  # the tools' module
    ],
)
def test_run_writes_no_trace_over_a_file_it_reads(tmp_path: Path, flags: list[str]) -> None:
    (tmp_path / "replies.txt").write_text("FINAL: 4\n")
    (tmp_path / "pointer.txt").symlink_to(tmp_path / "replies.txt")
    os.link(tmp_path / "replies.txt", tmp_path / "linked.txt")
    (tmp_path / "mytools.py").write_text("def shout(text: str) -> str:\n    return text.upper()\n")
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    done = cli_in("run", *flags, "What is 2 + 2?", cwd=tmp_path)
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1, done.stderr
    assert "--trace" in done.stderr and "written over" in done.stderr
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


def test_a_tools_terminal_escapes_are_not_printed_raw(tmp_path: Path) -> None:
    """docs/reference/cli.md: "`run` prints each step as it happens ..., in colour on a terminal and
    plain when piped"; `replay` "shows the run again as it was shown live". A tool that returns a
    web page holding escape sequences has them printed as they are, piped or not: `ESC[2J` clears
    the screen, `ESC]52;c;...BEL` writes the user's clipboard on many terminals, and a `\\r` line can
    pass for the engine's own `── final` line."""
    (tmp_path / "web.py").write_text(
        "def web(url: str) -> str:\n"
        '    """Fetch a page."""\n'
        '    return "page \\x1b[2J\\x1b]52;c;ZWNobyBwd25lZA==\\x07 text"\n'
    )
    (tmp_path / "replies.txt").write_text("ACTION: web[x]\n---\nFINAL: done\n")
    done = cli_in(
        "run", "--tools", "./web.py", "--script", "replies.txt", "--trace", "run.jsonl", "Fetch x.", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout and "\x07" not in done.stdout, repr(done.stdout)
    shown = cli_in("replay", "run.jsonl", cwd=tmp_path)
    assert "\x1b" not in shown.stdout and "\x07" not in shown.stdout, repr(shown.stdout)


ANY_CHARACTER = st.one_of(st.characters(), st.integers(0xD800, 0xDFFF).map(chr))  # lone surrogates too
CONTROLS = "\x1b[2J\x08\x9b31m\x7f\x00"  # ESC, backspace, an 8-bit CSI, DEL, NUL (CR: a script reads it as \n)


def no_controls(text: str) -> bool:
    return not any(c in text for c in "\x1b\x08\x9b\x7f\x00")


def test_a_models_controls_are_made_visible_wherever_the_command_line_prints_them(tmp_path: Path) -> None:
    """The model's own text (a thought, an answer) and a task file's, in run, run --json, replay,
    eval's table and parse; the trace keeps them as they were."""
    reply = f"THOUGHT: think{CONTROLS}\nFINAL: 4{CONTROLS}"
    (tmp_path / "replies.txt").write_text(reply + "\n")
    (tmp_path / "tasks.jsonl").write_text(json.dumps({"id": "a", "task": "2 + 2?", "answer": "4"}) + "\n")
    (tmp_path / "reply.txt").write_text(reply)
    runs = [
        cli_in("run", "--script", "replies.txt", "--trace", "run.jsonl", "What is 2 + 2?", cwd=tmp_path),
        cli_in("run", "--script", "replies.txt", "--json", "What is 2 + 2?", cwd=tmp_path),
        cli_in("replay", "run.jsonl", cwd=tmp_path),
        cli_in("eval", "tasks.jsonl", "--script", "replies.txt", cwd=tmp_path),
        cli_in("parse", "reply.txt", cwd=tmp_path),
    ]
    for done in runs:
        assert "Traceback" not in done.stderr and done.returncode in (0, 1), done.stderr  # eval: [2J's 2 is no 4
        assert no_controls(done.stdout) and no_controls(done.stderr), repr(done.stdout)
    assert "4\\x1b[2J" in runs[0].stdout and "\\x08\\x9b31m\\x7f\\x00" in runs[0].stdout  # visible, not dropped
    assert json.loads(runs[1].stdout)["answer"] == f"4{CONTROLS}"  # JSON: escaped, the same text
    assert json.loads(runs[4].stdout)["answer"] == f"4{CONTROLS}"
    final = next(e for e in events(tmp_path / "run.jsonl") if e["event"] == "run_end")
    assert final["answer"] == f"4{CONTROLS}"  # the trace keeps the raw text


@settings(max_examples=300, deadline=None)
@given(st.text(ANY_CHARACTER))
def test_json_text_writes_any_text_as_utf8_and_reads_it_back(text: str) -> None:
    from react_text.observers.written import json_text

    written = json_text({"text": text})
    written.encode("utf-8")  # lone surrogates escaped: always encodes
    # exactly, but for a high surrogate just before a low one: JSON reads the two escapes as one character
    paired = any(0xD800 <= ord(a) < 0xDC00 <= ord(b) < 0xE000 for a, b in itertools.pairwise(text))
    assert json.loads(written) == {"text": text} or paired
    assert "\n" not in written


@settings(max_examples=300, deadline=None)
@given(st.text(ANY_CHARACTER))
def test_shown_text_holds_no_control_but_newline_and_tab(text: str) -> None:
    import unicodedata

    from react_text.observers.written import shown

    assert shown("── final\r── final · 1 step\tok\n") == "── final\\r── final · 1 step\tok\n"  # no line passes for ours
    visible = shown(text)
    visible.encode("utf-8")
    assert all(c in "\n\t" or unicodedata.category(c) not in ("Cc", "Cs") for c in visible)
    assert shown(visible) == visible  # nothing left to escape


RISKY = '''
from react_text import tool


@tool(risky=True)
def zap(name: str) -> str:
    """Zap a thing."""
    return f"zapped {name}"
'''


def test_the_approval_of_a_run_is_in_its_trace_and_an_old_trace_without_it_asks(tmp_path: Path) -> None:
    """docs/how-to/traces.md: run_start records whether risky calls were approved with --yes, and a
    replay approves them as the traced run did, no flag repeated; a trace written before the field
    was recorded replays as it did then (asking: without a terminal, declined); a value other
    than yes or ask is a damaged trace, one line and exit 2."""
    (tmp_path / "risky.py").write_text(RISKY)
    (tmp_path / "replies.txt").write_text("ACTION: zap[old]\n---\nFINAL: done\n")

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "react_text.cli", "run", *args]
        return subprocess.run(
            command, cwd=tmp_path, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL, check=False
        )

    for flags, name, approve in [(["--yes"], "yes.jsonl", "yes"), ([], "ask.jsonl", "ask")]:
        done = run("--tools", "./risky.py", *flags, "--script", "replies.txt", "--trace", name, "Zap it.")
        assert done.returncode == 0, done.stderr
        assert events(tmp_path / name)[0]["approve"] == approve
    again = run("--script", "yes.jsonl", "--trace", "again.jsonl")
    assert "OBSERVATION: zapped old" in again.stdout, again.stderr
    assert "approved with --yes" in again.stderr
    assert events(tmp_path / "again.jsonl")[0]["approve"] == "yes"  # a replay of a replay approves too
    assert "declined zap[old]" in run("--script", "ask.jsonl").stderr
    old = events(tmp_path / "yes.jsonl")
    del old[0]["approve"]
    (tmp_path / "old.jsonl").write_text("".join(json.dumps(event) + "\n" for event in old))
    replayed = run("--script", "old.jsonl")
    assert replayed.returncode == 0, replayed.stderr
    assert "declined zap[old]: no terminal to ask (use --yes)" in replayed.stderr
    old[0]["approve"] = True
    (tmp_path / "bad.jsonl").write_text("".join(json.dumps(event) + "\n" for event in old))
    bad = run("--script", "bad.jsonl")
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1, bad.stderr
    assert "bad.jsonl:1" in bad.stderr and "approve" in bad.stderr
