"""Run a file of tasks against a model and score the answers: the task suite and `react-text eval`.

    tasks = load("bench/tasks/suite.jsonl")
    async for outcome in aevaluate(tasks, [server_a, server_b], root=docs, concurrency=8): ...
    outcomes = evaluate(tasks, model, root=docs)            # the same, from sync code, in task order

A task file is JSON Lines: {"id": ..., "task": ..., "answer": ..., "tools": ["calculator", ...]}: an
id (text, or a whole number), a task (text), the expected answer (text or a number) and, if not
only the calculator, the built-in tools it may use; `load` checks every field, and names the line
and the field that is wrong. A results file is JSON Lines too, one `TaskResult` a line; `resume`
reads it after a crash and cuts off a last line the crash cut short.
Episodes run as asyncio tasks over the models' async calls (`agenerate`; a model without one has
its `generate` run on a thread), at most `concurrency` at once, and each outcome is handed over as
soon as its episode ends, so a caller can write it down at once and a crash loses nothing done.

`models` is one model, or one per server: an episode starts on the server with the fewest episodes
in flight and stays there, so the server's prefix cache keeps hitting for the rest of it. Or it is
a function that gives each task a model of its own (a script per task): then what a task gets
never depends on which episode asked first, whatever the concurrency.

Scoring (`correct`): a textual answer is right when it contains the expected text (case-insensitive).
A numeric one is right when the expected value is the answer's only number, or its final (or first)
number with the rest of the numbers an arithmetic working that comes to it (`17 * 3 = 51`,
`234 (89 + 145)`); any other number in the answer makes it wrong (`10: 2: 2: 2` is not a 2).
"""

from __future__ import annotations

import asyncio
import json
import math
import time
import warnings
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import regex

from react_text.core.agent import Agent, Parser
from react_text.core.errors import ConfigError, safe_url
from react_text.core.limits import Limits
from react_text.core.model_info import describe as describe_model
from react_text.core.sampling import check_seed
from react_text.core.types import Model, RunResult
from react_text.observers.written import json_text
from react_text.parser import parse
from react_text.prompting import Prompting
from react_text.tools.tool import Tool
from react_text.tools.toolbox import CalculatorError, calculate, default_tools

__all__ = [
    "ModelFor",
    "Options",
    "Task",
    "TaskResult",
    "aevaluate",
    "as_json",
    "correct",
    "evaluate",
    "finished",
    "load",
    "resume",
    "summary",
    "table",
    "toolset",
]

_NUMBER = regex.compile(r"-?\d[\d,]*(?:\.\d+)?")
ModelFor = Callable[["Task"], Model]
Reward = Callable[["Task", RunResult], float]


@dataclass(frozen=True, slots=True)
class Task:
    id: str
    task: str
    answer: str
    tools: tuple[str, ...] = ("calculator",)


@dataclass(frozen=True, slots=True)
class TaskResult:
    """What one task's episode came to, as a results line holds it (0.2's `Outcome`, a name that now warns)."""

    id: str
    ok: bool
    answer: str | None
    expected: str
    stop_reason: str
    steps: int
    tool_calls: int
    tokens: int
    seconds: float
    error: str | None = None
    server: str | None = None  # the server the episode ran on (its URL), when it ran on one
    sample: int = 0  # which of the task's `n` episodes this is
    seed: int | None = None  # the seed its model calls were sent (None: the model's own)


def load(path: str | Path) -> list[Task]:
    """The tasks of a task file; ConfigError naming the line and the field when one is not a task."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such task file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read the task file {path}: {exc}") from exc
    tasks: list[Task] = []
    seen: set[str] = set()
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            task = _task(line)
        except ValueError as exc:
            raise ConfigError(f"{path}:{number}: not a task ({exc}); {_TASK_LINE}") from None
        if task.id in seen:
            raise ConfigError(f"{path}:{number}: the id {task.id!r} is used twice (ids name results)")
        seen.add(task.id)
        tasks.append(task)
    return tasks


_TASK_LINE = 'a line is {"id": ..., "task": ..., "answer": ..., "tools": [...]} (tools may be left out)'
_TASK_KEYS = ("id", "task", "answer", "tools")


def _task(line: str) -> Task:
    """One task line, every field checked: ValueError saying which field is wrong and how."""
    try:
        row = json.loads(line)
    except ValueError:
        raise ValueError("not JSON") from None
    if not isinstance(row, dict):
        raise ValueError(f"a JSON object is needed, not {_kind(row)}")
    unknown = [k for k in row if k not in _TASK_KEYS]
    if unknown:
        raise ValueError(f"unknown field {unknown[0]!r}")
    for key in ("id", "task", "answer"):
        if key not in row:
            raise ValueError(f"missing {key!r}")
    id_, task, answer, tools = row["id"], row["task"], row["answer"], row.get("tools", ["calculator"])
    if isinstance(id_, int) and not isinstance(id_, bool):
        id_ = str(id_)
    if not (isinstance(id_, str) and id_.strip()):
        raise ValueError(f"id must be a non-empty text (or a whole number), not {_kind(id_)}")
    if not (isinstance(task, str) and task.strip()):
        raise ValueError(f"task must be a non-empty text, not {_kind(task)}")
    if isinstance(answer, float) and not math.isfinite(answer):  # NaN, Infinity: json reads them, nothing equals them
        raise ValueError(f"answer must be a finite number, not {answer!r}")
    if isinstance(answer, int | float) and not isinstance(answer, bool):
        answer = str(answer)
    if not (isinstance(answer, str) and answer.strip()):
        raise ValueError(f"answer must be a non-empty text or a number, not {_kind(answer)}")
    if not (isinstance(tools, list) and all(isinstance(n, str) and n for n in tools)):
        raise ValueError(f"tools must be a list of tool names, not {_kind(tools)}")
    for key, text in (("id", id_), ("task", task), ("answer", answer), *(("tools", n) for n in tools)):
        if not _unicode(text):  # a JSON escape like "\ud800": no file name, results line or trace holds it
            raise ValueError(f"{key} must be Unicode text, not {text[:40]!r} (it holds a lone surrogate)")
    return Task(id_, task, answer, tuple(tools))


def _unicode(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, str):
        return "an empty text" if not value.strip() else f"the text {value[:40]!r}"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return f"the {type(value).__name__} {value!r}"


def finished(path: str | Path) -> list[TaskResult]:
    """The outcomes already written to a results file, one per episode (a task's sample written
    twice, by two appends, is its last line; a last line cut short by a crash is skipped)."""
    return _results(path)[0]


def resume(path: str | Path) -> list[TaskResult]:
    """`finished`, with the file made ready to append to: a last line cut short by a crash is cut
    off (its task runs again), and a whole last line that lost its newline gets it back."""
    outcomes, whole, size = _results(path)
    if not size:
        return outcomes
    try:
        with Path(path).open("r+b") as file:
            if whole < size:
                file.truncate(whole)
            if whole:
                file.seek(whole - 1)
                if file.read(1) != b"\n":
                    file.write(b"\n")
    except OSError as exc:
        raise ConfigError(f"cannot mend the results file {path}: {exc.strerror}") from exc
    return outcomes


def _results(path: str | Path) -> tuple[list[TaskResult], int, int]:
    """The outcomes of a results file, the length in bytes of its whole lines (what to keep), and
    its length. A last line without its newline is whole only if it is a whole result."""
    try:
        data = Path(path).read_bytes()
    except FileNotFoundError:
        return [], 0, 0
    except OSError as exc:
        raise ConfigError(f"cannot read the results file {path}: {exc.strerror}") from exc
    lines = data.split(b"\n")
    tail = lines.pop()  # b"" when the file ends with a newline
    outcomes = []
    for number, line in enumerate(lines, 1):
        if line.strip():
            outcome = _outcome_line(line)
            if isinstance(outcome, str):
                raise ConfigError(f"{path}:{number}: not a result line of react-text eval ({outcome})")
            outcomes.append(outcome)
    whole = len(data) - len(tail)
    if tail.strip():
        last = _outcome_line(tail)
        if isinstance(last, TaskResult):  # whole, though its newline never came
            outcomes.append(last)
            whole = len(data)
    once = {(o.id, o.sample): o for o in outcomes}  # an episode written twice (two appends) counts once: the last
    return list(once.values()), whole, len(data)


def _outcome_line(line: bytes) -> TaskResult | str:
    try:
        row = json.loads(line.decode("utf-8"))
        if not isinstance(row, dict):
            return "not a JSON object"
        return TaskResult(**row)
    except (ValueError, TypeError) as exc:  # UnicodeDecodeError is a ValueError
        return str(exc)


def correct(answer: str | None, expected: str) -> bool:
    """Whether `answer` gives `expected` (see the module's docstring for the rule)."""
    if answer is None:
        return False
    if not _NUMBER.fullmatch(expected.strip()):
        return expected.strip().casefold() in answer.casefold()
    want = _value(expected.strip())
    found = list(_NUMBER.finditer(answer))
    if len(found) == 1:
        return _same(_value(found[0].group()), want)
    if len(found) > 1 and _same(_value(found[-1].group()), want):
        start, end = _span(answer, found[0].start(), found[-2].end())
        if answer[end : found[-1].start()].strip() == "=" and _comes_to(answer[start:end], want):
            return True
    if len(found) > 1 and _same(_value(found[0].group()), want):
        start, end = _span(answer, found[1].start(), found[-1].end())
        if answer[found[0].end() : start].strip() in ("", "=") and _comes_to(answer[start:end], want):
            return True
    return False


def _value(number: str) -> float:
    return float(number.replace(",", ""))


def _same(a: float, b: float) -> bool:
    return abs(a - b) < 1e-6 * max(1.0, abs(b))


def _span(text: str, start: int, end: int) -> tuple[int, int]:
    """The span widened over the brackets around it."""
    while start > 0 and text[start - 1] in " (":
        start -= 1
    while end < len(text) and text[end] in " )":
        end += 1
    return start, end


def _comes_to(working: str, want: float) -> bool:
    try:
        return _same(float(calculate(working)), want)
    except (CalculatorError, ValueError):
        return False


def toolset(names: Sequence[str], root: Path, extra: Sequence[Tool] = ()) -> list[Tool]:
    """The tools of a task: the built-in ones its line names, and every one of `extra` (which its
    line may name too)."""
    built_in = {t.name: t for t in default_tools(root)}  # every built-in tool, as `react-text run` has
    clash = sorted(t.name for t in extra if t.name in built_in)
    if clash:
        raise ConfigError(f"a tool of --tools or --mcp has a built-in tool's name: {', '.join(clash)}; rename it")
    available = {**built_in, **{t.name: t for t in extra}}
    unknown = [n for n in names if n not in available]
    if unknown:
        raise ConfigError(f"unknown tools in the task file: {', '.join(unknown)} (have {', '.join(available)})")
    chosen = [available[n] for n in dict.fromkeys(names)]
    if "search" in names and "read" not in names:
        chosen.append(built_in["read"])
    return chosen + [t for t in extra if t.name not in names]


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
                model = models(sample.task)  # type: ignore[operator]
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
    def trace_name(self) -> str:
        """Its trace's file name in a traces folder: the task's id, and `#k` in a group."""
        from react_text.evaluation.scripts import trace_name

        return trace_name(f"{self.task.id}#{self.k}" if self.grouped else self.task.id)


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
        result = await agent.arun(task.task, seed=sample.seed)
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
        tracer.start(task.task, {**sources, "task_id": task.id})
        run = agent.aiter_steps(task.task, observer=tracer.observer, seed=sample.seed)
        async for step in run:
            tracer.step(step)
        tracer.end(run.result, context_window=window(agent.limits, agent.model))
        return run.result


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


def table(outcomes: Sequence[TaskResult]) -> str:
    """A plain-text results table with a summary line."""
    lines = [f"{'task':<10} {'ok':<3} {'steps':>5} {'tools':>5} {'tokens':>7} {'time':>7}  stop / answer"]
    for o in outcomes:
        answer = (o.answer or "").replace("\n", " ")[:40]
        label = o.id if o.seed is None else f"{o.id}#{o.sample}"
        lines.append(
            f"{label:<10} {'✓' if o.ok else '✗':<3} {o.steps:>5} {o.tool_calls:>5} {o.tokens:>7} "
            f"{o.seconds:>6.2f}s  {o.stop_reason}: {answer}"
        )
    lines.append(summary(outcomes))
    return "\n".join(lines)


def summary(outcomes: Sequence[TaskResult]) -> str:
    n = len(outcomes) or 1
    right = sum(o.ok for o in outcomes)
    reasons: dict[str, int] = {}
    for o in outcomes:
        reasons[o.stop_reason] = reasons.get(o.stop_reason, 0) + 1
    stops = ", ".join(f"{k} {v}" for k, v in sorted(reasons.items()))
    steps = sum(o.steps for o in outcomes) / n
    tokens = sum(o.tokens for o in outcomes) / n
    seconds = sum(o.seconds for o in outcomes) / n
    return (
        f"{right}/{len(outcomes)} right ({100 * right / n:.0f}%) · mean {steps:.1f} steps, "
        f"{tokens:.0f} tokens, {seconds:.2f}s a task · {stops}"
    )


def as_json(outcome: TaskResult) -> str:
    return json_text(asdict(outcome))  # lone surrogates escaped: see written.py


def __getattr__(name: str) -> object:
    if name == "Outcome":  # 0.2's name; types.Outcome is what running a tool came to
        warnings.warn("react_text.evaluation.episodes.Outcome is now TaskResult", DeprecationWarning, stacklevel=2)
        return TaskResult
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
