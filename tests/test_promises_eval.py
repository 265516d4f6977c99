"""Issue 20, "Eval loses data": a results file survives a crash cut anywhere in its last line; trace
file names are unique per task id and a replay never plays another task's trace; the task-line
contract is checked field by field; eval takes --tools and --mcp as run does.

The cut is made at every byte offset of the last line (an oracle that needs no model of where a
crash can land); the replay is checked against what each task's own live run answered.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import cli as command
from cli_support import set_up_error
from fake_openai import FakeServer
from hypothesis import given, settings
from hypothesis import strategies as st

from react_text import ConfigError
from react_text.cli import main as cli
from react_text.evaluation import load
from react_text.evaluation.scripts import task_id, trace_name
from react_text.prompting import render

TESTS = Path(__file__).resolve().parent
COUNTER = f"{shlex.quote(sys.executable)} {shlex.quote(str(TESTS / 'mcp_servers' / 'counter.py'))}"
TASKS = [
    {"id": "t1", "task": "What is 1 + 1?", "answer": "2"},
    {"id": "t2", "task": "Where is the lake?", "answer": "Zürich ✓"},  # more than one byte a character
    {"id": "t3", "task": "What is 3 + 3?", "answer": "6"},
]


def react_text(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "react_text.cli", *args], capture_output=True, text=True, timeout=timeout, check=False
    )


def write(path: Path, rows: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    return path


def scripts(folder: Path, rows: list[dict[str, object]]) -> Path:
    folder.mkdir()
    for row in rows:
        (folder / f"{row['id']}.txt").write_text(f"FINAL: {row['answer']}\n", encoding="utf-8")
    return folder


def results(path: Path) -> list[dict[str, object]]:
    """Every line of a results file, each of which must be a whole JSON result."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_a_results_file_cut_at_any_byte_of_its_last_line_resumes_to_each_task_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    tasks = write(tmp_path / "tasks.jsonl", TASKS)
    replies = scripts(tmp_path / "scripts", TASKS)
    out = tmp_path / "results.jsonl"
    assert cli.main(["eval", str(tasks), "--script", str(replies), "--out", str(out)]) == 0
    whole = out.read_bytes()
    lines = whole.splitlines(keepends=True)
    assert len(lines) == 3
    head, last = b"".join(lines[:-1]), lines[-1]
    assert any(byte > 127 for byte in whole)  # the cut lands inside a character too
    for offset in range(len(last) + 1):
        out.write_bytes(head + last[:offset])
        code = cli.main(["eval", str(tasks), "--script", str(replies), "--out", str(out), "--resume"])
        capsys.readouterr()
        assert code == 0, offset
        assert sorted(str(r["id"]) for r in results(out)) == ["t1", "t2", "t3"], offset
        assert out.read_bytes().endswith(b"\n"), offset


def test_a_cut_results_file_resumes_through_the_command(tmp_path: Path) -> None:
    tasks = write(tmp_path / "tasks.jsonl", TASKS)
    replies = scripts(tmp_path / "scripts", TASKS)
    out = tmp_path / "results.jsonl"
    assert react_text("eval", str(tasks), "--script", str(replies), "--out", str(out)).returncode == 0
    out.write_bytes(out.read_bytes()[:-20])
    again = react_text("eval", str(tasks), "--script", str(replies), "--out", str(out), "--resume")
    assert again.returncode == 0, again.stderr
    assert sorted(str(r["id"]) for r in results(out)) == ["t1", "t2", "t3"]
    once_more = react_text("eval", str(tasks), "--script", str(replies), "--out", str(out), "--resume")
    assert once_more.returncode == 0 and "3 of 3 tasks already done" in once_more.stderr


SUMS = [
    {"id": "q 1", "task": "What is 1 + 2?", "answer": "3"},
    {"id": "q_1", "task": "What is 5 + 5?", "answer": "10"},
    {"id": "Q/1", "task": "What is 7 + 1?", "answer": "8"},
    {"id": "../q1", "task": "What is 2 + 2?", "answer": "4"},
]


def test_each_task_id_has_a_trace_of_its_own_and_replays_it(tmp_path: Path) -> None:
    tasks = write(tmp_path / "tasks.jsonl", SUMS)
    traces = tmp_path / "traces"
    with FakeServer() as server:
        live = react_text("eval", str(tasks), "--model", "fake", "--base-url", server.url, "--trace", str(traces),
                          "--out", str(tmp_path / "live.jsonl"))  # fmt: skip
    assert live.returncode == 0, live.stderr
    written = sorted(traces.iterdir())
    assert len(written) == len(SUMS)  # no two ids share a file
    assert all(p.parent == traces for p in written)  # and none escapes the folder
    recorded = {json.loads(p.read_text().splitlines()[0])["task"] for p in written}
    assert recorded == {str(t["task"]) for t in SUMS}
    replayed = react_text("eval", str(tasks), "--script", str(traces), "--out", str(tmp_path / "again.jsonl"))
    assert replayed.returncode == 0, replayed.stderr
    assert {r["id"]: r["answer"] for r in results(tmp_path / "again.jsonl")} == {
        r["id"]: r["answer"] for r in results(tmp_path / "live.jsonl")
    }
    assert "4/4 right" in replayed.stdout


def test_a_replay_never_plays_another_tasks_trace(tmp_path: Path) -> None:
    tasks = write(tmp_path / "tasks.jsonl", SUMS[:2])
    traces = tmp_path / "traces"
    with FakeServer() as server:
        live = react_text("eval", str(tasks), "--model", "fake", "--base-url", server.url, "--trace", str(traces))
    assert live.returncode == 0, live.stderr
    first, second = sorted(traces.iterdir(), key=lambda p: json.loads(p.read_text().splitlines()[0])["task"])
    shutil.copy(first, second)  # the second task's file now holds the first task's trace
    replayed = react_text("eval", str(tasks), "--script", str(traces))
    assert replayed.returncode == 2, replayed.stdout
    (line,) = replayed.stderr.splitlines()
    assert "q_1" in line and "What is 1 + 2?" in line


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ('{"id": null, "task": "x", "answer": "1"}', "id"),
        ('{"id": ["a"], "task": "x", "answer": "1"}', "id"),
        ('{"id": "", "task": "x", "answer": "1"}', "id"),
        ('{"id": true, "task": "x", "answer": "1"}', "id"),
        ('{"id": "b", "task": 5, "answer": "1"}', "task"),
        ('{"id": "b", "task": "  ", "answer": "1"}', "task"),
        ('{"id": "b", "task": null, "answer": "1"}', "task"),
        ('{"id": "b", "task": "x", "answer": null}', "answer"),
        ('{"id": "b", "task": "x", "answer": [1]}', "answer"),
        ('{"id": "b", "task": "x", "answer": {"v": 1}}', "answer"),
        ('{"id": "b", "task": "x", "answer": false}', "answer"),
        ('{"id": "b", "task": "x", "answer": "1", "tools": "calculator"}', "tools"),
        ('{"id": "b", "task": "x", "answer": "1", "tools": [1]}', "tools"),
        ('{"id": "b", "task": "x", "answer": "1", "tools": null}', "tools"),
        ('{"id": "b", "task": "x", "answer": "1", "tool": ["calculator"]}', "tool"),
        ('["b", "x", "1"]', "object"),
        ('"b"', "object"),
        ('{"task": "x", "answer": "1"}', "id"),
        ('{"id": "b", "task": "x", "answer": NaN}', "answer"),  # json reads them; nothing ever equals them
        ('{"id": "b", "task": "x", "answer": Infinity}', "answer"),
        ('{"id": "b", "task": "x", "answer": -Infinity}', "answer"),
        ('{"id": "b", "task": "x", "answer": 1e999}', "answer"),  # a number too big for a float: Infinity
        ('{"id": "\\ud800", "task": "x", "answer": "1"}', "id"),  # no file name or results line holds one
        ('{"id": "b", "task": "caf\\udce9?", "answer": "1"}', "task"),
        ('{"id": "b", "task": "x", "answer": "\\udfff"}', "answer"),
        ('{"id": "b", "task": "x", "answer": "1", "tools": ["calc\\ud800"]}', "tools"),
    ],
)
def test_every_field_of_a_task_line_is_checked_naming_the_line_and_the_field(
    tmp_path: Path, line: str, says: str
) -> None:
    path = tmp_path / "tasks.jsonl"
    path.write_text('{"id": "a", "task": "x", "answer": "1"}\n' + line + "\n")
    with pytest.raises(ConfigError, match=rf"tasks\.jsonl:2: .*\b{says}\b") as raised:
        load(path)
    assert "\n" not in str(raised.value)


def test_good_task_lines_load_as_written(tmp_path: Path) -> None:
    path = tmp_path / "tasks.jsonl"
    path.write_text(
        '{"id": "a", "task": "x", "answer": "1"}\n'
        '{"id": 7, "task": "y", "answer": 12, "tools": []}\n'
        '{"id": "c", "task": "z", "answer": 1.5, "tools": ["calculator", "search"]}\n'
    )
    assert [(t.id, t.answer, t.tools) for t in load(path)] == [
        ("a", "1", ("calculator",)),
        ("7", "12", ()),
        ("c", "1.5", ("calculator", "search")),
    ]


def test_a_bad_task_line_through_the_command_is_one_line_and_exit_2(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text('{"id": "a", "task": "x", "answer": null}\n')
    done = react_text("eval", str(tasks), "--script", str(tasks))
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert "tasks.jsonl:1" in line and "answer" in line


TOOLS_MODULE = '''
def shout(text: str) -> str:
    """The text in capitals."""
    return text.upper() + "!"
'''


def observations(trace: Path) -> list[str]:
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    return [e["observation"] for e in events if e["event"] == "step" and e["observation"] is not None]


def test_eval_takes_tools_from_a_module_and_from_mcp_servers(tmp_path: Path) -> None:
    module = tmp_path / "mytools.py"
    module.write_text(TOOLS_MODULE)
    rows: list[dict[str, object]] = [
        {"id": "s", "task": "Shout hi", "answer": "HI!"},
        {"id": "b", "task": "Bump twice", "answer": "2", "tools": ["calculator"]},
    ]
    tasks = write(tmp_path / "tasks.jsonl", rows)
    replies = tmp_path / "scripts"
    replies.mkdir()
    (replies / "s.txt").write_text("ACTION: shout[hi]\n---\nFINAL: HI!\n")
    (replies / "b.txt").write_text("ACTION: bump[]\n---\nACTION: bump[]\n---\nFINAL: 2\n")
    traces = tmp_path / "traces"
    done = react_text("eval", str(tasks), "--script", str(replies), "--tools", str(module), "--mcp", COUNTER,
                      "--trace", str(traces), "--concurrency", "1")  # fmt: skip
    assert done.returncode == 0, done.stderr
    by_task = {json.loads(p.read_text().splitlines()[0])["task"]: p for p in traces.iterdir()}
    assert observations(by_task["Shout hi"]) == ["HI!"]
    # the counter ran twice (it has side effects): the second observation is its output, and the
    # repeats brake's note follows it (docs/troubleshooting.md, corrections/repeated_call.txt)
    told = render("corrections/repeated_call", result="2", tool="bump", input="", times=2)
    assert observations(by_task["Bump twice"]) == ["1", told]
    assert told.startswith("2\n(You have called bump[] 2 times in a row")


def test_eval_help_lists_tools_and_mcp() -> None:
    done = react_text("eval", "--help")
    assert "--tools MODULE" in done.stdout and "--mcp SERVER" in done.stdout


@settings(max_examples=300, deadline=None)
@given(st.text(min_size=1, max_size=80))
def test_trace_names_give_the_id_back_and_stay_in_their_folder(id_: str) -> None:
    import hashlib

    name = trace_name(id_)
    hashed = name.endswith(f"~{hashlib.sha256(id_.encode()).hexdigest()[:16]}.jsonl")  # a long id's
    assert task_id(name) == id_ or (hashed and len(name) <= 206)  # reversible: no two ids share a name
    assert name == name.lower()  # not even on a file system that ignores case
    assert "/" not in name and "\\" not in name and not name.startswith(".") and "\x00" not in name


ANY_CHARACTER = st.one_of(st.characters(), st.integers(0xD800, 0xDFFF).map(chr))  # lone surrogates too


@settings(max_examples=300, deadline=None)
@given(st.text(ANY_CHARACTER, min_size=1, max_size=40))
def test_an_id_holding_lone_surrogates_still_has_a_trace_name_of_its_own(id_: str) -> None:
    """A Python caller's Task id need not be valid Unicode (`load` refuses one, a caller may not):
    its trace still has a name, and one that gives the id back."""
    name = trace_name(id_)
    assert task_id(name) == id_ or "~" in name
    assert name.encode("ascii") and "/" not in name and not name.startswith(".")


# --- the review's findings (attack5), eval: the task line, resume, traces, files written over ------


def test_a_task_id_with_a_lone_surrogate_is_refused_naming_the_line(tmp_path: Path) -> None:
    """docs/how-to/async-and-eval.md: "any other field, or a wrong type, is one line naming the line
    and the field, exit 2"; docs/reference/cli.md: set-up mistakes are never a traceback. A task
    line whose id is `"\\ud800"` (valid JSON) passes the check, the episode runs, and writing its
    result (or its trace) raises `UnicodeEncodeError` with a traceback."""
    (tmp_path / "tasks.jsonl").write_text('{"id": "\\ud800", "task": "What is 1 + 1?", "answer": "2"}\n')
    (tmp_path / "replies.txt").write_text("FINAL: 2\n")
    done = command("eval", "tasks.jsonl", "--script", "replies.txt", "--out", "results.jsonl", cwd=tmp_path)
    set_up_error(done)
    assert "tasks.jsonl:1" in done.stderr and "id" in done.stderr


def test_resume_over_a_results_file_with_a_task_twice_runs_each_task_once(tmp_path: Path) -> None:
    """docs/how-to/async-and-eval.md: "`--resume` keeps the lines already in the file ..., runs only
    the tasks whose ids are not there, and appends"; "The table at the end covers every task";
    "every task appears exactly once". With one task's line in the results file twice (two
    appends of one run), `--resume` says "2 of 3 tasks already done: running the other 1", then
    runs two, shows "[4/3]", and the table says "4/4 right" for a file of three tasks."""
    tasks = "".join(json.dumps({"id": name, "task": "What is 1 + 1?", "answer": "2"}) + "\n" for name in "abc")
    (tmp_path / "tasks.jsonl").write_text(tasks)
    (tmp_path / "replies.txt").write_text("FINAL: 2\n")
    command("eval", "tasks.jsonl", "--script", "replies.txt", "--out", "full.jsonl", cwd=tmp_path)
    first = (tmp_path / "full.jsonl").read_text().splitlines()[0]
    (tmp_path / "results.jsonl").write_text(first + "\n" + first + "\n")
    done = command("eval", "tasks.jsonl", "--script", "replies.txt", "--out", "results.jsonl", "--resume", cwd=tmp_path)
    assert "4/3" not in done.stderr and "4/4" not in done.stdout, done.stderr + done.stdout
    assert "3/3 right" in done.stdout or "3/3" in done.stdout, done.stdout


def test_resume_counts_a_sample_of_a_group_written_twice_once(tmp_path: Path) -> None:
    tasks = write(tmp_path / "tasks.jsonl", [{"id": "a", "task": "What is 1 + 1?", "answer": "2"}])
    (tmp_path / "replies.txt").write_text("FINAL: 2\n")
    command("eval", "tasks.jsonl", "--script", "replies.txt", "--n", "2", "--out", "full.jsonl", cwd=tmp_path)
    lines = (tmp_path / "full.jsonl").read_text().splitlines()
    second = next(line for line in lines if json.loads(line)["sample"] == 1)
    (tmp_path / "results.jsonl").write_text(f"{second}\n{second}\n{second}\n")
    done = command("eval", str(tasks), "--script", "replies.txt", "--n", "2", "--out", "results.jsonl", "--resume",
               cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "1 of 2 tasks already done: running the other 1" in done.stderr
    assert "[2/2]" in done.stderr and "2/2 right" in done.stdout, done.stderr + done.stdout


def test_a_task_whose_answer_is_nan_is_refused(tmp_path: Path) -> None:
    """docs/how-to/async-and-eval.md: "A task line is {... "answer": text or number ...}; any other
    field, or a wrong type, is one line naming the line and the field, exit 2". `"answer": NaN`
    (which Python's json reads) is taken as a number no answer can ever equal: the task is run and
    scored wrong, every time."""
    (tmp_path / "tasks.jsonl").write_text('{"id": "a", "task": "What is 1 + 1?", "answer": NaN}\n')
    (tmp_path / "replies.txt").write_text("FINAL: 2\n")
    done = command("eval", "tasks.jsonl", "--script", "replies.txt", cwd=tmp_path)
    set_up_error(done)
    assert "answer" in done.stderr


def test_an_eval_trace_records_the_tools_module_it_used(tmp_path: Path) -> None:
    """docs/how-to/traces.md: the `run_start` event holds "where the tools came from (`--root`,
    `--tools`, `--mcp`)"; docs/how-to/async-and-eval.md: "`react-text eval tasks.jsonl --script
    traces/` # replay them". `eval --tools ./mytools.py --trace DIR` writes traces whose sources say
    `"modules": []` (and `"mcp": []` with `--mcp`), so `eval --script DIR` then stops with "unknown
    tools in the task file: shout" (`run --trace` records them)."""
    (tmp_path / "mytools.py").write_text(
        'def shout(text: str) -> str:\n    """Say it louder."""\n    return text.upper() + "!"\n'
    )
    (tmp_path / "tasks.jsonl").write_text('{"id": "s", "task": "Shout hi.", "answer": "HI!", "tools": ["shout"]}\n')
    (tmp_path / "replies.txt").write_text("ACTION: shout[hi]\n---\nFINAL: HI!\n")
    live = command(
        "eval", "tasks.jsonl", "--tools", "./mytools.py", "--script", "replies.txt", "--trace", "traces", cwd=tmp_path
    )
    assert live.returncode == 0, live.stderr
    start = json.loads((tmp_path / "traces" / "s.jsonl").read_text().splitlines()[0])
    assert start["sources"]["modules"], start["sources"]
    again = command("eval", "tasks.jsonl", "--script", "traces", "--out", "again.jsonl", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert json.loads((tmp_path / "again.jsonl").read_text())["answer"] == "HI!"


def test_an_eval_trace_records_its_mcp_servers_and_replays_with_them(tmp_path: Path) -> None:
    write(tmp_path / "tasks.jsonl", [{"id": "b", "task": "Bump once", "answer": "1", "tools": ["bump"]}])
    (tmp_path / "replies.txt").write_text("ACTION: bump[]\n---\nFINAL: 1\n")
    live = command(
        "eval", "tasks.jsonl", "--script", "replies.txt", "--mcp", COUNTER, "--trace", "traces", cwd=tmp_path
    )
    assert live.returncode == 0, live.stderr
    start = json.loads((tmp_path / "traces" / "b.jsonl").read_text().splitlines()[0])
    assert start["sources"]["mcp"] == [COUNTER]
    again = command("eval", "tasks.jsonl", "--script", "traces", "--trace", "again", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert observations(tmp_path / "again" / "b.jsonl") == ["1"]


def test_eval_refuses_to_write_its_results_over_its_task_file(tmp_path: Path) -> None:
    """docs/reference/cli.md: "Set-up mistakes are one line on stderr and exit status 2";
    docs/how-to/async-and-eval.md: "a crash loses nothing already done". `react-text eval
    tasks.jsonl --out tasks.jsonl` (a slip of the tab key) replaces the task file with the results,
    exit 0, without a word: the tasks are gone."""
    tasks = (
        '{"id": "a", "task": "What is 1 + 1?", "answer": "2"}\n{"id": "b", "task": "What is 2 + 2?", "answer": "4"}\n'
    )
    (tmp_path / "tasks.jsonl").write_text(tasks)
    (tmp_path / "replies.txt").write_text("FINAL: 2\n")
    done = command("eval", "tasks.jsonl", "--script", "replies.txt", "--out", "tasks.jsonl", cwd=tmp_path)
    assert (tmp_path / "tasks.jsonl").read_text() == tasks
    set_up_error(done)


@pytest.mark.parametrize(
    ("flags", "says"),
    [
        (["--out", "./sub/../tasks.jsonl"], "--out"),  # the same file by another path
        (["--out", "linked.jsonl"], "--out"),  # a hard link of the task file
        (["--out", "pointer.jsonl"], "--out"),  # a symbolic link to it
        (["--trajectories", "tasks.jsonl"], "--trajectories"),
        (["--out", "replies.txt"], "--out"),  # the script
        (["--out", "r.jsonl", "--trajectories", "r.jsonl"], "--trajectories"),  # one output over the other
        (["--out", "r.jsonl", "--trace", "."], "--trace"),  # the task's trace would be ./tasks.jsonl: the tasks
        (["--trace", "traces", "--script", "traces"], "--trace"),  # the traces it plays
        (["--out", "traces/tasks.jsonl", "--script", "traces"], "--out"),  # one of them
        (["--out", "mytools.py", "--tools", "./mytools.py"], "--out"),
    ],
)
def test_no_output_of_eval_is_one_of_its_inputs(tmp_path: Path, flags: list[str], says: str) -> None:
    (tmp_path / "sub").mkdir()
    write(tmp_path / "tasks.jsonl", [{"id": "tasks", "task": "What is 1 + 1?", "answer": "2"}])
    os.link(tmp_path / "tasks.jsonl", tmp_path / "linked.jsonl")
    (tmp_path / "pointer.jsonl").symlink_to(tmp_path / "tasks.jsonl")
    (tmp_path / "replies.txt").write_text("FINAL: 2\n")
    (tmp_path / "mytools.py").write_text(TOOLS_MODULE)
    assert command("eval", "tasks.jsonl", "--script", "replies.txt", "--trace", "traces", cwd=tmp_path).returncode == 0
    (tmp_path / "r.jsonl").write_text("kept\n")
    before = {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()}
    script = [] if "--script" in flags else ["--script", "replies.txt"]
    line = set_up_error(command("eval", "tasks.jsonl", *script, *flags, cwd=tmp_path))
    assert line.startswith(f"react-text: {says} ") and "written over" in line, line
    assert {p: p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()} == before  # nothing written


def test_a_groups_traces_replay_each_sample_its_own_and_a_wrong_one_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/how-to/async-and-eval.md: `eval --n K --trace DIR` writes a trace an episode
    (`DIR/ID#k`, named by `trace_name`), and `eval --script DIR --n K` plays each sample its own;
    a trace of another sample is refused, never played; without --n the folder of a group says to
    give it; a folder of one script a task plays it for every sample."""
    tasks = write(tmp_path / "tasks.jsonl", TASKS[:1])
    (tmp_path / "one.txt").write_text("FINAL: 2\n", encoding="utf-8")
    traces = tmp_path / "traces"
    assert (
        cli.main(["eval", str(tasks), "--script", str(tmp_path / "one.txt"), "--n", "2", "--trace", str(traces)]) == 0
    )
    assert sorted(p.name for p in traces.iterdir()) == [trace_name("t1#0"), trace_name("t1#1")]
    starts = [json.loads((traces / trace_name(f"t1#{k}")).read_text().splitlines()[0]) for k in (0, 1)]
    assert [(s["task_id"], s["sample"]) for s in starts] == [("t1", 0), ("t1", 1)]
    out = tmp_path / "again.jsonl"
    assert cli.main(["eval", str(tasks), "--script", str(traces), "--n", "2", "--out", str(out)]) == 0
    assert sorted((r["sample"], r["answer"]) for r in results(out)) == [(0, "2"), (1, "2")]
    capsys.readouterr()
    with pytest.raises(ConfigError, match=r"give --n"):
        _scripts_of(traces, 1)
    (traces / trace_name("t1#0")).write_text((traces / trace_name("t1#1")).read_text())  # sample 1's, as 0's
    with pytest.raises(ConfigError, match=r"sample 1 of 't1', not of sample 0"):
        _scripts_of(traces, 2)
    folder = scripts(tmp_path / "scripts", TASKS[:1])
    assert cli.main(["eval", str(tasks), "--script", str(folder), "--n", "3", "--out", str(out)]) == 0
    assert sorted((r["sample"], r["answer"]) for r in results(out)) == [(0, "2"), (1, "2"), (2, "2")]


def _scripts_of(folder: Path, n: int) -> object:
    from react_text.evaluation import scripts as played

    return played.scripts(folder, {"t1": "What is 1 + 1?"}, n=n)
