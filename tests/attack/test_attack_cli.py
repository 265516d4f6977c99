"""Attacks on "The command line": `react-text parse` and `run --script` on degenerate replies.

README: "`react-text parse < reply.txt` # one reply's parse, as JSON"; "`--script` also takes a
text file of replies separated by lines of `---`"; the parser is "linear time" and "no reply may
hang the engine".
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from _support import cli


def test_parse_prints_json() -> None:
    """README: "`react-text parse < reply.txt` # one reply's parse, as JSON"."""
    done = subprocess.run(
        [sys.executable, "-m", "react_text.cli", "parse"],
        input="THOUGHT: t\nACTION: calculator[1 + 1]\n",
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert done.returncode == 0, done.stderr
    parsed = json.loads(done.stdout)
    assert "calculator" in json.dumps(parsed) and "1 + 1" in json.dumps(parsed)


@pytest.mark.parametrize("pad", [" ", "\t"], ids=["spaces", "tabs"])
def test_parse_of_a_padded_reply_finishes(pad: str) -> None:
    """A 30 KB reply: a tool name then a run of blanks, as a degenerate model writes until its
    allowance runs out. Linear time means milliseconds; 20 s is generous."""
    try:
        done = subprocess.run(
            [sys.executable, "-m", "react_text.cli", "parse"],
            input="THOUGHT: t\nACTION: calculator" + pad * 30_000,
            capture_output=True,
            text=True,
            timeout=20,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("react-text parse did not finish a 30 KB reply in 20 s")
    # A tool name and no input is an error reading: printed, and exit status 1 (as grep finding nothing).
    assert done.returncode == 1, done.stderr
    assert json.loads(done.stdout)["kind"] == "error"


def test_run_script_with_a_padded_reply_finishes(tmp_path: Path) -> None:
    """`react-text run --script replies.txt` with one degenerate reply must end, not hang."""
    (tmp_path / "r.txt").write_text("THOUGHT: t\nACTION: calculator" + " " * 30_000 + "\n---\nFINAL: 2\n")
    try:
        done = cli("run", "--script", "r.txt", "--reply-tokens", "100000", "What is 1+1?", cwd=tmp_path, timeout=30)
    except subprocess.TimeoutExpired:
        pytest.fail("react-text run --script did not finish in 30 s")
    assert done.returncode in (0, 1)
