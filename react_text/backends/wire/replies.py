"""The reply in a server's answer, whole or streamed, read field by field: `Malformed` (a ValueError
the backends turn into ModelError) for an answer that is not a reply, never IndexError, TypeError
or AttributeError. Pure: no I/O."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from react_text.backends.wire.fields import NOT_OBJECTS, field, glimpse
from react_text.backends.wire.tokens import StreamTokens
from react_text.backends.wire.usage import read_usage
from react_text.core.types import Reply, Usage

__all__ = ["EmptyStream", "Malformed", "Stalled", "StreamReading", "read_answer"]

_REASONING_FIELDS = ("reasoning_content", "reasoning")


class Malformed(ValueError):
    """A 200 answer that is not a reply."""


class EmptyStream(Malformed):
    """A 200 stream with nothing in it at all, not even an event."""


class Stalled(ValueError):
    """A stream that went on sending bytes (keep-alive comments, empty chunks) but no text."""


# A server sends a token a chunk at the least, and no token of any tokenizer we know is longer
# than this: a stream past either bound has ignored `max_tokens` and is cut there ("length").
_CHARS_PER_TOKEN_MOST = 128


def read_answer(answer: object, *, chat: bool) -> Reply:
    """The reply in a whole (not streamed) answer."""
    choices = field(answer, "choices")
    if not isinstance(choices, list) or not choices:
        raise Malformed(f"an answer with no choices: {glimpse(answer)}")
    choice = choices[0]
    if chat:
        message = field(choice, "message")
        if message is None or isinstance(message, NOT_OBJECTS):
            raise Malformed(f"a choice with no message: {glimpse(choice)}")
        text, reasoning = _text(field(message, "content")), _reasoning(message)
    else:
        if field(choice, "text") is None:
            raise Malformed(f"a choice with no text: {glimpse(choice)}")
        text, reasoning = _text(field(choice, "text")), _reasoning(choice)
    return Reply(text, read_usage(field(answer, "usage")), _finish(choice), reasoning or None)


class StreamReading:
    """A streamed reply, read one chunk at a time until it ends or a made-up observation begins.

    `add(chunk)` returns True when the caller should stop reading: the content (never the
    reasoning) holds a full observation label, or the server has sent more than `max_tokens`
    could hold (more chunks of text than tokens, or more characters than any tokens spell): it
    ignores the allowance, and the reply is cut there as if at its length. `texts` counts the
    chunks that brought text, so a caller can tell a stream that progresses from one that only
    keeps its connection alive; `fresh` is what the last chunk added (its reasoning, its text), for
    a caller that shows the reply as it comes.

    Where a made-up observation begins is the engine's to say (`cut(text, since)`: the request's
    `Rules.cut`); without it, where one of `stop` (the request's stop sequences) begins.
    """

    def __init__(
        self,
        *,
        chat: bool,
        max_tokens: int | None = None,
        tokens: bool = False,
        cut: Callable[[str, int], bool] | None = None,
        stop: tuple[str, ...] = (),
    ) -> None:
        self._chat = chat
        self._cut = cut or functools.partial(_at_stop, stop)
        self._max_tokens = max_tokens
        self._tokens = StreamTokens() if tokens else None  # `answer()` gives them, when asked for
        self._texts = 0  # chunks that carried text or reasoning
        self._written = 0  # their characters
        self._text = ""
        self._reasoning: list[str] = []
        self._usage: Usage | None = None
        self._finish: str | None = None
        self._choices = 0
        self._chunks = 0
        self.fresh: tuple[str, str] = ("", "")  # what the last chunk added: reasoning, text

    def add(self, chunk: object) -> bool:
        self._chunks += 1
        self.fresh = ("", "")
        if chunk is None or isinstance(chunk, NOT_OBJECTS):
            raise Malformed(f"a stream chunk that is not an object: {glimpse(chunk)}")
        usage = field(chunk, "usage")
        if usage is not None:
            self._usage = read_usage(usage)
        choices = field(chunk, "choices")
        if not choices:  # a usage-only chunk ([] or null)
            return False
        if not isinstance(choices, list):
            raise Malformed(f"a stream chunk with choices that are not a list: {glimpse(chunk)}")
        choice = choices[0]
        if choice is None or isinstance(choice, NOT_OBJECTS):
            raise Malformed(f"a stream chunk whose choice is not an object: {glimpse(chunk)}")
        self._choices += 1
        self._finish = _finish(choice) or self._finish
        if self._tokens is not None:
            self._tokens.add(chunk, choice)
        holder = field(choice, "delta") if self._chat else choice
        reasoning = _reasoning(holder)
        if reasoning:
            self._reasoning.append(reasoning)
            self.fresh = (reasoning, "")
        new = _text(field(holder, "content" if self._chat else "text"))
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
        self.fresh = (reasoning, new)
        if self._cut(self._text, max(0, before - 32)):
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


def _text(value: object) -> str:
    """Message content: text, null (a reply of reasoning alone), or a list of typed parts."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):  # [{"type": "text", "text": "..."}, ...]
        return "".join(str(field(p, "text") or "") for p in value if field(p, "type") == "text")
    raise Malformed(f"content that is not text: {glimpse(value)}")


def _reasoning(holder: object) -> str:
    for name in _REASONING_FIELDS:  # some servers send both, with the same text: take one
        value = field(holder, name)
        if isinstance(value, str) and value:
            return value
    return ""


def _finish(choice: object) -> str | None:
    value = field(choice, "finish_reason")
    return value if isinstance(value, str) else None


def _at_stop(stop: tuple[str, ...], text: str, since: int) -> bool:
    """Whether one of the stop sequences begins in `text` at or after `since`."""
    return any(sequence and sequence in text[since:] for sequence in stop)
