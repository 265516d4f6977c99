"""Token ids, for trajectories (`OpenAI*(token_ids=True)`): what each server is asked, how llama.cpp's
server is asked how it tokenized a prompt, and the call as ids read from an answer. Pure: no I/O."""

from __future__ import annotations

import math
from collections.abc import Generator, Mapping
from typing import Any

from react_text.backends.wire.fields import count, field, ints
from react_text.backends.wire.servers import Server, at
from react_text.core.types import Tokens, Vocabulary

__all__ = ["Ids", "StreamTokens", "prompt_plan", "read_tokens", "token_fields"]

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
    prompt = body.get("prompt")
    if chat:
        prompt = field((yield at(base_url, "/apply-template", root=True), dict(body)), "prompt")
    if not isinstance(prompt, str):
        return None
    answer = yield at(base_url, "/tokenize", root=True), {"content": prompt, "add_special": True, "parse_special": True}
    return ints(field(answer, "tokens"))


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
    choices = field(answer, "choices")
    choice = choices[0] if isinstance(choices, list) and choices else None
    pieces, logprobs, listed = _token_logprobs(field(choice, "logprobs"))
    if pieces is None or logprobs is None:
        return None
    reasons = []
    ids = ints(field(choice, "token_ids")) or listed
    if ids is None and vocabulary is not None:
        mapped = [vocabulary.piece_id(p.decode("utf-8", "replace")) for p in pieces]
        ids = None if None in mapped else tuple(m for m in mapped if m is not None)
        reasons.append("the sampled ids were mapped from the server's token texts by the tokenizer")
    given = ints(field(choice, "prompt_token_ids")) or ints(field(answer, "prompt_token_ids")) or served
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
    content = field(raw, "content")
    if isinstance(content, list):
        pieces = [_piece(entry) for entry in content]
        numbers = tuple(field(entry, "logprob") for entry in content)
        ids = tuple(field(entry, "id") for entry in content)
        listed = ids if ids and all(count(i) for i in ids) else None
    else:
        tokens, numbers = field(raw, "tokens"), tuple(field(raw, "token_logprobs") or ())
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
    raw = field(entry, "bytes")
    if isinstance(raw, list) and all(isinstance(b, int) and 0 <= b < 256 for b in raw):
        return bytes(raw)
    token = field(entry, "token")
    return token.encode() if isinstance(token, str) else None


class StreamTokens:
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
        prompt = field(chunk, "prompt_token_ids") or field(choice, "prompt_token_ids")
        if prompt is not None and self._prompt is None:
            self._prompt = prompt
        ids = field(choice, "token_ids")
        if ids is not None:
            self._extend(self._ids, ids)
        logprobs = field(choice, "logprobs")
        if logprobs is None:
            return
        content = field(logprobs, "content")
        if content is not None:
            self._extend(self._entries, content)
        else:
            self._extend(self._pieces, field(logprobs, "tokens"))
            self._extend(self._numbers, field(logprobs, "token_logprobs"))

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
