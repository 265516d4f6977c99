"""What a server's error says: a prompt past the context window (and the window and prompt it
names), a rejected `stop`, a connection dropped without a word, an answer cut short; and the
`openai` client's retry rule, for the lean path's one try. Pure: no I/O."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import regex

from react_text.backends.wire.fields import window

__all__ = [
    "cut_said",
    "dropped",
    "error_words",
    "exceeds_context",
    "first_backoff",
    "names_stop",
    "prompt_said",
    "retried",
    "retry_wait",
    "window_said",
]

# What servers say when a prompt does not fit the context window (matched case-insensitively
# anywhere in the error's message, code or type). Where each comes from:
#   context_length_exceeded            OpenAI's error code; llama-cpp-python's server uses it too
#   maximum context length             OpenAI ("This model's maximum context length is 8192 tokens.
#                                      However, your messages resulted in ..."), vLLM ("This model's
#                                      maximum context length is N tokens. However, your request has
#                                      M input tokens", "'max_tokens' ... is too large: ... This
#                                      model's maximum context length is ..."), llama-cpp-python's
#                                      server (its context_length_exceeded formatter), SGLang's
#                                      tokenizer manager when prompt and max_tokens pass the window
#                                      ("Requested token count exceeds the model's maximum context
#                                      length of W tokens. You requested a total of T tokens: N
#                                      tokens from the input messages and M tokens for the completion")
#   longer than the model's context    SGLang's tokenizer manager: "The input (N tokens) is longer
#   length                             than the model's context length (W tokens)." (Together too)
#   exceeds the maximum allowed        SGLang's scheduler: "Input length (N tokens) exceeds the
#   length                             maximum allowed length (M tokens). Use a shorter input or
#                                      enable --allow-auto-truncate." (M: what a prompt may hold)
#   maximum model length               vLLM's engine: "The decoder prompt (length N) is longer than
#                                      the maximum model length of M."
#   exceeds the available context      llama.cpp's server: "request (N tokens) exceeds the available
#                                      context size (M tokens)", older "the request exceeds the
#                                      available context size, try increasing it"
#   exceed_context_size_error          llama.cpp's server: the error's type
#   exceeds the context window         OpenAI's newer wording: "Your input exceeds the context window
#                                      of this model"
#   exceeds( the)? context length      Ollama ("the input length exceeds the context length"),
#                                      LM Studio ("Input length 6491 exceeds context length 1500")
#   exceed context window              llama-cpp-python unformatted: "Requested tokens (N) exceed
#                                      context window of M"
_CONTEXT_EXCEEDED = regex.compile(
    r"(?i)context_length_exceeded|maximum context length|maximum model length"
    r"|exceeds? the available context|exceed_context_size_error|exceeds the context window"
    r"|exceeds (?:the )?context length|exceeds? context window|longer than the model's context length"
    r"|exceeds the maximum allowed length"
)


# Where those errors name the window: OpenAI, vLLM, llama-cpp-python ("maximum context length is
# 4096 tokens"), vLLM's engine ("maximum model length of 8192"), llama.cpp ("available context size
# (4096 tokens)", and "n_ctx": 4096 in its body), LM Studio ("exceeds context length 1500"), SGLang
# ("the model's context length (1500 tokens)", "maximum context length of 1500 tokens", its
# scheduler's "maximum allowed length (1499 tokens)").
_WINDOW_SAID = regex.compile(
    r"(?i)maximum context length is (\d+)|maximum model length of (\d+)|context size \((\d+) tokens"
    r"|exceeds context length (\d+)|\bn_ctx['\"]?\s*:\s*(\d+)|model's context length \((\d{1,9}+) tokens"
    r"|maximum context length of (\d{1,9}+)|maximum allowed length \((\d{1,9}+) tokens"
)


def window_said(*said: object) -> int | None:
    """The context window a context-length error names, or None."""
    for part in said:
        found = _WINDOW_SAID.search(str(part)) if part is not None else None
        if found:
            return window(int(next(g for g in found.groups() if g)))
    return None


# vLLM: "(372 in the messages, 449 in the completion)"; OpenAI: "your messages resulted in 372
# tokens"; llama.cpp's server: "n_prompt_tokens": 372; SGLang: "The input (372 tokens) is longer",
# "372 tokens from the input messages", "Input length (372 tokens) exceeds".
_PROMPT_SAID = regex.compile(
    r"(?i)\b(\d{1,9}+) in the messages\b|messages resulted in (\d{1,9}+) tokens"
    r"|\bn_prompt_tokens['\"]?\s{0,9}+:\s{0,9}+(\d{1,9}+)|\binput \((\d{1,9}+) tokens\) is longer"
    r"|\b(\d{1,9}+) tokens from the input messages\b|\binput length \((\d{1,9}+) tokens\) exceeds"
)


def prompt_said(*said: object) -> int | None:
    """The server's count of the prompt that a context-length error names, or None."""
    for part in said:
        found = _PROMPT_SAID.search(str(part)) if part is not None else None
        if found:
            return window(int(next(g for g in found.groups() if g)))
    return None


def exceeds_context(*said: object) -> bool:
    """Whether an error's words (message, body) say the prompt did not fit the context window."""
    return any(_CONTEXT_EXCEEDED.search(str(part)) for part in said if part is not None)


def error_words(exc: Any) -> str:
    """What an `openai.APIStatusError` says: the body's message, else the client's."""
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
        if isinstance(inner, str) and inner:
            return inner
    return str(exc.message)


def names_stop(exc: Any) -> bool:
    """Whether an `openai.BadRequestError` rejects the `stop` parameter."""
    return "stop" in (exc.param or "") or "'stop'" in str(exc)


def dropped(exc: object) -> bool:
    """Whether a server took the request and closed the connection without a word (httpx's
    RemoteProtocolError "Server disconnected without sending a response", or a ReadError such as
    "Connection reset by peer"), not a refused connection nor a time-out."""
    cause = exc.__cause__ if isinstance(exc, BaseException) else None
    while cause is not None:
        if type(cause).__name__ in ("RemoteProtocolError", "ReadError"):
            return True
        cause = cause.__cause__ or cause.__context__
    return False


# What httpx says (h11's words) when a server answered, then closed the connection before the
# body's end: "... (received 20 bytes, expected 95)" for a body of known length, "... (incomplete
# chunked read)" for a chunked one.
_CUT = "peer closed connection without sending complete message body"


def cut_said(words: str) -> tuple[int | None, int | None] | None:
    """Whether httpx's `words` say an answer was cut short, and how many of how many bytes came
    (None, None when they do not say: a chunked body); None when they say something else."""
    if not words.startswith(_CUT):
        return None
    counts = [int(word) for word in words[len(_CUT) :].strip(" ()").replace(",", " ").split() if word.isdecimal()]
    return (counts[0], counts[1]) if len(counts) == 2 else (None, None)


# The `openai` client's retry rule, for the one try the lean path (`http1`) makes before handing a
# request to it: the server's x-should-retry first, then 408, 409, 429 and 5xx; the wait is the
# server's Retry-After (or retry-after-ms) when 0-60 s, else the client's first backoff (0.5 s less
# up to a quarter, at random). Later tries are the client's own.
_RETRIED = frozenset({408, 409, 429})
_FIRST_BACKOFF = 0.5
_MOST_RETRY_AFTER = 60.0


def retried(status: int, headers: Mapping[str, str]) -> bool:
    """Whether the `openai` client would try again after this answer (names lower-cased)."""
    said = headers.get("x-should-retry")
    if said in ("true", "false"):
        return said == "true"
    return status in _RETRIED or status >= 500


def first_backoff(jitter: float) -> float:
    """The client's first wait, for a `jitter` drawn from [0, 1)."""
    return _FIRST_BACKOFF * (1 - 0.25 * jitter)


def retry_wait(headers: Mapping[str, str], jitter: float) -> float:
    """How long to wait before the next try: what the server asked for, else the first backoff."""
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        try:
            wait = float(headers.get(name, "")) / scale
        except ValueError:
            continue
        if 0 < wait <= _MOST_RETRY_AFTER:
            return wait
    return first_backoff(jitter)
