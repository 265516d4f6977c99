"""One run of the protocol as a state machine that performs no I/O (sans-IO, as h11 does it).

The episode is built from one frozen value, `EpisodeSpec`, that holds all a run reads (the Agent
makes it: `agent.spec(window)`); it says what to do next and is told what came of it:

    episode = Episode(spec, task)
    command = episode.start()
    while not isinstance(command, Done):
        ...                                   # Send: call the model; Approve: ask the approver;
        command = episode.send(event)         # Invoke: run the tool; Emit: a step is complete

Which event answers which command is the table in `commands.py`; `episode.expecting` says what the
episode waits for, and an event it did not ask for raises `EventError` (naming what was expected
and what came) before anything changes, so the episode carries on as if it was never sent.

Everything a run decides lives here: prompts, the budget plan, the context window, the guard, the
parser, corrections, repeats, the forced final answer. It never calls a model, runs a tool, reads
a clock or sleeps, so the sync and async drivers (`core/agent.py`) are a few lines each and one set of
behaviour tests covers both.

The token budget is planned, not hoped for. A normal call is made only if, after it, the forced
final call still fits (its note, a short observation, a short reply); the estimate of each
request is corrected with what the server reported for the last one (the history's `Meter`). A
budget warning is attached to an observation only when the next call fits.
"""

from __future__ import annotations

import difflib
import typing
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from react_text import prompting
from react_text.core import protocol
from react_text.core.commands import (
    EXPECTS,
    Approval,
    Approve,
    Command,
    Decided,
    Done,
    Emit,
    Event,
    Failed,
    Invoke,
    InvokeAll,
    Ran,
    RanAll,
    Replied,
    Send,
    check,
)
from react_text.core.errors import ContextLengthError, EventError, scrub
from react_text.core.limits import MIN_REPLY_TOKENS, Limits
from react_text.core.types import (
    Action,
    Actions,
    Api,
    Final,
    Message,
    ParseError,
    Parser,
    Reading,
    Reply,
    Request,
    RunResult,
    Step,
    StopReason,
    Usage,
)
from react_text.grammar.protocol import MAX_ANSWER, protocol_grammar
from react_text.parser import guard, parse, runon, several
from react_text.prompting import Prompting
from react_text.tokens.history import History
from react_text.tokens.meter import Counter
from react_text.tokens.plan import Plan, limit_words
from react_text.tools import binding
from react_text.tools.tool import Tool, truncate, truncate_each

__all__ = [  # the commands and events are commands.py's, named here too: the drivers take them from here
    "Approval",
    "Approve",
    "Command",
    "Decided",
    "Done",
    "Emit",
    "Episode",
    "EpisodeSpec",
    "Event",
    "Failed",
    "Invoke",
    "InvokeAll",
    "Ran",
    "RanAll",
    "Replied",
    "Send",
]

_Window = Literal["window"]
WINDOW: _Window = "window"  # the limit a run reaches when its context window cannot take another step
_Play = Generator[Command, Event, RunResult]


@dataclass(frozen=True, slots=True)
class EpisodeSpec:
    """All that a run reads, made once before it starts (`Agent.spec`); the episode sees no Agent
    and no model. A test writes one by hand: `EpisodeSpec("You answer.", count=len)`.

    `grammar` is the choice made: True sends the protocol grammar with every request (the Agent
    decides it with `model_info.grammar_on`: `prompting.grammar`, else the model's); the episode
    reads it, not `prompting.grammar`. `asks_approval`: risky tools are put to an approver
    (Approve); without one they are declined. `window`: the model's context window in tokens, when
    known.
    """

    instructions: str  # the instruction block: the protocol, the tool list, the worked example
    count: Counter  # tokens of a text, as the model counts them (or an estimate)
    api: Api = "chat"
    tools: tuple[Tool, ...] = ()
    limits: Limits = field(default_factory=Limits)
    prompting: Prompting = field(default_factory=Prompting)
    parser: Parser = parse
    grammar: bool = False
    asks_approval: bool = False
    window: int | None = None
    prefill: bool = False  # the model continues a turn begun with `Request.prefill` (ModelInfo.prefill)

    def __post_init__(self) -> None:
        if self.api not in ("chat", "completion"):
            raise ValueError(f"EpisodeSpec.api must be 'chat' or 'completion', not {self.api!r}")
        if not isinstance(self.instructions, str):
            raise TypeError(f"EpisodeSpec.instructions must be a string, not {type(self.instructions).__name__}")
        if not isinstance(self.tools, tuple) or not all(isinstance(t, Tool) for t in self.tools):
            raise TypeError("EpisodeSpec.tools must be a tuple of Tool (tools.as_tools makes one)")
        if not isinstance(self.limits, Limits) or not isinstance(self.prompting, Prompting):
            raise TypeError("EpisodeSpec.limits must be a Limits and EpisodeSpec.prompting a Prompting")
        if any(type(flag) is not bool for flag in (self.grammar, self.asks_approval, self.prefill)):
            raise TypeError("EpisodeSpec.grammar, asks_approval and prefill must be True or False (decided)")
        window = self.window
        if window is not None and (isinstance(window, bool) or not isinstance(window, int) or window <= 0):
            raise ValueError(f"EpisodeSpec.window must be a positive whole number of tokens or None, not {window!r}")


class Episode:
    """One run of `task` as `spec` says. `seed` goes with every model call (`Request.seed`)."""

    def __init__(self, spec: EpisodeSpec, task: str, *, seed: int | None = None) -> None:
        if not isinstance(spec, EpisodeSpec):
            raise TypeError(f"an Episode is built from an EpisodeSpec (agent.spec()), not {type(spec).__name__}")
        if not isinstance(task, str):
            raise TypeError(f"the task must be a string, not {type(task).__name__}")
        self._protocol = _Protocol(spec, task, seed)
        self._play = self._protocol.play()
        self._command: Command | None = None  # the last command given; None before start

    @property
    def command(self) -> Command | None:
        """The command the episode last gave (None before `start`): what it waits on."""
        return self._command

    @property
    def expecting(self) -> tuple[type[object], ...]:
        """The kinds of event `send` takes now (commands.EXPECTS): (Replied, Failed) after a Send,
        (NoneType,) after an Emit, () before `start` and once Done."""
        return () if self._command is None else EXPECTS[type(self._command)]

    @property
    def counted(self) -> Usage | None:
        """The tokens the engine counted for the last reply it was sent, when the model reported
        none (None when it did): what the reply was billed."""
        return self._protocol.counted

    def start(self) -> Command:
        """The first command. Once only."""
        if self._command is not None:
            raise EventError(f"the episode has started already: it is waiting on {type(self._command).__name__}")
        try:
            command = next(self._play)
        except StopIteration as end:  # finished before any call (a budget too small for one)
            command = Done(end.value)
        self._command = command
        return command

    def send(self, event: Event) -> Command:
        """Tell the episode what came of its last command; the next command. An event the last
        command did not ask for raises EventError and changes nothing."""
        command = self._command
        if command is None:
            raise EventError("the episode has not started: call start() first, then send what came of its command")
        if type(command) is Done:
            raise EventError(f"the run is over (Done): the episode takes no more events, not {_kind(event)}")
        check(command, event)
        try:
            command = self._play.send(event)
        except StopIteration as end:
            if end.value is None:  # the play raised before (a parser's bug, say): it is over, with no result
                raise EventError("the episode raised an exception earlier: it takes no more events") from None
            command = Done(end.value)
        self._command = command
        return command


def _kind(event: object) -> str:
    return "None" if event is None else type(event).__name__


# --- the protocol -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Asked:
    """What asking the model for one step came to: the step, the reply read, whether it was cut off."""

    step: Step
    parsed: Reading
    truncated: bool  # the reply hit its allowance


class _Protocol:
    def __init__(self, spec: EpisodeSpec, task: str, seed: int | None) -> None:
        self.spec = spec
        self.seed = seed
        self.limits = spec.limits
        self.count: Counter = spec.count
        self.chat = spec.api == "chat"
        style = spec.prompting
        opening = (
            prompting.first_messages(spec.instructions, task, instructions_in=style.instructions_in)
            if self.chat
            else prompting.transcript_start(spec.instructions, task)
        )
        self.history = History(opening, self.count)  # with its token account, history.meter
        self.meter = self.history.meter
        tools = spec.tools
        self.names = tuple(t.name for t in tools)
        self.by_name = {t.name.casefold(): t for t in reversed(tools)} | {t.name: t for t in tools}
        self.steps: list[Step] = []
        self.done: dict[tuple[str, str], tuple[int, str]] = {}  # successful calls of pure tools: repeats
        self.format_errors = 0
        self.cut_answers = 0  # of those, the last in a row that were a FINAL answer cut at the allowance
        self.tool_calls = 0
        self.counted: Usage | None = None  # the last reply's tokens, when counted here
        self.send_stop = True
        use_grammar = spec.grammar
        self.parallel = style.parallel
        actions = self.limits.actions if self.parallel else 1
        # A chat model that continues a turn already begun has it begun with the thought cue, as a
        # completion transcript ends with it; either way the grammar starts after the cue.
        self.prefill = protocol.THOUGHT_CUE if self.chat and spec.prefill else ""
        cued = not self.chat or bool(self.prefill)
        # each tool's input constrained by what it takes (grammar_inputs)
        self.grammar = protocol_grammar(tools, after_cue=cued, actions=actions) if use_grammar else None
        self.first_grammar = (
            protocol_grammar(tools, after_cue=cued, final=False, actions=actions)
            if use_grammar and style.act_first
            else self.grammar
        )
        self.final_grammar = protocol_grammar((), after_cue=cued) if use_grammar else None
        self.plan = Plan(self.limits, self.history, self.count, spec.window)
        self.window_bound = False  # the plan's window is only a bound learned from refusals that named none

    # --- the run ---------------------------------------------------------------------------------

    def play(self) -> _Play:
        limit: StopReason | _Window | None = None
        number = 0
        while limit is None:
            number += 1
            allowance = self.plan.fit(number, forced=False)
            if allowance == "window":
                # No room for another step and the forced call after it: ask for the answer now, if
                # that fits; else make the step if it fits alone; else nothing can be sent. Once a
                # server has said how it counts, a forced call that fits only without the slack is
                # asked before such a step (after it, no forced call would fit: the run would need
                # the model to answer of itself); before that, the plan is too rough to trust so.
                calibrated = self.meter.calibrated
                if self.limits.force_final and isinstance(self._fit_forced(number, WINDOW, squeeze=calibrated)[0], int):
                    limit = WINDOW
                    number -= 1
                    break
                allowance = self.plan.fit(number, forced=False, reserve=False)
                if not isinstance(allowance, int):
                    if self.limits.force_final and isinstance(self._fit_forced(number, WINDOW, squeeze=True)[0], int):
                        limit = WINDOW
                        number -= 1
                        break
                    return self._finish("model_error", error=self.plan.window_words())
            if allowance is None:
                limit = "max_tokens"
                number -= 1  # the call was not made
                break
            asked = yield from self._ask(number, allowance, forced=False)
            if asked == WINDOW:  # refused, and no retry fits: the window's end, as the plan would have said
                limit = WINDOW
                number -= 1
                break
            if isinstance(asked, RunResult):
                return asked
            step, parsed = asked.step, asked.parsed
            if isinstance(parsed, Final) and (ran := self._ran_on(parsed, asked, allowance)) is not None:
                return (yield from self._finish_step(step, "final", ran[0], error=ran[1]))
            if isinstance(parsed, Final) and not (asked.truncated and not parsed.discarded.strip()):
                return (yield from self._finish_step(step, "final", parsed.answer))
            tool_seconds = 0.0
            labelled = False
            cut: Callable[[int], str] | None = None  # how the observation is cut to an allowance
            if isinstance(parsed, Actions) and (parsed.closed or not self._cut_off(asked)):
                self.format_errors = self.cut_answers = 0
                several_acted = yield from self._act_all(parsed, number)
                if several_acted is None:
                    return (yield from self._finish_step(step, "declined", error="the approver stopped the run"))
                observation, tool_seconds, each, cut = several_acted
                step, labelled = replace(step, observations=each), True
            elif isinstance(parsed, Action) and (parsed.closed or not self._cut_off(asked)):
                self.format_errors = self.cut_answers = 0
                acted = yield from self._act(parsed, number)
                if acted is None:
                    return (yield from self._finish_step(step, "declined", error="the approver stopped the run"))
                observation, tool_seconds = acted
            else:
                self.format_errors += 1
                self.cut_answers = self.cut_answers + 1 if isinstance(parsed, Final) else 0
                observation = self._correction(asked, allowance)
            if self.format_errors >= self.limits.format_errors:  # the last straw: no call follows, no warning
                step = replace(step, observation=observation, seconds=step.seconds + tool_seconds)
                error = f"{self.format_errors} unreadable replies in a row"
                if self.cut_answers:  # readable, but cut: say so
                    error = (
                        f"{self.format_errors} replies in a row without a whole answer: the last "
                        f"{self.cut_answers} gave a {protocol.FINAL} answer that the reply allowance of "
                        f"{allowance} tokens cut"
                    )
                return (yield from self._finish_step(step, "format_errors", error=error))
            observation, limit = self.plan.next(number, observation, labelled=labelled, cut=cut)
            labelled = labelled and observation.startswith(protocol.OBSERVATION_OF_CALL)  # not when cut to the stub
            step = replace(step, observation=observation, seconds=step.seconds + tool_seconds)
            self.steps.append(step)
            yield Emit(step)
            self.history.add_observation(observation, number, labelled=labelled)
        return (yield from self._forced(limit, number + 1))

    def _words(self, limit: StopReason | _Window) -> str:
        if limit == WINDOW:
            return f"the context window of {self.plan.window} tokens"
        return limit_words(self.limits, limit)

    def _fit_forced(
        self, number: int, limit: StopReason | _Window, *, squeeze: bool = False
    ) -> tuple[int | Literal["window"] | None, str]:
        """The allowance of the forced final call and the note that asks for it: the whole note,
        or, when that does not fit, the short one; `squeeze`: at last with no slack kept (the
        estimate alone must fit), rather than end the run without asking for its answer."""
        tries = [(prompting.render("corrections/force_final", limit=self._words(limit)), False)]
        short = prompting.render("corrections/force_final_short")
        tries += [(short, False), (short, True)] if squeeze else [(short, False)]
        for note, tight in tries:
            fitted = self.plan.fit(number, forced=True, extra_local=self.history.note_cost(note), squeeze=tight)
            if isinstance(fitted, int):
                break
        return fitted, note

    def _forced(self, at: StopReason | _Window, number: int) -> _Play:
        """One last call that asks for the final answer, at a limit (the context window ends a run
        as "max_tokens"); `number` is the call's step."""
        words = self._words(at)
        limit: StopReason = "max_tokens" if at == WINDOW else at
        if not self.limits.force_final:
            return self._finish(limit, error=words)
        allowance, note = self._fit_forced(number, at, squeeze=True)  # the last call: rather tight than none
        if not isinstance(allowance, int):
            return self._finish(limit, error=f"{words}; no room was left for the forced final call")
        self.history.add_note(note)
        asked = yield from self._ask(number, allowance, forced=True)
        if isinstance(asked, RunResult):
            return replace(asked, stop_reason=limit, error=f"{words}; the forced final call failed: {asked.error}")
        if not isinstance(asked, _Asked):  # a forced call is never sent on to another forced call
            raise RuntimeError("the forced final call ended the window again")
        self.steps.append(asked.step)
        yield Emit(asked.step)
        parsed = asked.parsed
        if isinstance(parsed, Final) and (ran := self._ran_on(parsed, asked, allowance)) is not None:
            return self._finish(limit, ran[0], forced=True, error=f"{words}; {ran[1]}")
        if isinstance(parsed, Final):
            cut = (
                f"; the answer reached the reply allowance of {allowance} tokens and may be cut"
                if asked.truncated
                else ""
            )
            said = cut or at == WINDOW  # a window, unlike a budget or a step limit, is not in the stop reason
            return self._finish(limit, parsed.answer, forced=True, error=f"{words}{cut}" if said else None)
        return self._finish(limit, error=f"{words}; no final answer when asked for one")

    def _finish_step(
        self, step: Step, reason: StopReason, answer: str | None = None, *, error: str | None = None
    ) -> _Play:
        self.steps.append(step)
        yield Emit(step)
        return self._finish(reason, answer, error=error)

    def _finish(
        self, reason: StopReason, answer: str | None = None, *, forced: bool = False, error: str | None = None
    ) -> RunResult:
        return RunResult(
            answer=answer,
            stop_reason=reason,
            steps=tuple(self.steps),
            usage=self.meter.billed,
            transcript=self.history.transcript(),
            forced=forced,
            error=error,
            tool_calls=self.tool_calls,
        )

    # --- one model call ---------------------------------------------------------------------------

    def _request(self, allowance: int, forced: bool, prompt: tuple[Message, ...] | str | None = None) -> Request:
        # The forced final call admits only FINAL; under act_first, the first calls only an ACTION.
        grammar = self.final_grammar if forced else self.first_grammar if self.tool_calls == 0 else self.grammar
        stop = (
            (protocol.STOP_SEQUENCES + protocol.PARALLEL_STOP if self.parallel else protocol.STOP_SEQUENCES)
            if self.send_stop
            else ()
        )
        return Request(
            self.history.prompt() if prompt is None else prompt, stop, allowance, grammar, self.seed, self.prefill
        )

    def _ask(
        self, number: int, allowance: int, *, forced: bool
    ) -> Generator[Command, Event, _Asked | RunResult | _Window]:
        """Ask the model, with one retry of a request refused as too long. WINDOW: a normal call was
        refused and no retry of it fits, but the forced final call does (the server counted the
        latest step longer than we could know: its text was of a kind it had not counted yet)."""
        elided = self.history.elided
        seconds = 0.0
        retried = False
        while True:
            sent_local = self.history.tokens
            estimate = self.meter.estimate(sent_local)
            event = typing.cast("Replied | Failed", (yield Send(self._request(allowance, forced))))  # as checked
            seconds += event.seconds
            if isinstance(event, Replied):
                break
            if isinstance(event.error, ContextLengthError) and not retried:
                retried = True
                # The window is what the server said, or at least smaller than what was asked for.
                said = event.error.window
                window = self.plan.window
                # A window given (by the model or the limits) stays: a refusal that names none says
                # we counted low, and the retry plans for that. One only bounded by refusals shrinks.
                if said or window is None or self.window_bound:
                    self.window_bound = not said
                    self.plan.window = said or min(window or estimate + allowance, estimate + allowance - 1)
                again = self.plan.retry(
                    number,
                    forced=forced,
                    refused=allowance,
                    said=bool(said),
                    prompt_tokens=event.error.prompt_tokens,
                    sent_local=sent_local,
                )
                if again is not None:
                    elided, allowance = self.history.elided, again
                    continue
                ends = not forced and self.limits.force_final and self.plan.window is not None
                if ends and isinstance(self._fit_forced(number, WINDOW, squeeze=True)[0], int):
                    return WINDOW
            return self._finish("model_error", error=scrub(str(event.error)))
        reply = event.reply
        usage = self._bill(reply, estimate, sent_local)
        reply, usage, seconds = yield from self._recover_thinking(reply, usage, seconds, allowance, forced)
        reasoning, visible = guard.split_reasoning(reply.text)
        reasoning = "\n".join(r for r in (reply.reasoning or "", reasoning) if r)
        cut = guard.cut(visible)
        # A completion reply continues the thought cue; one that starts with a label at once
        # ("FINAL: 89") is read as if a space came first. (A prefilled chat reply holds its prefill.)
        cue = protocol.THOUGHT_CUE
        read = cut.kept if self.chat else cue + ("" if cut.kept[:1].isspace() else " ") + cut.kept
        parsed: Reading = (
            several.parse_several(read, tools=self.names, most=self.limits.actions, parser=self.spec.parser)
            if self.parallel
            else self.spec.parser(read, tools=self.names)
        )
        acted = _acted(read, parsed)
        if not self.chat:
            acted = acted.removeprefix(cue)
        if self.spec.prompting.reasoning == "keep" and reasoning:
            acted = f"{protocol.THINK_OPEN}\n{reasoning}\n{protocol.THINK_CLOSE}\n{acted.lstrip()}"
        directive = protocol.directive_line(parsed)
        server = usage.completion_tokens + 4 if reply.usage is not None else None  # the reply and its framing
        self.history.add_reply(acted, number, directive, server=server)
        step = Step(
            number=number,
            reply=reply.text,
            parsed=parsed,
            observation=None,
            usage=usage,
            total_usage=self.meter.billed,
            seconds=seconds,
            cut=cut.dropped,
            forced=forced,
            reasoning=reasoning,
            finish_reason=reply.finish_reason,
            elided=elided,
        )
        return _Asked(step, parsed, reply.finish_reason == "length")

    def _bill(self, reply: Reply, estimate: int, local: int) -> Usage:
        usage = reply.usage or Usage(estimate, self.meter.scale(self.count(reply.text)))
        self.counted = None if reply.usage else usage
        self.meter.sent(usage, local, reported=reply.usage is not None)
        return usage

    def _recover_thinking(
        self, reply: Reply, usage: Usage, seconds: float, allowance: int, forced: bool
    ) -> Generator[Command, Event, tuple[Reply, Usage, float]]:
        """A `stop` sequence that fired inside the model's thinking cut the reply short: carry on.

        A completion model continues the same text, with no stop sequences; a chat model is asked
        again, and `stop` is not sent again in this run (the client-side cut still applies).
        """
        if reply.finish_reason == "length" or not self.send_stop:
            return reply, usage, seconds
        # (the reply split into thinking and the rest only when the server sent reasoning apart)
        blank = bool(reply.reasoning) and not guard.split_reasoning(reply.text)[1].strip()
        if not (blank or guard.stopped_in_thinking(reply.text)):
            return reply, usage, seconds
        self.send_stop = False
        prompt = self.history.prompt() if self.chat else self.history.continued(reply.text)
        estimate = self.meter.estimate(self.history.tokens) + (0 if self.chat else usage.completion_tokens)
        room = allowance if self.chat else allowance - usage.completion_tokens
        budget = self.plan.budget_room(estimate, forced)
        if budget is not None:
            room = min(room, budget)
        if room < MIN_REPLY_TOKENS:
            return reply, usage, seconds
        event = typing.cast("Replied | Failed", (yield Send(self._request(room, forced, prompt))))  # as checked
        seconds += event.seconds
        if isinstance(event, Failed):
            return reply, usage, seconds
        again = event.reply
        more = again.usage or Usage(estimate, self.meter.scale(self.count(again.text)))
        self.counted = None if again.usage else more
        self.meter.charge(more)
        if self.chat:
            return again, usage + more, seconds
        reasoning = "\n".join(r for r in (reply.reasoning, again.reasoning) if r) or None
        return Reply(reply.text + again.text, again.usage, again.finish_reason, reasoning), usage + more, seconds

    # --- acting -----------------------------------------------------------------------------------

    def _act(self, action: Action, number: int) -> Generator[Command, Event, tuple[str, float] | None]:
        """Run the action, or say why not: the observation and the tool's time; None to stop the run."""
        prepared = yield from self._prepare(action)
        if not isinstance(prepared, Invoke):
            return None if prepared is None else (prepared, 0.0)
        ran = typing.cast("Ran", (yield prepared))  # as checked (commands.check)
        return self._settle(prepared, action, ran, number), ran.seconds

    def _prepare(self, action: Action) -> Generator[Command, Event, Invoke | str | None]:
        """The call to make for `action`, or the observation that says why none is made; None to stop."""
        chosen = self._tool(action.tool)
        if chosen is None:
            return self._unknown(action.tool)
        key = (chosen.name, action.input)
        if _remembered(chosen) and key in self.done:  # a tool with side effects runs again: that may be the point
            step, result = self.done[key]
            return prompting.render(
                "corrections/repeated_action", tool=chosen.name, input=action.input, step=step, result=result
            )
        arguments = binding.bind(chosen, action.input)
        if isinstance(arguments, binding.Refusal):
            return arguments.message
        if chosen.risky:
            decision: Approval = False
            if self.spec.asks_approval:
                decided = typing.cast("Decided", (yield Approve(chosen, action)))  # as checked
                decision = decided.approval
            if decision == "stop":
                return None
            if not decision:
                return prompting.render("corrections/declined", tool=chosen.name, input=action.input)
        limit = chosen.timeout if chosen.timeout is not None else self.limits.tool_seconds
        return Invoke(chosen, arguments, limit)

    def _settle(self, invoke: Invoke, action: Action, ran: Ran, number: int) -> str:
        """What a call came to, as fed back; a success is remembered, to catch a repeat."""
        self.tool_calls += 1
        text = truncate(ran.outcome.text, self.limits.observation_tokens, self.count)
        if not invoke.tool.pure:  # it may have changed what a pure tool reads: no earlier result stands
            self.done.clear()
        if _remembered(invoke.tool) and ran.outcome.kind == "ok":  # an idempotent call stands until another
            self.done[(invoke.tool.name, action.input)] = (number, text)
        return text

    def _act_all(
        self, parsed: Actions, number: int
    ) -> Generator[Command, Event, tuple[str, float, tuple[str, ...], Callable[[int], str]] | None]:
        """Run the actions of one reply at once, each prepared as `_act` prepares one (unknown tools,
        repeats, refusals and approvals per call): the labelled observations, the wall time of the
        calls, each call's observation, and how the labelled observations are cut to an allowance
        (each call's its share, so that every call keeps its label); None to stop the run."""
        most = self.limits.actions
        actions = parsed.actions[:most]
        texts: list[str | None] = []
        invokes: list[Invoke] = []
        slot: dict[int, int] = {}  # action index -> its call in `invokes`
        twin: dict[int, int] = {}  # action index -> the earlier action of this reply it repeats
        seen: dict[tuple[str, str], int] = {}
        for index, action in enumerate(actions):
            chosen = self._tool(action.tool)
            key = (chosen.name, action.input) if chosen is not None else None
            if chosen is not None and chosen.pure and key in seen and key not in self.done:
                twin[index] = seen[key]
                texts.append(None)
                continue
            prepared = yield from self._prepare(action)
            if prepared is None:
                return None
            if isinstance(prepared, Invoke):
                slot[index] = len(invokes)
                invokes.append(prepared)
                if key is not None:
                    seen[key] = index
                texts.append(None)
            else:
                texts.append(prepared)
        seconds = 0.0
        if invokes:
            ran = typing.cast("RanAll", (yield InvokeAll(tuple(invokes))))  # as checked: one Ran a call
            seconds = ran.seconds
            for index, at in slot.items():
                texts[index] = self._settle(invokes[at], actions[index], ran.ran[at], number)
            if not all(i.tool.pure for i in invokes):  # ran at once with a tool with side effects
                self.done.clear()
        for index, earlier in twin.items():
            action = actions[index]
            texts[index] = prompting.render(
                "corrections/repeated_action",
                tool=invokes[slot[earlier]].tool.name if earlier in slot else action.tool,
                input=action.input,
                step=number,
                result=texts[earlier],
            )
        each = tuple(t or "" for t in texts)
        calls = [protocol.call_line(a) for a in actions]
        note = ""
        if len(parsed.actions) > most:
            skipped = parsed.actions[most]
            note = prompting.render("corrections/too_many_actions", most=most, skipped=protocol.call_line(skipped))

        def labelled(results: Sequence[str]) -> str:
            observation = prompting.observations_message(zip(calls, results, strict=True))
            return f"{observation}\n{note}" if note else observation

        def cut(allowance: int) -> str:  # the labels and the note are not cut: the results share the rest
            room = allowance - self.count(labelled([""] * len(each)))
            return labelled(truncate_each(each, max(room, len(each)), self.count))

        return labelled(each), seconds, each, cut

    def _tool(self, name: str) -> Tool | None:
        return self.by_name.get(name) or self.by_name.get(name.casefold())

    def _unknown(self, name: str) -> str:
        close = difflib.get_close_matches(name, self.names, n=1)
        suggestion = prompting.render("corrections/unknown_tool_suggestion", closest=close[0]) if close else ""
        return prompting.render(
            "corrections/unknown_tool", tool=name, suggestion=suggestion, tools=", ".join(self.names)
        )

    def _ran_on(self, final: Final, asked: _Asked, allowance: int) -> tuple[str, str] | None:
        """An answer that repeated itself until it was cut (at the allowance, or at the grammar's
        bound on an answer): the answer as far as its first repeat, and what happened, in words.
        Kept rather than asked again: the model gave its answer, and asked again it runs on again."""
        cut = asked.truncated and not final.discarded.strip()
        bounded = self.grammar is not None and len(final.answer) >= MAX_ANSWER - 1
        if not (cut or bounded) or (ran := runon.trim(final.answer)) is None:
            return None
        where = f"the reply allowance of {allowance} tokens" if cut else f"the grammar's {MAX_ANSWER} characters"
        note = (
            f"the answer ran on ({ran.unit.strip()!r} {ran.repeats} times) until {where} cut it; "
            "kept as far as its first repeat"
        )
        return ran.answer, note

    def _cut_off(self, asked: _Asked) -> bool:
        """An action whose input never closed, in a reply cut at its allowance or by the guard."""
        return asked.truncated or bool(asked.step.cut)

    def _correction(self, asked: _Asked, allowance: int) -> str:
        parsed = asked.parsed
        if isinstance(parsed, ParseError):
            return prompting.render("corrections/format_error", problem=parsed.message)
        if asked.truncated:
            name = "corrections/reply_cut" if isinstance(parsed, Action | Actions) else "corrections/answer_cut"
            return prompting.render(name, tokens=allowance)
        return prompting.render("corrections/input_open")


def _remembered(chosen: Tool) -> bool:
    """A tool whose repeat is answered from its earlier call (while `done` holds it): a pure one, or
    an idempotent one (a repeat adds no effect; any call with side effects, its own too, clears `done`)."""
    return chosen.pure or chosen.idempotent


def _acted(text: str, parsed: Reading) -> str:
    """The reply up to the end of its first directive (its last action, for Actions): what is
    recorded as the model's turn."""
    if isinstance(parsed, Action | Actions | Final) and parsed.discarded and text.endswith(parsed.discarded):
        return text[: len(text) - len(parsed.discarded)]
    return text
