"""The token account of one run: all that the episode asks about tokens, in one place.

    account = Account(opening, count, limits, window)
    allowance = account.allowance(number)   # the reply allowance of normal call `number`, or why none
    allowance, note = account.forced(number, "max_steps", squeeze=True)   # the forced final call's
    account.asking()                        # a request of the history as it stands goes out
    usage = account.bill(reply)             # what it came to: the server's count, else ours
    retry = account.refused(number, forced=False, allowance=allowance, error=error)   # refused as too long
    account.add_reply(text, number, directive, usage=usage, reported=True)
    text = account.cut(result)              # a tool's result, cut to `Limits.observation_tokens`
    text, limit = account.feed(number, observation)   # as fed back, and the limit the next call is forced by
    account.add_observation(text, number)

Behind it are the history as sent (`history`: counted once, elided and folded), its meter (what was
billed; the next request in the server's units) and the plan (allowances, the forced call's
reserve, when to elide, when to warn): the episode never sees them. Pure arithmetic over counts;
no I/O.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Literal

from react_text import prompting
from react_text.core.errors import ContextLengthError
from react_text.core.limits import MIN_REPLY_TOKENS, Limits
from react_text.core.types import Message, Reply, StopReason, Usage
from react_text.tokens.history import History
from react_text.tokens.meter import Counter
from react_text.tokens.plan import Plan, limit_words
from react_text.tokens.truncation import Framed, truncate

__all__ = [
    "WINDOW",
    "Account",
    "Window",
]

Window = Literal["window"]
WINDOW: Window = "window"  # the limit a run reaches when its context window cannot take another step
# What a normal call may be planned to: its reply allowance; "window": no room for it and the forced
# call after it, but the forced call fits now; "max_tokens": the budget leaves no call; "too_long":
# not even the forced call fits the window (`too_long` says it in words).
Planned = int | Window | Literal["max_tokens", "too_long"]


class Account:
    """One run's tokens: what is sent (`opening`, then each step), counted by `count`, planned
    against `limits` and the model's context `window` (in tokens; None: not known)."""

    def __init__(
        self,
        opening: tuple[Message, ...] | str,
        count: Counter,
        limits: Limits,
        window: int | None,
        counted: Mapping[str, int] | None = None,
    ) -> None:
        """`counted`: texts whose `count` is known already (the agent's instruction block)."""
        self._count = count
        self._limits = limits
        self._history = History(opening, count, counted)
        self._meter = self._history.meter  # the history's own: told of every change to what is sent
        self._plan = Plan(limits, self._history, count, window)
        self._window_bound = False  # the window is only a bound learned from refusals that named none
        # The request out: its local count (None for a continuation) and its estimate in the server's.
        self._out: tuple[int | None, int] = (None, 0)
        self.counted: Usage | None = None  # the last reply's tokens, when counted here (the model reported none)

    # --- what is sent -----------------------------------------------------------------------------

    def prompt(self) -> tuple[Message, ...] | str:
        """What the next request sends: the chat messages, or the transcript ending with the cue."""
        return self._history.prompt()

    def continued(self, partial: str) -> str:
        """The completion prompt continued by `partial` (a reply cut short, to be carried on)."""
        return self._history.continued(partial)

    def transcript(self) -> tuple[Message, ...] | str:
        return self._history.transcript()

    @property
    def elided(self) -> tuple[int, ...]:
        """The steps something was elided from, so far."""
        return self._history.elided

    @property
    def billed(self) -> Usage:
        """What the run was billed so far."""
        return self._meter.billed

    @property
    def rate(self) -> float | None:
        """Server tokens per local token, learned from the server's reports (None until one)."""
        return self._meter.learned

    @property
    def window(self) -> int | None:
        """The context window planned for: the model's, or what refusals have taught."""
        return self._plan.window

    def words(self, limit: StopReason | Window) -> str:
        """The limit, in words: "the token budget of 1500", "the context window of 4096 tokens"."""
        if limit == WINDOW:
            return f"the context window of {self._plan.window} tokens"
        return limit_words(self._limits, limit)

    # --- planning a call ----------------------------------------------------------------------------

    def allowance(self, number: int) -> Planned:
        """The reply allowance of normal call `number`, eliding old steps if the window needs it; or
        why none is made. When the window leaves no room for this step and the forced call after
        it, the answer is asked for now, if that fits; else the step is made if it fits alone. Once a
        server has said how it counts, a forced call that fits only without the slack is asked
        before such a step (after it, no forced call would fit: the run would need the model to
        answer of itself); before that, the plan is too rough to trust so."""
        allowance = self._plan.fit(number, forced=False)
        if allowance == "window":
            force = self._limits.force_final
            if force and self.forced(number, WINDOW, squeeze=self._meter.calibrated)[0] is not None:
                return WINDOW
            allowance = self._plan.fit(number, forced=False, reserve=False)
            if not isinstance(allowance, int):
                if force and self.forced(number, WINDOW, squeeze=True)[0] is not None:
                    return WINDOW
                return "too_long"
        return "max_tokens" if allowance is None else allowance

    def too_long(self) -> str:
        """Why no call fits the window, in words."""
        return self._plan.window_words()

    def forced(self, number: int, limit: StopReason | Window, *, squeeze: bool) -> tuple[int | None, str]:
        """The allowance of the forced final call `number` (None: it does not fit) and the note that
        asks for it: the whole note, or, when that does not fit, the short one; `squeeze`: at last
        with no slack kept (the estimate alone must fit), rather than end the run without asking."""
        tries = [(prompting.render("corrections/force_final", limit=self.words(limit)), False)]
        short = prompting.render("corrections/force_final_short")
        tries += [(short, False), (short, True)] if squeeze else [(short, False)]
        for note, tight in tries:
            fitted = self._plan.fit(number, forced=True, extra_local=self._history.note_cost(note), squeeze=tight)
            if isinstance(fitted, int):
                return fitted, note
        return None, note

    # --- a call and what it cost ------------------------------------------------------------------

    def asking(self) -> None:
        """A request of the history as it stands goes out: its count is kept, for its bill or its refusal."""
        local = self._history.tokens
        self._out = (local, self._meter.estimate(local))

    def resume(self, allowance: int, *, forced: bool, written: int) -> int | None:
        """The allowance of a call that carries on a reply a stop sequence cut inside its thinking
        (`written`: its tokens already in the prompt, a completion's; 0 for a chat model, asked
        again), within `allowance` and the budget; None when not even a minimal reply fits."""
        estimate = self._meter.estimate(self._history.tokens) + written
        room = allowance - written
        budget = self._plan.budget_room(estimate, forced)
        if budget is not None:
            room = min(room, budget)
        if room < MIN_REPLY_TOKENS:
            return None
        self._out = (None, estimate)
        return room

    def bill(self, reply: Reply) -> Usage:
        """What the request out came to: the server's report, else our count of the prompt and the
        reply (then also `counted`). A continuation is billed and says nothing of the history."""
        local, estimate = self._out
        usage = reply.usage or Usage(estimate, self._meter.scale(self._count(reply.text)))
        self.counted = None if reply.usage else usage
        if local is None:
            self._meter.charge(usage)
        else:
            self._meter.sent(usage, local, reported=reply.usage is not None)
        return usage

    def refused(self, number: int, *, forced: bool, allowance: int, error: ContextLengthError) -> int | None:
        """The allowance of the one retry of the request out, refused as too long (`allowance`: the
        one refused), after eliding what can be; None when not even a minimal reply fits.

        The window is what the server said, or at least smaller than what was asked for. A window
        given (by the model or the limits) stays: a refusal that names none says we counted low, and
        the retry plans for that. One only bounded by refusals shrinks."""
        local, estimate = self._out
        said = error.window
        window = self._plan.window
        if said or window is None or self._window_bound:
            self._window_bound = not said
            self._plan.window = said or min(window or estimate + allowance, estimate + allowance - 1)
        return self._plan.retry(
            number,
            forced=forced,
            refused=allowance,
            said=bool(said),
            prompt_tokens=error.prompt_tokens,
            sent_local=local or 0,
        )

    # --- what is recorded -------------------------------------------------------------------------

    def add_reply(self, text: str, number: int, directive: str, *, usage: Usage, reported: bool) -> None:
        """Record the model's turn (`directive`: its line kept when it is elided); `reported`: the
        server counted `usage`, so the turn costs its completion tokens and their framing."""
        self._history.add_reply(text, number, directive, server=usage.completion_tokens + 4 if reported else None)

    def cut(self, result: str) -> str:
        """A tool's result cut to its allowance (`Limits.observation_tokens`)."""
        return truncate(result, self._limits.observation_tokens, self._count)

    def feed(self, number: int, observation: str | Framed) -> tuple[str, StopReason | None]:
        """The observation of step `number` as it will be fed back (cut for the window or the
        forced call, or with a warning that the budget is nearly spent), and the limit that makes
        the next call the forced final one (None when a normal call follows). A `Framed` one is
        cut result by result, each keeping its label."""
        if isinstance(observation, Framed):
            cut = functools.partial(observation.cut, count=self._count)
            return self._plan.next(number, observation.whole(), labelled=True, cut=cut)
        return self._plan.next(number, observation)

    def add_observation(self, observation: str, number: int, *, labelled: bool = False) -> None:
        """Record what is fed back after step `number`; `labelled`: it holds its own labels."""
        self._history.add_observation(observation, number, labelled=labelled)

    def add_note(self, note: str) -> None:
        """Record a word of the loop's after the last observation (the forced call's note)."""
        self._history.add_note(note)
