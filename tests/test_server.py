"""OpenAIChat and OpenAICompletion against a real llama.cpp server on 127.0.0.1 (the `server` extra).

The fixture starts llama-cpp-python's OpenAI-compatible server with the embedded model, waits for
it, and stops it at the end.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator

import pytest

pytest.importorskip("llama_cpp.server", reason='needs pip install "react-text[server]"')

from react_text import Agent, Message, ModelError, OpenAIChat, OpenAICompletion, Request
from react_text.backends.local import default_model_path
from react_text.toolbox import calculator

pytestmark = pytest.mark.slow
STOP = ("OBSERVATION:",)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(port: int) -> subprocess.Popen[bytes]:
    command = [
        sys.executable, "-m", "llama_cpp.server",
        "--model", str(default_model_path()), "--model_alias", "smollm2",
        "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "4096", "--seed", "0",
    ]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the llama.cpp server exited with {process.returncode}")
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2)
            return process
        except OSError:
            time.sleep(0.3)
    process.kill()
    raise RuntimeError("the llama.cpp server did not start within 120 s")


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    port = free_port()
    process = start_server(port)
    yield f"http://127.0.0.1:{port}/v1"
    process.terminate()
    process.wait(timeout=30)


def test_chat_reports_usage(base_url: str) -> None:
    reply = OpenAIChat("smollm2", base_url=base_url).generate(Request((Message("user", "Say hello."),), STOP, 16))
    assert reply.text
    assert reply.usage is not None and reply.usage.prompt_tokens > 0 and reply.usage.completion_tokens > 0


def test_completion_honours_stop(base_url: str) -> None:
    prompt = "OBSERVATION: 1\nTHOUGHT: a\nOBSERVATION: 2\nTHOUGHT: b\nOBSERVATION: 3\nTHOUGHT: c\n"
    reply = OpenAICompletion("smollm2", base_url=base_url).generate(Request(prompt, STOP, 40))
    assert "OBSERVATION:" not in reply.text
    assert reply.usage is not None and reply.usage.completion_tokens <= 40


def test_completion_streams(base_url: str) -> None:
    reply = OpenAICompletion("smollm2", base_url=base_url, stream=True).generate(
        Request("QUESTION: What is 2 + 2?\nTHOUGHT:", STOP, 20)
    )
    assert reply.text


def test_chat_streams_and_stops_at_a_made_up_observation(base_url: str) -> None:
    prompt = "Copy these lines exactly, then continue the pattern:\nACTION: a[1]\nOBSERVATION: 1\nACTION: a[2]\nOBSERVATION: 2"
    reply = OpenAIChat("smollm2", base_url=base_url, stream=True).generate(
        Request((Message("user", prompt),), STOP, 60)
    )
    assert reply.text  # streamed pieces were read
    # The server stops at `stop`, or the client stops reading in the chunk where a label begins:
    # either way, at most one label, and nothing past the end of its line.
    assert reply.text.count("OBSERVATION:") <= 1
    assert "\n" not in reply.text.partition("OBSERVATION:")[2]


def test_agent_over_the_completion_endpoint_with_a_grammar(base_url: str) -> None:
    model = OpenAICompletion("smollm2", base_url=base_url, grammar=True)
    result = Agent(model, tools=[calculator], example="examples/calculator", max_steps=4).run("What is 17 * 23 + 5?")
    assert (result.answer, result.stop_reason) == ("396", "final")


def test_agent_over_the_chat_endpoint_ends_cleanly(base_url: str) -> None:
    model = OpenAIChat("smollm2", base_url=base_url, grammar=True)
    result = Agent(model, tools=[calculator], example="examples/calculator", max_steps=3).run("What is 17 * 23 + 5?")
    assert result.stop_reason in {"final", "max_steps"}
    assert all(step.reply.startswith("THOUGHT: ") for step in result.steps)  # the grammar held


def test_server_killed_mid_run_is_a_model_error() -> None:
    port = free_port()
    process = start_server(port)
    url = f"http://127.0.0.1:{port}/v1"
    model = OpenAICompletion("smollm2", base_url=url, max_retries=1, timeout=10, grammar=True)

    def kill_then_compute(expression: str) -> str:
        process.kill()
        process.wait(timeout=30)
        return "396"

    from react_text import tool

    calc = tool(kill_then_compute, name="calculator")
    result = Agent(model, tools=[calc], example="examples/calculator", max_steps=4).run("What is 17 * 23 + 5?")
    assert result.stop_reason == "model_error", result
    assert f"127.0.0.1:{port}" in (result.error or "")
    assert len(result.steps) == 1 and result.steps[0].observation == "396"
    with pytest.raises(ModelError):
        model.generate(Request("x", STOP, 5))


def test_the_readme_python_example_runs_against_a_real_server(base_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The README's Python example, run as written; OPENAI_BASE_URL points the client at llama.cpp."""
    from pathlib import Path

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    snippet = readme.split("```python\n", 1)[1].split("```", 1)[0]
    monkeypatch.setenv("OPENAI_BASE_URL", base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-local-not-checked")
    namespace: dict[str, object] = {}
    exec(compile(snippet, "README.md", "exec"), namespace)
    result = namespace["result"]
    assert result.stop_reason in {"final", "max_steps", "max_tokens", "format_errors"}  # type: ignore[attr-defined]
    assert result.usage.total_tokens > 0  # type: ignore[attr-defined]
    assert namespace["run"].result.steps  # type: ignore[attr-defined]
