"""LocalModel's sampling (see local.py): the ids llama.cpp samples after a prompt, each one's
log-probability, and the text they spell up to the first stop sequence; given as it comes.

    sampled = yield from sample(llm, llama_cpp, tokens, request, grammar, temperature, stopping)

The generator yields the reply's text as far as no later id can take it back (not the start of a
stop sequence, not half a UTF-8 character), and returns the whole `Sampled`; `drain` runs it for
its value alone.
"""

from __future__ import annotations

import codecs
from collections.abc import Generator
from dataclasses import dataclass
from typing import Any, TypeVar

from react_text.core.types import Request

__all__ = ["Sampled", "drain", "first_stop", "sample"]

_Value = TypeVar("_Value")


@dataclass(frozen=True, slots=True)
class Sampled:
    text: str  # up to the first stop sequence
    ids: tuple[int, ...]  # every id sampled (not the end-of-text token)
    logprobs: tuple[float, ...]
    ends: tuple[int, ...]  # where each id's text ends in `text`
    pieces: tuple[bytes, ...]  # each id's bytes
    kept: int  # the first `kept` ids lie wholly inside `text`
    finish_reason: str


def sample(
    llm: Any,
    llama_cpp: Any,
    tokens: list[int],
    request: Request,
    grammar: Any,
    temperature: float,
    stopping: Any,
) -> Generator[str, None, Sampled]:
    """Sample up to `max_tokens` ids after `tokens`, stopping at the end-of-text token or a stop
    sequence; each id's log-probability read from the logits it was sampled from. Yields the text
    as it becomes certain."""
    import numpy as np

    n_vocab = llm.n_vocab()
    ids: list[int] = []
    logprobs: list[float] = []
    pieces: list[bytes] = []
    data = b""
    finish = "length"
    cut: int | None = None
    stops = [s.encode("utf-8") for s in request.stop if s]
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    released = 0  # bytes of `data` given to the decoder
    generated = llm.generate(
        tokens,
        top_k=40,
        top_p=0.95,
        min_p=0.05,
        temp=temperature,
        repeat_penalty=1.0,
        grammar=grammar,
        stopping_criteria=stopping,  # close() stops a call at its next token
    )
    try:
        for token in generated:
            logits = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(llm.ctx, -1), shape=(n_vocab,))
            if llama_cpp.llama_vocab_is_eog(llm._model.vocab, token):
                finish = "stop"
                break
            row = logits.astype(np.float64)
            top = row.max()
            logprobs.append(float(row[token] - top - np.log(np.exp(row - top).sum())))
            ids.append(token)
            piece = llm.detokenize([token])
            pieces.append(piece)
            data += piece
            found = first_stop(data, request.stop)
            if found is not None:
                finish, cut = "stop", found
                break
            if len(ids) >= request.max_tokens:
                break
            certain = len(data) - _held(data, stops)
            if certain > released:
                text = decoder.decode(data[released:certain])
                released = certain
                if text:
                    yield text
    finally:
        generated.close()
    kept_bytes = data if cut is None else data[:cut]
    ends: list[int] = []
    used = 0
    for piece in pieces:
        used += len(piece)
        ends.append(len(kept_bytes[:used].decode("utf-8", errors="ignore")))
    kept = 0
    total = 0
    for piece in pieces:
        if total + len(piece) > len(kept_bytes):
            break
        total += len(piece)
        kept += 1
    text = kept_bytes.decode("utf-8", errors="replace")
    rest = decoder.decode(kept_bytes[released:], final=True) if len(kept_bytes) >= released else ""
    if rest:
        yield rest
    return Sampled(text, tuple(ids), tuple(logprobs), tuple(ends), tuple(pieces), kept, finish)


def _held(data: bytes, stops: list[bytes]) -> int:
    """How many bytes at the end of `data` could begin a stop sequence (held back)."""
    for size in range(min(len(data), max((len(s) for s in stops), default=1) - 1), 0, -1):
        if any(s.startswith(data[-size:]) for s in stops):
            return size
    return 0


def first_stop(data: bytes, stops: tuple[str, ...]) -> int | None:
    found = [i for i in (data.find(s.encode("utf-8")) for s in stops if s) if i >= 0]
    return min(found) if found else None


def drain(call: Generator[Any, None, _Value]) -> _Value:
    """A generator run to its end for the value it returns."""
    while True:
        try:
            next(call)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]
