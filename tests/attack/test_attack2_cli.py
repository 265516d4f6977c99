"""attack2: the command line's set-up errors, as docs/troubleshooting.md lists them."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_support import cli, cli_folder, set_up_error


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return cli_folder(tmp_path)


# troubleshooting.md, "Tasks, traces, scripts and files": each message as listed, one line, exit 2.
CASES = {
    "resume without out": (
        ("eval", "t.jsonl", "--script", "s.txt", "--resume"),
        "--resume needs --out FILE: the results to keep",
    ),
    "base url without model": (
        ("run", "--base-url", "http://127.0.0.1:9/v1", "q"),
        "--base-url needs --model NAME (the model's name on that server)",
    ),
    "no such script": (("run", "--script", "nope.txt", "q"), "nope.txt: no such script file"),
    "empty trace": (("run", "--script", "empty.jsonl"), "empty.jsonl is empty: not a react-text trace"),
    "replay a folder": (("replay", "d"), "d is a folder, not a trace"),
    "no script for a task": (("eval", "t.jsonl", "--script", "d"), "no script for the task"),
    "no such task file": (("eval", "nope.jsonl", "--script", "s.txt"), "nope.jsonl: no such task file"),
    "mcp header without colon": (
        ("run", "--script", "s.txt", "--mcp-header", "NoColon", "--mcp", "python x.py", "q"),
        "--mcp-header takes 'Name: value'",
    ),
    "mcp env unset": (
        ("run", "--script", "s.txt", "--mcp-env", "ATTACK2_NOT_SET", "--mcp", "python x.py", "q"),
        "--mcp-env ATTACK2_NOT_SET: no such variable in this environment (or give NAME=VALUE)",
    ),
    "empty task": (("run", "--script", "s.txt", ""), "the task is empty: give a question, in quotes"),
    "no such root": (("run", "--script", "s.txt", "--root", "nodir", "q"), "--root nodir: no such folder"),
    "trace to no folder": (
        ("run", "--script", "s.txt", "--trace", "nodir/x.jsonl", "q"),
        "cannot write the trace nodir/x.jsonl:",
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_listed_set_up_error_is_its_one_line(folder: Path, name: str) -> None:
    args, message = CASES[name]
    line = set_up_error(cli(*args, cwd=folder))
    assert line.startswith("react-text: ") and message in line


# troubleshooting.md: "*path* `holds no replies to play` | a `--script` text file is missing or
# empty". An empty replies file is instead played as one empty reply ("Your reply was empty."),
# then "the script has 1 replies; call 2", exit 1.
def test_an_empty_script_file_is_refused(folder: Path) -> None:
    (folder / "empty.txt").write_text("")
    line = set_up_error(cli("run", "--script", "empty.txt", "q", cwd=folder))
    assert "holds no replies to play" in line


# async-and-eval.md: "A task file is JSON Lines, one task a line, with the tools it may use
# (`calculator`, `python_doc`, `search`, `read`)"; troubleshooting: "use calculator, python_doc,
# search, read". eval refuses python_doc: "unknown tools in the task file: python_doc (have
# calculator, search, read)".
def test_a_task_may_use_python_doc(folder: Path) -> None:
    (folder / "tp.jsonl").write_text('{"id": "q", "task": "q", "answer": "2", "tools": ["python_doc"]}\n')
    (folder / "pd.txt").write_text("ACTION: python_doc[len]\n---\nFINAL: 2\n")
    done = cli("eval", "tp.jsonl", "--script", "pd.txt", cwd=folder)
    assert done.returncode == 0, done.stderr
