"""Attacks on "Evaluation at scale": odd task ids, damaged results files, resuming.

README: "`react-text eval tasks.jsonl ... --trace traces/` # one trace per task: traces/ID.jsonl";
"`--script` ... every task gets a scripted model of its own (from `DIR/ID.jsonl`, written by
`eval --trace DIR` ...)"; "Results are written to `--out` as each episode ends, one JSON line
each, flushed: a crash loses nothing already done. `--resume` keeps the lines already in the file
(a last line cut short by a crash is dropped), runs only the tasks whose ids are not there, and
appends; ids must be unique in a task file."
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

from _support import cli


def tasks(where: Path, rows: list[dict[str, object]]) -> None:
    (where / "tasks.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_two_ids_never_share_one_trace_file(tmp_path: Path) -> None:
    """README: "one trace per task: traces/ID.jsonl". Ids `a/b` and `a_b` are distinct and unique;
    each must get a trace of its own (here both map to traces/a_b.jsonl and one is lost)."""
    tasks(
        tmp_path,
        [{"id": "a/b", "task": "What is 1+1?", "answer": "2"}, {"id": "a_b", "task": "What is 2+2?", "answer": "4"}],
    )
    (tmp_path / "s.txt").write_text("THOUGHT: x\nFINAL: 2\n")
    (tmp_path / "tr").mkdir()
    done = cli("eval", "tasks.jsonl", "--script", "s.txt", "--trace", "tr", cwd=tmp_path)
    assert done.returncode in (0, 1), done.stderr  # 1: the second answer is scored wrong
    traces = sorted((tmp_path / "tr").iterdir())
    started = [json.loads(p.read_text().splitlines()[0])["task"] for p in traces]
    assert sorted(started) == ["What is 1+1?", "What is 2+2?"], [p.name for p in traces]


def test_an_id_is_never_written_outside_the_trace_folder(tmp_path: Path) -> None:
    """README: "traces/ID.jsonl": an id like `../x` must stay inside the folder."""
    tasks(tmp_path, [{"id": "../x", "task": "What is 1+1?", "answer": "2"}])
    (tmp_path / "s.txt").write_text("THOUGHT: x\nFINAL: 2\n")
    (tmp_path / "tr").mkdir()
    done = cli("eval", "tasks.jsonl", "--script", "s.txt", "--trace", "tr", cwd=tmp_path)
    assert done.returncode in (0, 2), done.stderr
    assert not (tmp_path / "x.jsonl").exists()


def test_resume_after_a_cut_last_line_leaves_a_valid_results_file(tmp_path: Path) -> None:
    """README: "`--resume` keeps the lines already in the file (a last line cut short by a crash is
    dropped), runs only the tasks whose ids are not there, and appends". After resuming, every line
    of the results file must be JSON, one per task."""
    tasks(tmp_path, [{"id": f"t{i}", "task": "What is 1+1?", "answer": "2"} for i in range(3)])
    (tmp_path / "s.txt").write_text("THOUGHT: x\nFINAL: 2\n")
    assert cli("eval", "tasks.jsonl", "--script", "s.txt", "--out", "out.jsonl", cwd=tmp_path).returncode == 0
    lines = (tmp_path / "out.jsonl").read_text().splitlines(keepends=True)
    (tmp_path / "out.jsonl").write_text("".join(lines[:2]) + lines[2][:40])  # a crash mid-write
    done = cli("eval", "tasks.jsonl", "--script", "s.txt", "--out", "out.jsonl", "--resume", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    rows = [json.loads(line) for line in (tmp_path / "out.jsonl").read_text().splitlines() if line.strip()]
    assert sorted(r["id"] for r in rows) == ["t0", "t1", "t2"]


def test_a_second_resume_runs_nothing(tmp_path: Path) -> None:
    """README: "runs only the tasks whose ids are not there": resuming a finished file runs none."""
    tasks(tmp_path, [{"id": f"t{i}", "task": "What is 1+1?", "answer": "2"} for i in range(3)])
    (tmp_path / "s.txt").write_text("THOUGHT: x\nFINAL: 2\n")
    assert cli("eval", "tasks.jsonl", "--script", "s.txt", "--out", "out.jsonl", cwd=tmp_path).returncode == 0
    before = (tmp_path / "out.jsonl").read_text()
    done = cli("eval", "tasks.jsonl", "--script", "s.txt", "--out", "out.jsonl", "--resume", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out.jsonl").read_text() == before


def test_ctrl_c_mid_eval_then_resume_finishes_every_task_once(tmp_path: Path) -> None:
    """README: "after a crash or Ctrl-C: only what is left" and "a crash loses nothing already done".
    The eval is interrupted as soon as two results are written."""
    tasks(tmp_path, [{"id": f"t{i}", "task": "What is 1+1?", "answer": "2", "tools": ["calculator"]} for i in range(8)])
    (tmp_path / "s.txt").write_text("THOUGHT: x\nACTION: calculator[1+1]\n---\nTHOUGHT: y\nFINAL: 2\n")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "react_text.cli",
            "eval",
            "tasks.jsonl",
            "--script",
            "s.txt",
            "--out",
            "out.jsonl",
            "--concurrency",
            "1",
        ],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        out = tmp_path / "out.jsonl"
        if out.exists() and out.read_text().count("\n") >= 2:
            break
        time.sleep(0.005)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert "Traceback" not in err, err[-800:]
    done = cli("eval", "tasks.jsonl", "--script", "s.txt", "--out", "out.jsonl", "--resume", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    ids = [json.loads(line)["id"] for line in (tmp_path / "out.jsonl").read_text().splitlines() if line.strip()]
    assert sorted(ids) == [f"t{i}" for i in range(8)], ids


def test_a_bad_task_line_is_one_line_and_exit_2(tmp_path: Path) -> None:
    """README: "Set-up mistakes are one line on stderr and exit status 2, never a traceback: ... an
    empty task, a file that is not a trace, a bad task line"."""
    wrong = []
    for line in [
        '{"id": "x", "task": "", "answer": "1"}',
        '{"id": "x", "task": "   ", "answer": "1"}',
        '{"id": "x", "task": 5, "answer": "1"}',
        '{"id": null, "task": "a", "answer": "1"}',
        '{"id": "x", "task": "a", "answer": "1", "tools": "calculator"}',
        '{"id": "x", "task": "a", "answer": "1", "tools": ["nope"]}',
        "[1]",
        "{",
        '"x"',
        '{"id": ["x"], "task": "a", "answer": "1"}',
    ]:
        (tmp_path / "bad.jsonl").write_text(line + "\n")
        (tmp_path / "s.txt").write_text("FINAL: 1\n")
        done = cli("eval", "bad.jsonl", "--script", "s.txt", cwd=tmp_path)
        if "Traceback" in done.stderr or done.returncode != 2 or len(done.stderr.strip().splitlines()) != 1:
            wrong.append((line, done.returncode, done.stderr.strip().splitlines()[-1:]))
    assert not wrong, wrong


def test_tools_given_as_one_string_is_named_as_such(tmp_path: Path) -> None:
    """README: "Set-up mistakes are one line on stderr and exit status 2 ... a bad task line". The
    line says `"tools": "calculator"` (a string, not a list); the error should say so, not list the
    letters c, a, l, c, u, l, a, t, o, r as unknown tools."""
    (tmp_path / "bad.jsonl").write_text('{"id": "x", "task": "a", "answer": "1", "tools": "calculator"}\n')
    (tmp_path / "s.txt").write_text("FINAL: 1\n")
    done = cli("eval", "bad.jsonl", "--script", "s.txt", cwd=tmp_path)
    assert done.returncode == 2
    assert "c, a, l" not in done.stderr, done.stderr
