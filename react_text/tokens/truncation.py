"""Cutting a text to a number of tokens: a tool's result to its allowance, exactly.

    truncate(text, 100, count)                    head and tail, and a note of what was cut between
    truncate_each((a, b, c), 300, count)          several results sharing one allowance

`truncate` keeps all of a text that fits, else its head and tail with a note between that says how
many tokens were cut (`corrections/truncated`); the note and what is kept are counted together and
shortened until they fit. It counts pieces of about the allowance's size, never a huge text whole,
so a result of many megabytes costs a few dozen counts. `Framed` is the observations of several
calls in one labelled message: cut, each result takes its share and the labels stay whole.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from react_text import prompting

__all__ = [
    "Framed",
    "truncate",
    "truncate_each",
]


@dataclass(frozen=True, slots=True)
class Framed:
    """The results of several calls in one frame (`frame(results)`: each labelled with its call).
    Cut to an allowance, the frame is kept whole and the results share what it leaves."""

    results: tuple[str, ...]
    frame: Callable[[Sequence[str]], str]

    def whole(self) -> str:
        return self.frame(self.results)

    def cut(self, allowance: int, count: Callable[[str], int]) -> str:
        room = allowance - count(self.frame([""] * len(self.results)))
        return self.frame(truncate_each(self.results, max(room, len(self.results)), count))


def truncate_each(texts: Sequence[str], allowance: int, count: Callable[[str], int]) -> tuple[str, ...]:
    """The texts cut to `allowance` tokens in all, as `truncate` cuts one: the shortest kept whole
    while an even share of what is left holds them, the others cut to that share each."""
    costs = [count(t) for t in texts]
    shares = [0] * len(texts)
    left, waiting = allowance, len(texts)
    for i in sorted(range(len(texts)), key=costs.__getitem__):
        shares[i] = min(costs[i], max(left // waiting, 1))
        left, waiting = left - shares[i], waiting - 1
    return tuple(t if shares[i] >= costs[i] else truncate(t, shares[i], count) for i, t in enumerate(texts))


# Truncation counts pieces of about the allowance's size, never a huge result whole, and no piece
# over _MAX_PIECE characters (tiktoken fails on a run of about a million spaces followed by text).
_PROBE_CHARS_PER_TOKEN = 16
_MAX_PIECE = 262_144
_EXACT_CHARS = 200_000  # a cut part up to this long is counted whole; a longer one from samples
_SAMPLED_CHARS = 131_072  # of a longer cut part, in evenly spaced samples (many small ones: less variance)
_SAMPLE_TOKENS = 32  # but each large enough to hold this many tokens: a counter may round each count up
_WIDEST_NOTE = "about 99999999999"  # the note's room is reserved for the widest figure


def truncate(text: str, allowance: int, count: Callable[[str], int]) -> str:
    """At most `allowance` tokens of `text` by `count`: all of it, or its head and tail with a note between.

    The note says how many tokens were cut: counted, or for a cut of over 200,000 characters
    estimated from evenly spaced samples ("about N"). The kept text, note included, is counted and
    shortened until it fits. An allowance too small for the note keeps the head alone. A result
    over 262,144 characters is always cut (counting it whole would cost more than it is worth).
    """
    if allowance <= 0:
        return ""
    if _fits(text, allowance, count):
        return text
    keep = allowance - count(f"\n{_note(_WIDEST_NOTE)}\n")
    while keep >= 2:
        head = _longest(text, (keep + 1) // 2, count, from_end=False)
        rest = text[head:]
        tail = _longest(rest, keep // 2, count, from_end=True)
        omitted = _measure(rest[: len(rest) - tail], count)
        kept = f"{text[:head]}\n{_note(omitted)}\n{rest[len(rest) - tail :]}"
        over = count(kept) - allowance
        if over <= 0:
            return kept
        keep -= over  # the pieces joined count differently from the pieces apart: shrink and count again
    return text[: _longest(text, allowance, count, from_end=False)]


def _note(omitted: str) -> str:
    return prompting.render("corrections/truncated", omitted=omitted)


def _fits(text: str, allowance: int, count: Callable[[str], int]) -> bool:
    most = getattr(count, "most_per_char", None)  # the engine's own counters say it (meter.counter)
    if isinstance(most, int) and len(text) * most <= allowance:  # too short to be over: not counted
        return True
    probe = min(allowance * _PROBE_CHARS_PER_TOKEN, _MAX_PIECE)
    if len(text) > probe and count(text[:probe]) > allowance:
        return False
    return len(text) <= _MAX_PIECE and count(text) <= allowance


def _longest(text: str, tokens: int, count: Callable[[str], int], *, from_end: bool) -> int:
    """The length of the longest head (or tail) of `text` that `count` puts at `tokens` or fewer.

    Searched by interpolation on the token density, falling back to halving: a dozen counts of
    pieces about `tokens` long, whatever the length of `text`; never longer than _MAX_PIECE.
    """

    def size(n: int) -> int:
        return count(text[len(text) - n :] if from_end else text[:n]) if n else 0

    if tokens <= 0:
        return 0
    low, low_count = 0, 0  # size(low) <= tokens < size(high)
    longest = min(len(text), _MAX_PIECE)
    high = min(longest, 4 * tokens)
    high_count = size(high)
    while high_count <= tokens:  # gallop until past the allowance
        if high == longest:
            return high
        low, low_count = high, high_count
        high = min(longest, 2 * high)
        high_count = size(high)
    halve = False
    while high - low > 1:
        if halve or high_count == low_count:
            middle = (low + high) // 2
        else:  # where a straight line between the two counts meets `tokens`
            middle = low + (high - low) * (tokens - low_count) // (high_count - low_count)
            middle = min(max(middle, low + 1), high - 1)
        before = high - low
        middle_count = size(middle)
        if middle_count <= tokens:
            low, low_count = middle, middle_count
        else:
            high, high_count = middle, middle_count
        halve = not halve and (high - low) * 2 > before  # a poor guess: halve next time
    return low


def _measure(cut: str, count: Callable[[str], int]) -> str:
    """The tokens in the cut part, as the note says them: counted, or estimated from samples.

    A first pass of 64 samples of 128 characters sizes the samples of the second, so that each
    holds about 32 tokens (128 characters of dense text; more of sparse text such as runs of spaces).
    """
    if len(cut) <= _EXACT_CHARS:
        return str(count(cut))
    chars, tokens = _sample(cut, count, 64, 128)
    size = 128 * min(64, max(1, math.ceil(_SAMPLE_TOKENS * chars / 128 / max(tokens, 1))))
    chars, tokens = _sample(cut, count, _SAMPLED_CHARS // size, size)
    return f"about {round(tokens * len(cut) / chars)}"


def _sample(text: str, count: Callable[[str], int], samples: int, size: int) -> tuple[int, int]:
    """The characters and tokens of `samples` evenly spaced pieces of `text`, `size` characters each."""
    stride = len(text) / samples
    chars = tokens = 0
    for i in range(samples):
        start = int(i * stride + (stride - size) / 2)
        piece = text[start : start + size]
        chars += len(piece)
        tokens += count(piece)
    return chars, tokens
