"""The agent: a model, its tools, its limits and its prompting, checked when it is made, and the
runs it starts.

    agent = Agent(model, tools=[lookup, add], limits=Limits(steps=6, tokens=6000))
    result = agent.run(task)                  # a RunResult
    result = await agent.arun(task)           # the same, in an event loop
    run = agent.iter_steps(task)              # one frozen Step at a time; then run.result
    arun = agent.aiter_steps(task)            # the same, `async for`; then arun.result
    run.close()                               # stop early (await arun.aclose()); collected: the same
    result = agent.run(task, state="run.json")   # the state saved after every step (durable/)
    result = agent.resume("run.json", decision=True)   # go on from it, in any process (aresume, iter_resume)

An agent is immutable and makes, once for each context window, the frozen `EpisodeSpec` a run
reads (`spec`). A run is an episode (`episode`: what a run decides, with no I/O), the flow around
it (`flow`: the observer, what an exception comes to), and one of the two drivers that carry out
what the flow needs (`drivers`: `Run` calls, `AsyncRun` awaits).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, TypeVar

from react_text import prompting
from react_text.core.commands import Approval, Approver
from react_text.core.drivers import AsyncRun, Run
from react_text.core.keeping import Keeper
from react_text.core.limits import Limits
from react_text.core.model_info import ModelInfo, describe, grammar_on, no_grammar
from react_text.core.protocol import THINK_OPEN
from react_text.core.spec import EpisodeSpec
from react_text.core.streaming import AStream, Stream
from react_text.core.types import Model, Parser, RunResult
from react_text.observers.observing import Observer
from react_text.parser import PARSERS, parse
from react_text.prompting import Prompting
from react_text.tokens import meter as budget
from react_text.tools.tool import Tool, as_tools, listing

if TYPE_CHECKING:
    from react_text.durable.keeping import StoreLike

__all__ = [
    "AStream",
    "Agent",
    "Approver",
    "AsyncRun",
    "Parser",
    "Run",
    "Stream",
]


_Resumed = TypeVar("_Resumed", Run, AsyncRun, Stream)  # what a saved run goes on as (Agent._resumed)


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
    _count: budget.Counter = field(init=False, repr=False, compare=False)  # the counter, before it is memoised
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
        # Memoised: what a run counts again (a reply, then the same reply recorded) is counted once.
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
        setattr_(self, "_count", count)
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
        """What a run of this agent reads, as one frozen value (spec.py): the instruction block,
        the tools, the limits, the prompting, the grammar choice (`model_info.grammar_on`: the
        prompting's, else the model's), the parser, the counter. `window`: the model's context
        window, when known. Made once for each window, api and grammar choice (a server model may
        learn its own at its first run)."""
        grammar = grammar_on(self.model, self.info, self.prompting.grammar)
        key = (window, self.model.api, grammar)
        made = self._specs.get(key)
        if made is None:
            instructions = self.instructions()
            made = self._specs[key] = EpisodeSpec(
                instructions,
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
                counted=((instructions, _instruction_tokens(self._count, instructions)),),
            )
        return made

    def run(
        self,
        task: str,
        *,
        observer: Observer | None = None,
        seed: int | None = None,
        state: StoreLike | None = None,
        run_id: str | None = None,
    ) -> RunResult:
        """Run `task` to the end. `seed` goes with every model call of the run (`Request.seed`):
        runs of one task with distinct seeds sample distinct episodes (above temperature 0).
        `state`: a store, or a path (durable/keeping.opened), where the run's state is saved after
        every step and before every tool call, under `run_id` (default: a new one); `resume` goes on."""
        return _to_end(self.iter_steps(task, observer=observer, seed=seed, state=state, run_id=run_id))

    def iter_steps(
        self,
        task: str,
        *,
        observer: Observer | None = None,
        seed: int | None = None,
        state: StoreLike | None = None,
        run_id: str | None = None,
    ) -> Run:
        """The run's steps as they happen. `observer` is told every command and what came of it
        (observing.py: a trace's `Tracer.observer`, say); telemetry is told too."""
        return Run(self, task, observer, seed=seed, keeper=_kept(state, run_id, task, seed))

    async def arun(
        self,
        task: str,
        *,
        observer: Observer | None = None,
        seed: int | None = None,
        state: StoreLike | None = None,
        run_id: str | None = None,
    ) -> RunResult:
        return await _ato_end(self.aiter_steps(task, observer=observer, seed=seed, state=state, run_id=run_id))

    def aiter_steps(
        self,
        task: str,
        *,
        observer: Observer | None = None,
        seed: int | None = None,
        state: StoreLike | None = None,
        run_id: str | None = None,
    ) -> AsyncRun:
        return AsyncRun(self, task, observer, seed=seed, keeper=_kept(state, run_id, task, seed))

    def resume(
        self,
        state: StoreLike,
        *,
        run_id: str | None = None,
        decision: Approval | None = None,
        observer: Observer | None = None,
    ) -> RunResult:
        """Go on with the run saved in `state` (`run_id`: which, when the store holds several),
        exactly where it was: its log replayed, then live. `decision` answers the approval it
        awaits (True, False, Deny(reason), Edit(input) or "stop"); without one the approver is asked."""
        return _to_end(self.iter_resume(state, run_id=run_id, decision=decision, observer=observer))

    def iter_resume(
        self,
        state: StoreLike,
        *,
        run_id: str | None = None,
        decision: Approval | None = None,
        observer: Observer | None = None,
    ) -> Run:
        """`resume`, a step at a time: the steps taken after the resume (run.result holds them all)."""
        return self._resumed(Run, state, run_id, decision, observer)

    async def aresume(
        self,
        state: StoreLike,
        *,
        run_id: str | None = None,
        decision: Approval | None = None,
        observer: Observer | None = None,
    ) -> RunResult:
        return await _ato_end(self.aiter_resume(state, run_id=run_id, decision=decision, observer=observer))

    def aiter_resume(
        self,
        state: StoreLike,
        *,
        run_id: str | None = None,
        decision: Approval | None = None,
        observer: Observer | None = None,
    ) -> AsyncRun:
        return self._resumed(AsyncRun, state, run_id, decision, observer)

    def stream(
        self,
        task: str,
        *,
        observer: Observer | None = None,
        seed: int | None = None,
        state: StoreLike | None = None,
        run_id: str | None = None,
    ) -> Stream:
        """The run as it is written: typed events as the model's text arrives (`streaming.py`: text
        deltas, each action once read whole, the observation, each step's end with the Step
        `iter_steps` gives, the run's end with the RunResult `run` returns); then `.result`.
        `state=` keeps it as `iter_steps` does."""
        return Stream(self, task, observer, seed=seed, keeper=_kept(state, run_id, task, seed))

    def astream(
        self,
        task: str,
        *,
        observer: Observer | None = None,
        seed: int | None = None,
        state: StoreLike | None = None,
        run_id: str | None = None,
    ) -> AStream:
        """`stream`, for `async for`."""
        return AStream(self, task, observer, seed=seed, keeper=_kept(state, run_id, task, seed))

    def stream_resume(
        self,
        state: StoreLike,
        *,
        run_id: str | None = None,
        decision: Approval | None = None,
        observer: Observer | None = None,
    ) -> Stream:
        """`iter_resume`, as events (`stream`): the events of the steps taken after the resume."""
        return self._resumed(Stream, state, run_id, decision, observer)

    def _resumed(
        self,
        kind: type[_Resumed],
        state: StoreLike,
        run_id: str | None,
        decision: Approval | None,
        observer: Observer | None,
    ) -> _Resumed:
        """A run of `kind` that goes on with the one saved in `state` (its task, its seed, its keeper)."""
        from react_text.durable.keeping import resumed

        saved, keeper = resumed(state, run_id, decision)
        return kind(self, saved.task, observer, seed=saved.seed, keeper=keeper)


def _to_end(run: Run) -> RunResult:
    """`run` iterated to its end: its result."""
    for _ in run:
        pass
    return run.result


async def _ato_end(run: AsyncRun) -> RunResult:
    """`_to_end`, `async for`."""
    async for _ in run:
        pass
    return run.result


def _kept(state: StoreLike | None, run_id: str | None, task: str, seed: int | None) -> Keeper | None:
    """The keeper of a run whose state is kept in `state` (none without one)."""
    if state is None:
        if run_id is not None:
            raise TypeError("run_id names a run kept in a store: give state= too")
        return None
    from react_text.durable.keeping import fresh

    return fresh(state, run_id, task, seed)


def _instruction_tokens(count: budget.Counter, text: str) -> int:
    """`count(text)`, once in a process for an instruction block and a counter (the default
    counter is one per model name): agents made alike, one per task say, count their instructions once."""
    try:
        hash(count)
    except TypeError:  # a counter that cannot be a key (a callable object that defines __eq__ only)
        return count(text)
    return _counted(count, text)


@functools.lru_cache(maxsize=64)
def _counted(count: budget.Counter, text: str) -> int:
    return count(text)


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
