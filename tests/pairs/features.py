"""The features that change a run, one line each (FEATURES, at the bottom), for the pairs matrix
(tests/test_pairs.py): every pair runs together under both drivers, and each feature asserts its
own promise on what came of the run.

A feature is a class made fresh for each run. `configure` adds to the run's `Setup` what the
feature needs (its scene: the replies it plays, its tools, its limits, prompting, approver,
observer, model options); `check` asserts its promise on the `Ran` (the result, the model's calls,
what the feature recorded itself). The scenes of a pair are played one after the other, then
`FINAL: done`; a feature that ends the run at a limit (`ends = True`) has its scene played last.
The model is a `Player`: a ScriptedModel that answers the forced final call ("Reply now with ...")
with `FINAL: forced` wherever it comes, so a limit reached in any scene still gets its answer.

Each promise is stated as the docs state it (docs/guarantees.md names the rows); the oracles are
the tools' own records, the prompt files' words and, for the window, the fake server's own count.
"""

from __future__ import annotations

import asyncio
import dataclasses
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from react_text import Action, Agent, Limits, Prompting, Reply, Request, RunResult, ScriptedModel, Tool, tool
from react_text.grammar import gbnf
from react_text.observers.observing import Observer
from react_text.observers.trace import Tracer, replies
from react_text.prompting import render

FORCED = "THOUGHT: at the limit.\nFINAL: forced"


@dataclass(kw_only=True)
class Player(ScriptedModel):
    """A ScriptedModel that answers a forced final call with FORCED, wherever the run reaches a limit."""

    def generate(self, request: Request) -> Reply:
        last = request.prompt[-1].content if isinstance(request.prompt, tuple) else request.prompt
        if "Reply now with" in last:
            with self._lock:
                self.calls.append(request)
            return Reply(FORCED)
        return super().generate(request)

    async def agenerate(self, request: Request) -> Reply:
        await asyncio.sleep(0)
        return self.generate(request)


@dataclass(frozen=True)
class Setup:
    """What a run is made of; each feature adds to it."""

    scenes: tuple[tuple[str | Reply, ...], ...] = ()
    tools: tuple[Tool, ...] = ()
    limits: dict[str, Any] = field(default_factory=dict)
    prompting: dict[str, Any] = field(default_factory=dict)
    approvals: dict[str, bool] = field(default_factory=dict)  # tool name -> decision (others: declined)
    observers: tuple[Observer, ...] = ()
    streamed: tuple[list[Any], ...] = ()  # if any: the run is streamed, its events put in each list
    model: dict[str, Any] = field(default_factory=dict)  # ScriptedModel options

    def adding(self, **changes: Any) -> Setup:
        """A copy with scenes and tools appended, and limits, prompting, approvals, model options merged."""
        merged: dict[str, Any] = {}
        for name, value in changes.items():
            old = getattr(self, name)
            merged[name] = old + tuple(value) if isinstance(old, tuple) else {**old, **value}
        return dataclasses.replace(self, **merged)

    def replies(self) -> list[str | Reply]:
        return [reply for scene in self.scenes for reply in scene] + ["THOUGHT: all done.\nFINAL: done"]


@dataclass
class Ran:
    """What came of a run: its result, its model (with `calls`), and a way to run it again on other replies."""

    result: RunResult
    model: Player
    again: Callable[[list[Reply | Exception]], RunResult]  # the same agent on a ScriptedModel of these replies

    def step_of(self, reply_start: str) -> int:
        """The index of the step whose reply starts so (the first)."""
        return next(i for i, s in enumerate(self.result.steps) if s.reply.startswith(reply_start))


class Feature:
    name: ClassVar[str]
    ends: ClassVar[bool] = False  # it ends the run at a limit: its scene goes last
    replays: ClassVar[bool] = False  # its check runs the agent again: it comes after the others'

    def configure(self, setup: Setup) -> Setup:
        return setup

    def check(self, ran: Ran) -> None:
        pass


class Parallel(Feature):
    """Several actions of one reply run at once, each observation labelled with its call."""

    name = "parallel actions"

    def __init__(self) -> None:
        self.calls: list[str] = []

    def configure(self, setup: Setup) -> Setup:
        def p_echo(text: str) -> str:
            """Echo the text."""
            self.calls.append(text)
            return f"echo {text}"

        return setup.adding(
            scenes=[("THOUGHT: both.\nACTION: p_echo[a]\nACTION: p_echo[b]",)],
            tools=[tool(p_echo)],
            prompting={"parallel": True},
        )

    def check(self, ran: Ran) -> None:
        assert sorted(self.calls) == ["a", "b"], self.calls
        step = ran.result.steps[ran.step_of("THOUGHT: both.")]
        assert step.observations == ("echo a", "echo b"), step.observations


class PureRepeats(Feature):
    """A pure tool's repeat is answered from the earlier result; a failed call is retried."""

    name = "repeats of a pure tool"

    def __init__(self) -> None:
        self.calls: list[str] = []

    def configure(self, setup: Setup) -> Setup:
        def r_look(item: str) -> str:
            """Look an item up."""
            self.calls.append(item)
            if item == "bad" and self.calls.count("bad") % 2:  # every other call: a replay fails alike
                raise ConnectionError("try again")
            return f"{item} costs 3"

        scene = ("ACTION: r_look[pen]", "ACTION: r_look[pen]", "ACTION: r_look[bad]", "ACTION: r_look[bad]")
        return setup.adding(scenes=[scene], tools=[tool(r_look, pure=True)])

    def check(self, ran: Ran) -> None:
        assert self.calls[:3] == ["pen", "bad", "bad"], self.calls  # a failure is not remembered
        first = ran.step_of("ACTION: r_look[pen]")
        steps = ran.result.steps
        assert steps[first + 1].observation == render(
            "corrections/repeated_action", tool="r_look", input="pen", step=first + 1, result="pen costs 3"
        )
        assert steps[first + 3].observation == "bad costs 3"


class SideEffects(Feature):
    """A tool with side effects runs each time; its repeat is told; Limits.repeats brakes a run of them."""

    name = "repeats of a tool with side effects"

    def __init__(self) -> None:
        self.calls: list[str] = []

    def configure(self, setup: Setup) -> Setup:
        def s_send(to: str) -> str:
            """Send a message."""
            self.calls.append(to)
            return f"sent to {to}"

        return setup.adding(scenes=[("ACTION: s_send[ann]", "ACTION: s_send[ann]")], tools=[tool(s_send)])

    def check(self, ran: Ran) -> None:
        assert self.calls == ["ann", "ann"], self.calls
        second = ran.step_of("ACTION: s_send[ann]") + 1
        told = render("corrections/repeated_call", result="sent to ann", tool="s_send", input="ann", times=2)
        assert ran.result.steps[second].observation == told


class Approval(Feature):
    """Nothing risky runs without approval: a declined call is told, an approved one runs."""

    name = "approval"

    def __init__(self) -> None:
        self.calls: list[str] = []

    def configure(self, setup: Setup) -> Setup:
        def a_delete(path: str) -> str:
            """Delete a file."""
            self.calls.append(path)
            return f"deleted {path}"

        def a_keep(path: str) -> str:
            """Keep a file."""
            self.calls.append(path)
            return f"kept {path}"

        return setup.adding(
            scenes=[("ACTION: a_delete[x.txt]", "ACTION: a_keep[y.txt]")],
            tools=[tool(a_delete, risky=True), tool(a_keep, risky=True)],
            approvals={"a_delete": False, "a_keep": True},
        )

    def check(self, ran: Ran) -> None:
        assert self.calls == ["y.txt"], self.calls
        declined = ran.step_of("ACTION: a_delete[x.txt]")
        assert ran.result.steps[declined].observation == render("corrections/declined", tool="a_delete", input="x.txt")


class Window(Feature):
    """Every request fits the window the server has; older steps are elided to make room."""

    name = "context window and elision"
    WINDOW = 2600

    def configure(self, setup: Setup) -> Setup:
        def w_page(number: int) -> str:
            """Read one page of the manual."""
            return " ".join(f"page{number} word{i}" for i in range(260))

        scene = tuple(f"ACTION: w_page[{n}]" for n in range(1, 5))
        return setup.adding(scenes=[scene], tools=[tool(w_page, pure=True)], model={"context_window": self.WINDOW})

    def check(self, ran: Ran) -> None:
        model = ran.model
        for request in model.calls:  # as the server counts: none was refused
            assert model._prompt_tokens(request) + request.max_tokens <= self.WINDOW
        assert ran.result.stop_reason != "model_error", ran.result.error
        assert any(step.elided for step in ran.result.steps), "no step was elided"


class ForcedFinal(Feature):
    """A run ended by the step limit makes its forced final call, and its answer is the run's."""

    name = "the forced final call"
    ends = True

    def configure(self, setup: Setup) -> Setup:
        # The step limit is reached at the end of this scene: the scenes before it and these two steps.
        calls = sum(len(s) for s in setup.scenes) + 2
        scene = ("ACTION: f_wait[1]", "ACTION: f_wait[2]")

        def f_wait(seconds: int) -> str:
            """Wait a while."""
            return "waited"

        return setup.adding(scenes=[scene], tools=[tool(f_wait, pure=True)], limits={"steps": calls})

    def check(self, ran: Ran) -> None:
        result = ran.result
        assert (result.answer, result.forced) == ("forced", True), (result.stop_reason, result.error)
        assert result.stop_reason in ("max_steps", "max_tokens"), result.stop_reason


class Budget(Feature):
    """From the second request on, no run is billed past Limits(tokens=...); a budget end gets its forced call."""

    name = "token budget"
    ends = True
    TOKENS = 9000

    def configure(self, setup: Setup) -> Setup:
        def b_read(part: int) -> str:
            """Read one part of the log."""
            return " ".join(f"log{part} line{i}" for i in range(150))

        scene = tuple(f"ACTION: b_read[{n}]" for n in range(40))
        return setup.adding(
            scenes=[scene], tools=[tool(b_read, pure=True)], limits={"tokens": self.TOKENS, "steps": 100}
        )

    def check(self, ran: Ran) -> None:
        result = ran.result
        assert result.usage.total_tokens <= self.TOKENS, result.usage
        assert result.forced and result.answer == "forced", (result.stop_reason, result.error)
        assert result.stop_reason in ("max_tokens", "max_steps"), result.stop_reason


class Grammar(Feature):
    """With the grammar on, every request carries one; a keyword call in any order is admitted and binds;
    the forced call's grammar admits FINAL alone."""

    name = "grammar and typed inputs"

    def __init__(self) -> None:
        self.calls: list[tuple[int, int, str]] = []

    def configure(self, setup: Setup) -> Setup:
        def g_area(width: int, height: int = 1, unit: str = "m") -> str:
            """The area of a rectangle."""
            self.calls.append((width, height, unit))
            return f"{width * height} {unit}2"

        scene = ("THOUGHT: keywords.\nACTION: g_area[unit=cm, width=3]",)
        return setup.adding(
            scenes=[scene], tools=[tool(g_area)], prompting={"grammar": True}, model={"accepts_grammar": True}
        )

    def check(self, ran: Ran) -> None:
        assert self.calls == [(3, 1, "cm")], self.calls
        calls = ran.model.calls
        assert all(r.grammar for r in calls), "a request went without the grammar"
        own = ran.result.steps[ran.step_of("THOUGHT: keywords.")]
        sent = calls[own.number - 1].grammar  # one request a step (the window's promise: none refused)
        assert sent is not None and gbnf.admits(sent, own.reply), own.reply
        for request in calls:
            if "Reply now with" in str(request.prompt[-1]):
                assert request.grammar is not None
                assert not gbnf.admits(request.grammar, "THOUGHT: x\nACTION: g_area[1]")


class Reasoning(Feature):
    """A think block is kept on the step, never parsed as the protocol, and not sent back."""

    name = "reasoning output"
    THINKING = "the Observation: 12 I expect is a guess"

    def __init__(self) -> None:
        self.calls: list[str] = []

    def configure(self, setup: Setup) -> Setup:
        def t_check(claim: str) -> str:
            """Check a claim."""
            self.calls.append(claim)
            return "checked"

        scene = (f"<think>{self.THINKING}</think>\nTHOUGHT: check it.\nACTION: t_check[sky]",)
        return setup.adding(scenes=[scene], tools=[tool(t_check)])

    def check(self, ran: Ran) -> None:
        assert self.calls == ["sky"], self.calls
        step = ran.result.steps[ran.step_of("<think>")]
        assert step.reasoning == self.THINKING and step.observation == "checked", step
        later = ran.model.calls[step.number :]
        assert later and all(self.THINKING not in str(r.prompt) for r in later), "the thinking was sent back"


class Traces(Feature):
    """A trace replays (its replies played back) to the same steps and answer."""

    name = "traces and replay"
    replays = True

    def __init__(self) -> None:
        self.folder = tempfile.TemporaryDirectory()
        self.tracer = Tracer(Path(self.folder.name) / "run.jsonl")

    def configure(self, setup: Setup) -> Setup:
        def d_double(n: int) -> int:
            """Double a number."""
            return 2 * n

        return setup.adding(
            scenes=[("ACTION: d_double[21]",)], tools=[tool(d_double)], observers=[self.tracer.observer]
        )

    def check(self, ran: Ran) -> None:
        self.tracer.close()
        played = replies(self.tracer.path)
        assert len(played) == len(ran.model.calls), (len(played), len(ran.model.calls))
        again = ran.again(list(played))
        self.folder.cleanup()
        original = ran.result
        assert (again.answer, again.stop_reason, again.forced) == (
            original.answer,
            original.stop_reason,
            original.forced,
        )
        assert [(s.reply, s.observation) for s in again.steps] == [(s.reply, s.observation) for s in original.steps]


class Trajectories(Feature):
    """A model that keeps no token ids gets no trajectory: nothing is derived from text silently."""

    name = "trajectories"

    def check(self, ran: Ran) -> None:
        assert ran.result.trajectory is None


class Mcp(Feature):
    """An MCP server's tool runs in the run, its result the observation (one session for the block)."""

    name = "MCP tools"
    tools: ClassVar[tuple[Tool, ...]] = ()  # set by the matrix's fixture, which holds the session open

    def configure(self, setup: Setup) -> Setup:
        if not self.tools:
            raise RuntimeError("the MCP tools are opened by tests/test_pairs.py's fixture")
        return setup.adding(scenes=[("ACTION: get-weather[Oslo]",)], tools=self.tools)

    def check(self, ran: Ran) -> None:
        step = ran.result.steps[ran.step_of("ACTION: get-weather[Oslo]")]
        assert step.observation == "Sunny in Oslo, 21 C", step.observation


class Telemetry(Feature):
    """Spans nest run > calls, the run's span carries the run's stop reason."""

    name = "telemetry"

    def configure(self, setup: Setup) -> Setup:
        from otel_support import install

        self.exporter = install()
        self.exporter.clear()
        return setup

    def check(self, ran: Ran) -> None:
        spans = self.exporter.get_finished_spans()
        runs = [s for s in spans if s.parent is None]
        assert len(runs) == 1, [s.name for s in runs]
        run = runs[0]
        assert run.attributes is not None and run.attributes.get("react_text.stop_reason") == ran.result.stop_reason
        children = [s for s in spans if s.parent is not None]
        assert len([s for s in children if s.parent.span_id == run.context.span_id]) >= len(ran.result.steps)
        assert all(s.context.trace_id == run.context.trace_id for s in children)


def approver(decisions: dict[str, bool]) -> Callable[[Tool, Action], bool]:
    return lambda t, action: decisions.get(t.name, False)


def build(setup: Setup, replies_: list[str | Reply | Exception] | None = None) -> tuple[Agent, Player]:
    model = Player(replies_ if replies_ is not None else setup.replies(), **setup.model)
    agent = Agent(
        model,
        tools=setup.tools,
        limits=Limits(**{"steps": 100, **setup.limits}),
        prompting=Prompting(**setup.prompting),
        approve=approver(setup.approvals) if setup.approvals else None,
    )
    return agent, model


class Streaming(Feature):
    """A streamed run is the run (docs/how-to/stream.md): its events end with one RunEnd, after the
    steps the result holds; each step's text deltas join to the start of its reply, read whole
    (nothing the guard cuts); a made-up observation, split over deltas, is never streamed."""

    name = "streaming"

    def __init__(self) -> None:
        self.events: list[Any] = []

    def configure(self, setup: Setup) -> Setup:
        def st_echo(text: str) -> str:
            """Echo the text."""
            return f"said {text}"

        added = setup.adding(
            scenes=[("THOUGHT: stream it.\nACTION: st_echo[hi]\nOBSERVATION: made up by the model",)],
            tools=[tool(st_echo)],
            model={"chunks": 3},
        )
        return dataclasses.replace(added, streamed=(*added.streamed, self.events))

    def check(self, ran: Ran) -> None:
        from react_text.core.streaming import ActionReady, Revision, RunEnd, StepEnd, TextDelta

        ends = [e for e in self.events if isinstance(e, RunEnd)]
        assert len(ends) == 1 and self.events[-1] is ends[0]
        assert [e.step for e in self.events if isinstance(e, StepEnd)] == list(ran.result.steps)
        assert "made up by the model" not in "".join(e.text for e in self.events if isinstance(e, TextDelta))
        step = ran.result.steps[ran.step_of("THOUGHT: stream it.")]
        assert step.observation == "said hi"
        deltas: list[Any] = []
        for event in self.events:
            if isinstance(event, Revision) and event.step == step.number:
                deltas = list(event.deltas)
            elif isinstance(event, TextDelta) and event.step == step.number:
                deltas.append(event)
        shown = "".join(d.text for d in deltas if d.kind != "thinking")
        assert step.reply.startswith(shown) and "ACTION: st_echo[hi]" in shown and "OBSERVATION" not in shown
        ready = [e.action for e in self.events if isinstance(e, ActionReady) and e.step == step.number]
        assert [(a.tool, a.input) for a in ready] == [("st_echo", "hi")]


# One line a feature: a new one gets its pairs.
FEATURES: tuple[type[Feature], ...] = (
    Parallel,
    PureRepeats,
    SideEffects,
    Approval,
    Window,
    ForcedFinal,
    Budget,
    Grammar,
    Reasoning,
    Traces,
    Trajectories,
    Mcp,
    Telemetry,
    Streaming,
    # Eval,       # eval --n/--resume/--trace/--script: episodes are made by evaluation.Options (no approver, no
    #             # observer), so a pair runs as a run here; tests/test_promises_eval.py and test_trajectory_groups.py
    # Ray,        # the Ray path starts a cluster (~10 s): tests/test_cluster.py; not in a 60 s matrix
)
