"""Issue 33, found by a new user on a fresh clone: eval --resume redoes what the infrastructure
failed and eval says why an episode failed; a misspelt flag is named, with the close one and the
command's --help; an empty task file is an error; replay says why a cut trace ends; --n's progress
names the sample.

Each test runs the command as the user did (a fresh interpreter); the oracle is what the user
needed to read, checked on the words printed, and the results file as written.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_support import cli, set_up_error

from react_text import ConfigError
from react_text.evaluation import load

UNREACHABLE = "http://127.0.0.1:9/v1"  # the discard port: nothing listens, the connection is refused at once
TASKS = [
    {"id": "t1", "task": "What is 1 + 1?", "answer": "2"},
    {"id": "t2", "task": "What is 3 + 3?", "answer": "6"},
]


def task_file(folder: Path) -> Path:
    path = folder / "tasks.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in TASKS), encoding="utf-8")
    return path


def right_answers(folder: Path) -> Path:
    """A folder of scripts, one a task (ID.txt), each giving the task's right answer."""
    scripts = folder / "scripts"
    scripts.mkdir()
    for row in TASKS:
        (scripts / f"{row['id']}.txt").write_text(f"FINAL: {row['answer']}\n", encoding="utf-8")
    return scripts


def test_resume_runs_again_the_episodes_that_the_server_failed(tmp_path: Path) -> None:
    """Issue 33: after a run whose every episode ended in model_error (the server unreachable),
    --resume said "2 of 2 tasks already done" and kept the zeros."""
    tasks, out = task_file(tmp_path), tmp_path / "results.jsonl"
    failed = cli("eval", str(tasks), "--model", "m", "--base-url", UNREACHABLE, "--out", str(out), cwd=tmp_path)
    assert failed.returncode == 1, failed.stderr
    assert {json.loads(line)["stop_reason"] for line in out.read_text().splitlines()} == {"model_error"}
    again = cli(
        "eval", str(tasks), "--script", str(right_answers(tmp_path)), "--out", str(out), "--resume", cwd=tmp_path
    )
    assert again.returncode == 0, again.stdout + again.stderr
    assert "already done" not in again.stderr
    assert "2/2 right" in again.stdout
    kept = {}
    for line in out.read_text().splitlines():  # an episode written twice counts as its last line
        row = json.loads(line)
        kept[row["id"]] = row
    assert {(i, r["stop_reason"], r["ok"]) for i, r in kept.items()} == {("t1", "final", True), ("t2", "final", True)}


def test_eval_says_why_an_episode_failed(tmp_path: Path) -> None:
    """Issue 33: the table showed `model_error: ` with nothing after it; the reason was only in
    the results file. The table and the progress lines say it."""
    done = cli("eval", str(task_file(tmp_path)), "--model", "m", "--base-url", UNREACHABLE, cwd=tmp_path)
    assert done.returncode == 1
    rows = [line for line in done.stdout.splitlines() if line.startswith(("t1 ", "t2 "))]
    assert len(rows) == 2
    for row in rows:
        assert "model_error: could not reach http://127.0.0.1:9/v1" in row, row
    progress = [line for line in done.stderr.splitlines() if line.startswith("[")]
    assert len(progress) == 2
    assert all("could not reach http://127.0.0.1:9/v1" in line for line in progress), progress
    assert "--resume" in done.stderr  # what to do about it: the server failed, not the model


@pytest.mark.parametrize(
    ("args", "bad", "close", "command"),
    [
        (("run", "--temprature", "0.5", "What is 2 + 2?"), "--temprature", "--temperature", "run"),
        (("eval", "--temprature", "0.5", "tasks.jsonl"), "--temprature", "--temperature", "eval"),
        (("run", "--max-stesp", "3", "What is 2 + 2?"), "--max-stesp", "--max-steps", "run"),
        (("eval", "tasks.jsonl", "--resme"), "--resme", "--resume", "eval"),
        (("parse", "--comapre"), "--comapre", "--compare", "parse"),
        (("run", "--temprature=0.5", "What is 2 + 2?"), "--temprature", "--temperature", "run"),
    ],
)
def test_a_misspelt_flag_is_named_with_the_close_one_and_the_commands_help(
    tmp_path: Path, args: tuple[str, ...], bad: str, close: str, command: str
) -> None:
    """Issue 33: `run --temprature 0.5 "task"` named the task as the unrecognised argument and
    pointed at the top-level help."""
    task_file(tmp_path)
    line = set_up_error(cli(*args, cwd=tmp_path))
    assert line.startswith(f"react-text {command}: error: "), line
    assert bad in line and close in line, line
    assert line.endswith(f"(see react-text {command} --help)"), line
    assert "What is 2 + 2?" not in line and "tasks.jsonl" not in line, line


def test_run_names_eval_when_the_close_flag_is_evals(tmp_path: Path) -> None:
    """run has no --temperature (it samples at the model's default): the close flag is eval's."""
    line = set_up_error(cli("run", "--temprature", "0.5", "What is 2 + 2?", cwd=tmp_path))
    assert "--temperature" in line and "eval" in line, line


def test_a_second_positional_is_still_named(tmp_path: Path) -> None:
    line = set_up_error(cli("run", "What is", "2 + 2?", cwd=tmp_path))
    assert line == "react-text run: error: unrecognized arguments: '2 + 2?' (see react-text run --help)", line


@pytest.mark.parametrize("text", ["", "\n", "  \n\n\t\n"])
def test_an_empty_task_file_is_an_error(tmp_path: Path, text: str) -> None:
    """Issue 33: an empty task file exited 0 with "0/0 right"."""
    empty = tmp_path / "empty.jsonl"
    empty.write_text(text, encoding="utf-8")
    (tmp_path / "s.txt").write_text("FINAL: 2\n", encoding="utf-8")
    line = set_up_error(cli("eval", "empty.jsonl", "--script", "s.txt", cwd=tmp_path))
    assert line.startswith("react-text: empty.jsonl holds no task"), line
    with pytest.raises(ConfigError, match="holds no task"):
        load(empty)


def traced_run(folder: Path) -> list[str]:
    """The lines of a two-step run's trace."""
    (folder / "s.txt").write_text("THOUGHT: add\nACTION: calculator[1 + 1]\n---\nFINAL: 2\n", encoding="utf-8")
    done = cli("run", "--script", "s.txt", "--trace", "whole.jsonl", "What is 1 + 1?", cwd=folder)
    assert done.returncode == 0, done.stderr
    return (folder / "whole.jsonl").read_text(encoding="utf-8").splitlines(keepends=True)


def test_replay_of_a_trace_cut_short_says_why_it_ends(tmp_path: Path) -> None:
    """Issue 33: `replay` of a trace cut by Ctrl-C printed a header and exited 1, no word why.
    It replays the steps recorded and then says the run never ended, and where it was cut."""
    lines = traced_run(tmp_path)
    events = [json.loads(line)["event"] for line in lines]
    assert events == ["run_start", "request", "reply", "step", "request", "reply", "step", "run_end"]
    (tmp_path / "cut.jsonl").write_text("".join(lines[:5]), encoding="utf-8")  # Ctrl-C during the second call
    done = cli("replay", "cut.jsonl", cwd=tmp_path)
    assert done.returncode == 1
    assert "ACTION: calculator[1 + 1]" in done.stdout  # the step recorded is replayed
    assert "FINAL" not in done.stdout
    said = done.stderr.strip()
    assert "Traceback" not in said and len(said.splitlines()) == 1, said
    assert "no run_end" in said and "cut short" in said and "after step 1" in said, said
    assert "waiting for the model" in said, said


def test_replay_of_a_trace_cut_before_its_first_step_says_so(tmp_path: Path) -> None:
    lines = traced_run(tmp_path)
    (tmp_path / "cut.jsonl").write_text("".join(lines[:3]), encoding="utf-8")  # a reply, never read into a step
    done = cli("replay", "cut.jsonl", cwd=tmp_path)
    assert done.returncode == 1
    said = done.stderr.strip()
    assert "no run_end" in said and "before its first step" in said and "a reply it never read" in said, said


def test_a_whole_trace_replays_with_nothing_on_stderr(tmp_path: Path) -> None:
    traced_run(tmp_path)
    done = cli("replay", "whole.jsonl", cwd=tmp_path)
    assert done.returncode == 0 and done.stderr == ""


def test_the_progress_of_n_episodes_names_each_sample(tmp_path: Path) -> None:
    """Issue 33: with --n 2 the progress lines showed each task twice with no sample number."""
    tasks = task_file(tmp_path)
    done = cli("eval", str(tasks), "--script", str(right_answers(tmp_path)), "--n", "2", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    named = sorted(line.split()[2] for line in done.stderr.splitlines() if line.startswith("["))
    assert named == ["t1#0", "t1#1", "t2#0", "t2#1"]
