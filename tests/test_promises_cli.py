"""Issue 20, "Tried as a new user would", the command line's part: help texts say the value that
will be used; Ctrl-C during an eval with the embedded model busy stops it cleanly, every time.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from react_text import Limits

LOCK = "/tmp/react-text-llama.lock"  # never two llama.cpp processes at once (the machine's rule)


def react_text(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "react_text.cli", *args], capture_output=True, text=True, timeout=120, check=False
    )


def flag_help(command: str, flag: str) -> str:
    """The help of one flag of a command, on one line."""
    text = " ".join(react_text(command, "--help").stdout.split("options:", 1)[1].split())
    found = re.search(rf"{re.escape(flag)} \S+ (.*?)(?= --[a-z]|$)", text)
    assert found, f"no {flag} in {command} --help"
    return found.group(1)


@pytest.mark.parametrize("command", ["run", "eval"])
def test_the_reply_allowance_help_says_what_each_model_gets(command: str, tmp_path: Path) -> None:
    said = flag_help(command, "--reply-tokens")
    assert "256" in said and "embedded" in said  # the embedded model recommends 256 (LocalModel)
    assert "recommend" in said
    # a model that recommends nothing (a server's, a script) gets what the help says it gets
    script = tmp_path / "replies.txt"
    script.write_text("FINAL: 4\n")
    trace = tmp_path / "run.jsonl"
    assert react_text("run", "--script", str(script), "--trace", str(trace), "x").returncode == 0
    used = json.loads(trace.read_text().splitlines()[0])["limits"]["reply_tokens"]
    assert used == Limits().reply_tokens and str(used) in said


def test_help_that_states_a_default_states_the_one_used(tmp_path: Path) -> None:
    script = tmp_path / "replies.txt"
    script.write_text("FINAL: 4\n")
    trace = tmp_path / "run.jsonl"
    assert react_text("run", "--script", str(script), "--trace", str(trace), "x").returncode == 0
    start = json.loads(trace.read_text().splitlines()[0])
    for flag, used in (
        ("--max-steps", start["limits"]["steps"]),
        ("--instructions-in", start["prompting"]["instructions_in"]),
        ("--parser", start["parser"]),
    ):
        said = flag_help("run", flag)
        stated = re.search(r"default:? (\w+)", said)
        assert stated and stated.group(1) == str(used), (flag, said)


@contextlib.contextmanager
def llama_lock() -> Iterator[None]:
    with open(LOCK, "a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(held, fcntl.LOCK_UN)


@pytest.mark.slow
def test_ctrl_c_during_eval_with_the_embedded_model_busy_exits_130_every_time(tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp", reason='needs pip install "react-text[local]"')
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(
        "".join(
            json.dumps({"id": f"c{n}", "task": f"What is {n} * 17 + {n * 3}?", "answer": str(n * 20)}) + "\n"
            for n in range(40)
        )
    )
    for attempt, delay in enumerate((0.0, 0.15, 0.4, 0.8, 1.3)):
        out = tmp_path / f"results-{attempt}.jsonl"
        with llama_lock():
            process = subprocess.Popen(
                [sys.executable, "-m", "react_text.cli", "eval", str(tasks), "--out", str(out)],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            deadline = time.monotonic() + 240
            while not (out.exists() and out.read_text()) and time.monotonic() < deadline:  # the model is warm
                assert process.poll() is None, process.communicate()
                time.sleep(0.05)
            time.sleep(delay)  # into the next task's model calls, at a different moment each time
            process.send_signal(signal.SIGINT)
            try:
                stdout, stderr = process.communicate(timeout=120)
            except subprocess.TimeoutExpired:
                process.kill()
                stdout, stderr = process.communicate()
                pytest.fail(f"attempt {attempt}: still running 120 s after Ctrl-C")
        assert process.returncode == 130, (attempt, process.returncode, stderr[-2000:])
        assert "Traceback" not in stderr and "Exception ignored" not in stderr, (attempt, stderr[-2000:])
        assert stderr.rstrip().endswith("interrupted"), (attempt, stderr[-500:])
        lines = out.read_text().splitlines()
        assert lines and all(json.loads(line)["id"] for line in lines), attempt  # every result whole
        assert stdout == "" or "right" not in stdout
