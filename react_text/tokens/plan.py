"""The plan of a run's tokens: how long the next reply may be, when old steps must be elided, when
the next call must be the forced final one, and when to warn that the budget is nearly spent.

All in the server's units: the Meter's estimate of a request (corrected by what the server
reported for the last one). A normal call is made only if, after it, the forced final call still
fits: its note, a short observation and a short reply are reserved before every call. Pure
arithmetic over the history's counts; no I/O.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Literal

from react_text import prompting
from react_text.core.limits import MIN_REPLY_TOKENS, Limits
from react_text.core.types import StopReason
from react_text.tokens.history import History
from react_text.tokens.meter import MESSAGE_OVERHEAD
from react_text.tokens.truncation import truncate

__all__ = [
    "Plan",
    "limit_words",
]

_FORCED_REPLY_TOKENS = 256  # the allowance of the forced-final call, at most
_OBSERVATION_STUB = 64  # local tokens an observation can always be cut to, to leave the forced call room
_WINDOW_SLACK = 8  # tokens of a context window never planned into (see Plan.slack)


class Plan:
    """The token plan of one run, over its history and the history's meter."""

    def __init__(self, limits: Limits, history: History, count: Callable[[str], int], window: int | None) -> None:
        self.limits = limits
        self.history = history
        self.meter = history.meter  # the history's own: it is told of every change the plan makes
        self.count = count
        self.window = window  # the model's context window in tokens, when known
        self.forced_tokens = min(limits.reply_tokens, _FORCED_REPLY_TOKENS)
        note = prompting.render("corrections/force_final", limit=limit_words(limits, "max_tokens"))
        self.reserve_local = history.note_cost(note) + _OBSERVATION_STUB + 3 * MESSAGE_OVERHEAD
        self._window_note = f"the context window of {window} tokens"  # as the window was when the run began
        self._window_reserve: int | None = None
        if window is not None:
            self._window_reserve = self.window_reserve  # counted now, with the opening last in the history

    @property
    def window_reserve(self) -> int:
        """What the forced final call needs of the window on top of the elided steps: its note (local
        tokens, scaled to the server's when used) and a minimal reply (the server's tokens already).
        A run with no window at first counts it only if a refusal teaches it one."""
        if self._window_reserve is None:
            note = prompting.render("corrections/force_final", limit=self._window_note)
            self._window_reserve = self.history.note_cost(note)
        return self._window_reserve

    def size(self, extra_local: int = 0, *, note: int = 0) -> int:
        """The next prompt in the server's tokens (the meter's estimate), with `extra_local` tokens of
        new text and a `note` of ours."""
        return self.meter.estimate(self.history.tokens) + self.meter.scale(extra_local) + self.meter.scale_ours(note)

    def budget_room(self, prompt: int, forced: bool, billed: int | None = None) -> int | None:
        """The largest reply allowance the token budget leaves a request of `prompt` tokens (and,
        unless it is the forced call, room for the forced call after it); None: no budget."""
        tokens = self.limits.tokens
        if tokens is None:
            return None
        room = tokens - (self.meter.billed.total_tokens if billed is None else billed) - prompt
        if forced or not self.limits.force_final:
            return room
        # After this call: billed + prompt + reply, and the forced call's prompt is this one plus
        # the reply (at most the allowance), a short observation and its note.
        return (room - prompt - self.meter.scale(self.reserve_local) - self.forced_tokens) // 2

    def slack(self, prompt: int) -> int:
        """Tokens kept free of a window on top of the estimate: a server frames messages its own way
        (one more token a message is common: with short messages that is more than a 32nd of the
        prompt), and one that reports no usage never corrects us. Two messages more are counted,
        for the step a plan may hold room for."""
        return max(_WINDOW_SLACK, prompt // 32, self.history.messages + 2 if self.history.messages else 0)

    def window_left(self, prompt: int, *, squeeze: bool = False) -> int | None:
        """What the context window leaves a reply after a prompt of `prompt` tokens (`squeeze`: with
        no slack kept); None: no window."""
        if self.window is None:
            return None
        return self.window - prompt - (0 if squeeze else self.slack(prompt))

    def allowance(
        self, prompt: int, *, forced: bool, billed: int | None = None, window: bool = True, squeeze: bool = False
    ) -> int:
        allowance = self.forced_tokens if forced else self.limits.reply_tokens
        left = self.window_left(prompt, squeeze=squeeze) if window else None
        if left is not None:
            allowance = min(allowance, left)
        room = self.budget_room(prompt, forced, billed)
        return allowance if room is None else min(allowance, room)

    def fit(
        self, number: int, *, forced: bool, extra_local: int = 0, reserve: bool = True, squeeze: bool = False
    ) -> int | Literal["window"] | None:
        """The allowance of call `number`, after eliding old steps if the window needs it: None when
        the budget leaves no room, "window" when only the context window is too small. `squeeze`:
        the estimate alone must fit, without the slack kept for a server's own framing (the last
        try of a forced final call, before a run would end without one).

        A normal call is made only if the window leaves room, after it, for the forced final call:
        the history elided as far as it can be (every step up to this one), its note and a short
        reply (`reserve=False` drops that); the forced call may elide the latest step too. Nothing
        is elided while the window leaves the reply a quarter of itself (or `reply_tokens`, if
        less): the allowance shrinks first.
        """
        # The forced call's extra is its note, the loop's own words; a normal call's, new text.
        new, note = (0, extra_local) if forced else (extra_local, 0)
        if self.window is not None:
            want = self._want(forced)
            prompt = self.size(new, note=note)
            if prompt + self.slack(prompt) + want > self.window:
                headroom = 0 if forced else self.window // 4  # elide a good share at once: the prefix then stays put
                framing = max(_WINDOW_SLACK, self.history.messages + 2 if self.history.messages else 0)
                target = int((self.window * 31 / 32 - framing - want - headroom) / self.meter.rate) - extra_local
                self.history.elide(max(target, 0), keep_from=number if forced else number - 1)  # it tells its meter
        prompt = self.size(new, note=note)
        allowance = self.allowance(prompt, forced=forced, squeeze=squeeze)
        if allowance >= MIN_REPLY_TOKENS and (forced or not reserve or self.forced_fits_after(number, like=number - 1)):
            return allowance
        if self.allowance(prompt, forced=forced, window=False) >= MIN_REPLY_TOKENS:
            return "window"
        return None

    def _want(self, forced: bool) -> int:
        """The reply allowance the window is made to leave before anything is elided."""
        want = self.forced_tokens if forced else min(self.limits.reply_tokens, (self.window or 0) // 4)
        return max(want, MIN_REPLY_TOKENS)

    def floor(self, keep_from: int, extra_local: int = 0) -> int:
        """The estimate of the prompt (and `extra_local` more tokens) once everything before step
        `keep_from` is elided that can be: the least it can be made to cost."""
        return self.history.floor_estimate(keep_from, extra_local)

    def forced_fits_after(self, number: int, *, like: int, pending: int = 0) -> bool:
        """Whether the forced final call still fits the window after call `number`: every step
        before it elided as far as it can be (and `pending` local tokens not yet recorded), the new
        step elided too (taken to cost what step `like` does, elided), the forced call's note and a
        short reply. What the steps cost whole does not matter: the forced call may elide all of them."""
        if self.window is None:
            return True
        held = self.meter.scale(pending + self._elided_step(like)) + self.meter.scale_ours(self.window_reserve)
        held += MIN_REPLY_TOKENS
        floor = self.floor(number) + held
        return floor + self.slack(floor) <= self.window

    def _elided_step(self, like: int) -> int:
        """Local tokens a new step is taken to cost elided: what step `like` does and a quarter more
        (its directive, which both notes quote, may be longer), at most two stubs; a stub before
        the first step."""
        done = self.history.step_floor(like)
        most = 2 * _OBSERVATION_STUB + 2 * MESSAGE_OVERHEAD
        return _OBSERVATION_STUB + 2 * MESSAGE_OVERHEAD if done == 0 else min(done * 5 // 4, most)

    def retry(
        self, number: int, *, forced: bool, refused: int, said: bool, prompt_tokens: int | None, sent_local: int
    ) -> int | None:
        """The allowance of the one retry of a request the server refused as too long (`refused`:
        its allowance), after eliding what can be; None when not even a minimal reply fits.

        When the server said how it counted the prompt, the retry is planned in its units; when it
        did not, the prompt is taken to count up to twice our estimate (the range the budget is
        tested over), and the allowance is at least the minimal one; when it said neither that
        nor its window (`said`) and nothing could be elided, the retry asks for a minimal reply.
        """
        if prompt_tokens is not None:
            self.meter.refused(prompt_tokens, sent_local)
        elided = self.history.elide(self.history.tokens // 2, keep_from=number if forced else number - 1)
        prompt = self.size()
        left = self.window_left(prompt)
        if left is None or (left < MIN_REPLY_TOKENS and self.meter.calibrated):
            return None
        if prompt_tokens is None:  # also when our estimate leaves no room, but no server has said how it counts
            left = max(MIN_REPLY_TOKENS, min(left, self.window_left(2 * prompt) or 0))
            if not said and not elided:  # neither the window nor the count is known: the smallest request
                left = MIN_REPLY_TOKENS
        allowance = min(self.allowance(prompt, forced=forced, window=False), refused if elided else refused - 1, left)
        return allowance if allowance >= MIN_REPLY_TOKENS else None

    def window_words(self) -> str:
        return (
            f"the prompt (about {self.size()} tokens) does not fit the context window of "
            f"{self.window} tokens with a reply, even with the older steps elided"
        )

    def next(
        self, number: int, observation: str, *, labelled: bool = False, cut: Callable[[int], str] | None = None
    ) -> tuple[str, StopReason | None]:
        """The observation as it will be fed back, and the limit that makes the next call the
        forced final one (None when a normal call follows). `labelled`: it holds its own labels.
        `cut`: the observation cut to an allowance (default: head and tail of the whole text; the
        observations of several calls are each cut, so that every call keeps its label)."""
        billed = self.meter.billed.total_tokens
        if cut is None:
            cut = functools.partial(self._cut_whole, observation)
        if number < self.limits.steps:
            observation = self._cut_for_window(number, observation, cut, labelled=labelled)
            prompt = self.size(self.history.cost(observation, labelled=labelled))
            allowance = self.allowance(prompt, forced=False, window=False)
            if allowance >= MIN_REPLY_TOKENS:
                left = self._left(number, billed, prompt, allowance, self.history.cost(observation, labelled=labelled))
                if left:
                    warned = prompting.render("corrections/budget_low", observation=observation, left=left)
                    fits = self.allowance(
                        self.size(self.history.cost(warned, labelled=labelled)), forced=False, window=False
                    )
                    if fits >= MIN_REPLY_TOKENS:
                        return warned, None
                return observation, None
            limit: StopReason = "max_tokens"
        else:
            limit = "max_steps"
        if self.limits.force_final and self.limits.tokens is not None:
            observation = self._shrink_for_forced(observation, limit, cut, labelled=labelled)
        return observation, limit

    def _cut_whole(self, observation: str, allowance: int) -> str:
        return truncate(observation, allowance, self.count)

    def _left(self, number: int, billed: int, prompt: int, allowance: int, observation: int) -> str:
        """What is left, in words, when the next call is likely the last normal one (the one after
        it would not fit if its observation were as long as this one); "" otherwise."""
        if number == self.limits.steps - 1:
            return "1 step"
        if self.limits.tokens is None:
            return ""
        after = prompt + allowance + self.meter.scale(observation)
        if self.allowance(after, forced=False, billed=billed + prompt + allowance, window=False) < MIN_REPLY_TOKENS:
            return f"about {self.limits.tokens - billed - prompt} tokens"
        return ""

    def _cut_for_window(self, number: int, observation: str, cut_to: Callable[[int], str], *, labelled: bool) -> str:
        """Cut the observation of step `number` (head and tail) when the next call could not be made
        with it whole, even with every older step elided, but could with it cut: the latest step
        stays, its observation cut to what the window leaves beside a reply of the size elision
        aims for (or, failing that, a minimal one). Should the forced call come next instead, it
        loses nothing by the cut: it would have elided the observation whole."""
        if self.window is None:
            return observation

        def fits(text: str, reply: int) -> bool:
            prompt = self.floor(number, self.history.cost(text, labelled=labelled))
            return prompt + self.slack(prompt) + reply <= self.window  # type: ignore[operator]

        want = self._want(forced=False)
        if fits(observation, want):
            return observation
        for reply in (want, MIN_REPLY_TOKENS):
            allowance = self.count(observation)
            while allowance > _OBSERVATION_STUB:
                allowance = max(allowance * 7 // 8, _OBSERVATION_STUB)
                cut = cut_to(allowance)
                if fits(cut, reply):
                    return cut
        return observation

    def _shrink_for_forced(
        self, observation: str, limit: StopReason, cut_to: Callable[[int], str], *, labelled: bool = False
    ) -> str:
        """Cut the observation so that the forced final call after it fits the budget."""
        note = self.history.note_cost(
            prompting.render("corrections/force_final", limit=limit_words(self.limits, limit))
        )

        def fits(text: str) -> bool:
            prompt = self.size(self.history.cost(text, labelled=labelled) + note)
            return self.allowance(prompt, forced=True, window=False) >= MIN_REPLY_TOKENS

        if fits(observation):
            return observation
        stub = prompting.render("corrections/observation_dropped")
        if not fits(stub):  # no forced call can be made anyway: show what there is
            return observation
        allowance = self.count(observation)
        while allowance >= _OBSERVATION_STUB:
            allowance = allowance * 3 // 4
            cut = cut_to(max(allowance, _OBSERVATION_STUB))
            if fits(cut):
                return cut
        return stub


def limit_words(limits: Limits, limit: StopReason) -> str:
    """The limit, in words: "the token budget of 1500"."""
    if limit == "max_tokens":
        return f"the token budget of {limits.tokens}"
    if limit == "repeats":
        return f"the limit of {limits.repeats} identical calls in a row"
    return f"the step limit of {limits.steps}"
