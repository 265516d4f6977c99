"""attack2: `react-text eval` with odd task ids, traces per task, resume after a crash, and
ScriptedModel.per_run under concurrency (docs/how-to/async-and-eval.md, docs/how-to/testing.md)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

from react_text import Agent, ScriptedModel


def _eval(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "react_text.cli", "eval", *args], capture_output=True, text=True, cwd=cwd, timeout=180
    )


def _one_line_exit_2(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


# async-and-eval.md: 'A task line is {"id": text or whole number, ...}; ... a wrong type, is one
# line naming the line and the field, exit 2' (JSON true is a bool, which Python counts as an int).
@pytest.mark.parametrize(
    ("line", "field"),
    [
        ('{"id": true, "task": "q", "answer": "2"}', "id"),
        ('{"id": 1.5, "task": "q", "answer": "2"}', "id"),
        ('{"id": "", "task": "q", "answer": "2"}', "id"),
        ('{"id": "q", "task": "q", "answer": true}', "answer"),
        ('{"id": "q", "task": "q", "answer": "2", "tools": "calculator"}', "tools"),
        ('{"id": "q", "task": "q", "answer": "2", "note": 1}', "note"),
    ],
)
def test_a_task_line_of_the_wrong_type_is_one_line_naming_the_line_and_field(
    tmp_path: Path, line: str, field: str
) -> None:
    (tmp_path / "t.jsonl").write_text('{"id": "ok", "task": "q", "answer": "2"}\n' + line + "\n")
    (tmp_path / "s.txt").write_text("FINAL: 2\n")
    message = _one_line_exit_2(_eval("t.jsonl", "--script", "s.txt", cwd=tmp_path))
    assert "t.jsonl:2:" in message and field in message


# async-and-eval.md: "`--trace DIR` names each trace from its task id with odd characters escaped
# ... never the same file), and `--script DIR` never plays a trace recorded for another task";
# "--resume ... runs only the tasks whose ids are not there"; guarantees.md: "every task id gets a
# trace file of its own (names reversible, inside the folder)".
ODD_IDS: list[object] = ["..", "a/b", "a_2fb", ".hidden", "x" * 200, "é 1", 7, "7 ", "CON", "q\\1"]


def test_odd_ids_get_traces_of_their_own_inside_the_folder_and_replay_them(tmp_path: Path) -> None:
    lines = [json.dumps({"id": i, "task": f"What is {n} + {n}?", "answer": str(2 * n)}) for n, i in enumerate(ODD_IDS)]
    (tmp_path / "t.jsonl").write_text("\n".join(lines) + "\n")
    (tmp_path / "scripts").mkdir()
    # one scripted reply file that every task plays from the start (answers 0: right only for the first)
    (tmp_path / "s.txt").write_text("FINAL: 0\n")
    first = _eval(
        "t.jsonl", "--script", "s.txt", "--trace", "traces", "--out", "r1.jsonl", "--concurrency", "5", cwd=tmp_path
    )
    assert first.returncode in (0, 1), first.stderr
    traces = sorted(p for p in (tmp_path / "traces").rglob("*") if p.is_file())
    assert len(traces) == len(ODD_IDS)
    assert all(p.parent == tmp_path / "traces" and len(p.name.encode()) <= 255 for p in traces)
    again = _eval("t.jsonl", "--script", "traces", "--out", "r2.jsonl", "--concurrency", "3", cwd=tmp_path)
    assert again.returncode in (0, 1), again.stderr
    r1 = {str(r["id"]): r for r in map(json.loads, (tmp_path / "r1.jsonl").read_text().splitlines())}
    r2 = {str(r["id"]): r for r in map(json.loads, (tmp_path / "r2.jsonl").read_text().splitlines())}
    # a whole-number id comes back as its text in the results (7 -> "7"), as "used twice" implies
    assert set(r1) == set(r2) == {str(i) for i in ODD_IDS}
    assert all(r1[k]["answer"] == r2[k]["answer"] == "0" for k in r1)


# The same promises for an id too long for a file name: --trace shortens it (`xxx...~0d4e2ca9.jsonl`),
# but `--script DIR` then stats DIR/<the whole id>.txt and dies with a traceback
# (OSError: [Errno 36] File name too long), exit 1.
def test_a_long_id_recorded_with_trace_replays_with_script_dir(tmp_path: Path) -> None:
    (tmp_path / "t.jsonl").write_text(json.dumps({"id": "x" * 300, "task": "q", "answer": "2"}) + "\n")
    (tmp_path / "s.txt").write_text("FINAL: 2\n")
    assert _eval("t.jsonl", "--script", "s.txt", "--trace", "traces", cwd=tmp_path).returncode == 0
    again = _eval("t.jsonl", "--script", "traces", cwd=tmp_path)
    assert "Traceback" not in again.stderr
    assert again.returncode == 0, again.stderr


def test_a_results_file_cut_mid_line_resumes_each_task_once(tmp_path: Path) -> None:
    lines = [json.dumps({"id": i, "task": "q", "answer": "2"}) for i in ("a", "b", "c", 4)]
    (tmp_path / "t.jsonl").write_text("\n".join(lines) + "\n")
    (tmp_path / "s.txt").write_text("FINAL: 2\n")
    assert _eval("t.jsonl", "--script", "s.txt", "--out", "r.jsonl", cwd=tmp_path).returncode == 0
    out = tmp_path / "r.jsonl"
    text = out.read_text()
    out.write_text(text[: len(text) - 7])  # a crash half-way through the last line
    resumed = _eval("t.jsonl", "--script", "s.txt", "--out", "r.jsonl", "--resume", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    ids = [json.loads(line)["id"] for line in out.read_text().splitlines()]
    assert sorted(map(str, ids)) == ["4", "a", "b", "c"]


# async-and-eval.md: "ids must be unique in a task file"; an id 1 and an id "1" would name one
# results line and one trace.
def test_a_number_id_and_the_same_id_as_text_are_refused_as_twice(tmp_path: Path) -> None:
    (tmp_path / "t.jsonl").write_text(
        '{"id": 1, "task": "q", "answer": "2"}\n{"id": "1", "task": "q", "answer": "2"}\n'
    )
    (tmp_path / "s.txt").write_text("FINAL: 2\n")
    message = _one_line_exit_2(_eval("t.jsonl", "--script", "s.txt", cwd=tmp_path))
    assert "t.jsonl:2:" in message and "used twice" in message


# testing.md: "`ScriptedModel.per_run(replies)` gives every run of one agent its own copy of the
# script, even when runs overlap (runs are told apart by their conversation ...)". Runs of the SAME
# task have the same conversation at first: each must still get the script in full.
def test_per_run_serves_concurrent_runs_of_the_same_task_each_in_full() -> None:
    counter = [0]

    def count() -> str:
        """Count one up."""
        counter[0] += 1
        return str(counter[0])

    agent = Agent(ScriptedModel.per_run(["ACTION: count[]", "ACTION: count[]", "FINAL: done"]), tools=[count])

    async def main() -> list[object]:
        return list(await asyncio.gather(*(agent.arun("the same task") for _ in range(6))))

    results = asyncio.run(main())
    assert all(r.answer == "done" and r.stop_reason == "final" and len(r.steps) == 3 for r in results)  # type: ignore[attr-defined]
    assert counter[0] == 12
