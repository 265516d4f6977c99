"""The step machine of one run: ask, act or correct, feed back, until an answer or a limit.

    play = Steps(spec, task, seed).play()     # a generator of commands; returns the RunResult

Each step: the token account plans the call (its reply allowance, or the limit that ends the
steps); the model is asked (`asking`); an answer ends the run, an action is carried out
(`acting`), and anything else is corrected in words (an unreadable reply, an input that never
closed, an answer cut at the allowance), until `Limits.format_errors` of them in a row end the run.
The observation is fed back as the account cuts it (or warns with it), and the step is emitted.
At a limit the forced final call asks for the answer (`final`).
"""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import replace

from react_text import prompting
from react_text.core import protocol
from react_text.core.acting import Actor
from react_text.core.asking import Asked, Asker, Ending
from react_text.core.commands import Command, Emit, Event
from react_text.core.final import forced, ran_on
from react_text.core.spec import EpisodeSpec
from react_text.core.types import Action, Actions, Final, ParseError, RunResult, Step, StopReason
from react_text.tokens.account import WINDOW, Account, Window
from react_text.tokens.truncation import Framed

__all__ = [
    "Play",
    "Steps",
]

Play = Generator[Command, Event, RunResult]


class Steps:
    """One run of `task` as `spec` says: its token account, its asker and its actor, and the steps taken."""

    def __init__(self, spec: EpisodeSpec, task: str, seed: int | None) -> None:
        self.limits = spec.limits
        opening = (
            prompting.first_messages(spec.instructions, task, instructions_in=spec.prompting.instructions_in)
            if spec.api == "chat"
            else prompting.transcript_start(spec.instructions, task)
        )
        self.account = Account(
            opening, spec.count, self.limits, spec.window, dict(spec.counted)
        )  # the token account: all of it
        self.asker = Asker(spec, self.account, seed)
        self.actor = Actor(spec, self.account)
        self.steps: list[Step] = []
        self.format_errors = 0
        self.cut_answers = 0  # of those, the last in a row that were a FINAL answer cut at the allowance

    def play(self) -> Play:
        limit: StopReason | Window | None = None
        number = 0
        while limit is None:
            number += 1
            allowance = self.account.allowance(number)
            if allowance == "too_long":
                return self._result(Ending("model_error", error=self.account.too_long()))
            if not isinstance(allowance, int):  # the window's end, or the budget's: the call is not made
                limit = allowance
                number -= 1
                break
            asked = yield from self.asker.ask(number, allowance, forced=False, first=self.actor.tool_calls == 0)
            if asked == WINDOW:  # refused, and no retry fits: the window's end, as the plan would have said
                limit = WINDOW
                number -= 1
                break
            if isinstance(asked, Ending):
                return self._result(asked)
            step, parsed = asked.step, asked.parsed
            if isinstance(parsed, Final):
                grammar = self.asker.grammar is not None
                if (ran := ran_on(parsed, asked, allowance, grammar=grammar)) is not None:
                    return (yield from self._end(step, Ending("final", ran[0], error=ran[1])))
                if not (asked.truncated and not parsed.discarded.strip()):
                    return (yield from self._end(step, Ending("final", parsed.answer)))
            tool_seconds = 0.0
            labelled = False
            framed: Framed | None = None  # the observations of several calls: cut call by call
            stopped = Ending("declined", error="the approver stopped the run")
            acts = isinstance(parsed, Action | Actions) and (parsed.closed or not _cut_off(asked))
            calls = self.actor.calls(parsed) if acts and isinstance(parsed, Action | Actions) else ()
            braked = self.actor.streak.brakes(calls)  # one call too many times in a row: none is run, the run ends
            if braked:
                self.format_errors = self.cut_answers = 0
                observation = self.actor.braked(calls)
            elif isinstance(parsed, Actions) and acts:
                self.format_errors = self.cut_answers = 0
                self.actor.see(calls)
                several_acted = yield from self.actor.act_all(parsed, number)
                if several_acted is None:
                    return (yield from self._end(step, stopped))
                framed, tool_seconds = several_acted
                observation = framed.whole()
                step, labelled = replace(step, observations=framed.results), True
            elif isinstance(parsed, Action) and acts:
                self.format_errors = self.cut_answers = 0
                self.actor.see(calls)
                acted = yield from self.actor.act(parsed, number)
                if acted is None:
                    return (yield from self._end(step, stopped))
                observation, tool_seconds = acted
            else:
                self.format_errors += 1
                self.cut_answers = self.cut_answers + 1 if isinstance(parsed, Final) else 0
                observation = _correction(asked, allowance)
            if self.format_errors >= self.limits.format_errors:  # the last straw: no call follows, no warning
                step = _observed(step, observation, tool_seconds)
                return (yield from self._end(step, Ending("format_errors", error=self._unreadable(allowance))))
            observation, limit = self.account.feed(number, framed or observation)
            limit = "repeats" if braked else limit
            labelled = labelled and observation.startswith(protocol.OBSERVATION_OF_CALL)  # not when cut to the stub
            step = _observed(step, observation, tool_seconds)
            self.steps.append(step)
            yield Emit(step)
            self.account.add_observation(observation, number, labelled=labelled)
        step_taken, ending = yield from forced(self.asker, limit, number + 1)
        if step_taken is None:
            return self._result(ending)
        return (yield from self._end(step_taken, ending))

    def _unreadable(self, allowance: int) -> str:
        """Why the run ends at `Limits.format_errors`, in words."""
        if not self.cut_answers:
            return f"{self.format_errors} unreadable replies in a row"
        return (  # readable, but cut: say so
            f"{self.format_errors} replies in a row without a whole answer: the last "
            f"{self.cut_answers} gave a {protocol.FINAL} answer that the reply allowance of "
            f"{allowance} tokens cut"
        )

    def _end(self, step: Step, ending: Ending) -> Play:
        """Emit the last step, then end the run."""
        self.steps.append(step)
        yield Emit(step)
        return self._result(ending)

    def _result(self, ending: Ending) -> RunResult:
        return RunResult(
            answer=ending.answer,
            stop_reason=ending.reason,
            steps=tuple(self.steps),
            usage=self.account.billed,
            transcript=self.account.transcript(),
            forced=ending.forced,
            error=ending.error,
            tool_calls=self.actor.tool_calls,
        )


def _observed(step: Step, observation: str, seconds: float) -> Step:
    """`step` with what was fed back after it, and the tool's time added: `dataclasses.replace`,
    made by hand (it costs twice the constructor, once a step)."""
    s = step
    return Step(
        s.number, s.reply, s.parsed, observation, s.usage, s.total_usage, s.seconds + seconds,
        s.cut, s.forced, s.reasoning, s.finish_reason, s.elided, s.observations,
    )  # fmt: skip


def _cut_off(asked: Asked) -> bool:
    """An action whose input never closed, in a reply cut at its allowance or by the guard."""
    return asked.truncated or bool(asked.step.cut)


def _correction(asked: Asked, allowance: int) -> str:
    parsed = asked.parsed
    if isinstance(parsed, ParseError):
        return prompting.render("corrections/format_error", problem=parsed.message)
    if asked.truncated:
        name = "corrections/reply_cut" if isinstance(parsed, Action | Actions) else "corrections/answer_cut"
        return prompting.render(name, tokens=allowance)
    return prompting.render("corrections/input_open")
