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
from react_text.types import Tokens

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
