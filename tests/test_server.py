"""OpenAIChat and OpenAICompletion against a real llama.cpp server on 127.0.0.1 (the `server` extra).

The server is llama-cpp-python's OpenAI-compatible server with the embedded model. At most one
runs at a time (2 cores): a test that needs another (a small context window, one to kill) stops
the one running first.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("llama_cpp.server", reason='needs pip install "react-text[server]"')

from react_text import Agent, Limits, Message, ModelError, OpenAIChat, OpenAICompletion, Reply, Request
from react_text.backends.local import default_model_path
from react_text.core.errors import ContextLengthError
from react_text.tools.toolbox import calculator

pytestmark = pytest.mark.slow
STOP = ("OBSERVATION:",)
SMALL_CTX = 256


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(port: int, n_ctx: int = 4096) -> subprocess.Popen[bytes]:
    command = [
        sys.executable, "-m", "llama_cpp.server",
        "--model", str(default_model_path()), "--model_alias", "smollm2",
        "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(n_ctx), "--seed", "0",
    ]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the llama.cpp server exited with {process.returncode}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2):
                return process
        except OSError:
            time.sleep(0.3)
    process.kill()
    raise RuntimeError("the llama.cpp server did not start within 120 s")


class OneServer:
    """The llama.cpp server of this module: asking for another kind stops the one running first."""

    def __init__(self) -> None:
        self.process: subprocess.Popen[bytes] | None = None
        self.n_ctx = 0
        self.url = ""

    def start(self, n_ctx: int = 4096, *, fresh: bool = False) -> str:
        running = self.process is not None and self.process.poll() is None
        if running and self.n_ctx == n_ctx and not fresh:
            return self.url
        self.stop()
        port = free_port()
        self.process, self.n_ctx, self.url = start_server(port, n_ctx), n_ctx, f"http://127.0.0.1:{port}/v1"
        return self.url

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=30)
        self.process = None


@pytest.fixture(scope="module")
def server() -> Iterator[OneServer]:
    one = OneServer()
    yield one
    one.stop()


@pytest.fixture
def base_url(server: OneServer) -> str:
    return server.start()


class ThroughAgenerate:
    """A model whose every call goes through `agenerate`, each in a fresh event loop, for a sync Agent."""

    def __init__(self, model: Any) -> None:
        self._model = model

    def __getattr__(self, name: str) -> Any:
        return getattr(self._model, name)

    def generate(self, request: Request) -> Reply:
        return asyncio.run(self._model.agenerate(request))  # type: ignore[no-any-return]


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
    result = Agent(model, tools=[calculator], limits=Limits(steps=4)).run("What is 17 * 23 + 5?")
    assert (result.answer, result.stop_reason) == ("396", "final")


def test_agent_over_the_chat_endpoint_ends_cleanly(base_url: str) -> None:
    model = OpenAIChat("smollm2", base_url=base_url, grammar=True)
    result = Agent(model, tools=[calculator], limits=Limits(steps=3)).run("What is 17 * 23 + 5?")
    assert result.stop_reason in {"final", "max_steps"}
    assert all(step.reply.startswith("THOUGHT: ") for step in result.steps)  # the grammar held


# -- async, over the same server ---------------------------------------------------------------


@pytest.mark.parametrize("cls", [OpenAIChat, OpenAICompletion])
def test_async_sends_what_sync_sends(base_url: str, cls: type[OpenAIChat | OpenAICompletion]) -> None:
    prompt: Any = (Message("user", "What is 2 + 2?"),) if cls is OpenAIChat else "QUESTION: What is 2 + 2?\nTHOUGHT:"
    request = Request(prompt, STOP, 24)
    model = cls("smollm2", base_url=base_url)
    sync = model.generate(request)
    asynchronous = asyncio.run(model.agenerate(request))
    assert sync.text and asynchronous.text  # (the text may differ: the second call reuses the KV cache)
    assert sync.usage is not None and asynchronous.usage is not None
    assert asynchronous.usage.prompt_tokens == sync.usage.prompt_tokens  # the server was sent the same prompt


def test_async_stream_stops_at_a_made_up_observation(base_url: str) -> None:
    prompt = "Copy these lines exactly, then continue the pattern:\nACTION: a[1]\nOBSERVATION: 1\nACTION: a[2]\nOBSERVATION: 2"
    reply = asyncio.run(
        OpenAIChat("smollm2", base_url=base_url, stream=True).agenerate(Request((Message("user", prompt),), STOP, 60))
    )
    assert reply.text
    assert reply.text.count("OBSERVATION:") <= 1
    assert "\n" not in reply.text.partition("OBSERVATION:")[2]


def test_an_agent_over_agenerate_in_a_new_event_loop_each_call(base_url: str) -> None:
    """Every call in its own asyncio.run: the backend builds a client per loop, never reusing a dead one."""
    model = OpenAICompletion("smollm2", base_url=base_url, grammar=True)
    agent = Agent(ThroughAgenerate(model), tools=[calculator], limits=Limits(steps=4))  # type: ignore[arg-type]
    result = agent.run("What is 17 * 23 + 5?")
    assert (result.answer, result.stop_reason) == ("396", "final")


def test_async_runs_through_the_server(base_url: str) -> None:
    model = OpenAICompletion("smollm2", base_url=base_url, grammar=True)
    agent = Agent(model, tools=[calculator], limits=Limits(steps=4))

    async def both() -> list[Any]:
        return list(await asyncio.gather(agent.arun("What is 17 * 23 + 5?"), agent.arun("What is 1234 * 5678?")))

    first, second = asyncio.run(both())  # two episodes at once against one server
    assert first.answer == "396"
    # (batched with another request, the server's arithmetic is not bit-identical to a lone run's,
    # so the second episode's words may differ from a sync run's; it must still end normally)
    assert second.stop_reason in {"final", "max_steps", "max_tokens"} and second.steps[0].observation == "7006652"


def test_many_concurrent_async_calls(base_url: str) -> None:
    model = OpenAIChat("smollm2", base_url=base_url)

    async def four() -> list[Reply]:
        requests = [Request((Message("user", f"Say the number {n}."),), STOP, 8) for n in range(4)]
        return await asyncio.gather(*(model.agenerate(r) for r in requests))

    replies = asyncio.run(four())
    assert all(r.text and r.usage is not None for r in replies)


# -- the context window --------------------------------------------------------------------------


def test_the_real_server_cannot_say_its_window(base_url: str, caplog: pytest.LogCaptureFixture) -> None:
    """llama-cpp-python's server has no /props and lists no max_model_len: the window is None."""
    root = base_url.removesuffix("/v1")
    with pytest.raises(urllib.error.HTTPError) as missing:
        urllib.request.urlopen(f"{root}/props", timeout=5)
    missing.value.close()
    assert missing.value.code == 404
    model = OpenAIChat("smollm2", base_url=base_url)
    with caplog.at_level(logging.INFO, logger="react_text.backends.openai_api"):
        assert model.context_window is None
        assert model.context_window is None and asyncio.run(model.acontext_window()) is None
    assert sum("GET" in r.getMessage() for r in caplog.records) == 1  # /props 404, asked once


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("cls", [OpenAIChat, OpenAICompletion])
def test_the_real_server_says_the_prompt_does_not_fit(
    server: OneServer, cls: type[OpenAIChat | OpenAICompletion], stream: bool, mode: str
) -> None:
    """Measured: a 400 'This model's maximum context length is 256 tokens...' (code
    context_length_exceeded). A stream fails inside the server, which closes the connection,
    sometimes after a 200 and sometimes before any status: the backend asks once unstreamed."""
    url = server.start(SMALL_CTX)
    long = "word " * 400
    prompt: Any = (Message("user", long),) if cls is OpenAIChat else long
    model = cls(
        "smollm2", base_url=url, stream=stream, max_retries=2
    )  # the server may also break a kept-alive connection
    request = Request(prompt, STOP, 16)
    with pytest.raises(
        ContextLengthError, match=rf"answered 400: This model's maximum context length is {SMALL_CTX} tokens"
    ):
        model.generate(request) if mode == "sync" else asyncio.run(model.agenerate(request))
    assert model.context_window == SMALL_CTX  # learned from the error: the server has no /props


def test_a_run_past_the_real_servers_window_ends_saying_why(server: OneServer) -> None:
    model = OpenAIChat("smollm2", base_url=server.start(SMALL_CTX), max_retries=0)
    result = Agent(model, tools=[calculator], limits=Limits()).run("What is 17 * 23 + 5?")
    assert result.stop_reason == "model_error"
    assert f"maximum context length is {SMALL_CTX} tokens" in (result.error or "")


def test_a_prompt_that_fits_with_too_large_an_allowance_is_shortened_not_refused(server: OneServer) -> None:
    """Measured: llama-cpp-python shrinks max_tokens to what is left of the window, silently."""
    model = OpenAICompletion("smollm2", base_url=server.start(SMALL_CTX), max_retries=0)
    reply = model.generate(Request("word " * 200, STOP, 100))  # 201 + 100 > 256, and no error
    assert reply.usage is not None and reply.usage.prompt_tokens + 100 > SMALL_CTX
    assert reply.usage.total_tokens <= SMALL_CTX


def test_server_killed_mid_run_is_a_model_error(server: OneServer) -> None:
    url = server.start(fresh=True)
    process, port = server.process, url.split(":")[-1].split("/")[0]
    assert process is not None
    model = OpenAICompletion("smollm2", base_url=url, max_retries=1, timeout=10, grammar=True)

    def kill_then_compute(expression: str) -> str:
        process.kill()
        process.wait(timeout=30)
        return "396"

    from react_text import tool

    calc = tool(kill_then_compute, name="calculator")
    result = Agent(model, tools=[calc], limits=Limits(steps=4)).run("What is 17 * 23 + 5?")
    assert result.stop_reason == "model_error", result
    assert f"127.0.0.1:{port}" in (result.error or "")
    assert len(result.steps) == 1 and result.steps[0].observation == "396"
    with pytest.raises(ModelError):
        model.generate(Request("x", STOP, 5))


class EmbeddedVocabulary:
    """The embedded model's tokenizer (its GGUF's vocabulary alone), as `tokenizer=` takes it."""

    def __init__(self) -> None:
        import llama_cpp

        self.llm = llama_cpp.Llama(str(default_model_path()), vocab_only=True, verbose=False)
        self.ids: dict[str, int] = {}
        for i in range(self.llm.n_vocab()):
            self.ids.setdefault(self.llm.detokenize([i]).decode("utf-8", "ignore"), i)

    def encode(self, text: str) -> tuple[int, ...]:
        return tuple(self.llm.tokenize(text.encode(), add_bos=True, special=True))

    def piece_id(self, piece: str) -> int | None:
        return self.ids.get(piece)


def test_the_real_servers_token_texts_become_ids_through_the_tokenizer(base_url: str) -> None:
    """llama-cpp-python's server names sampled tokens by their text only: mapped, and said so."""
    vocabulary = EmbeddedVocabulary()
    model = OpenAICompletion("smollm2", base_url=base_url, api_key="x", token_ids=True, tokenizer=vocabulary)
    prompt = "QUESTION: What is 2 + 2?\nTHOUGHT:"
    reply = model.generate(Request(prompt, STOP, 24))
    tokens = reply.tokens
    assert tokens is not None and not tokens.exact and "mapped from the server's token texts" in tokens.reason
    assert tokens.prompt == vocabulary.encode(prompt) and tokens.ids
    assert len(tokens.ids) == len(tokens.logprobs) == len(tokens.ends) and all(lp <= 0 for lp in tokens.logprobs)
    spelled = vocabulary.llm.detokenize(list(tokens.ids)).decode("utf-8", "replace")
    assert spelled == reply.text[: tokens.ends[-1]]  # the mapped ids spell what was kept
    result = Agent(model, tools=[calculator], limits=Limits(steps=3)).run("What is 2 + 2?")
    assert result.trajectory is not None and not result.trajectory.exact
