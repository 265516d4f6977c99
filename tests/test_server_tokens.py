"""Token ids from servers, for trajectories (`token_ids=True`): what each server is asked and how its
answer is read, against fake answers shaped as vLLM's and llama.cpp's sources define them
(vllm/entrypoints/openai/chat_completion/protocol.py and completion/protocol.py: `token_ids`,
`prompt_token_ids`; llama.cpp tools/server/server-task.cpp: logprobs.content[] of {id, token,
bytes, logprob}), and servers that give token texts only, mapped to ids by a tokenizer (not exact)."""

from __future__ import annotations

import asyncio
import json
from typing import Any, ClassVar

import openai
import pytest

from react_text import Agent, Message, OpenAIChat, OpenAICompletion, Request
from react_text.core.types import Tokens

try:
    import httpx2 as httpx
except ImportError:  # pragma: no cover
    import httpx  # type: ignore[no-redef]

STOP = ("OBSERVATION:",)
PIECES = ["FINAL", ":", " 3", "<|im_end|>"]  # the last is past the reply: sampled, not kept
IDS = [40, 41, 42, 2]
LOGPROBS = [-0.5, -0.25, -0.125, -0.01]


def vllm_chat(text: str = "FINAL: 3") -> dict[str, Any]:
    content = [
        {"token": p, "logprob": lp, "bytes": list(p.encode()), "top_logprobs": []}
        for p, lp in zip(PIECES, LOGPROBS, strict=True)
    ]
    return {
        "id": "x", "object": "chat.completion", "created": 0, "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "logprobs": {"content": content},
                     "finish_reason": "stop", "stop_reason": None, "token_ids": IDS}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7},
        "prompt_token_ids": [1, 7, 8],
    }  # fmt: skip


def vllm_completion() -> dict[str, Any]:
    logprobs = {"text_offset": [0, 5, 6, 8], "token_logprobs": LOGPROBS, "tokens": PIECES, "top_logprobs": [None] * 4}
    return {
        "id": "x", "object": "text_completion", "created": 0, "model": "m",
        "choices": [{"index": 0, "text": "FINAL: 3", "logprobs": logprobs, "finish_reason": "stop",
                     "token_ids": IDS, "prompt_token_ids": [1, 9]}],
        "usage": {"prompt_tokens": 2, "completion_tokens": 4, "total_tokens": 6},
    }  # fmt: skip


def llama_cpp(chat: bool) -> dict[str, Any]:
    content = [
        {
            "id": i,
            "token": p,
            "bytes": list(p.encode()),
            "logprob": lp,
            "top_logprobs": [{"id": i, "token": p, "bytes": list(p.encode()), "logprob": lp}],
        }
        for i, p, lp in zip(IDS, PIECES, LOGPROBS, strict=True)
    ]
    choice: dict[str, Any] = {"index": 0, "finish_reason": "stop", "logprobs": {"content": content}}
    choice |= {"message": {"role": "assistant", "content": "FINAL: 3"}} if chat else {"text": "FINAL: 3"}
    return {"id": "x", "object": "chat.completion" if chat else "text_completion", "created": 0, "model": "m",
            "choices": [choice], "usage": {"prompt_tokens": 2, "completion_tokens": 4, "total_tokens": 6}}  # fmt: skip


def strings_only() -> dict[str, Any]:
    """llama-cpp-python's server: the legacy logprobs, token texts and no ids."""
    body = vllm_completion()
    del body["choices"][0]["token_ids"], body["choices"][0]["prompt_token_ids"]
    return body


class Vocab:
    pieces: ClassVar[dict[str, int]] = dict(zip(PIECES, IDS, strict=True))

    def encode(self, text: str) -> tuple[int, ...]:
        return (1, *(ord(c) for c in text))

    def piece_id(self, piece: str) -> int | None:
        return self.pieces.get(piece)


def backend(cls: Any, answer: dict[str, Any], sent: list[dict[str, Any]], **options: Any) -> Any:
    def handler(request: Any) -> Any:
        sent.append(json.loads(request.content))
        return httpx.Response(200, json=answer)

    client = openai.OpenAI(
        api_key="x", base_url="http://test.invalid/v1", http_client=httpx.Client(transport=httpx.MockTransport(handler))
    )
    aclient = openai.AsyncOpenAI(
        api_key="x",
        base_url="http://test.invalid/v1",
        http_client=httpx.AsyncClient(transport=httpx.MockTransport(handler)),
    )
    return cls("m", client=client, async_client=aclient, token_ids=True, **options)


KEPT = Tokens(prompt=(), ids=(40, 41, 42), logprobs=(-0.5, -0.25, -0.125), ends=(5, 6, 8), sampled=4)
CHAT = Request((Message("user", "q"),), STOP, 20)
TRANSCRIPT = Request("QUESTION: q\nTHOUGHT:", STOP, 20)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_vllm_chat_asks_for_token_ids_and_reads_them_exact(mode: str) -> None:
    sent: list[dict[str, Any]] = []
    model = backend(OpenAIChat, vllm_chat(), sent, server="vllm")
    reply = model.generate(CHAT) if mode == "sync" else asyncio.run(model.agenerate(CHAT))
    assert sent[0]["return_token_ids"] is True and sent[0]["logprobs"] is True and sent[0]["top_logprobs"] == 0
    assert reply.tokens == Tokens((1, 7, 8), KEPT.ids, KEPT.logprobs, KEPT.ends, 4)


def test_vllm_completion_reads_the_prompt_ids_in_the_choice() -> None:
    sent: list[dict[str, Any]] = []
    reply = backend(OpenAICompletion, vllm_completion(), sent, server="vllm").generate(TRANSCRIPT)
    assert sent[0]["return_token_ids"] is True and sent[0]["logprobs"] == 0
    assert reply.tokens == Tokens((1, 9), KEPT.ids, KEPT.logprobs, KEPT.ends, 4)


def test_llama_cpp_gives_ids_in_its_logprobs_and_the_prompt_comes_from_the_tokenizer() -> None:
    sent: list[dict[str, Any]] = []
    reply = backend(OpenAICompletion, llama_cpp(chat=False), sent, server="llama.cpp", tokenizer=Vocab()).generate(
        TRANSCRIPT
    )
    assert sent[0]["n_probs"] == 1 and sent[0]["return_tokens"] is True
    assert reply.tokens is not None and reply.tokens.prompt == Vocab().encode(TRANSCRIPT.prompt)  # type: ignore[arg-type]
    assert (reply.tokens.ids, reply.tokens.logprobs, reply.tokens.sampled) == (KEPT.ids, KEPT.logprobs, 4)
    assert not reply.tokens.exact and "prompt's ids are the tokenizer's" in reply.tokens.reason


def test_an_end_of_turn_token_that_spells_nothing_is_sampled_not_kept() -> None:
    """llama.cpp's server sends the end-of-turn token's text as "" (bytes []), not "<|im_end|>"
    (seen on the real server: tests/test_llama_server.py): it is past the reply all the same."""
    answer = llama_cpp(chat=False)
    answer["choices"][0]["logprobs"]["content"][-1] |= {"token": "", "bytes": []}
    reply = tokenizing(OpenAICompletion, answer, []).generate(TRANSCRIPT)
    assert reply.tokens is not None and reply.tokens.ids == KEPT.ids and reply.tokens.sampled == 4


def test_llama_cpp_chat_without_prompt_ids_gives_no_tokens() -> None:
    """The chat template is the server's: without its prompt ids there is nothing exact to keep."""
    sent: list[dict[str, Any]] = []
    reply = backend(OpenAIChat, llama_cpp(chat=True), sent, server="llama.cpp").generate(CHAT)
    assert reply.text == "FINAL: 3" and reply.tokens is None
    # its chat endpoint takes n_probs from top_logprobs when logprobs is true: 0 would ask for none
    assert sent[0]["logprobs"] is True and sent[0]["top_logprobs"] == 1


RENDERED = "<|im_start|>user\nq<|im_end|>\n<|im_start|>assistant\n"


def tokenizing(cls: Any, answer: dict[str, Any], posts: list[tuple[str, Any]], **options: Any) -> Any:
    """A llama.cpp server as its source answers: /apply-template renders, /tokenize gives ids."""

    def handler(request: Any) -> Any:
        body = json.loads(request.content)
        posts.append((request.url.path, body))
        if request.url.path == "/apply-template":
            return httpx.Response(200, json={"prompt": RENDERED})
        if request.url.path == "/tokenize":
            return httpx.Response(200, json={"tokens": [1, *range(100, 100 + len(body["content"]) // 8)]})
        return httpx.Response(200, json=answer)

    url = "http://test.invalid/v1"
    client = openai.OpenAI(api_key="x", base_url=url, http_client=httpx.Client(transport=httpx.MockTransport(handler)))
    aclient = openai.AsyncOpenAI(
        api_key="x", base_url=url, http_client=httpx.AsyncClient(transport=httpx.MockTransport(handler))
    )
    return cls("m", client=client, async_client=aclient, token_ids=True, server="llama.cpp", **options)


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("chat", [False, True], ids=["completion", "chat"])
def test_llama_cpp_says_how_it_tokenized_the_prompt_so_the_ids_are_exact(mode: str, chat: bool) -> None:
    posts: list[tuple[str, Any]] = []
    model = tokenizing(OpenAIChat if chat else OpenAICompletion, llama_cpp(chat=chat), posts, tokenizer=Vocab())
    request = CHAT if chat else TRANSCRIPT
    reply = model.generate(request) if mode == "sync" else asyncio.run(model.agenerate(request))
    paths = [path for path, _ in posts]
    assert paths == (
        ["/v1/chat/completions", "/apply-template", "/tokenize"] if chat else ["/v1/completions", "/tokenize"]
    )
    if chat:
        assert posts[1][1] == posts[0][1], "the template is rendered from the very body the chat endpoint got"
    tokenized = posts[-1][1]
    assert tokenized == {"content": RENDERED if chat else TRANSCRIPT.prompt, "add_special": True, "parse_special": True}
    assert reply.tokens is not None and reply.tokens.exact and reply.tokens.reason == ""
    assert reply.tokens.prompt == (1, *range(100, 100 + len(tokenized["content"]) // 8))
    assert (reply.tokens.ids, reply.tokens.logprobs) == (KEPT.ids, KEPT.logprobs)


def test_a_server_that_does_not_tokenize_is_asked_once_and_the_tokenizer_serves() -> None:
    """llama-cpp-python's server is said llama.cpp too, and has no /tokenize (a 404)."""
    paths: list[str] = []

    def handler(request: Any) -> Any:
        paths.append(request.url.path)
        if request.url.path == "/tokenize":
            return httpx.Response(404, json={"detail": "Not Found"})
        return httpx.Response(200, json=llama_cpp(chat=False))

    client = openai.OpenAI(api_key="x", base_url="http://test.invalid/v1", http_client=httpx.Client(
        transport=httpx.MockTransport(handler)))  # fmt: skip
    model = OpenAICompletion("m", client=client, token_ids=True, server="llama.cpp", tokenizer=Vocab())
    replies = [model.generate(TRANSCRIPT) for _ in range(3)]
    assert paths == ["/v1/completions", "/tokenize", "/v1/completions", "/v1/completions"]
    for reply in replies:
        assert reply.tokens is not None and not reply.tokens.exact
        assert reply.tokens.prompt == Vocab().encode(TRANSCRIPT.prompt)  # type: ignore[arg-type]


def test_token_texts_only_are_mapped_by_the_tokenizer_and_say_so() -> None:
    reply = backend(OpenAICompletion, strings_only(), [], tokenizer=Vocab()).generate(TRANSCRIPT)
    assert reply.tokens is not None and reply.tokens.ids == KEPT.ids and not reply.tokens.exact
    assert "mapped from the server's token texts" in reply.tokens.reason


def test_token_texts_without_a_tokenizer_give_no_tokens() -> None:
    assert backend(OpenAICompletion, strings_only(), []).generate(TRANSCRIPT).tokens is None


def test_a_character_split_over_two_tokens_ends_where_it_is_whole() -> None:
    answer = vllm_chat("é!")
    raw = "é".encode()
    answer["choices"][0]["logprobs"]["content"] = [
        {"token": "bytes:\\xc3", "logprob": -1.0, "bytes": [raw[0]]},
        {"token": "bytes:\\xa9", "logprob": -2.0, "bytes": [raw[1]]},
        {"token": "!", "logprob": -3.0, "bytes": [33]},
    ]
    answer["choices"][0]["token_ids"] = [10, 11, 12]
    tokens = backend(OpenAIChat, answer, [], server="vllm").generate(CHAT).tokens
    assert tokens is not None and tokens.ends == (0, 1, 2) and tokens.ids == (10, 11, 12)


def test_tokens_that_do_not_spell_the_reply_are_not_kept() -> None:
    reply = backend(OpenAIChat, vllm_chat("something else"), [], server="vllm").generate(CHAT)
    assert reply.text == "something else" and reply.tokens is None


def test_not_asked_not_sent() -> None:
    sent: list[dict[str, Any]] = []
    model = backend(OpenAIChat, vllm_chat(), sent, server="vllm")
    model.token_ids = False
    assert model.generate(CHAT).tokens is None and "return_token_ids" not in sent[0] and "logprobs" not in sent[0]


def test_a_run_over_vllm_has_a_trajectory(tools: list[object]) -> None:
    result = Agent(backend(OpenAIChat, vllm_chat(), [], server="vllm"), tools=tools).run("q")  # type: ignore[arg-type]
    assert result.answer == "3" and result.trajectory is not None and result.trajectory.exact
    segment = result.trajectory.segments[0]
    assert segment.ids == (1, 7, 8, 40, 41, 42) and segment.mask == (0, 0, 0, 1, 1, 1) and segment.prompt == 3
    assert segment.logprobs[3:] == KEPT.logprobs


# -- streamed (`stream=True`): each chunk carries its own tokens' share of the same fields ----------
# vLLM (chat_completion/protocol.py ChatCompletionStreamResponse, completion/protocol.py
# CompletionResponseStreamChoice): the delta's `token_ids`, `prompt_token_ids` in the first chunk
# (at the top for chat, in the choice for completions), logprobs as in a whole answer, the delta's
# share; llama.cpp (server-task.cpp, server_task_result_cmpl_partial): a first chunk with the role
# and no content, then one logprobs.content[] entry of {id, token, bytes, logprob} a token.


def sse(chunks: list[dict[str, Any]]) -> bytes:
    return b"".join(f"data: {json.dumps(c)}\n\n".encode() for c in chunks) + b"data: [DONE]\n\n"


def chunk(choice: dict[str, Any], chat: bool, **top: Any) -> dict[str, Any]:
    kind = "chat.completion.chunk" if chat else "text_completion"
    return {"id": "x", "object": kind, "created": 0, "model": "m", "choices": [{"index": 0, **choice}], **top}


def usage(chat: bool) -> dict[str, Any]:
    return {**chunk({}, chat), "choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7}}


def entry(piece: str, logprob: float, token_id: int | None = None) -> dict[str, Any]:
    found = {"token": piece, "logprob": logprob, "bytes": list(piece.encode()), "top_logprobs": []}
    return found if token_id is None else {"id": token_id, **found}


def vllm_chat_stream(groups: tuple[tuple[int, ...], ...] = ((0,), (1, 2), (3,))) -> list[dict[str, Any]]:
    """A chunk per group of tokens (vLLM sends several in one chunk when it streams in intervals)."""
    chunks = [chunk({"delta": {"role": "assistant", "content": ""}, "logprobs": None, "finish_reason": None,
                     "token_ids": []}, True, prompt_token_ids=[1, 7, 8])]  # fmt: skip
    for group in groups:
        text = "".join(PIECES[i] for i in group if i < 3)  # the last token is past the reply: no text
        content = [entry(PIECES[i], LOGPROBS[i]) for i in group]
        last = group[-1] == len(PIECES) - 1
        chunks.append(chunk({"delta": {"content": text}, "logprobs": {"content": content},
                             "finish_reason": "stop" if last else None, "token_ids": [IDS[i] for i in group]}, True))  # fmt: skip
    return [*chunks, usage(True)]


def vllm_completion_stream() -> list[dict[str, Any]]:
    chunks = []
    for i, (piece, logprob) in enumerate(zip(PIECES, LOGPROBS, strict=True)):
        choice: dict[str, Any] = {
            "text": piece if i < 3 else "",
            "logprobs": {"text_offset": [0], "token_logprobs": [logprob], "tokens": [piece], "top_logprobs": [None]},
            "finish_reason": "stop" if i == 3 else None,
            "token_ids": [IDS[i]],
        }
        if i == 0:
            choice["prompt_token_ids"] = [1, 9]
        chunks.append(chunk(choice, False))
    return [*chunks, usage(False)]


def llama_cpp_stream(chat: bool, pieces: list[str] = PIECES) -> list[dict[str, Any]]:
    chunks = [chunk({"delta": {"role": "assistant", "content": None}, "finish_reason": None}, True)] if chat else []
    for i, (piece, logprob) in enumerate(zip(pieces, LOGPROBS, strict=False)):
        text = piece if i < 3 else ""
        held = {"delta": {"content": text}} if chat else {"text": text}
        chunks.append(
            chunk({**held, "finish_reason": None, "logprobs": {"content": [entry(piece, logprob, IDS[i])]}}, chat)
        )
    end = {"delta": {}} if chat else {"text": ""}
    return [*chunks, chunk({**end, "finish_reason": "stop"}, chat), usage(chat)]


def streaming(cls: Any, chunks: list[dict[str, Any]], sent: list[dict[str, Any]], **options: Any) -> Any:
    def handler(request: Any) -> Any:
        sent.append(json.loads(request.content))
        return httpx.Response(200, content=sse(chunks), headers={"content-type": "text/event-stream"})

    client = openai.OpenAI(
        api_key="x", base_url="http://test.invalid/v1", http_client=httpx.Client(transport=httpx.MockTransport(handler))
    )
    aclient = openai.AsyncOpenAI(
        api_key="x",
        base_url="http://test.invalid/v1",
        http_client=httpx.AsyncClient(transport=httpx.MockTransport(handler)),
    )
    return cls("m", client=client, async_client=aclient, token_ids=True, stream=True, **options)


def call(model: Any, request: Request, mode: str) -> Any:
    return model.generate(request) if mode == "sync" else asyncio.run(model.agenerate(request))


@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("groups", [((0,), (1,), (2,), (3,)), ((0,), (1, 2), (3,)), ((0, 1, 2, 3),)])
def test_vllm_chat_stream_gives_the_same_tokens_as_its_whole_answer(mode: str, groups: Any) -> None:
    sent: list[dict[str, Any]] = []
    reply = call(streaming(OpenAIChat, vllm_chat_stream(groups), sent, server="vllm"), CHAT, mode)
    assert sent[0]["stream"] is True and sent[0]["return_token_ids"] is True and sent[0]["logprobs"] is True
    assert reply.text == "FINAL: 3" and reply.finish_reason == "stop"
    whole = backend(OpenAIChat, vllm_chat(), [], server="vllm").generate(CHAT).tokens
    assert reply.tokens == whole == Tokens((1, 7, 8), KEPT.ids, KEPT.logprobs, KEPT.ends, 4)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_vllm_completion_stream_reads_the_prompt_ids_of_the_first_chunk(mode: str) -> None:
    sent: list[dict[str, Any]] = []
    reply = call(streaming(OpenAICompletion, vllm_completion_stream(), sent, server="vllm"), TRANSCRIPT, mode)
    assert sent[0]["return_token_ids"] is True and sent[0]["logprobs"] == 0
    assert reply.tokens == Tokens((1, 9), KEPT.ids, KEPT.logprobs, KEPT.ends, 4)


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_llama_cpp_stream_gives_one_id_a_chunk_and_the_prompt_from_the_tokenizer(mode: str) -> None:
    sent: list[dict[str, Any]] = []
    model = streaming(OpenAICompletion, llama_cpp_stream(chat=False), sent, server="llama.cpp", tokenizer=Vocab())
    reply = call(model, TRANSCRIPT, mode)
    assert sent[0]["n_probs"] == 1 and sent[0]["stream"] is True
    assert reply.tokens is not None and reply.tokens.prompt == Vocab().encode(TRANSCRIPT.prompt)  # type: ignore[arg-type]
    assert (reply.tokens.ids, reply.tokens.logprobs, reply.tokens.sampled) == (KEPT.ids, KEPT.logprobs, 4)
    assert not reply.tokens.exact and "prompt's ids are the tokenizer's" in reply.tokens.reason


def test_llama_cpp_chat_stream_without_prompt_ids_gives_no_tokens_as_its_whole_answer_does() -> None:
    reply = streaming(OpenAIChat, llama_cpp_stream(chat=True), [], server="llama.cpp").generate(CHAT)
    assert reply.text == "FINAL: 3" and reply.tokens is None


def test_a_token_whose_text_came_with_the_next_ones_log_prob_gives_no_tokens_not_wrong_ones() -> None:
    """llama.cpp holds back what may begin a stop word and sends it with the next token: that
    chunk's text is two tokens' and its log-probs one's. The ids would not be the ones sampled."""
    chunks = llama_cpp_stream(chat=False)
    first, second = chunks[0]["choices"][0], chunks[1]["choices"][0]
    second["text"] = first["text"] + second["text"]
    first["text"], first["logprobs"] = "", None
    reply = streaming(OpenAICompletion, chunks, [], server="llama.cpp", tokenizer=Vocab()).generate(TRANSCRIPT)
    assert reply.text == "FINAL: 3" and reply.tokens is None


def test_stream_token_texts_only_are_mapped_by_the_tokenizer_and_say_so() -> None:
    """A server that streams token texts and log-probs but no ids (llama-cpp-python's, OpenAI's)."""
    chunks = vllm_completion_stream()
    for c in chunks:
        for choice in c["choices"]:
            del choice["token_ids"]
            choice.pop("prompt_token_ids", None)
    reply = streaming(OpenAICompletion, chunks, [], tokenizer=Vocab()).generate(TRANSCRIPT)
    assert reply.tokens is not None and reply.tokens.ids == KEPT.ids and not reply.tokens.exact
    assert "mapped from the server's token texts" in reply.tokens.reason
    assert streaming(OpenAICompletion, chunks, []).generate(TRANSCRIPT).tokens is None  # no tokenizer: none


def test_a_stream_not_asked_for_tokens_sends_no_token_fields_and_keeps_none() -> None:
    sent: list[dict[str, Any]] = []
    model = streaming(OpenAIChat, vllm_chat_stream(), sent, server="vllm")
    model.token_ids = False
    assert model.generate(CHAT).tokens is None and "return_token_ids" not in sent[0] and "logprobs" not in sent[0]


def test_a_run_over_a_vllm_stream_has_the_trajectory_of_the_whole_answers(tools: list[object]) -> None:
    streamed = Agent(streaming(OpenAIChat, vllm_chat_stream(), [], server="vllm"), tools=tools).run("q")  # type: ignore[arg-type]
    whole = Agent(backend(OpenAIChat, vllm_chat(), [], server="vllm"), tools=tools).run("q")  # type: ignore[arg-type]
    assert streamed.answer == "3" and streamed.trajectory is not None and streamed.trajectory.exact
    assert streamed.trajectory == whole.trajectory


@pytest.mark.parametrize("bad", [float("nan"), float("-inf"), float("inf"), 5.0])
def test_a_log_probability_that_is_not_one_makes_the_ids_not_exact_saying_why(bad: float) -> None:
    from react_text.backends.wire import read_tokens

    answer = vllm_chat()
    answer["choices"][0]["logprobs"]["content"][1]["logprob"] = bad
    tokens = read_tokens(answer, "FINAL: 3")
    assert tokens is not None and tokens.ids == (40, 41, 42)
    assert not tokens.exact and "not finite numbers <= 0" in tokens.reason
    assert tokens.logprobs == (-0.5, 0.0, -0.125)
    assert read_tokens(vllm_chat(), "FINAL: 3").exact  # type: ignore[union-attr]
