"""An answer that runs on: the same few characters over and over until the allowance cuts it.

Small models end an answer by repeating it (`FINAL: 2737.25, 2737.25, 2737.25, 2737.`) until the
reply allowance runs out. Such a reply was readable; it was cut. The answer is what came before
the repeats began, with the first copy of the repeated part:

    trim("2737.25, 2737.25, 2737.25, 2737.")          -> RunOn("2737.25", "2737.25, ", 3)
    trim("It is 7. It is 7. It is 7. It i")           -> RunOn("It is 7.", "It is 7. ", 3)

A tail counts as run on when a part of 2 to 64 characters, with a letter or digit in it, repeats
at least three times in a row to the very end (the last copy may be cut short), and the repeats
fill at least half of the answer. Pure, no regex: each period is checked by comparing the text
with itself shifted, in time linear in the text.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = [
    "RunOn",
    "trim",
]

_MAX_PERIOD = 64
_MIN_REPEATS = 3
_SEPARATORS = " \t,;:-"


@dataclass(frozen=True, slots=True)
class RunOn:
    answer: str  # the answer as far as the first copy of the repeated part
    unit: str  # the part that repeats
    repeats: int  # whole copies of it at the end


def trim(text: str) -> RunOn | None:
    """The answer in `text` before it ran on, or None when its tail does not repeat."""
    text = text.rstrip()
    n = len(text)
    for period in range(1, min(_MAX_PERIOD, n // _MIN_REPEATS) + 1):
        start = n - period  # text[start:] is periodic with this period from `start` on
        while start > 0 and text[start - 1] == text[start - 1 + period]:
            start -= 1
        repeats = (n - start) // period
        if repeats < _MIN_REPEATS or (n - start) * 2 < n:
            continue
        # The first period that repeats is the shortest, so `unit` is the repeated part itself;
        # a run of one character ("0000", "!!!!") or of punctuation ("...") is not an answer
        # said again, and neither is anything of which it is the period.
        unit = text[start : start + period]
        if period == 1 or not any(c.isalnum() for c in unit):
            return None
        kept = text[: start + period].rstrip(_SEPARATORS)
        return RunOn(kept, unit, repeats) if kept else None
    return None
