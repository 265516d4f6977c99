"""Episodes at scale: a file of tasks run against models, each outcome handed over as it ends.

    tasks = load("bench/tasks/suite.jsonl")
    async for outcome in aevaluate(tasks, [server_a, server_b], root=docs, concurrency=8): ...
    outcomes = evaluate(tasks, model, root=docs)            # the same, from sync code, in task order

Episodes run as asyncio tasks over the models' async calls (`agenerate`; a model without one has
its `generate` run on a thread), at most `concurrency` at once, and each outcome is handed over as
soon as its episode ends, so a caller can write it down at once and a crash loses nothing done.
What a task file holds and how an answer is scored is `tasks`; what an episode came to, and the
results file, is `results`.

`models` is one model, or one per server: an episode starts on the server with the fewest episodes
in flight and stays there, so the server's prefix cache keeps hitting for the rest of it. Or it is
a function that gives each task a model of its own (a script per task): then what a task gets
never depends on which episode asked first, whatever the concurrency.
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from react_text.core.agent import Agent, AsyncRun, Parser
from react_text.core.errors import safe_url
from react_text.core.limits import Limits
from react_text.core.model_info import describe as describe_model
from react_text.core.sampling import check_seed
from react_text.core.types import Model, RunResult
from react_text.evaluation.results import TaskResult
from react_text.evaluation.tasks import Task, correct, toolset
from react_text.observers.observing import Observer
from react_text.parser import parse
from react_text.prompting import Prompting
from react_text.tools.tool import Tool

__all__ = [
    "ModelFor",
    "Options",
    "aevaluate",
    "evaluate",
]

ModelFor = Callable[[Task], Model]
Reward = Callable[[Task, RunResult], float]


@dataclass(frozen=True, slots=True)
class Options:
    """How every episode of an eval runs, one value for `aevaluate` and `cluster.aevaluate`.

    `root`: the folder the file tools read. `limits`, `prompting`, `parser`: the agent's (None: as
    the model recommends). `traces`: a folder to write one trace per episode (`trace_name(id)`, as
    `react-text run --trace` writes it; `id#k` for sample k of a group). `tools`: more tools for
    every task (a module's functions, an MCP server's tools), besides the built-in ones its line
    names. `trajectories`: a file to append one JSON line per episode to, its token ids, masks and
    log-probabilities (`trajectory_line`), with `reward(task, result)` (default: 1.0 when the
    scorer says the answer is right, else 0.0).

    `modules`, `mcp`: where `tools` came from, the modules and the MCP servers as the command line
    named them (`eval --tools`, `--mcp`), recorded in each trace's `run_start` as `run --trace` records
    them, so that `eval --script DIR` finds the same tools again.

    `n`: episodes per task (a GRPO group), the task's sample k sent seed `seed + k` on every model
    call (`seed` defaults to 0 when n > 1; with n == 1 and no seed, the model's own). Distinct seeds
    give distinct episodes only above temperature 0.
    """

    root: Path
    limits: Limits | None = None
    prompting: Prompting | None = None
    parser: Parser = parse
    traces: Path | None = None
    tools: tuple[Tool, ...] = ()
    trajectories: Path | None = None
    reward: Reward | None = None
    n: int = 1
    seed: int | None = None
    modules: tuple[str, ...] = ()  # where `tools` came from, for the traces: eval --tools
    mcp: tuple[str, ...] = ()  # and eval --mcp
    states: Path | None = None  # a SQLite file keeping each episode's state (eval --state): resumed mid-episode

    def __post_init__(self) -> None:
        if isinstance(self.n, bool) or not isinstance(self.n, int) or self.n < 1:
            raise ValueError(f"n must be a whole number of episodes per task, at least 1, not {self.n!r}")
        if self.seed is not None and (isinstance(self.seed, bool) or not isinstance(self.seed, int)):
            raise ValueError(f"seed must be a whole number, not {self.seed!r}")
        if self.seed is not None:  # every episode's seed, seed + k, in the range
            check_seed(self.seed, "seed")
            check_seed(self.seed + self.n - 1, f"seed + n - 1 (the group's last seed, {self.seed} + {self.n - 1})")
        for name in ("tools", "modules", "mcp"):
            object.__setattr__(self, name, tuple(getattr(self, name)))  # a list given stays the caller's

    @classmethod
    def given(cls, options: Options | None, keywords: dict[str, Any]) -> Options:
        """The options value, or one made from keyword arguments (`root=...`, `n=...`): not both."""
        if options is None:
            return cls(**keywords)
        if keywords:
            raise TypeError(f"give options or keyword options, not both (got {', '.join(keywords)})")
        return options

    def samples(self, tasks: Iterable[Task], done: Iterable[TaskResult] = ()) -> list[_Sample]:
        """Every episode to run: n a task, each with its seed, less the (id, sample) pairs done."""
        base = 0 if self.seed is None and self.n > 1 else self.seed
        had = {(o.id, o.sample) for o in done}
        return [
            _Sample(task, k, None if base is None else base + k, self.n > 1)
            for task in tasks
            for k in range(self.n)
            if (task.id, k) not in had
        ]


async def aevaluate(
    tasks: Iterable[Task],
    models: Model | Sequence[Model] | ModelFor,
    options: Options | None = None,
    *,
    concurrency: int = 1,
    done: Iterable[TaskResult] = (),
    **keywords: Any,
) -> AsyncIterator[TaskResult]:
    """Run every task, at most `concurrency` at once; yield each outcome as its episode ends.

    How each episode runs is `options` (an `Options`), or its fields as keywords: `root=docs`,
    `n=4`, `trajectories=...` (see `Options`). `done`: outcomes already had (a results file read
    by `resume`): their (id, sample) episodes are not run again.
    """
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, not {concurrency}")
    settings = Options.given(options, keywords)
    runs = settings.samples(tasks, done)
    servers: Sequence[Model] = ()
    if not callable(models):
        servers = [models] if hasattr(models, "generate") else models  # type: ignore[list-item]
    busy = [0] * len(servers)
    gate = asyncio.Semaphore(concurrency)

    async def episode(sample: _Sample) -> TaskResult:
        async with gate:
            if servers:
                which = min(range(len(servers)), key=busy.__getitem__)  # the least busy: spread, then stick
                model = servers[which]
                busy[which] += 1
            else:
                model = model_for(models, sample)  # type: ignore[arg-type]
            try:
                outcome, _, line = await run_sample(sample, model, settings, settings.traces)
                if line is not None and settings.trajectories is not None:
                    with open(settings.trajectories, "a", encoding="utf-8") as out:
                        out.write(json.dumps(line) + "\n")
                return outcome
            finally:
                if servers:
                    busy[which] -= 1

    pending = [asyncio.ensure_future(episode(sample)) for sample in runs]
    try:
        for next_done in asyncio.as_completed(pending):
            yield await next_done
    finally:
        for running in pending:
            running.cancel()
        await asyncio.gather(*pending, return_exceptions=True)


@dataclass(frozen=True, slots=True)
class _Sample:
    """One episode to run: the task, which of its n it is, its seed, and whether it has siblings."""

    task: Task
    k: int
    seed: int | None
    grouped: bool

    @property
    def run_id(self) -> str:
        """Its run's id in a store of states (eval --state): the task's id, and `#k`."""
        return f"{self.task.id}#{self.k}"

    @property
    def trace_name(self) -> str:
        """Its trace's file name in a traces folder: the task's id, and `#k` in a group."""
        from react_text.evaluation.scripts import trace_name

        return trace_name(f"{self.task.id}#{self.k}" if self.grouped else self.task.id)


def model_for(models: ModelFor, sample: _Sample) -> Model:
    """The model of one episode: `models(task)`, or `models.for_sample(task, k)` where the callable
    tells a group's samples apart (`scripts.Played`: eval --script DIR --n K plays each sample's
    own trace)."""
    each = getattr(models, "for_sample", None)
    return each(sample.task, sample.k) if callable(each) else models(sample.task)


async def run_sample(
    sample: _Sample, model: Model, options: Options, traces: Path | None
) -> tuple[TaskResult, RunResult, dict[str, Any] | None]:
    """One episode, as `aevaluate` and a Ray worker run it: its outcome, its result, and its
    trajectory line when `options.trajectories` asks for them. Its trace goes to `traces/`
    (`sample.trace_name`), when given: the caller's folder, or a worker's own to send back."""
    task = sample.task
    chosen = toolset(task.tools, options.root, options.tools)
    agent = Agent(model, tools=chosen, limits=options.limits, prompting=options.prompting, parser=options.parser)
    started = time.perf_counter()
    if traces is None:
        run = _begun(agent, sample, options, None)
        async for _ in run:
            pass
        result = run.result
    else:
        result = await _traced(agent, sample, options, traces / sample.trace_name)
    outcome = _outcome(task, result, time.perf_counter() - started, _server(model))
    outcome = replace(outcome, sample=sample.k, seed=sample.seed)
    if options.trajectories is None:
        return outcome, result, None
    score = reward_of(options.reward, task, result, outcome.ok)
    return outcome, result, trajectory_line(task, result, score, sample=sample.k, seed=sample.seed)


def reward_of(reward: Reward | None, task: Task, result: RunResult, ok: bool) -> float:
    """`reward(task, result)` as a float (1.0 or 0.0 by the scorer without one): a reward that is
    not a finite number (NaN, an infinity, None, a string) is refused, naming the task, and so is
    one that raises (the note names it), before its line is written: a trainer reads no bad line."""
    if reward is None:
        return float(ok)
    try:
        value = reward(task, result)
    except Exception as exc:  # the user's reward: say which task it failed on, then let it go on up
        exc.add_note(f"in reward= for task {task.id!r}")
        raise
    if not isinstance(value, int | float):
        raise TypeError(f"reward= gave {value!r} for task {task.id!r}: a reward is a number")
    if not math.isfinite(value):
        raise ValueError(f"reward= gave {value!r} for task {task.id!r}: a reward is a finite number")
    return float(value)


def trajectory_line(
    task: Task, result: RunResult, reward: float, *, sample: int = 0, seed: int | None = None
) -> dict[str, Any]:
    """One episode for a trainer: its task (the group, for group-relative advantages), which
    sample of the group and its seed, its reward, how it stopped, and its token ids (None without
    them)."""
    from react_text.observers.trajectory import as_record

    line: dict[str, Any] = {
        "id": task.id,
        "sample": sample,
        "seed": seed,
        "reward": reward,
        "stop_reason": result.stop_reason,
        "answer": result.answer,
    }
    if result.trajectory is None:
        return line | {"exact": False, "reason": "the model gives no token ids", "segments": None}
    return line | as_record(result.trajectory)


async def _traced(agent: Agent, sample: _Sample, options: Options, path: Path) -> RunResult:
    from react_text.evaluation.config import describe
    from react_text.observers.trace import Tracer, window

    task = sample.task
    with Tracer(path) as tracer:
        sources = describe(agent, root=str(options.root), modules=options.modules, mcp=options.mcp)
        which = {"sample": sample.k} if sample.grouped else {}  # so eval --script DIR --n finds it again
        tracer.start(task.task, {**sources, "task_id": task.id, **which})
        run = _begun(agent, sample, options, tracer.observer)
        async for step in run:
            tracer.step(step)
        tracer.end(run.result, context_window=window(agent.limits, agent.model))
        return run.result


def _begun(agent: Agent, sample: _Sample, options: Options, observer: Observer | None) -> AsyncRun:
    """The episode's run: with `options.states`, kept in that SQLite file under `sample.run_id`,
    and resumed where it was when the file holds it (an eval stopped mid-episode)."""
    if options.states is None:
        return agent.aiter_steps(sample.task.task, observer=observer, seed=sample.seed)
    from react_text.durable import SQLiteStore

    store = SQLiteStore(options.states)
    if sample.run_id in store.runs():
        return agent.aiter_resume(store, run_id=sample.run_id, observer=observer)
    return agent.aiter_steps(sample.task.task, observer=observer, seed=sample.seed, state=store, run_id=sample.run_id)


def evaluate(
    tasks: Sequence[Task], models: Model | Sequence[Model] | ModelFor, options: Options | None = None, **keywords: Any
) -> list[TaskResult]:
    """`aevaluate` from sync code: every outcome, in task order."""

    async def collect() -> list[TaskResult]:
        return [outcome async for outcome in aevaluate(tasks, models, options, **keywords)]

    order = {task.id: number for number, task in enumerate(tasks)}
    return sorted(asyncio.run(collect()), key=lambda o: (order[o.id], o.sample))


def _server(model: Model) -> str | None:
    url = describe_model(model).url
    return safe_url(url).rstrip("/") if url else None


def _outcome(task: Task, result: RunResult, seconds: float, server: str | None) -> TaskResult:
    return TaskResult(
        id=task.id,
        ok=correct(result.answer, task.answer),
        answer=result.answer,
        expected=task.answer,
        stop_reason=result.stop_reason,
        steps=len(result.steps),
        tool_calls=result.tool_calls,
        tokens=result.usage.total_tokens,
        seconds=round(seconds, 3),
        error=result.error,
        server=server,
    )
