"""The react-text command, end to end, in a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


def react_text(*args: str, stdin: str = "", timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "react_text.cli", *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def test_parse_prints_json() -> None:
    done = react_text("parse", stdin="THOUGHT: x\n**Action:** add[2, 3]\nObservation: 5")
    assert done.returncode == 0
    assert json.loads(done.stdout) == {
        "kind": "action",
        "tool": "add",
        "input": "2, 3",
        "thought": "x",
        "discarded": "",
    }


def test_parse_strict_refuses_a_dialect() -> None:
    done = react_text("parse", "--strict", stdin="Action: add\nAction Input: 2, 3")
    assert done.returncode == 1
    assert json.loads(done.stdout)["kind"] == "error"


def test_help_for_every_subcommand() -> None:
    for command in ("run", "parse"):
        done = react_text(command, "--help")
        assert done.returncode == 0 and "examples:" in done.stdout


def test_bad_flag_value_says_what_is_valid() -> None:
    done = react_text("run", "--api", "rest", "x")
    assert done.returncode == 2
    assert "invalid choice: 'rest' (choose from chat, completion)" in done.stderr.replace(
        "'chat', 'completion'", "chat, completion"
    )


def test_unreachable_server_is_a_clear_message() -> None:
    done = react_text("run", "--model", "m", "--base-url", "http://127.0.0.1:9/v1", "What is 1 + 1?")
    assert done.returncode == 1
    assert "could not reach http://127.0.0.1:9/v1" in done.stdout
    assert "Traceback" not in done.stderr


@pytest.mark.slow
def test_run_on_the_embedded_model() -> None:
    done = react_text("run", "What is 17 * 23 + 5?")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ACTION: calculator[17 * 23 + 5]" in done.stdout
    assert "OBSERVATION: 396" in done.stdout
    assert done.stdout.rstrip().endswith("396")


@pytest.mark.slow
def test_run_json_on_the_embedded_model() -> None:
    done = react_text("run", "--json", "What is 1234 * 5678?")
    result = json.loads(done.stdout)
    assert (result["answer"], result["stop_reason"]) == ("7006652", "final")
    assert result["usage"]["total_tokens"] == result["usage"]["prompt_tokens"] + result["usage"]["completion_tokens"]
