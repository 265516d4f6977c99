"""The model calling one tool with one input again and again: each run of identical calls, counted.

    streak = Streak(most=3)
    streak.see((("send", "ann"),))           (1,): the first call of a run
    streak.see((("send", "ann"),))           (2,): the same call again: the model is told it repeated itself
    streak.brakes((("send", "ann"),) * 2)    True: a fourth identical call in a row would pass `most`

A call is a tool's name and its input as written; calls in a reply (several, with parallel actions)
count in their order. Any other call starts a new run; a reply with no call (an unreadable one)
leaves the run as it is. A pure tool's repeat is answered from its earlier result (episode.py) and
a side-effecting tool's runs again, but each call counts: a model that is stuck is stuck either way.
`Limits.repeats` is `most`; None counts without a brake.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["Call", "Streak"]

Call = tuple[str, str]  # a tool's name, the input as written


@dataclass(slots=True)
class Streak:
    """The last run of identical calls: which call, and how many times in a row (state of one run)."""

    most: int | None
    call: Call | None = None
    times: int = 0

    def counts(self, calls: Sequence[Call]) -> tuple[int, ...]:
        """How many identical calls in a row each of `calls` would make, in order (no change here)."""
        call, times = self.call, self.times
        counted = []
        for each in calls:
            times = times + 1 if each == call else 1
            call = each
            counted.append(times)
        return tuple(counted)

    def brakes(self, calls: Sequence[Call]) -> bool:
        """Whether `calls` would make a run of identical calls longer than `most`."""
        return self.most is not None and any(n > self.most for n in self.counts(calls))

    def see(self, calls: Sequence[Call]) -> tuple[int, ...]:
        """Count `calls` as made: how many identical calls in a row each makes."""
        counted = self.counts(calls)
        if calls:
            self.call, self.times = calls[-1], counted[-1]
        return counted
