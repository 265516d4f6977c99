"""The agent, and the two drivers of its runs: sync and async.

    agent = Agent(model, tools=[lookup, add], limits=Limits(steps=6, tokens=6000))
    result = agent.run(task)                  # a RunResult
    result = await agent.arun(task)           # the same, in an event loop
    run = agent.iter_steps(task)              # one frozen Step at a time; then run.result
    arun = agent.aiter_steps(task)            # the same, `async for`; then arun.result
    run.close()                               # stop early (await arun.aclose()); collected: the same

What a run decides lives in `episode` (a state machine that performs no I/O). What a step does
around it (the observer told, what an exception comes to, the event the episode is sent) is one
generator, `_Runner.flow`, written once; it yields what needs the world outside. `Run` and
`AsyncRun` are the two loops that carry that out (`_carry` calls, `_acarry` awaits) and send back
what came of it, as httpx's sync and async clients drive one auth flow; so a sync and an async
run of the same script take the same steps, and fail alike.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import time
import typing
from collections.abc import Awaitable, Callable, Generator, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from react_text import prompting
from react_text.core.episode import (
    Approval,
    Approve,
    Command,
    Decided,
    Done,
    Emit,
    Episode,
    EpisodeSpec,
    Event,
    Failed,
    Invoke,
    InvokeAll,
    Ran,
    RanAll,
    Replied,
    Send,
)
from react_text.core.errors import ModelError
from react_text.core.limits import Limits
from react_text.core.model_info import ModelInfo, describe, grammar_on, no_grammar
from react_text.core.protocol import THINK_OPEN
from react_text.core.sampling import check_seed
from react_text.core.types import Action, AsyncModel, Model, Parser, Reply, RunResult, Step
from react_text.observers import observing, telemetry, trajectory
from react_text.observers.observing import Observer
from react_text.parser import PARSERS, parse
from react_text.prompting import Prompting
from react_text.tokens import meter as budget
from react_text.tools import running
from react_text.tools.tool import Tool, as_tools, listing

__all__ = [
    "Agent",
    "Approver",
    "AsyncRun",
    "Parser",
    "Run",
]

Approver = Callable[[Tool, Action], Approval | Awaitable[Approval]]


@dataclass(frozen=True, slots=True, init=False)
class Agent:
    """Runs a ReAct loop over a plain-text protocol. Immutable and reusable: each run keeps its own
    state, and `dataclasses.replace` (or `with_limits`) makes a changed copy.

    `limits` and `prompting` default to what the model recommends (`recommended_limits`,
    `recommended_prompting`), else to `Limits()` and `Prompting()`. `approve(tool, action)` is
    asked before a risky tool runs and answers True, False, or "stop" to end the run (it may be
    async); without one, risky tools are declined. `parser` reads the replies (`parse`, or another
    function of `react_text.parser.PARSERS`). `count_tokens` counts as the model does (default: the
    model's own counter, else tiktoken by the model's name). Each is checked here, when the agent
    is made, and a wrong one is a TypeError naming it.
    """

    model: Model
    tools: tuple[Tool, ...]
    limits: Limits
    prompting: Prompting
    approve: Approver | None
    parser: Parser
    count_tokens: budget.Counter | None
    counter: budget.Counter = field(init=False, repr=False, compare=False)  # count_tokens resolved, memoised
    info: ModelInfo = field(init=False, repr=False, compare=False)  # what the model offers, read once
    _specs: dict[tuple[object, ...], EpisodeSpec] = field(init=False, repr=False, compare=False)  # spec(), made once

    def __init__(
        self,
        model: Model,
        tools: Iterable[Tool | Callable[..., object]] = (),
        *,
        limits: Limits | None = None,
        prompting: Prompting | None = None,
        approve: Approver | None = None,
        parser: Parser = parse,
        count_tokens: budget.Counter | None = None,
    ) -> None:
        _check_model(model)
        _check_functions(approve=approve, parser=parser, count_tokens=count_tokens)
        info = describe(model)
        limits = limits if limits is not None else info.limits or Limits()
        prompting = prompting if prompting is not None else info.prompting or Prompting()
        if not isinstance(limits, Limits):
            raise TypeError(f"limits must be a react_text.Limits, not {type(limits).__name__}")
        if not isinstance(prompting, Prompting):
            raise TypeError(f"prompting must be a react_text.Prompting, not {type(prompting).__name__}")
        if prompting.grammar and not model.accepts_grammar:
            raise ValueError(
                f"{model!r} does not take a grammar; for a server that does (llama.cpp), "
                "build the backend with grammar=True"
            )
        if info.think and no_grammar(info, prompting.grammar):  # think=True only changes the grammar
            raise ValueError(
                f"{model!r} was built with think=True, which lets the model think in a {THINK_OPEN} block "
                "before the protocol under the grammar, and "
                + (
                    "Prompting(grammar=False) turns the grammar off: leave one of them out"
                    if prompting.grammar is False
                    else "this agent sends none: build the backend with grammar=True or give "
                    "Prompting(grammar=True), or leave think off"
                )
            )
        count = count_tokens or info.count_tokens or budget.counter(model.name)
        # Memoised: the instruction block is counted once per agent, not once per run.
        counter = functools.lru_cache(maxsize=256)(count)
        setattr_ = object.__setattr__
        setattr_(self, "model", model)
        setattr_(self, "tools", as_tools(tools))
        setattr_(self, "limits", limits)
        setattr_(self, "prompting", prompting)
        setattr_(self, "approve", approve)
        setattr_(self, "parser", parser)
        setattr_(self, "count_tokens", count_tokens)
        setattr_(self, "counter", counter)
        setattr_(self, "info", info)
        setattr_(self, "_specs", {})

    def with_limits(self, **changes: Any) -> Agent:
        """A copy of this agent with some limits changed: `agent.with_limits(steps=4)`."""
        return replace(self, limits=replace(self.limits, **changes))

    def instructions(self) -> str:
        """The instruction block this agent sends: protocol, tool list, worked example."""
        example = self.prompting.example
        parallel = self.prompting.parallel
        if example == "auto":
            example = prompting.example_for(self.tools, parallel=parallel)
        elif example is not None and prompting.example_name(example) == "generic":
            example = prompting.generic_example(self.tools)  # the generic example, named: from these tools
        return prompting.instructions(
            listing(self.tools), example=example, parallel=self.limits.actions if parallel else None
        )

    def spec(self, window: int | None = None) -> EpisodeSpec:
        """What a run of this agent reads, as one frozen value (episode.py): the instruction block,
        the tools, the limits, the prompting, the grammar choice (`model_info.grammar_on`: the
        prompting's, else the model's), the parser, the counter. `window`: the model's context
        window, when known. Made once for each window, api and grammar choice (a server model may
        learn its own at its first run)."""
        grammar = grammar_on(self.model, self.info, self.prompting.grammar)
        key = (window, self.model.api, grammar)
        made = self._specs.get(key)
        if made is None:
            made = self._specs[key] = EpisodeSpec(
                self.instructions(),
                self.counter,
                api=self.model.api,
                tools=self.tools,
                limits=self.limits,
                prompting=self.prompting,
                parser=self.parser,
                grammar=grammar,
                asks_approval=self.approve is not None,
                window=window,
                prefill=self.info.prefill,
            )
        return made

    def run(self, task: str, *, observer: Observer | None = None, seed: int | None = None) -> RunResult:
        """Run `task` to the end. `seed` goes with every model call of the run (`Request.seed`):
        runs of one task with distinct seeds sample distinct episodes (above temperature 0)."""
        run = self.iter_steps(task, observer=observer, seed=seed)
        for _ in run:
            pass
        return run.result

    def iter_steps(self, task: str, *, observer: Observer | None = None, seed: int | None = None) -> Run:
        """The run's steps as they happen. `observer` is told every command and what came of it
        (observing.py: a trace's `Tracer.observer`, say); telemetry is told too."""
        return Run(self, task, observer, seed=seed)

    async def arun(self, task: str, *, observer: Observer | None = None, seed: int | None = None) -> RunResult:
        run = self.aiter_steps(task, observer=observer, seed=seed)
        async for _ in run:
            pass
        return run.result

    def aiter_steps(self, task: str, *, observer: Observer | None = None, seed: int | None = None) -> AsyncRun:
        return AsyncRun(self, task, observer, seed=seed)


def _check_model(model: object) -> None:
    """A model object, or a TypeError that says what one is and how to make one from a name."""
    if isinstance(model, str):
        raise TypeError(
            f"Agent takes a model object, not the name {model!r}: make one with "
            f'OpenAIChat("{model}") (a server\'s model; base_url=... for a local server), '
            f'LocalModel("{model}") for a .gguf file, or LocalModel() for the embedded one'
        )
    if isinstance(model, type):  # Agent(ScriptedModel): the class has the members, but unbound
        raise TypeError(
            f"Agent takes a model object, not the class {model.__name__}: make one with {model.__name__}(...)"
        )
    missing = [a for a in ("api", "name", "accepts_grammar", "generate") if not hasattr(model, a)]
    if missing:
        raise TypeError(
            f"Agent takes a model object (with api, name, accepts_grammar and generate(request)), "
            f'not {type(model).__name__}: it has no {", ".join(missing)}; e.g. OpenAIChat("gpt-4o-mini")'
        )
    kind, api, name, generate = type(model).__name__, model.api, model.name, model.generate  # type: ignore[attr-defined]
    if api not in ("chat", "completion"):
        raise ValueError(f"the model's api ({kind}.api) must be 'chat' or 'completion', not {api!r}")
    if not isinstance(name, str):
        raise TypeError(f"the model's name ({kind}.name) must be text, not {name!r}")
    if not callable(generate):
        raise TypeError(f"{kind}.generate must be a method, generate(request) -> Reply, not {generate!r}")


# What each function Agent takes does, for the refusal of one that is not a function.
_CALLED = {
    "approve": 'takes (tool, action) and answers True, False or "stop"',
    "parser": "takes (text, tools=names) and returns an Action, a Final or a ParseError",
    "count_tokens": "takes a text and returns its number of tokens",
}


def _check_functions(**given: object) -> None:
    """Each of Agent's function options is None (approve, count_tokens: the default) or callable,
    else a TypeError naming it, what it is called with, and what the slip most likely meant."""
    for option, value in given.items():
        if callable(value) or (value is None and option != "parser"):
            continue
        if option == "parser" and isinstance(value, str):
            hint = (
                f": the command line's --parser names are the keys of react_text.parser.PARSERS, "
                f"so parser=PARSERS[{value!r}]"
                if value in PARSERS
                else f"; the built-in ones are react_text.parser.PARSERS: {', '.join(sorted(PARSERS))}"
            )
            raise TypeError(f"Agent takes a parser function, not the name {value!r}{hint}")
        hint = " (to approve every risky call: approve=lambda tool, action: True)" if option == "approve" else ""
        raise TypeError(f"{option} must be a function that {_CALLED[option]}, not {value!r}{hint}")


class _Driven:
    """What the two drivers share: the checks, the run's state (`_Runner`) and its flow, kept from
    one step to the next (a flow that has ended, finished or raised, is begun again where the
    episode is: iterated again, the run goes on from the same command, as it did before)."""

    __slots__ = ("__weakref__", "_agent", "_flowing", "_runner")

    def __init__(self, agent: Agent, task: str, observer: Observer | None = None, *, seed: int | None = None) -> None:
        if not isinstance(task, str):
            raise TypeError(f"the task must be a string, not {type(task).__name__}")
        if seed is not None:
            check_seed(seed)
        self._agent = agent
        self._runner = _Runner(agent, task, observer, seed)
        self._flowing: _Flow | None = None

    @property
    def result(self) -> RunResult:
        return self._runner.result

    def close(self) -> None:
        """Stop the run where it is (it hands out no more steps); a finished run is unchanged.
        A run that is let go unfinished is closed when it is collected."""
        self._runner.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):  # a finaliser must not raise, whatever an exporter does
            self.close()

    def _flow(self) -> _Flow:
        flow = self._flowing
        if flow is None or flow.gi_frame is None:  # type: ignore[attr-defined]  # not begun, or ended
            flow = self._flowing = self._runner.flow()
        return flow


class _Runner:
    """One run's state, and its flow (`flow`): everything a run does but the I/O. Apart from the
    Run that drives it, so that the Run and its suspended flow do not hold each other (a run let
    go would then be closed by the cycle collector, whenever it came, not when it is let go)."""

    __slots__ = (
        "_agent",
        "_command",
        "_episode",
        "_handed",
        "_observer",
        "_result",
        "_seed",
        "_spans",
        "_task",
        "_tokens",
        "closed",
    )

    def __init__(self, agent: Agent, task: str, observer: Observer | None, seed: int | None) -> None:
        self._agent = agent
        self._task = task
        self._seed = seed
        self._episode: Episode | None = None
        self._command: Command | None = None
        self._result: RunResult | None = None
        self._observer = observer
        self._spans: Observer = observing.Quiet()
        self._handed = 0  # steps handed out
        self.closed = False
        self._tokens = trajectory.Recorder(chat=agent.model.api == "chat")

    @property
    def result(self) -> RunResult:
        if self._result is None:
            if self.closed:
                raise RuntimeError("the run was closed before it finished: it has no result")
            raise RuntimeError("the run is not finished: iterate it to the end first")
        return self._result

    def close(self) -> None:
        if self._result is None and not self.closed:
            self.closed = True
            self._spans.abandon(self._handed)

    def flow(self) -> _Flow:
        """The run from the command the episode is at: each step, yielded as it comes.

        Before each step it yields what needs the world outside (the context window, first; then
        each model call, approval and tool run) and is sent what came of it, or has the exception
        thrown in; the drivers only carry that out (`_carry`, `_acarry`). So what an exception
        comes to, what the observer is told and what the episode is sent are written once, for
        both drivers."""
        while True:
            try:
                command = self._command
                if command is None:
                    window = yield _WINDOW
                    command = self._begin(window)  # type: ignore[arg-type]  # what _carry answers _WINDOW
                episode: Episode = self._episode  # type: ignore[assignment]  # made by _begin
                while not isinstance(command, Emit | Done):
                    with self._spans.around(command) as span:
                        started = time.perf_counter()
                        try:
                            made = yield command
                        except (ModelError, OSError) as exc:
                            if not isinstance(command, Send):
                                raise
                            made = _model_error(exc)
                        except (StopIteration, StopAsyncIteration, RuntimeError) as exc:
                            stop = _stop(exc)
                            if stop is None:
                                raise
                            raise _escaped(_who(command), stop) from stop
                        event = _event(command, made, time.perf_counter() - started)
                        self._tokens.see(command, event)
                        command = episode.send(event)
                        span.record(event, episode.counted)
            except (StopIteration, StopAsyncIteration) as exc:  # from an observer, say: told as it is raised
                error = _escaped(_OWN, exc)
                self._spans.fail(error)
                raise error from exc
            except BaseException as exc:
                self._spans.fail(exc)
                raise
            try:
                step = self._after(command)
            except (StopIteration, StopAsyncIteration) as exc:  # from the observer's `end`
                raise _escaped(_OWN, exc) from exc
            if step is None:
                return
            yield step

    def _begin(self, window: int | None) -> Command:
        spans = telemetry.start(self._agent, self._task)
        self._spans = observing.both([spans, self._observer] if self._observer is not None else [spans])
        self._spans.begin(self._agent.info)
        self._episode = Episode(self._agent.spec(window), self._task, seed=self._seed)
        return self._episode.start()

    def _after(self, command: Command) -> Step | None:
        """At an Emit or Done command: the step to hand out, or None at the end."""
        assert self._episode is not None
        if isinstance(command, Done):
            self._result = self._tokens.finish(command.result)
            self._command = command
            self._spans.end(command.result)
            return None
        assert isinstance(command, Emit)
        self._tokens.emitted()
        self._command = self._episode.send(None)
        self._handed += 1
        return command.step


@dataclass(frozen=True, slots=True)
class _Window:
    """What the flow asks before the first command: the context window (a server may be asked)."""


_WINDOW = _Window()
_Need = Send | Approve | Invoke | InvokeAll | _Window  # what the flow asks a driver to carry out
_Flow = Generator[_Need | Step, object, None]


class Run(_Driven):
    """One run of an agent: iterate it for its steps; `result` once it is exhausted."""

    __slots__ = ()

    def __iter__(self) -> Run:
        return self

    def __next__(self) -> Step:
        if self._runner.closed:
            raise StopIteration
        flow = self._flow()
        need = next(flow)  # at the end, the flow's StopIteration is this one's
        while not isinstance(need, Step):
            try:
                made = _carry(self._agent, need)
            except BaseException as exc:  # noqa: BLE001 - the flow says what it comes to
                need = flow.throw(exc)
            else:
                need = flow.send(made)
        return need


class AsyncRun(_Driven):
    """One async run of an agent: `async for` its steps; `result` once it is exhausted."""

    __slots__ = ()

    def __aiter__(self) -> AsyncRun:
        return self

    async def aclose(self) -> None:
        """`close`, as an async generator's is awaited."""
        self.close()

    async def __anext__(self) -> Step:
        if self._runner.closed:
            raise StopAsyncIteration
        flow = self._flow()
        try:
            need = next(flow)
            while not isinstance(need, Step):
                try:
                    made = await _acarry(self._agent, need)
                except BaseException as exc:  # noqa: BLE001 - the flow says what it comes to (CancelledError too)
                    need = flow.throw(exc)
                else:
                    need = flow.send(made)
        except StopIteration:  # the flow's end is this iteration's
            raise StopAsyncIteration from None
        return need


# The flow decides what a model's, a tool's or an approver's exception comes to. A ModelError (or
# an OSError, a transport's) from the model is a Failed event (the run ends "model_error"); what a
# tool raises is its observation (running.py); anything else is raised to the caller, the same
# under both drivers, except that a StopIteration or StopAsyncIteration is raised as a RuntimeError:
# either would end the caller's `for` or `async for` quietly, as if the run were over.


def _carry(agent: Agent, need: _Need) -> object:
    """What the sync driver does for the flow: each call, made here."""
    if isinstance(need, Send):
        return agent.model.generate(need.request)
    if isinstance(need, Approve):
        decision = _approver(agent)(need.tool, need.action)
        if inspect.isawaitable(decision):
            if inspect.iscoroutine(decision):
                decision.close()
            raise TypeError("an async approver needs an async run: use agent.arun or agent.aiter_steps")
        return decision
    if isinstance(need, InvokeAll):
        return running.run_all(_invocations(need))
    if isinstance(need, Invoke):
        return running.run(need.tool, need.arguments, need.seconds)
    return _window(agent)


async def _acarry(agent: Agent, need: _Need) -> object:
    """What the async driver does for the flow: `_carry`, awaited. A sync-only model runs on a
    worker thread (`_guarded`: a StopIteration cannot cross a future); an approver may be async."""
    if isinstance(need, Send):
        if agent.info.asynchronous:
            return await typing.cast(AsyncModel, agent.model).agenerate(need.request)
        return await asyncio.to_thread(_guarded, agent.model.generate, need.request)
    if isinstance(need, Approve):
        decision = _approver(agent)(need.tool, need.action)
        return await decision if inspect.isawaitable(decision) else decision
    if isinstance(need, InvokeAll):
        return await running.arun_all(_invocations(need))
    if isinstance(need, Invoke):
        return await running.arun(need.tool, need.arguments, need.seconds)
    await _aidentify(agent)
    return await _awindow(agent)


def _event(command: Command, made: Any, seconds: float) -> Event:
    """The event the episode is sent for what came of `command`: a Reply or a ModelError for a
    Send, an Approval, an Outcome, or (Outcome, seconds) pairs for an InvokeAll, as `_carry` makes them."""
    if isinstance(command, Send):
        if isinstance(made, ModelError):
            return Failed(made, seconds)
        if not isinstance(made, Reply):  # a model of the user's own: its bug, said in its words
            raise TypeError(f"the model's generate returned {type(made).__name__}, not a Reply: return Reply(text)")
        return Replied(made, seconds)
    if isinstance(command, Approve):
        return Decided(made)
    if isinstance(command, InvokeAll):
        return RanAll(tuple(Ran(o, s) for o, s in made), seconds)
    return Ran(made, seconds)


def _invocations(command: InvokeAll) -> list[running.Invocation]:
    return [(i.tool, i.arguments, i.seconds) for i in command.invokes]


def _approver(agent: Agent) -> Approver:
    if agent.approve is None:  # the episode asks only an agent that has one
        raise RuntimeError("the episode asked for an approval, but the agent has no approver")
    return agent.approve


def _who(command: Command) -> str:
    return "the approver" if isinstance(command, Approve) else "the model" if isinstance(command, Send) else "a tool"


_OWN = "an observer or the token counter"  # what else the flow calls that the user may have written
# What Python makes of a StopIteration that leaves a generator or a coroutine (PEP 479): an async
# model's StopIteration reaches the async driver so, as a sync model's reaches the sync one bare.
_PEP_479 = frozenset(f"{kind} raised StopIteration" for kind in ("generator", "coroutine", "async generator"))


def _stop(exc: BaseException) -> StopIteration | StopAsyncIteration | None:
    """The StopIteration or StopAsyncIteration `exc` is, or that Python made it of; else None."""
    if isinstance(exc, StopIteration | StopAsyncIteration):
        return exc
    cause = exc.__cause__
    if type(exc) is RuntimeError and str(exc) in _PEP_479 and isinstance(cause, StopIteration):
        return cause
    return None


def _guarded(call: Callable[..., Any], *args: Any) -> Any:
    """A sync model's `call(*args)` on a worker thread, with a StopIteration or StopAsyncIteration
    it raises made a RuntimeError: raised into the future that carries it back, it would break
    that future instead, and the run would wait for it for ever."""
    try:
        return call(*args)
    except (StopIteration, StopAsyncIteration) as exc:
        raise _escaped("the model", exc) from exc


def _model_error(exc: ModelError | OSError) -> ModelError:
    """What a model raised, as the ModelError that ends the run as model_error. ConnectionError,
    TimeoutError and their kin from a model of the user's own are a failure of its transport too
    (the README: a network failure never raises)."""
    if isinstance(exc, ModelError):
        return exc
    return ModelError(f"{type(exc).__name__}: {exc}".rstrip(": "))


def _escaped(who: str, exc: BaseException) -> RuntimeError:
    return RuntimeError(f"{type(exc).__name__} escaped from {who}: {exc}".rstrip(": "))


def _window(agent: Agent) -> int | None:
    if agent.limits.context_tokens is not None:
        return agent.limits.context_tokens
    return agent.info.window() if agent.info.window is not None else None


async def _awindow(agent: Agent) -> int | None:
    if agent.limits.context_tokens is not None:
        return agent.limits.context_tokens
    if agent.info.awindow is not None:
        window = await agent.info.awindow()
        return window if isinstance(window, int) and not isinstance(window, bool) else None
    return _window(agent)


async def _aidentify(agent: Agent) -> None:
    """A server model that asks its server what it is (where a grammar goes) asks it over the
    event loop, before the run reads `accepts_grammar`."""
    look = getattr(agent.model, "aidentify", None)
    if look is not None:
        await look()
