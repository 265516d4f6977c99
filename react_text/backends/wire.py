"""What OpenAI-compatible servers answer, read without trusting it. Pure: no I/O.

The `openai` client builds its response objects without validating them, so a 200 answer with no
choices, `choices: null`, an HTML page or a choice with no message arrives as whatever the server
sent (a string, a list, an object missing fields). Everything here reads those objects, or plain
JSON, field by field and raises `Malformed` (a ValueError the backends turn into ModelError) for
an answer that is not a reply, never IndexError, TypeError or AttributeError.

Reasoning that a server splits out of the reply comes as `reasoning_content` (vLLM's reasoning
parsers, llama.cpp's `--reasoning-format`, DeepSeek's API) or `reasoning` (OpenRouter, Ollama,
newer vLLM); it goes to `Reply.reasoning`, and the content alone is the reply's text.

Also here: what an error says (a prompt past the context window, a rejected `stop`, a connection
dropped without a word, an answer cut short), and where a server says its context window (`window_plan`).
"""

from __future__ import annotations

import math
from collections.abc import Generator, Mapping
from typing import Any, Literal, TypeGuard, get_args

import regex

from react_text.core.types import Reply, Tokens, Usage, Vocabulary
from react_text.parser import guard

__all__ = [
    "GRAMMAR_SERVERS",
    "SERVERS",
    "EmptyStream",
    "Malformed",
    "Server",
    "StreamReading",
    "cut_said",
    "dropped",
    "error_words",
    "exceeds_context",
    "grammar_fields",
    "names_stop",
    "prompt_plan",
    "prompt_said",
    "read_answer",
    "window_plan",
    "window_said",
]

_REASONING_FIELDS = ("reasoning_content", "reasoning")
_SILENT_HOSTS = ("api.openai.com",)  # servers known not to say their context window
_NOT_OBJECTS = (str, bytes, int, float, bool, list, tuple)

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


Server = Literal["llama.cpp", "vllm", "sglang", "ollama", "openai"]
SERVERS: tuple[Server, ...] = get_args(Server)
# Where each server takes a grammar in the request body (one grammar text serves them all: llama.cpp
# reads it as GBNF, xgrammar, behind vLLM and SGLang, reads the same text as its EBNF):
#   llama.cpp     "grammar": GBNF (llama.cpp's server and llama-cpp-python's)
#   vllm          "structured_outputs": {"grammar": EBNF} (0.12 and later; `guided_grammar` is gone)
#   sglang        "ebnf": EBNF
#   ollama        none: it has no grammar field; stop sequences and the guard hold the protocol
#   openai        none
GRAMMAR_SERVERS: tuple[Server, ...] = ("llama.cpp", "vllm", "sglang")


def grammar_fields(server: Server, grammar: str, version: str | None = None) -> dict[str, Any]:
    """The request-body fields that carry `grammar` to `server` (of `version`, when it said one);
    {} for a server that takes none. vLLM reads `structured_outputs.grammar` from 0.12 on and
    `guided_grammar` before (its OpenAI protocol's field since 0.4); a vLLM whose version is not
    known is taken to be recent."""
    if server == "llama.cpp":
        return {"grammar": grammar}
    if server == "vllm":
        if _release(version) < (0, 12):
            return {"guided_grammar": grammar}
        return {"structured_outputs": {"grammar": grammar}}
    if server == "sglang":
        return {"ebnf": grammar}
    return {}


_RELEASE = regex.compile(r"\d{1,9}+(?:\.\d{1,9}+)*+")  # 9 digits a part: an int, never a huge one


def _release(version: str | None) -> tuple[int, ...]:
    """The leading release numbers of a version ("0.9.2" -> (0, 9, 2), "0.11.0rc1" -> (0, 11, 0));
    (999,) when there are none (unknown: the newest)."""
    numbers = _RELEASE.match((version or "").strip())
    return tuple(int(n) for n in numbers.group().split(".")) if numbers else (999,)


class Malformed(ValueError):
    """A 200 answer that is not a reply."""


class EmptyStream(Malformed):
    """A 200 stream with nothing in it at all, not even an event."""


class Stalled(ValueError):
    """A stream that went on sending bytes (keep-alive comments, empty chunks) but no text."""


# A server sends a token a chunk at the least, and no token of any tokenizer we know is longer
# than this: a stream past either bound has ignored `max_tokens` and is cut there ("length").
_CHARS_PER_TOKEN_MOST = 128


def _field(obj: object, name: str) -> Any:
    """A field of an SDK object or a JSON mapping; None when absent or when `obj` is neither."""
    if isinstance(obj, Mapping):
        return obj.get(name)
    if obj is None or isinstance(obj, _NOT_OBJECTS):
        return None
    return getattr(obj, name, None)


def read_answer(answer: object, *, chat: bool) -> Reply:
    """The reply in a whole (not streamed) answer."""
    choices = _field(answer, "choices")
    if not isinstance(choices, list) or not choices:
        raise Malformed(f"an answer with no choices: {_glimpse(answer)}")
    choice = choices[0]
    if chat:
        message = _field(choice, "message")
        if message is None or isinstance(message, _NOT_OBJECTS):
            raise Malformed(f"a choice with no message: {_glimpse(choice)}")
        text, reasoning = _text(_field(message, "content")), _reasoning(message)
    else:
        if _field(choice, "text") is None:
            raise Malformed(f"a choice with no text: {_glimpse(choice)}")
        text, reasoning = _text(_field(choice, "text")), _reasoning(choice)
    return Reply(text, _read_usage(_field(answer, "usage")), _finish(choice), reasoning or None)


class StreamReading:
    """A streamed reply, read one chunk at a time until it ends or a made-up observation begins.

    `add(chunk)` returns True when the caller should stop reading: the content (never the
    reasoning) holds a full observation label, or the server has sent more than `max_tokens`
    could hold (more chunks of text than tokens, or more characters than any tokens spell): it
    ignores the allowance, and the reply is cut there as if at its length. `texts` counts the
    chunks that brought text, so a caller can tell a stream that progresses from one that only
    keeps its connection alive.
    """

    def __init__(self, *, chat: bool, max_tokens: int | None = None, tokens: bool = False) -> None:
        self._chat = chat
        self._max_tokens = max_tokens
        self._tokens = _StreamTokens() if tokens else None  # `answer()` gives them, when asked for
        self._texts = 0  # chunks that carried text or reasoning
        self._written = 0  # their characters
        self._text = ""
        self._reasoning: list[str] = []
        self._usage: Usage | None = None
        self._finish: str | None = None
        self._choices = 0
        self._chunks = 0

    def add(self, chunk: object) -> bool:
        self._chunks += 1
        if chunk is None or isinstance(chunk, _NOT_OBJECTS):
            raise Malformed(f"a stream chunk that is not an object: {_glimpse(chunk)}")
        usage = _field(chunk, "usage")
        if usage is not None:
            self._usage = _read_usage(usage)
        choices = _field(chunk, "choices")
        if not choices:  # a usage-only chunk ([] or null)
            return False
        if not isinstance(choices, list):
            raise Malformed(f"a stream chunk with choices that are not a list: {_glimpse(chunk)}")
        choice = choices[0]
        if choice is None or isinstance(choice, _NOT_OBJECTS):
            raise Malformed(f"a stream chunk whose choice is not an object: {_glimpse(chunk)}")
        self._choices += 1
        self._finish = _finish(choice) or self._finish
        if self._tokens is not None:
            self._tokens.add(chunk, choice)
        holder = _field(choice, "delta") if self._chat else choice
        reasoning = _reasoning(holder)
        if reasoning:
            self._reasoning.append(reasoning)
        new = _text(_field(holder, "content" if self._chat else "text"))
        if reasoning or new:
            self._texts += 1
            self._written += len(reasoning) + len(new)
        if self._past_allowance():
            self._finish = "length"
            return True
        if not new:
            return False
        before = len(self._text)
        self._text += new
        if guard.is_cut(self._text, before - 32):
            self._finish = "stop"
            return True
        return False

    @property
    def texts(self) -> int:
        return self._texts

    def _past_allowance(self) -> bool:
        if self._max_tokens is None:
            return False
        most = max(self._max_tokens, 1)
        return self._texts > most or self._written > most * _CHARS_PER_TOKEN_MOST

    def reply(self) -> Reply:
        if not self._chunks:
            raise EmptyStream("an empty stream")
        if not self._choices:
            raise Malformed("a stream that ended without a single choice")
        return Reply(self._text, self._usage, self._finish, "".join(self._reasoning) or None)

    def answer(self) -> dict[str, Any]:
        """The stream's token fields gathered as one whole answer holds them, for `read_tokens`
        (asked for with `tokens=True`; an empty answer otherwise)."""
        return self._tokens.answer() if self._tokens is not None else {}


class _StreamTokens:
    """The token fields of a stream's chunks, put together: each chunk's sampled ids (vLLM's
    `token_ids`, the delta's) and log-probs (logprobs.content[] entries, or the completions'
    tokens and token_logprobs) appended in order, and the prompt's ids, which come once (vLLM: the
    first chunk, at the top for chat, in the choice for completions)."""

    def __init__(self) -> None:
        self._prompt: object = None
        self._ids: list[object] = []
        self._entries: list[object] = []  # logprobs.content[]
        self._pieces: list[object] = []  # logprobs.tokens
        self._numbers: list[object] = []  # logprobs.token_logprobs
        self._broken = False  # a chunk's token fields were not lists: give none rather than a guess

    def add(self, chunk: object, choice: object) -> None:
        prompt = _field(chunk, "prompt_token_ids") or _field(choice, "prompt_token_ids")
        if prompt is not None and self._prompt is None:
            self._prompt = prompt
        ids = _field(choice, "token_ids")
        if ids is not None:
            self._extend(self._ids, ids)
        logprobs = _field(choice, "logprobs")
        if logprobs is None:
            return
        content = _field(logprobs, "content")
        if content is not None:
            self._extend(self._entries, content)
        else:
            self._extend(self._pieces, _field(logprobs, "tokens"))
            self._extend(self._numbers, _field(logprobs, "token_logprobs"))

    def _extend(self, into: list[object], value: object) -> None:
        if isinstance(value, list):
            into.extend(value)
        elif value is not None:
            self._broken = True

    def answer(self) -> dict[str, Any]:
        if self._broken or (self._entries and self._pieces):
            return {}
        logprobs: dict[str, Any] = {"content": self._entries}
        if not self._entries:
            logprobs = {"tokens": self._pieces, "token_logprobs": self._numbers}
        choice = {"logprobs": logprobs, "token_ids": self._ids or None, "prompt_token_ids": self._prompt}
        return {"choices": [choice]}


def _read_usage(raw: object) -> Usage | None:
    """Token counts as reported; None when absent or not counts (the loop then estimates)."""
    prompt, completion = _field(raw, "prompt_tokens"), _field(raw, "completion_tokens")
    if _count(prompt) and _count(completion):
        return Usage(prompt, completion)
    return None


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
            return _window(int(next(g for g in found.groups() if g)))
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
            return _window(int(next(g for g in found.groups() if g)))
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


def window_plan(base_url: str, name: str) -> Generator[str, object, int | None]:
    """Where to ask for the context window: yields each URL to GET, is sent its JSON (None when
    the GET failed), returns the window or None. OpenAI itself does not say, so is not asked."""
    base = base_url.rstrip("/")
    if any(host in base for host in _SILENT_HOSTS):
        return None
    window = _window_from_models((yield f"{base}/models"), name)
    if window is None:
        window = _window_from_props((yield f"{base.removesuffix('/v1')}/props"))
    return window


def _window_from_models(listing: object, name: str) -> int | None:
    """vLLM's (and SGLang's) `GET /v1/models`: `max_model_len` of the served model."""
    models = _field(listing, "data")
    if not isinstance(models, list):
        return None
    entries = [m for m in models if _field(m, "id") == name] or (models if len(models) == 1 else [])
    return _window(_field(entries[0], "max_model_len")) if entries else None


def _window_from_props(props: object) -> int | None:
    """llama.cpp's server `GET {root}/props`: `default_generation_settings.n_ctx` (per slot), else a
    top-level `n_ctx` (newer servers)."""
    settings = _field(props, "default_generation_settings")
    return _window(_field(settings, "n_ctx")) or _window(_field(props, "n_ctx"))


def _text(value: object) -> str:
    """Message content: text, null (a reply of reasoning alone), or a list of typed parts."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):  # [{"type": "text", "text": "..."}, ...]
        return "".join(str(_field(p, "text") or "") for p in value if _field(p, "type") == "text")
    raise Malformed(f"content that is not text: {_glimpse(value)}")


def _reasoning(holder: object) -> str:
    for name in _REASONING_FIELDS:  # some servers send both, with the same text: take one
        value = _field(holder, name)
        if isinstance(value, str) and value:
            return value
    return ""


def _finish(choice: object) -> str | None:
    value = _field(choice, "finish_reason")
    return value if isinstance(value, str) else None


def _count(value: object) -> TypeGuard[int]:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def _window(value: object) -> int | None:
    return value if _count(value) and value > 0 else None


def _glimpse(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 120 else f"{text[:117]}..."


# -- token ids, for trajectories (`OpenAI*(token_ids=True)`) ----------------------------------------
# What each server is asked, and where it answers (read from their sources):
#   vllm       `return_token_ids: true` (0.10.2 and later): the choice's `token_ids` (sampled), and
#              `prompt_token_ids` (top level for chat, in the choice for completions); log-probs from
#              `logprobs: true, top_logprobs: 0` (chat: logprobs.content[] of {token, logprob, bytes})
#              or `logprobs: 0` (completions: logprobs.tokens, token_logprobs)
#   llama.cpp  `n_probs: 1` (and `return_tokens: true`, read by its native /completion): the OpenAI
#              endpoints answer logprobs.content[] of {id, token, bytes, logprob}, chat and completion
#              alike. Its chat endpoint sets n_probs from `top_logprobs` (20 when absent) whenever
#              `logprobs` is true, over any `n_probs` sent (tools/server/server-common.cpp,
#              oaicompat_chat_params_parse), so chat asks `top_logprobs: 1`: 0 would ask for none.
#              No prompt ids in the answer: the server's own are asked of it (`prompt_plan`: its
#              /tokenize, after /apply-template for chat), which is how it tokenized the prompt
#   others     (llama-cpp-python's server, OpenAI) token strings only, with log-probs: mapped to ids
#              by `tokenizer=` when given (not exact: the ids are derived from text)
# Streamed (`stream=True`), each chunk carries its own tokens' share of the same fields (vLLM: the
# delta's `token_ids`, `prompt_token_ids` in the first chunk; llama.cpp: one logprobs.content[]
# entry a token; OpenAI: logprobs.content[] in chunks): `StreamReading(tokens=True)` appends them
# and `answer()` hands `read_tokens` the whole answer they make. A token whose text a server held
# back (llama.cpp holds what may begin a stop word, and sends it later with the next token's
# log-prob only) leaves token texts that do not spell the reply: then the reply has no tokens,
# never ids that are not the ones sampled.


def token_fields(server: Server | None, *, chat: bool) -> dict[str, Any]:
    """The request fields that ask `server` for the tokens it sampled (and their log-probabilities)."""
    if server == "vllm":
        return {"return_token_ids": True} | ({"logprobs": True, "top_logprobs": 0} if chat else {"logprobs": 0})
    if server == "llama.cpp":  # its own fields, and the OpenAI ones llama-cpp-python's server (said llama.cpp) reads
        openai_style = {"logprobs": True, "top_logprobs": 1} if chat else {"logprobs": 1}
        return {"n_probs": 1, "return_tokens": True} | openai_style
    return {"logprobs": True, "top_logprobs": 0} if chat else {"logprobs": 1}


def prompt_plan(base_url: str, body: Mapping[str, Any], *, chat: bool) -> Generator[tuple[str, Any], object, Ids]:
    """A request's prompt as llama.cpp's server tokenizes it: yields each (URL, JSON body) to POST,
    is sent its JSON answer (None when the POST failed), returns the ids or None.

    The server tokenizes a prompt string with special tokens added and parsed (tools/server:
    tokenize_input_prompts(..., true, true)); /tokenize does the same when asked so. A chat
    request's prompt is the server's chat template over its messages: /apply-template renders it
    from the same body, with the same code the chat endpoint runs."""
    root = base_url.rstrip("/").removesuffix("/v1")
    prompt = body.get("prompt")
    if chat:
        prompt = _field((yield f"{root}/apply-template", dict(body)), "prompt")
    if not isinstance(prompt, str):
        return None
    answer = yield f"{root}/tokenize", {"content": prompt, "add_special": True, "parse_special": True}
    return _ints(_field(answer, "tokens"))


Ids = tuple[int, ...] | None


def read_tokens(
    answer: object,
    text: str,
    *,
    prompt: tuple[int, ...] | None = None,
    vocabulary: Vocabulary | None = None,
    served: tuple[int, ...] | None = None,
) -> Tokens | None:
    """The call as token ids, from a whole answer whose reply is `text`; None when the answer does
    not say enough (no log-probs, no prompt ids and none given, token texts that do not spell the
    reply). `served`: the prompt's ids as the server said it tokenized it, when its answer has
    none (`prompt_plan`); `prompt`: the prompt's ids from the tokenizer, else (not exact)."""
    choices = _field(answer, "choices")
    choice = choices[0] if isinstance(choices, list) and choices else None
    pieces, logprobs, listed = _token_logprobs(_field(choice, "logprobs"))
    if pieces is None or logprobs is None:
        return None
    reasons = []
    ids = _ints(_field(choice, "token_ids")) or listed
    if ids is None and vocabulary is not None:
        mapped = [vocabulary.piece_id(p.decode("utf-8", "replace")) for p in pieces]
        ids = None if None in mapped else tuple(m for m in mapped if m is not None)
        reasons.append("the sampled ids were mapped from the server's token texts by the tokenizer")
    given = _ints(_field(choice, "prompt_token_ids")) or _ints(_field(answer, "prompt_token_ids")) or served
    if given is None and prompt is not None:
        reasons.append("the prompt's ids are the tokenizer's, not the server's")
    prompt_ids = given or prompt
    if ids is None or prompt_ids is None or len(ids) != len(pieces):
        return None
    ends, so_far = [], b""
    for piece in pieces:
        so_far += piece
        ends.append(len(so_far.decode("utf-8", "ignore")))  # a token ending inside a character ends before it
    spelled = so_far.decode("utf-8", "replace")
    if not spelled.startswith(text):
        return None  # the token texts do not spell the reply (reasoning split out, a rewritten reply)
    kept = sum(1 for end in ends if end <= len(text))
    while kept and not pieces[kept - 1]:  # an end-of-turn token spells nothing (llama.cpp sends ""): past the reply
        kept -= 1
    bad = [n for n in logprobs[:kept] if not (math.isfinite(n) and n <= 0.0)]
    if bad:  # NaN, an infinity or a probability above 1: not one the trainer can use; 0.0 keeps the exports JSON
        reasons.append(
            f"{len(bad)} of the server's log-probabilities are not finite numbers <= 0 ({bad[0]!r}): 0.0 instead"
        )
        logprobs = tuple(n if math.isfinite(n) and n <= 0.0 else 0.0 for n in logprobs)
    return Tokens(
        prompt_ids, ids[:kept], logprobs[:kept], tuple(ends[:kept]), len(ids), not reasons, "; ".join(reasons)
    )


def _token_logprobs(raw: object) -> tuple[list[bytes] | None, tuple[float, ...] | None, tuple[int, ...] | None]:
    """Each token's text as bytes, their log-probs, and their ids when listed (llama.cpp), from
    either shape (chat's logprobs.content[], or the completions' tokens and token_logprobs)."""
    content = _field(raw, "content")
    if isinstance(content, list):
        pieces = [_piece(entry) for entry in content]
        numbers = tuple(_field(entry, "logprob") for entry in content)
        ids = tuple(_field(entry, "id") for entry in content)
        listed = ids if ids and all(_count(i) for i in ids) else None
    else:
        tokens, numbers = _field(raw, "tokens"), tuple(_field(raw, "token_logprobs") or ())
        good = isinstance(tokens, list) and all(isinstance(t, str) for t in tokens)
        pieces = [t.encode() for t in tokens] if good else [None]
        listed = None
    if not pieces or None in pieces or len(numbers) != len(pieces):
        return None, None, None
    if not all(isinstance(n, int | float) and not isinstance(n, bool) for n in numbers):
        return None, None, None
    return pieces, tuple(float(n) for n in numbers), listed  # type: ignore[return-value]


def _piece(entry: object) -> bytes | None:
    """One token's text as bytes: its `bytes` when given (a token may hold part of a character)."""
    raw = _field(entry, "bytes")
    if isinstance(raw, list) and all(isinstance(b, int) and 0 <= b < 256 for b in raw):
        return bytes(raw)
    token = _field(entry, "token")
    return token.encode() if isinstance(token, str) else None


def _ints(value: object) -> tuple[int, ...] | None:
    if isinstance(value, list) and value and all(_count(v) for v in value):
        return tuple(value)
    return None
