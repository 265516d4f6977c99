"""OpenAIChat and OpenAICompletion through the real openai client, sync and async.

A mock transport plays the answers a real server cannot give on demand (400 naming `stop`, 429,
500, a stream to cut, malformed 200s, split-out reasoning, the context-length errors of vLLM,
OpenAI, Ollama and llama.cpp's C++ server, vLLM's `/v1/models`); a closed port on 127.0.0.1 plays
a server that is down. The real llama.cpp server tests are in test_server.py.
"""

from __future__ import annotations

import asyncio
import json
import logging
import socket
from collections.abc import Callable
from typing import Any, Literal

import openai
import pytest

from react_text import Agent, Message, ModelError, OpenAIChat, OpenAICompletion, Reply, Request, RunResult
from react_text.core.errors import ContextLengthError
from react_text.parser.guard import is_cut

try:  # openai 3.x is built on httpx2, earlier releases on httpx
    import httpx2 as httpx
except ImportError:  # pragma: no cover
    import httpx  # type: ignore[no-redef]

SECRET = "sk-test-secret-key-0123456789"
STOP = ("OBSERVATION:",)


def chat_body(text: str, usage: tuple[int, int] = (10, 5)) -> dict[str, Any]:
    return {
        "id": "x",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)},
    }


def client(handler: Callable[[Any], Any], retries: int = 2, base_url: str = "http://test.invalid/v1") -> openai.OpenAI:
    return openai.OpenAI(
        api_key=SECRET,
        base_url=base_url,
        http_client=httpx.Client(transport=httpx.MockTransport(handler)),
        max_retries=retries,
    )


def aclient(
    handler: Callable[[Any], Any], retries: int = 2, base_url: str = "http://test.invalid/v1"
) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(
        api_key=SECRET,
        base_url=base_url,
        http_client=httpx.AsyncClient(transport=httpx.MockTransport(handler)),
        max_retries=retries,
    )


Mode = Literal["sync", "async"]
MODES = ("sync", "async")


def backend(
    cls: type[OpenAIChat | OpenAICompletion], handler: Callable[[Any], Any], retries: int = 2, **options: Any
) -> Any:
    """A backend whose sync and async clients both answer through `handler`."""
    return cls("m", client=client(handler, retries), async_client=aclient(handler, retries), **options)


def call(model: Any, request: Request, mode: Mode) -> Reply:
    return model.generate(request) if mode == "sync" else asyncio.run(model.agenerate(request))  # type: ignore[no-any-return]


class ThroughAgenerate:
    """A model whose every call goes through `agenerate`, each in a fresh event loop, for a sync Agent."""

    def __init__(self, model: Any) -> None:
        self._model = model

    def __getattr__(self, name: str) -> Any:
        return getattr(self._model, name)

    def generate(self, request: Request) -> Reply:
        return asyncio.run(self._model.agenerate(request))  # type: ignore[no-any-return]


def run_agent(model: Any, tools: list[object], task: str, mode: Mode) -> RunResult:
    """A run through Agent: `run`, or `arun` when it exists, else `run` over `agenerate`."""
    if mode == "sync":
        return Agent(model, tools=tools).run(task)  # type: ignore[arg-type]
    if hasattr(Agent, "arun"):  # the async driver is the lead's (issue 14), merged separately
        return asyncio.run(Agent(model, tools=tools).arun(task))  # type: ignore[arg-type,attr-defined,no-any-return]
    return Agent(ThroughAgenerate(model), tools=tools).run(task)  # type: ignore[arg-type]


def chat_request(text: str = "hi") -> Request:
    return Request((Message("user", text),), STOP, 50)


def test_chat_sends_stop_and_reads_usage() -> None:
    sent: list[dict[str, Any]] = []

    def handler(request: Any) -> Any:
        sent.append(json.loads(request.content))
        return httpx.Response(200, json=chat_body("FINAL: 1", (12, 3)))

    reply = OpenAIChat("m", client=client(handler)).generate(chat_request())
    assert (reply.text, reply.usage.prompt_tokens, reply.usage.completion_tokens) == ("FINAL: 1", 12, 3)  # type: ignore[union-attr]
    assert sent[0]["stop"] == list(STOP)
    assert sent[0]["max_tokens"] == 50
    assert sent[0]["messages"] == [{"role": "user", "content": "hi"}]


def test_stop_rejected_is_retried_without_it_and_remembered() -> None:
    sent: list[dict[str, Any]] = []

    def handler(request: Any) -> Any:
        body = json.loads(request.content)
        sent.append(body)
        if "stop" in body:
            error = {
                "message": "Unsupported parameter: 'stop' is not supported with this model.",
                "param": "stop",
            }
            return httpx.Response(400, json={"error": {**error, "type": "invalid_request_error"}})
        return httpx.Response(200, json=chat_body("FINAL: 1"))

    backend = OpenAIChat("o3", client=client(handler))
    assert backend.generate(chat_request()).text == "FINAL: 1"
    assert backend.generate(chat_request()).text == "FINAL: 1"
    assert ["stop" in body for body in sent] == [True, False, False]


def test_other_400_is_a_model_error() -> None:
    def handler(request: Any) -> Any:
        return httpx.Response(400, json={"error": {"message": "bad temperature", "param": "temperature"}})

    with pytest.raises(ModelError, match="answered 400: bad temperature"):
        OpenAIChat("m", client=client(handler)).generate(chat_request())


@pytest.mark.parametrize("mode", MODES)
def test_429_is_retried_honouring_retry_after(mode: Mode) -> None:
    calls = 0

    def handler(request: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls == 1:
            return httpx.Response(429, headers={"retry-after": "0"}, json={"error": {"message": "slow down"}})
        return httpx.Response(200, json=chat_body("FINAL: 1"))

    assert call(backend(OpenAIChat, handler), chat_request(), mode).text == "FINAL: 1"
    assert calls == 2


def test_persistent_500_ends_the_run_cleanly_without_the_key() -> None:
    def handler(request: Any) -> Any:
        return httpx.Response(500, headers={"retry-after": "0"}, json={"error": {"message": "boom"}})

    backend = OpenAIChat("m", client=client(handler, retries=1))
    result = Agent(backend, tools=[]).run("task")
    assert result.stop_reason == "model_error"
    assert "answered 500: boom" in (result.error or "")
    assert SECRET not in (result.error or "") and SECRET not in repr(backend)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_connection_refused_names_the_url() -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    backend = OpenAIChat("m", base_url=url, api_key=SECRET, max_retries=0, timeout=5)
    with pytest.raises(ModelError, match=r"could not reach http://127\.0\.0\.1:\d+/v1"):
        backend.generate(chat_request())


def sse(chunks: list[dict[str, Any]]) -> bytes:
    return b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in chunks) + b"data: [DONE]\n\n"


def test_stream_stops_reading_at_a_made_up_observation() -> None:
    pieces = ["THOUGHT: x\nACTION: a[b]\nOBS", "ERVATION: 5\n", "FINAL: 5", " more", " and more"]
    chunks = [
        {
            "id": "x",
            "object": "chat.completion.chunk",
            "created": 0,
            "model": "m",
            "choices": [{"index": 0, "delta": {"content": p}, "finish_reason": None}],
        }
        for p in pieces
    ]

    def handler(request: Any) -> Any:
        assert json.loads(request.content)["stream"] is True
        return httpx.Response(200, content=sse(chunks), headers={"content-type": "text/event-stream"})

    reply = OpenAIChat("m", client=client(handler), stream=True).generate(chat_request())
    assert reply.text == "THOUGHT: x\nACTION: a[b]\nOBSERVATION: 5\n"
    assert reply.finish_reason == "stop"


def test_completion_endpoint_sends_the_transcript() -> None:
    sent: list[dict[str, Any]] = []

    def handler(request: Any) -> Any:
        sent.append(json.loads(request.content))
        assert request.url.path.endswith("/completions") and "chat" not in request.url.path
        return httpx.Response(
            200,
            json={
                "id": "x",
                "object": "text_completion",
                "created": 0,
                "model": "m",
                "choices": [{"index": 0, "text": " ok\nFINAL: 2", "finish_reason": "stop", "logprobs": None}],
                "usage": {"prompt_tokens": 20, "completion_tokens": 4, "total_tokens": 24},
            },
        )

    reply = OpenAICompletion("m", client=client(handler)).generate(Request("QUESTION: q\nTHOUGHT:", STOP, 30))
    assert reply.text == " ok\nFINAL: 2"
    assert sent[0]["prompt"] == "QUESTION: q\nTHOUGHT:"
    assert sent[0]["stop"] == list(STOP)


def test_grammar_is_sent_only_to_servers_that_take_one() -> None:
    sent: list[dict[str, Any]] = []

    def handler(request: Any) -> Any:
        sent.append(json.loads(request.content))
        return httpx.Response(200, json=chat_body("FINAL: 1"))

    request = Request((Message("user", "q"),), STOP, 10, grammar="root ::= x")
    OpenAIChat("m", client=client(handler)).generate(request)
    OpenAIChat("m", client=client(handler), grammar=True).generate(request)
    assert "grammar" not in sent[0]
    assert sent[1]["grammar"] == "root ::= x"


# -- malformed 200 answers: ModelError, never IndexError/TypeError/AttributeError ----------------

GOOD = {
    "chat": "THOUGHT: price first\nACTION: lookup[train ticket]",
    "completion": " price first\nACTION: lookup[train ticket]",
}


def completion_body(text: str, usage: tuple[int, int] = (20, 4)) -> dict[str, Any]:
    return {
        "id": "x",
        "object": "text_completion",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "text": text, "finish_reason": "stop", "logprobs": None}],
        "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)},
    }


def body(api: str, text: str) -> dict[str, Any]:
    return chat_body(text) if api == "chat" else completion_body(text)


HTML = "<html><head><title>502 Bad Gateway</title></head><body><h1>Bad Gateway</h1></body></html>"
WHOLE_SHAPES: dict[str, Callable[[str], Any]] = {
    "empty choices": lambda api: httpx.Response(200, json={**body(api, ""), "choices": []}),
    "choices null": lambda api: httpx.Response(200, json={**body(api, ""), "choices": None}),
    "no choices at all": lambda api: httpx.Response(200, json={"id": "x", "object": "chat.completion"}),
    "an HTML page": lambda api: httpx.Response(200, text=HTML, headers={"content-type": "text/html"}),
    "a JSON string": lambda api: httpx.Response(200, json="ok"),
    "not JSON": lambda api: httpx.Response(200, content=b"{oops", headers={"content-type": "application/json"}),
    "a choice that is null": lambda api: httpx.Response(200, json={**body(api, ""), "choices": [None]}),
    "a choice with no message or text": lambda api: httpx.Response(
        200, json={**body(api, ""), "choices": [{"index": 0, "finish_reason": "stop"}]}
    ),
    "content that is not text": lambda api: httpx.Response(
        200,
        json={**body(api, ""), "choices": [{"index": 0, "message": {"role": "assistant", "content": 5}, "text": 5}]},
    ),
}


def sse_response(payload: bytes) -> Any:
    return httpx.Response(200, content=payload, headers={"content-type": "text/event-stream"})


STREAM_SHAPES: dict[str, Callable[[str], Any]] = {
    "an HTML page": lambda api: httpx.Response(200, text=HTML, headers={"content-type": "text/html"}),
    "a chunk that is a string": lambda api: sse_response(b'data: "hello"\n\ndata: [DONE]\n\n'),
    "a chunk that is not JSON": lambda api: sse_response(b"data: {oops\n\ndata: [DONE]\n\n"),
    "no choice in the whole stream": lambda api: sse_response(
        sse([{"id": "x", "choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 0}}])
    ),
    "choices that are not a list": lambda api: sse_response(sse([{"id": "x", "choices": "abc"}])),
    "a choice that is null": lambda api: sse_response(sse([{"id": "x", "choices": [None]}])),
    "an empty body": lambda api: sse_response(b""),
}


def good_then(api: str, bad: Any, *, stream: bool) -> Callable[[Any], Any]:
    """A server whose first answer is a good ACTION and whose second is `bad`."""
    answers: list[Any] = []

    def handler(request: Any) -> Any:
        if request.method != "POST":  # the context window's look-up (GET /v1/models, /props)
            return httpx.Response(404)
        answers.append(request)
        if len(answers) > 1:
            return bad
        if stream:
            piece = {"delta": {"content": GOOD[api]}} if api == "chat" else {"text": GOOD[api]}
            return sse_response(sse([{"id": "x", "choices": [{"index": 0, "finish_reason": "stop", **piece}]}]))
        return httpx.Response(200, json=body(api, GOOD[api]))

    return handler


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("api", ["chat", "completion"])
@pytest.mark.parametrize(("stream", "shape"), [(False, s) for s in WHOLE_SHAPES] + [(True, s) for s in STREAM_SHAPES])
def test_a_malformed_answer_ends_the_run_as_a_model_error(
    api: str, stream: bool, shape: str, mode: Mode, tools: list[object]
) -> None:
    bad = (STREAM_SHAPES if stream else WHOLE_SHAPES)[shape](api)
    cls = OpenAIChat if api == "chat" else OpenAICompletion
    model = backend(cls, good_then(api, bad, stream=stream), stream=stream)
    result = run_agent(model, tools, "What does a train ticket cost?", mode)
    assert result.stop_reason == "model_error"
    assert (result.error or "").startswith("bad answer from http://test.invalid/v1"), result.error
    assert [step.observation for step in result.steps] == ["89"]  # the good first step is kept
    assert "lookup[train ticket]" in str(result.transcript) and "89" in str(result.transcript)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("stream", "shape"), [(False, s) for s in WHOLE_SHAPES] + [(True, s) for s in STREAM_SHAPES])
def test_a_malformed_answer_is_a_model_error_from_the_backend(stream: bool, shape: str, mode: Mode) -> None:
    shapes = STREAM_SHAPES if stream else WHOLE_SHAPES
    model = backend(OpenAIChat, lambda request: shapes[shape]("chat"), stream=stream)
    with pytest.raises(ModelError, match="bad answer from") as caught:
        call(model, chat_request(), mode)
    assert not isinstance(caught.value, ContextLengthError)


def test_the_error_shows_what_came_instead_of_a_reply() -> None:
    model = backend(OpenAIChat, lambda request: WHOLE_SHAPES["an HTML page"]("chat"))
    with pytest.raises(ModelError, match=r"an answer with no choices: '<html><head><title>502 Bad Gateway"):
        model.generate(chat_request())


def test_content_as_a_list_of_text_parts_is_read() -> None:
    parts = [{"type": "text", "text": "THOUGHT: a\n"}, {"type": "image_url"}, {"type": "text", "text": "FINAL: 1"}]
    answer = chat_body("")
    answer["choices"][0]["message"]["content"] = parts
    reply = backend(OpenAIChat, lambda request: httpx.Response(200, json=answer)).generate(chat_request())
    assert reply.text == "THOUGHT: a\nFINAL: 1"


def test_malformed_usage_is_left_unreported_not_fatal() -> None:
    answer = {**chat_body("FINAL: 1"), "usage": {"prompt_tokens": "many", "completion_tokens": None}}
    reply = backend(OpenAIChat, lambda request: httpx.Response(200, json=answer)).generate(chat_request())
    assert (reply.text, reply.usage) == ("FINAL: 1", None)


# -- reasoning split out by the server ---------------------------------------------------------

THINKING = "The user wants the price. I will call lookup; its Observation: will give the price."
REASONING_FIELDS = ["reasoning_content", "reasoning"]  # vLLM/DeepSeek/llama.cpp; OpenRouter/Ollama


def reasoning_body(field: str, content: str | None, reasoning: str) -> dict[str, Any]:
    answer = chat_body("")
    answer["choices"][0]["message"] = {"role": "assistant", "content": content, field: reasoning}
    return answer


def reasoning_stream(field: str, reasoning: str, content: str) -> bytes:
    """Reasoning first, in small deltas, then the content, as vLLM's reasoning parsers stream it."""
    deltas = [{"role": "assistant", "content": ""}]
    deltas += [{field: reasoning[i : i + 9]} for i in range(0, len(reasoning), 9)]
    deltas += [{"content": content[i : i + 7]} for i in range(0, len(content), 7)]
    chunks = [{"id": "x", "choices": [{"index": 0, "delta": d, "finish_reason": None}]} for d in deltas]
    chunks.append({"id": "x", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]})
    chunks.append({"id": "x", "choices": [], "usage": {"prompt_tokens": 30, "completion_tokens": 40}})
    return sse(chunks)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("field", REASONING_FIELDS)
def test_split_out_reasoning_goes_to_reply_reasoning(field: str, stream: bool, mode: Mode) -> None:
    content = "THOUGHT: I need the price.\nACTION: lookup[train ticket]"

    def handler(request: Any) -> Any:
        if stream:
            return sse_response(reasoning_stream(field, THINKING, content))
        return httpx.Response(200, json=reasoning_body(field, content, THINKING))

    reply = call(backend(OpenAIChat, handler, stream=stream), chat_request(), mode)
    assert (reply.text, reply.reasoning, reply.finish_reason) == (content, THINKING, "stop")


def test_a_server_sending_both_reasoning_fields_is_read_once() -> None:
    answer = reasoning_body("reasoning_content", "FINAL: 1", THINKING)
    answer["choices"][0]["message"]["reasoning"] = THINKING
    reply = backend(OpenAIChat, lambda request: httpx.Response(200, json=answer)).generate(chat_request())
    assert reply.reasoning == THINKING


def test_a_reply_of_reasoning_alone_has_empty_text() -> None:
    answer = reasoning_body("reasoning_content", None, THINKING)
    answer["choices"][0]["finish_reason"] = "length"
    reply = backend(OpenAIChat, lambda request: httpx.Response(200, json=answer)).generate(chat_request())
    assert (reply.text, reply.reasoning, reply.finish_reason) == ("", THINKING, "length")


def test_no_reasoning_is_none() -> None:
    reply = backend(OpenAIChat, lambda request: httpx.Response(200, json=chat_body("FINAL: 1"))).generate(
        chat_request()
    )
    assert reply.reasoning is None


@pytest.mark.parametrize("mode", MODES)
def test_the_streaming_abort_reads_the_content_not_the_reasoning(mode: Mode) -> None:
    """The reasoning holds a full `Observation:` label; the stream must be read to its end."""
    content = "THOUGHT: I need the price.\nACTION: lookup[train ticket]\nOBSERVATION: 12\nFINAL: 12"

    def handler(request: Any) -> Any:
        return sse_response(reasoning_stream("reasoning_content", THINKING, content))

    reply = call(backend(OpenAIChat, handler, stream=True), chat_request(), mode)
    assert reply.reasoning == THINKING
    # Read past all of the reasoning, stopped in the content's chunk where the made-up label begins.
    assert reply.text.startswith("THOUGHT: I need the price.\nACTION: lookup[train ticket]\nOBS")
    assert "FINAL" not in reply.text and reply.finish_reason == "stop"


@pytest.mark.parametrize("mode", MODES)
def test_a_reasoning_model_runs_through_the_agent(mode: Mode, tools: list[object]) -> None:
    replies = iter(
        [
            reasoning_body("reasoning_content", "THOUGHT: price\nACTION: lookup[train ticket]", THINKING),
            reasoning_body("reasoning_content", "THOUGHT: got it\nFINAL: 89", "OBSERVATION: 89 is the price."),
        ]
    )

    def handler(request: Any) -> Any:
        if request.method != "POST":  # the context window's look-up
            return httpx.Response(404)
        return httpx.Response(200, json=next(replies))

    model = backend(OpenAIChat, handler)
    result = run_agent(model, tools, "What does a train ticket cost?", mode)
    assert (result.answer, result.stop_reason, result.tool_calls) == ("89", "final", 1)
    assert [step.observation for step in result.steps] == ["89", None]


@pytest.mark.skipif(
    is_cut("<think>\nI'll see the Observation: later.\n"),
    reason="guard.is_cut does not skip inline <think> blocks yet (the parser helper's change)",
)
def test_the_streaming_abort_ignores_an_inline_think_block() -> None:
    text = "<think>\nI'll call lookup; the Observation: will tell me.\n</think>\nTHOUGHT: x\nACTION: lookup[train]"
    chunks = [
        {"id": "x", "choices": [{"index": 0, "delta": {"content": text[i : i + 5]}}]} for i in range(0, len(text), 5)
    ]
    reply = backend(OpenAIChat, lambda request: sse_response(sse(chunks)), stream=True).generate(chat_request())
    assert reply.text == text


# -- `stop` rejected: remembered for the backend's life ------------------------------------------


def rejects_stop(sent: list[dict[str, Any]]) -> Callable[[Any], Any]:
    def handler(request: Any) -> Any:
        sent.append(json.loads(request.content))
        if "stop" in sent[-1]:
            error = {"message": "Unsupported parameter: 'stop' is not supported with this model.", "param": "stop"}
            return httpx.Response(400, json={"error": {**error, "type": "invalid_request_error"}})
        return httpx.Response(200, json=chat_body("FINAL: 1"))

    return handler


def test_a_rejected_stop_is_never_sent_again_by_that_backend(
    caplog: pytest.LogCaptureFixture, tools: list[object]
) -> None:
    sent: list[dict[str, Any]] = []
    model = backend(OpenAIChat, rejects_stop(sent))
    with caplog.at_level(logging.INFO, logger="react_text.backends.openai_api"):
        first = Agent(model, tools=tools).run("q1")
        second = Agent(model, tools=tools).run("q2")  # another run, another agent: still not sent
    assert (first.answer, second.answer) == ("1", "1")
    assert ["stop" in body for body in sent] == [True, False, False]
    assert model.send_stop is False
    (record,) = [r for r in caplog.records if "stop" in r.getMessage()]
    assert "not sending it to this model again" in record.getMessage()


def test_send_stop_false_from_the_start() -> None:
    sent: list[dict[str, Any]] = []
    backend(OpenAIChat, rejects_stop(sent), send_stop=False).generate(chat_request())
    assert ["stop" in body for body in sent] == [False]


def test_concurrent_calls_that_all_sent_stop_are_all_retried() -> None:
    """Three calls in flight with `stop`; each 400 is retried, though the first already switched it off."""
    sent: list[dict[str, Any]] = []
    plain = rejects_stop(sent)

    async def handler(request: Any) -> Any:
        await asyncio.sleep(0.01)  # all three are sent before any answer comes back
        return plain(request)

    model = OpenAIChat("o3", client=client(plain), async_client=aclient(handler))

    async def three() -> list[Reply]:
        return await asyncio.gather(*(model.agenerate(chat_request()) for _ in range(3)))

    assert [r.text for r in asyncio.run(three())] == ["FINAL: 1"] * 3
    assert sorted("stop" in body for body in sent) == [False] * 3 + [True] * 3


# -- the prompt did not fit: ContextLengthError ------------------------------------------------

# Each as the server sends it (status, JSON body); sources in react_text/backends/wire.py.
CONTEXT_ERRORS: dict[str, tuple[int, dict[str, Any]]] = {
    "OpenAI": (
        400,
        {
            "error": {
                "message": "This model's maximum context length is 8192 tokens. However, your messages resulted in 9013 tokens. Please reduce the length of the messages.",
                "type": "invalid_request_error",
                "param": "messages",
                "code": "context_length_exceeded",
            }
        },
    ),
    "OpenAI, newer wording": (
        400,
        {
            "error": {
                "message": "Your input exceeds the context window of this model. Please adjust your input and try again.",
                "type": "invalid_request_error",
                "param": "input",
                "code": "context_length_exceeded",
            }
        },
    ),
    "vLLM, input too long": (
        400,
        {
            "error": {
                "message": "This model's maximum context length is 4096 tokens. However, your request has 5120 input tokens. Please reduce the length of the input messages. (parameter=input_tokens, value=5120)",
                "type": "BadRequestError",
                "param": "input_tokens",
                "code": 400,
            }
        },
    ),
    "vLLM, max_tokens too large": (
        400,
        {
            "error": {
                "message": "'max_tokens' or 'max_completion_tokens' is too large: 512. This model's maximum context length is 4096 tokens and your request has 3800 input tokens (512 > 4096 - 3800).",
                "type": "BadRequestError",
                "param": "max_tokens",
                "code": 400,
            }
        },
    ),
    "vLLM, older top-level error": (
        400,
        {
            "object": "error",
            "message": "This model's maximum context length is 2048 tokens. However, you requested 2100 tokens (2000 in the messages, 100 in the completion). Please reduce the length of the messages or completion.",
            "type": "BadRequestError",
            "param": None,
            "code": 400,
        },
    ),
    "vLLM engine": (
        400,
        {
            "error": {
                "message": "The decoder prompt (length 8357) is longer than the maximum model length of 8192. Make sure that `max_model_len` is no smaller than the number of text tokens.",
                "type": "BadRequestError",
                "param": None,
                "code": 400,
            }
        },
    ),
    "llama.cpp server": (
        400,
        {
            "error": {
                "code": 400,
                "message": "request (4476 tokens) exceeds the available context size (4096 tokens), try increasing it",
                "type": "exceed_context_size_error",
                "n_prompt_tokens": 4476,
                "n_ctx": 4096,
            }
        },
    ),
    "llama.cpp server, older": (
        400,
        {
            "error": {
                "code": 400,
                "message": "the request exceeds the available context size, try increasing it",
                "type": "invalid_request_error",
            }
        },
    ),
    "llama-cpp-python server": (
        400,
        {
            "error": {
                "message": "This model's maximum context length is 256 tokens. However, you requested 1093 tokens (1077 in the messages, 16 in the completion). Please reduce the length of the messages or completion.",
                "type": "invalid_request_error",
                "param": "messages",
                "code": "context_length_exceeded",
            }
        },
    ),
    "Ollama": (400, {"error": "the input length exceeds the context length"}),
    "LM Studio": (400, {"error": "Input length 6491 exceeds context length 1500"}),
    "SGLang, the input is longer": (
        400,
        {
            "object": "error",
            "message": "The input (1561 tokens) is longer than the model's context length (1500 tokens).",
            "type": "BadRequestError",
            "param": None,
            "code": 400,
        },
    ),
    "SGLang, prompt and completion": (
        400,
        {
            "object": "error",
            "message": "Requested token count exceeds the model's maximum context length of 1500 tokens. You requested a total of 1689 tokens: 1561 tokens from the input messages and 128 tokens for the completion. Please reduce the number of tokens in the input messages or the completion to fit within the limit.",
            "type": "BadRequestError",
            "param": None,
            "code": 400,
        },
    ),
    "SGLang's scheduler": (
        400,
        {
            "object": "error",
            "message": "Input length (1561 tokens) exceeds the maximum allowed length (1499 tokens). Use a shorter input or enable --allow-auto-truncate.",
            "type": "BadRequestError",
            "param": None,
            "code": 400,
        },
    ),
}
WINDOWS_SAID = {  # the window each of those errors names (None: it names none)
    "OpenAI": 8192,
    "OpenAI, newer wording": None,
    "vLLM, input too long": 4096,
    "vLLM, max_tokens too large": 4096,
    "vLLM, older top-level error": 2048,
    "vLLM engine": 8192,
    "llama.cpp server": 4096,
    "llama.cpp server, older": None,
    "llama-cpp-python server": 256,
    "Ollama": None,
    "LM Studio": 1500,
    "SGLang, the input is longer": 1500,
    "SGLang, prompt and completion": 1500,
    "SGLang's scheduler": 1499,
}
NOT_CONTEXT_ERRORS: dict[str, tuple[int, dict[str, Any]]] = {
    "a bad parameter": (400, {"error": {"message": "bad temperature", "param": "temperature"}}),
    "a token rate limit": (
        429,
        {
            "error": {
                "message": "Rate limit reached for gpt-4o on tokens per min (TPM): Limit 30000, Used 29000, Requested 2000.",
                "type": "tokens",
                "code": "rate_limit_exceeded",
            }
        },
    ),
    "an unknown model": (404, {"error": {"message": "The model `m` does not exist.", "code": "model_not_found"}}),
}


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("server", list(CONTEXT_ERRORS))
def test_a_prompt_too_long_for_the_window_is_a_context_length_error(server: str, mode: Mode) -> None:
    status, answer = CONTEXT_ERRORS[server]
    model = backend(OpenAIChat, lambda request: httpx.Response(status, json=answer), retries=0)
    with pytest.raises(ContextLengthError, match=f"http://test.invalid/v1/? answered {status}: ") as caught:
        call(model, chat_request(), mode)
    assert isinstance(caught.value, ModelError)  # a caller that knows only ModelError still catches it
    # The window the error names becomes the model's (this server answers every GET with the same error).
    window = model.context_window if mode == "sync" else asyncio.run(model.acontext_window())
    assert window == WINDOWS_SAID[server]


def test_a_window_the_server_stated_is_kept_over_one_an_error_names() -> None:
    status, answer = CONTEXT_ERRORS["llama.cpp server"]

    def handler(request: Any) -> Any:
        if request.url.path == "/props":
            return httpx.Response(200, json=LLAMA_CPP_PROPS)
        return httpx.Response(status, json=answer) if request.method == "POST" else httpx.Response(404)

    model = backend(OpenAIChat, handler, retries=0)
    assert model.context_window == 8192
    with pytest.raises(ContextLengthError):
        model.generate(chat_request())
    assert model.context_window == 8192


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("server", list(NOT_CONTEXT_ERRORS))
def test_other_errors_are_not_context_length_errors(server: str, mode: Mode) -> None:
    status, answer = NOT_CONTEXT_ERRORS[server]
    model = backend(
        OpenAIChat, lambda request: httpx.Response(status, json=answer, headers={"retry-after": "0"}), retries=0
    )
    with pytest.raises(ModelError) as caught:
        call(model, chat_request(), mode)
    assert not isinstance(caught.value, ContextLengthError)


@pytest.mark.parametrize("mode", MODES)
def test_a_context_error_inside_a_stream_is_a_context_length_error(mode: Mode) -> None:
    error = {"error": {"code": 400, "message": "the request exceeds the available context size, try increasing it"}}
    model = backend(OpenAICompletion, lambda request: sse_response(sse([error])), stream=True)
    with pytest.raises(ContextLengthError, match="sent an error: the request exceeds the available context"):
        call(model, Request("x", STOP, 10), mode)


@pytest.mark.parametrize("mode", MODES)
def test_an_empty_stream_is_asked_again_without_streaming_to_hear_why(mode: Mode) -> None:
    """llama-cpp-python's server answers a streamed prompt past n_ctx with 200 and no body at all."""
    sent: list[dict[str, Any]] = []
    status, answer = CONTEXT_ERRORS["llama-cpp-python server"]

    def handler(request: Any) -> Any:
        sent.append(json.loads(request.content))
        return sse_response(b"") if sent[-1].get("stream") else httpx.Response(status, json=answer)

    with pytest.raises(ContextLengthError, match="maximum context length is 256 tokens"):
        call(backend(OpenAIChat, handler, stream=True, retries=0), chat_request(), mode)
    assert [body.get("stream", False) for body in sent] == [True, False]
    assert "stream_options" not in sent[1] and sent[0]["messages"] == sent[1]["messages"]


@pytest.mark.parametrize("mode", MODES)
def test_a_stream_dropped_without_a_word_is_asked_again_without_streaming(mode: Mode) -> None:
    """The same server, racing its own error, may also close the connection before any status."""
    sent: list[dict[str, Any]] = []
    status, answer = CONTEXT_ERRORS["llama-cpp-python server"]

    def handler(request: Any) -> Any:
        sent.append(json.loads(request.content))
        if sent[-1].get("stream"):
            raise httpx.RemoteProtocolError("Server disconnected without sending a response.", request=request)
        return httpx.Response(status, json=answer)

    with pytest.raises(ContextLengthError, match="maximum context length is 256 tokens"):
        call(backend(OpenAIChat, handler, stream=True, retries=0), chat_request(), mode)
    assert [body.get("stream", False) for body in sent] == [True, False]


@pytest.mark.parametrize("mode", MODES)
def test_a_refused_connection_is_not_asked_again(mode: Mode) -> None:
    sent: list[Any] = []

    def handler(request: Any) -> Any:
        sent.append(request)
        raise httpx.ConnectError("[Errno 111] Connection refused", request=request)

    with pytest.raises(ModelError, match="could not reach"):
        call(backend(OpenAIChat, handler, stream=True, retries=0), chat_request(), mode)
    assert len(sent) == 1


def test_an_empty_stream_followed_by_a_good_answer_is_that_answer() -> None:
    answers = iter([sse_response(b""), httpx.Response(200, json=chat_body("FINAL: 3"))])
    reply = backend(OpenAIChat, lambda request: next(answers), stream=True).generate(chat_request())
    assert reply.text == "FINAL: 3"


def test_a_context_length_error_ends_the_run_with_the_servers_words(tools: list[object]) -> None:
    status, answer = CONTEXT_ERRORS["vLLM, input too long"]
    model = backend(OpenAIChat, lambda request: httpx.Response(status, json=answer), retries=0)
    result = Agent(model, tools=tools).run("q")
    assert result.stop_reason == "model_error"
    assert "maximum context length is 4096 tokens" in (result.error or "")


# -- async: the same requests, retries, errors -------------------------------------------------


@pytest.mark.parametrize("cls", [OpenAIChat, OpenAICompletion])
@pytest.mark.parametrize("stream", [False, True])
def test_sync_and_async_send_the_same_request(cls: type[OpenAIChat | OpenAICompletion], stream: bool) -> None:
    sent: list[tuple[str, dict[str, Any]]] = []

    def handler(request: Any) -> Any:
        sent.append((request.url.path, json.loads(request.content)))
        api = "chat" if cls is OpenAIChat else "completion"
        if stream:
            piece = {"delta": {"content": "FINAL: 1"}} if api == "chat" else {"text": "FINAL: 1"}
            return sse_response(sse([{"id": "x", "choices": [{"index": 0, "finish_reason": "stop", **piece}]}]))
        return httpx.Response(200, json=body(api, "FINAL: 1"))

    model = backend(cls, handler, stream=stream, grammar=True, extra_body={"top_k": 1})
    prompt: Any = (Message("user", "q"),) if cls is OpenAIChat else "QUESTION: q\nTHOUGHT:"
    request = Request(prompt, STOP, 30, grammar="root ::= x")
    replies = [call(model, request, "sync"), call(model, request, "async")]
    assert replies[0] == replies[1] and replies[0].text == "FINAL: 1"
    assert sent[0] == sent[1]
    assert sent[0][1]["grammar"] == "root ::= x" and sent[0][1]["top_k"] == 1 and sent[0][1]["stop"] == list(STOP)


def test_async_persistent_500_is_a_model_error_without_the_key() -> None:
    def handler(request: Any) -> Any:
        return httpx.Response(500, headers={"retry-after": "0"}, json={"error": {"message": "boom"}})

    with pytest.raises(ModelError, match="answered 500: boom") as caught:
        call(backend(OpenAIChat, handler, retries=1), chat_request(), "async")
    assert SECRET not in str(caught.value)


def test_async_stream_stops_reading_at_a_made_up_observation() -> None:
    pieces = ["THOUGHT: x\nACTION: a[b]\nOBS", "ERVATION: 5\n", "FINAL: 5", " more"]
    chunks = [{"id": "x", "choices": [{"index": 0, "delta": {"content": p}, "finish_reason": None}]} for p in pieces]
    reply = call(backend(OpenAIChat, lambda request: sse_response(sse(chunks)), stream=True), chat_request(), "async")
    assert (reply.text, reply.finish_reason) == ("THOUGHT: x\nACTION: a[b]\nOBSERVATION: 5\n", "stop")


def test_async_client_is_built_from_the_sync_settings_only_when_needed(monkeypatch: pytest.MonkeyPatch) -> None:
    """A sync-only user never builds an AsyncOpenAI; an async call that needs one (a stream: plain
    requests to an http:// server take the lean path) builds one for the same server."""
    url = f"http://127.0.0.1:{free_port()}/v1"
    built: list[dict[str, Any]] = []
    real = openai.AsyncOpenAI

    def recording(**options: Any) -> openai.AsyncOpenAI:
        built.append(options)
        return real(**options)

    monkeypatch.setattr(openai, "AsyncOpenAI", recording)
    model = OpenAIChat("m", base_url=url, api_key=SECRET, max_retries=0, timeout=5, stream=True)
    with pytest.raises(ModelError):
        model.generate(chat_request())
    assert built == []
    with pytest.raises(ModelError, match=rf"could not reach {url}"):
        call(model, chat_request(), "async")
    assert [str(b["base_url"]).rstrip("/") for b in built] == [url]
    assert (built[0]["api_key"], built[0]["max_retries"]) == (SECRET, 0)


def test_each_event_loop_gets_its_own_async_client_closed_with_the_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    """Connections belong to a loop: two asyncio.run calls, two clients, each closed as its loop ends."""
    built: list[Any] = []
    real = openai.AsyncOpenAI

    class Recording(real):  # type: ignore[misc,valid-type]
        closed = False

        def __init__(self, **options: Any) -> None:
            super().__init__(**options)
            built.append(self)

        async def close(self) -> None:
            await super().close()
            self.closed = True

    monkeypatch.setattr(openai, "AsyncOpenAI", Recording)
    # streamed, so the openai client carries it (a plain request to http:// takes the lean path)
    model = OpenAIChat("m", base_url=f"http://127.0.0.1:{free_port()}/v1", api_key=SECRET, max_retries=0, stream=True)

    async def twice() -> None:
        for _ in range(2):  # the same loop: the same client
            with pytest.raises(ModelError):
                await model.agenerate(chat_request())

    asyncio.run(twice())
    assert len(built) == 1 and built[0].closed
    asyncio.run(twice())
    assert len(built) == 2 and built[1].closed


# -- the context window, asked of the server once ----------------------------------------------

VLLM_MODELS = {
    "object": "list",
    "data": [
        {
            "id": "Qwen/Qwen3-8B",
            "object": "model",
            "created": 1750000000,
            "owned_by": "vllm",
            "root": "Qwen/Qwen3-8B",
            "parent": None,
            "max_model_len": 32768,
            "permission": [{"id": "modelperm-1", "object": "model_permission", "allow_sampling": True}],
        },
        {
            "id": "qwen-lora",
            "object": "model",
            "owned_by": "vllm",
            "root": "/adapters/x",
            "parent": "Qwen/Qwen3-8B",
            "max_model_len": 16384,
        },
    ],
}
LLAMA_CPP_MODELS = {
    "object": "list",
    "data": [{"id": "qwen3.gguf", "object": "model", "owned_by": "llamacpp", "meta": {"n_ctx_train": 40960}}],
}
LLAMA_CPP_PROPS = {
    "default_generation_settings": {"id": 0, "id_task": -1, "n_ctx": 8192, "params": {"n_predict": -1}},
    "total_slots": 1,
    "model_path": "/models/qwen3.gguf",
    "chat_template": "...",
}


def window_server(routes: dict[str, Any], seen: list[str]) -> Callable[[Any], Any]:
    def handler(request: Any) -> Any:
        seen.append(f"{request.method} {request.url.path}")
        answer = routes.get(request.url.path)
        if answer is None:
            return httpx.Response(404, json={"detail": "Not Found"})
        return answer() if callable(answer) else httpx.Response(200, json=answer)

    return handler


BOTH = ["GET /v1/models", "GET /props"]


def html_page() -> Any:
    return httpx.Response(200, text=HTML, headers={"content-type": "text/html"})


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(
    ("name", "routes", "window", "asked"),
    [
        ("Qwen/Qwen3-8B", {"/v1/models": VLLM_MODELS}, 32768, ["GET /v1/models"]),
        ("qwen-lora", {"/v1/models": VLLM_MODELS}, 16384, ["GET /v1/models"]),
        ("qwen3", {"/v1/models": LLAMA_CPP_MODELS, "/props": LLAMA_CPP_PROPS}, 8192, BOTH),
        ("qwen3", {"/v1/models": LLAMA_CPP_MODELS, "/props": {"n_ctx": 6144, "total_slots": 2}}, 6144, BOTH),
        ("m", {"/v1/models": {"object": "list", "data": [{"id": "m", "object": "model"}]}}, None, BOTH),
        ("m", {"/v1/models": html_page, "/props": html_page}, None, BOTH),
        ("m", {"/props": {"default_generation_settings": {"n_ctx": "big"}}}, None, BOTH),
        ("m", {}, None, BOTH),
    ],
    ids=[
        "vLLM",
        "vLLM, a LoRA",
        "llama.cpp",
        "llama.cpp, top-level n_ctx",
        "says nothing",
        "HTML",
        "not a number",
        "404",
    ],
)
def test_the_context_window_comes_from_the_server(
    name: str, routes: dict[str, Any], window: int | None, asked: list[str], mode: Mode
) -> None:
    seen: list[str] = []
    handler = window_server(routes, seen)
    model = OpenAIChat(name, client=client(handler), async_client=aclient(handler))
    for _ in range(3):  # asked once, then cached
        found = model.context_window if mode == "sync" else asyncio.run(model.acontext_window())
        assert found == window
    assert seen == asked


def test_the_props_of_a_server_under_a_path_are_asked_at_its_root() -> None:
    seen: list[str] = []
    handler = window_server({"/llama/props": LLAMA_CPP_PROPS}, seen)
    model = OpenAIChat("m", client=client(handler, base_url="http://test.invalid/llama/v1"))
    assert model.context_window == 8192
    assert seen == ["GET /llama/v1/models", "GET /llama/props"]


def test_openai_itself_is_not_asked() -> None:
    seen: list[str] = []
    model = OpenAIChat("gpt-4o-mini", client=client(window_server({}, seen), base_url="https://api.openai.com/v1"))
    assert model.context_window is None
    assert seen == []


def test_a_server_that_is_down_has_no_window_and_says_so(caplog: pytest.LogCaptureFixture) -> None:
    model = OpenAIChat("m", base_url=f"http://127.0.0.1:{free_port()}/v1", api_key=SECRET, max_retries=3)
    with caplog.at_level(logging.INFO, logger="react_text.backends.openai_api"):
        assert model.context_window is None
        assert asyncio.run(model.acontext_window()) is None  # cached: not asked again
    words = [r.getMessage() for r in caplog.records]
    assert sum("GET" in w for w in words) == 2 and any("does not say its context window" in w for w in words)
    assert all(SECRET not in w for w in words)


# -- a stop sequence that fires inside the model's thinking, as a real server applies it ------------


class Thinker:
    """A server whose model thinks before it acts and whose thinking mentions the observation
    label: it applies the request's `stop` to everything it generates, thinking included, as
    llama.cpp and vLLM do. It "generates" a fixed text that continues whatever it was sent."""

    THINKING = "I expect the tool's\nObservation: to give the price.\n"
    PROTOCOL = "THOUGHT: I need the price.\nACTION: lookup[train ticket]"

    def __init__(self, api: str, *, split: bool = False) -> None:
        self.api = api
        self.split = split  # the server returns the thinking apart (reasoning_content)
        self.stops: list[list[str]] = []

    def _apply_stop(self, text: str, stop: list[str]) -> tuple[str, bool]:
        cuts = [text.find(s) for s in stop if s in text]
        return (text[: min(cuts)], True) if cuts else (text, False)

    def __call__(self, request: Any) -> Any:
        if request.method != "POST":
            return httpx.Response(404)
        sent = json.loads(request.content)
        stop = sent.get("stop") or []
        self.stops.append(stop)
        if self.api == "completion":
            prompt = sent["prompt"]
            if "OBSERVATION: 89" in prompt:
                return httpx.Response(200, json=body("completion", " done\nFINAL: 89"))
            whole = f" <think>\n{self.THINKING}</think>\n{self.PROTOCOL}"
            already = whole[: next(i for i in range(len(whole), -1, -1) if prompt.endswith(whole[:i]))]
            text, _ = self._apply_stop(whole[len(already) :], stop)
            return httpx.Response(200, json=body("completion", text))
        messages = sent["messages"]
        if "OBSERVATION: 89" in messages[-1]["content"]:
            return httpx.Response(200, json=chat_body("FINAL: 89"))
        if self.split:
            reasoning, stopped = self._apply_stop(self.THINKING, stop)
            return httpx.Response(
                200, json=reasoning_body("reasoning_content", "" if stopped else self.PROTOCOL, reasoning)
            )
        text, _ = self._apply_stop(f"<think>\n{self.THINKING}</think>\n{self.PROTOCOL}", stop)
        return httpx.Response(200, json=chat_body(text))


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("api", "split"), [("completion", False), ("chat", False), ("chat", True)])
def test_a_stop_that_fires_inside_thinking_is_recovered(mode: Mode, api: str, split: bool, tools: list[object]) -> None:
    server = Thinker(api, split=split)
    model = backend(OpenAIChat if api == "chat" else OpenAICompletion, server)
    result = run_agent(model, tools, "What does a train ticket cost?", mode)
    assert (result.answer, result.stop_reason) == ("89", "final"), result.error
    assert result.steps[0].observation == "89"  # the tool ran once the thinking was through
    assert "Observation: to give the price" in result.steps[0].reasoning  # the thinking is kept, not lost
    assert server.stops[0] and all(stop == [] for stop in server.stops[1:])  # no `stop` after it fired in thinking
