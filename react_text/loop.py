"""The loop driver: ask the model, cut, parse, run the tool, feed the observation back; repeat.

    agent = Agent(model, tools=[lookup, add], max_steps=6, max_tokens=6000)
    result = agent.run(task)                  # a RunResult
    run = agent.iter_steps(task)              # the same run, one frozen Step at a time
    for step in run: ...
    run.result

Chat models get observations back as user messages (`OBSERVATION: ...`); completion-only models
get one growing transcript and continue it after `THOUGHT:`. What is sent only ever grows at the
end, so server-side prompt caches keep hitting. Tokens are counted before each request, one new
piece at a time; a request whose prompt plus its reply allowance could pass `max_tokens` is not
sent.
"""

from __future__ import annotations

import difflib
import functools
import logging
import time
from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Literal

from . import budget, guard, prompting, tools
from .errors import ModelError
from .grammar import protocol_grammar
from .parser import parse
from .prompting import InstructionsIn
from .tools import Tool
from .types import (
    Action,
    Final,
    Message,
    Model,
    Parsed,
    ParseError,
    Request,
    RunResult,
    Step,
    StopReason,
    Usage,
)

log = logging.getLogger(__name__)

Approval = bool | Literal["stop"]
Approver = Callable[[Tool, Action], Approval]

THOUGHT_CUE = "THOUGHT:"
MIN_REPLY_TOKENS = 16  # a reply allowance smaller than this is not worth a request


@dataclass
class Agent:
    """Runs a ReAct loop over a plain-text protocol. Reusable: each run keeps its own state."""

    model: Model
    tools: Iterable[Tool | Callable[..., object]] = ()
    max_steps: int = 10  # model calls, not counting the one forced-final call
    max_tokens: int | None = None  # prompt + completion tokens over the whole run; None: no limit
    reply_tokens: int = 512  # the completion allowance of each call
    observation_tokens: int = 1000  # longer tool results are cut to this, head and tail
    max_format_errors: int = 3  # unreadable replies in a row that end the run
    instructions_in: InstructionsIn = "system"  # or "user", for models that follow the system poorly
    example: str | None = "examples/generic"  # a worked example: template name, or text; None: zero-shot
    force_final: bool = True  # at a limit, make one last call asking for the final answer
    approve: Approver | None = None  # asked before a risky tool runs; None declines
    tool_timeout: float | None = 60.0  # seconds, for tools that set no time limit of their own; None: wait
    grammar: bool | None = None  # constrain decoding to the protocol; None: when the model accepts one
    act_first: bool = False  # under a grammar, the first reply must be an ACTION (small models answer unaided)
    count_tokens: budget.Counter | None = None  # None: tiktoken, by the model's name
    parser: Callable[[str], Parsed] = parse  # how replies are read (parser.PARSERS has the others)
    _tools: tuple[Tool, ...] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._tools = tools.as_tools(self.tools)
        if self.max_steps < 1:
            raise ValueError("max_steps must be at least 1")
        if self.grammar and not self.model.accepts_grammar:
            raise ValueError(
                f"{self.model!r} does not take a grammar; for a server that does (llama.cpp), "
                "build the backend with grammar=True"
            )
        if self.count_tokens is None:
            count = getattr(self.model, "count_tokens", None) or budget.counter(self.model.name)
            # Memoised: the instruction block is counted once per agent, not once per run, and a
            # reply is counted once for its usage and once as a message at the cost of a lookup.
            self.count_tokens = functools.lru_cache(maxsize=256)(count)

    @property
    def tool_list(self) -> tuple[Tool, ...]:
        return self._tools

    def instructions(self) -> str:
        """The instruction block this agent sends: protocol, tool list, worked example."""
        return prompting.instructions(tools.listing(self._tools), example=self.example)

    def run(self, task: str) -> RunResult:
        run = self.iter_steps(task)
        for _ in run:
            pass
        return run.result

    def iter_steps(self, task: str) -> Run:
        return Run(self, task)


class Run:
    """One run of an agent: iterate it for its steps; `result` once it is exhausted."""

    def __init__(self, agent: Agent, task: str) -> None:
        self._agent = agent
        self._steps = _drive(agent, task)
        self._result: RunResult | None = None

    def __iter__(self) -> Iterator[Step]:
        return self

    def __next__(self) -> Step:
        try:
            return next(self._steps)
        except StopIteration as done:
            self._result = done.value
            raise

    @property
    def result(self) -> RunResult:
        if self._result is None:
            raise RuntimeError("the run is not finished: iterate it to the end first")
        return self._result


class _Conversation:
    """What has been sent and received, and its token count, one appended piece at a time."""

    def __init__(self, agent: Agent, task: str) -> None:
        assert agent.count_tokens is not None
        self.chat = agent.model.api == "chat"
        self.tally = budget.Tally(agent.count_tokens, chat=self.chat)
        block = agent.instructions()
        self.messages: list[Message] = []
        self.pieces: list[str] = []
        if self.chat:
            for message in prompting.first_messages(block, task, instructions_in=agent.instructions_in):
                self.add_message(message)
        else:
            self.add_text(prompting.transcript_start(block, task))
            self.tally.add_text(THOUGHT_CUE)  # the cue every request ends with

    def add_message(self, message: Message) -> None:
        self.messages.append(message)
        self.tally.add_message(message)

    def add_text(self, text: str) -> None:
        self.pieces.append(text)
        self.tally.add_text(text)

    def prompt(self) -> tuple[Message, ...] | str:
        return tuple(self.messages) if self.chat else "".join(self.pieces) + THOUGHT_CUE

    def record_reply(self, kept: str) -> None:
        if self.chat:
            self.add_message(Message("assistant", kept.strip()))
        else:
            self.add_text(f"{THOUGHT_CUE}{kept.rstrip()}\n")

    def record_observation(self, observation: str) -> None:
        if self.chat:
            self.add_message(Message("user", prompting.observation_message(observation)))
        else:
            self.add_text(f"{prompting.observation_message(observation)}\n")

    def record_note(self, note: str) -> None:
        """A word from the loop that is not an observation (the forced-final request)."""
        if self.chat:
            self.add_message(Message("user", note))
        else:
            self.add_text(f"{note}\n")

    def transcript(self) -> tuple[Message, ...] | str:
        return tuple(self.messages) if self.chat else "".join(self.pieces)


@dataclass
class _State:
    used: Usage = field(default_factory=Usage)
    steps: list[Step] = field(default_factory=list)
    done: dict[tuple[str, str], tuple[int, str]] = field(default_factory=dict)  # repeat detection
    format_errors: int = 0
    tool_calls: int = 0


def _drive(agent: Agent, task: str) -> Generator[Step, None, RunResult]:
    """The generator behind Run: yields each step, returns the RunResult."""
    convo = _Conversation(agent, task)
    state = _State()
    model = agent.model
    use_grammar = model.accepts_grammar if agent.grammar is None else agent.grammar
    names = [t.name for t in agent.tool_list]
    grammar = protocol_grammar(names, after_cue=not convo.chat) if use_grammar else None
    first_grammar = protocol_grammar(names, after_cue=not convo.chat, final=False) if use_grammar else None

    def finish(
        reason: StopReason, answer: str | None = None, *, forced: bool = False, error: str | None = None
    ) -> RunResult:
        return RunResult(
            answer=answer,
            stop_reason=reason,
            steps=tuple(state.steps),
            usage=state.used,
            transcript=convo.transcript(),
            forced=forced,
            error=error,
            tool_calls=state.tool_calls,
        )

    def allowance() -> int | None:
        """The reply allowance of the next call, or None when no useful call fits the budget."""
        if agent.max_tokens is None:
            return agent.reply_tokens
        room = agent.max_tokens - state.used.total_tokens - convo.tally.prompt_tokens
        if room < MIN_REPLY_TOKENS:
            return None
        return min(agent.reply_tokens, room)

    def call(number: int, reply_tokens: int, *, forced: bool = False) -> tuple[Step, Parsed] | str:
        """One model call; returns the step and what was parsed, or the error text."""
        started = time.perf_counter()
        prompt_estimate = convo.tally.prompt_tokens
        constraint = first_grammar if agent.act_first and state.tool_calls == 0 and not forced else grammar
        request = Request(convo.prompt(), guard.STOP_SEQUENCES, reply_tokens, constraint)
        try:
            reply = model.generate(request)
        except ModelError as exc:
            log.warning("model call %d failed: %s", number, exc)
            return str(exc)
        cut = guard.cut(reply.text)
        parsed = agent.parser(cut.kept if convo.chat else THOUGHT_CUE + cut.kept)
        usage = reply.usage or Usage(prompt_estimate, convo.tally.count(reply.text))
        state.used = state.used + usage
        convo.record_reply(cut.kept)
        step = Step(
            number=number,
            reply=reply.text,
            parsed=parsed,
            observation=None,
            usage=usage,
            total_usage=state.used,
            seconds=time.perf_counter() - started,
            cut=cut.dropped,
            forced=forced,
        )
        if reply.finish_reason == "length":
            log.info("step %d: the reply reached its allowance of %d tokens", number, reply_tokens)
        return step, parsed

    stop: StopReason = "max_steps"
    for number in range(1, agent.max_steps + 1):
        reply_tokens = allowance()
        if reply_tokens is None:
            stop = "max_tokens"
            break
        outcome = call(number, reply_tokens)
        if isinstance(outcome, str):
            return finish("model_error", error=outcome)
        step, parsed = outcome
        if isinstance(parsed, Final):
            state.steps.append(step)
            yield step
            return finish("final", parsed.answer)
        started = time.perf_counter()
        if isinstance(parsed, ParseError):
            state.format_errors += 1
            observation = prompting.render("corrections/format_error", problem=parsed.message)
        else:
            state.format_errors = 0
            decision = _act(agent, state, parsed, number)
            if decision is None:
                step = _finished(step, started, None)
                state.steps.append(step)
                yield step
                return finish("declined", error="the approver stopped the run")
            observation = decision
        left = _nearly_spent(agent, number, state.used.total_tokens + convo.tally.prompt_tokens)
        if left:
            observation = prompting.render("corrections/budget_low", observation=observation, left=left)
        step = _finished(step, started, observation)
        state.steps.append(step)
        yield step
        if state.format_errors >= agent.max_format_errors:
            return finish("format_errors", error=f"{state.format_errors} unreadable replies in a row")
        convo.record_observation(observation)

    if not agent.force_final:
        return finish(stop, error=_limit_words(agent, stop))
    convo.record_note(prompting.render("corrections/force_final", limit=_limit_words(agent, stop)))
    reply_tokens = allowance()
    if reply_tokens is None:
        return finish(stop, error=_limit_words(agent, stop))
    outcome = call(len(state.steps) + 1, reply_tokens, forced=True)
    if isinstance(outcome, str):
        return finish(stop, error=f"{_limit_words(agent, stop)}; the forced final call failed: {outcome}")
    step, parsed = outcome
    state.steps.append(step)
    yield step
    if isinstance(parsed, Final):
        return finish(stop, parsed.answer, forced=True)
    return finish(stop, error=f"{_limit_words(agent, stop)}; no final answer when asked for one")


def _act(agent: Agent, state: _State, action: Action, number: int) -> str | None:
    """Run the action (or say why not); the observation text, or None if the run must stop."""
    by_name = {t.name: t for t in agent.tool_list}
    chosen = by_name.get(action.tool) or next(
        (t for t in agent.tool_list if t.name.casefold() == action.tool.casefold()), None
    )
    if chosen is None:
        names = list(by_name)
        close = difflib.get_close_matches(action.tool, names, n=1)
        suggestion = prompting.render("corrections/unknown_tool_suggestion", closest=close[0]) if close else ""
        return prompting.render(
            "corrections/unknown_tool", tool=action.tool, suggestion=suggestion, tools=", ".join(names)
        )
    key = (chosen.name, " ".join(action.input.split()).casefold())
    if key in state.done:
        step, result = state.done[key]
        return prompting.render(
            "corrections/repeated_action", tool=chosen.name, input=action.input, step=step, result=result
        )
    if chosen.risky:
        approval = agent.approve(chosen, action) if agent.approve else False
        if approval == "stop":
            return None
        if not approval:
            return prompting.render("corrections/declined", tool=chosen.name, input=action.input)
    assert agent.count_tokens is not None
    state.tool_calls += 1
    if chosen.timeout is None and agent.tool_timeout is not None:
        chosen = replace(chosen, timeout=agent.tool_timeout)
    result = tools.truncate(tools.call(chosen, action.input), agent.observation_tokens, agent.count_tokens)
    state.done[key] = (number, result)
    return result


def _finished(step: Step, started: float, observation: str | None) -> Step:
    return replace(step, observation=observation, seconds=step.seconds + time.perf_counter() - started)


def _nearly_spent(agent: Agent, number: int, committed: int) -> str:
    """What is left, in words, when only one more step or call fits; "" otherwise."""
    if number == agent.max_steps - 1:
        return "1 step"
    if agent.max_tokens is not None:
        left = agent.max_tokens - committed
        if MIN_REPLY_TOKENS <= left < 2 * agent.reply_tokens + 200:  # about one more call
            return f"about {left} tokens"
    return ""


def _limit_words(agent: Agent, stop: StopReason) -> str:
    if stop == "max_tokens":
        return f"the token budget of {agent.max_tokens}"
    return f"the step limit of {agent.max_steps}"
