"""Server-side features against llama.cpp's real `llama-server` (built by `./dev test`, see
tests/llama_server.py), with the embedded model, through the real `openai` client and the public
API: the probe names it from /props, its `grammar` constrains the replies, `token_ids=True` gives
the ids it sampled and the prompt's as it tokenized them, and two runs at once use its two slots.

The fakes in test_server_identify.py, test_server_tokens.py and test_server_grammar.py answer as
its source says; this is the source's word checked against the server. One server serves the
module (it takes the llama lock while it runs); skipped without the binary, failed under CI.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Iterator
from typing import Literal

import pytest
from llama_server import LlamaCppServer, RecordingProxy

from react_text import Agent, ContextLengthError, OpenAIChat, OpenAICompletion, Prompting, Request
from react_text.core.types import Action
from react_text.tools.toolbox import calculator

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server() -> Iterator[LlamaCppServer]:
    with LlamaCppServer(slots=2) as running:
        yield running


def warned(caplog: pytest.LogCaptureFixture, words: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING and words in r.getMessage()]


def test_the_probe_names_llama_cpp_from_props(server: LlamaCppServer) -> None:
    props = server.get("/props")
    model = OpenAIChat("smollm2", base_url=server.url)
    assert model.server == "llama.cpp"
    assert model.identity.said.startswith(
        f"GET /props answered as llama.cpp's server does (build {props['build_info']})"
    )
    assert props["total_slots"] == 2
    assert model.context_window == props["default_generation_settings"]["n_ctx"] == 4096


def code(name: Literal["alpha", "omega"]) -> str:
    """Look up the secret code word of a city."""
    return f"the code word is {name}"


def test_the_grammar_holds_the_reply_to_a_shape_the_model_would_not_write(
    server: LlamaCppServer, caplog: pytest.LogCaptureFixture
) -> None:
    """Under the grammar (act first, the tool's input typed by its signature) the first reply is an
    ACTION whose input is one of the Literal's values; without it the model writes otherwise."""
    task = "What is the secret code word of Paris?"
    replies = {}
    for grammar in (True, False):
        with RecordingProxy(server.url) as proxy:
            model = OpenAIChat("smollm2", base_url=proxy.url)
            agent = Agent(model, tools=[code], prompting=Prompting(grammar=grammar, act_first=True))
            result = agent.with_limits(steps=2, reply_tokens=48).run(task)
        assert all(("grammar" in body) is grammar for body in proxy.bodies if "messages" in body)
        replies[grammar] = result.steps[0]
    constrained, free = replies[True], replies[False]
    assert isinstance(constrained.parsed, Action), constrained.reply
    assert constrained.parsed.tool == "code", constrained.reply  # seen: code[name="alpha"]
    assert constrained.observation and "the code word is " in constrained.observation, constrained.observation
    assert constrained.reply.startswith("THOUGHT: ")
    assert free.reply  # not held: what the model writes unaided is not asserted (not yet measured)
    assert not warned(caplog, "does not apply the grammar")


@pytest.mark.parametrize("api", ["completion", "chat"])
def test_token_ids_are_the_servers_own_and_exact(server: LlamaCppServer, api: str) -> None:
    backend = OpenAICompletion if api == "completion" else OpenAIChat
    with RecordingProxy(server.url) as proxy:
        model = backend("smollm2", base_url=proxy.url, token_ids=True)
        result = Agent(model, tools=[calculator]).with_limits(steps=3, reply_tokens=48).run("What is 17 * 23?")
    trajectory = result.trajectory
    assert trajectory is not None and trajectory.exact, trajectory and trajectory.reason
    asked = list(zip(proxy.paths, proxy.bodies, strict=True))
    calls = [body for path, body in asked if path.endswith("/completions")]
    assert len(calls) == len(result.steps) == trajectory.turns
    # after each call, the server is asked how it tokenized the prompt (chat: rendered first)
    after = ["/apply-template", "/tokenize"] if api == "chat" else ["/tokenize"]
    endpoint = "/v1/completions" if api == "completion" else "/v1/chat/completions"
    assert [path for path, _ in asked] == [p for _ in calls for p in (endpoint, *after)]
    for body in calls:  # asked where its source reads them: n_probs, or top_logprobs for chat
        assert body["n_probs"] == 1 and body["return_tokens"] is True
        assert body.get("top_logprobs", 1) == 1
    turns = [(segment, turn) for segment in trajectory.segments for turn in segment.turns]
    for step, (segment, turn) in zip(result.steps, turns, strict=True):
        assert len(segment.ids) == len(segment.mask) == len(segment.logprobs)
        sampled = segment.ids[turn.start : turn.start + turn.completion]
        assert all(segment.mask[turn.start : turn.start + turn.completion])
        logprobs = segment.logprobs[turn.start : turn.start + turn.completion]
        assert all(lp <= 0 for lp in logprobs) and any(lp < 0 for lp in logprobs), logprobs
        # the ids it sampled spell the reply (up to the guard's cut, less a token ending past it)
        spelled = server.post("/detokenize", {"tokens": list(sampled)})["content"]
        kept = step.reply[: len(step.reply) - len(step.cut)]
        assert kept.startswith(spelled) and len(kept) - len(spelled) <= 16, (spelled, step.reply)
    first = trajectory.segments[0]
    body = calls[0]
    rendered = body["prompt"] if api == "completion" else server.post("/apply-template", body)["prompt"]
    assert server.post("/detokenize", {"tokens": list(first.ids[: first.prompt])})["content"] == rendered


def test_two_runs_at_once_use_the_two_slots(server: LlamaCppServer) -> None:
    busy: list[int] = []
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            busy.append(sum(1 for slot in server.get("/slots") if slot["is_processing"]))
            time.sleep(0.02)

    async def both() -> list[str]:
        model = OpenAIChat("smollm2", base_url=server.url)
        agent = Agent(model, tools=[calculator]).with_limits(steps=2, reply_tokens=64)
        results = await asyncio.gather(agent.arun("What is 17 * 23?"), agent.arun("What is 4 + 9?"))
        return [r.stop_reason for r in results]

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        stops = asyncio.run(both())
    finally:
        done.set()
        watcher.join()
    assert set(stops) <= {"final", "max_steps"}, stops  # neither failed
    assert max(busy) == 2, busy


def test_a_prompt_past_the_window_is_a_context_length_error_that_names_it(server: LlamaCppServer) -> None:
    model = OpenAICompletion("smollm2", base_url=server.url)
    with pytest.raises(ContextLengthError) as caught:
        model.generate(Request("one two three " * 2000, (), 8))
    assert caught.value.window == 4096
    assert caught.value.prompt_tokens == len(server.post("/tokenize", {"content": "one two three " * 2000})["tokens"])


def test_a_streamed_run_reads_as_the_whole_one(server: LlamaCppServer) -> None:
    # llama-server's first run of a prompt (nothing cached) samples differently from every later
    # one, which reuse the cached prefix (measured: cold "The answer is 18.", then the same longer
    # reply five times over, streamed or not); a first run that is not compared warms the cache,
    # so what is compared differs only in streaming.
    results = []
    for stream in (False, False, True):
        model = OpenAIChat("smollm2", base_url=server.url, stream=stream)
        results.append(Agent(model, tools=[calculator]).with_limits(steps=2, reply_tokens=48).run("What is 4 + 9?"))
    _, whole, streamed = results
    assert [s.reply for s in streamed.steps] == [s.reply for s in whole.steps]
    assert streamed.usage == whole.usage
