"""The command line as a user meets it, for the tests of its messages: `react-text ...` in a fresh
interpreter, and the one-line set-up error (exit status 2, no traceback) it must end with.

    line = set_up_error(cli("run", "--script", "d", "q", cwd=folder))
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def cli(*args: str, cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """`react-text ARGS...` run in `cwd`, its output captured."""
    return subprocess.run(
        [sys.executable, "-m", "react_text.cli", *args], capture_output=True, text=True, cwd=cwd, timeout=timeout
    )


def set_up_error(done: subprocess.CompletedProcess[str]) -> str:
    """The one line a set-up mistake prints: exit status 2, one line on stderr, no traceback."""
    assert done.returncode == 2, (done.returncode, done.stdout[-300:], done.stderr)
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


def cli_folder(folder: Path) -> Path:
    """A folder with what the messages' tests name: a script (s.txt), a task file (t.jsonl), an
    empty task file (empty.jsonl) and a folder (d)."""
    (folder / "s.txt").write_text("FINAL: 2\n")
    (folder / "t.jsonl").write_text('{"id": "q", "task": "q", "answer": "2"}\n')
    (folder / "empty.jsonl").write_text("")
    (folder / "d").mkdir()
    return folder
