"""Run a file of tasks against a model and score the answers: the task suite and `react-text eval`.

A task file is JSON Lines: {"id": ..., "task": ..., "answer": ..., "tools": ["calculator", ...]}.
An answer is right when its first or last number equals a numeric expected answer, or when it
contains a textual expected answer (case-insensitive). Runs against a server go in parallel
(threads sharing one thread-safe client); runs of an in-process model go one at a time.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path

import regex

from .limits import Limits, Prompting
from .loop import Agent, Parser
from .parser import parse
from .toolbox import Files, calculator
from .tools import Tool
from .types import Model, RunResult

_NUMBER = regex.compile(r"-?\d[\d,]*(?:\.\d+)?")


@dataclass(frozen=True, slots=True)
class Task:
    id: str
    task: str
    answer: str
    tools: tuple[str, ...] = ("calculator",)


@dataclass(frozen=True, slots=True)
class Outcome:
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


def load(path: str | Path) -> list[Task]:
    tasks = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
            tasks.append(Task(str(row["id"]), row["task"], str(row["answer"]), tuple(row.get("tools", ["calculator"]))))
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{path}:{number}: not a task ({exc})") from exc
    return tasks


def correct(answer: str | None, expected: str) -> bool:
    if answer is None:
        return False
    if _NUMBER.fullmatch(expected.strip()):
        want = float(expected.replace(",", ""))
        numbers = [float(n.replace(",", "")) for n in _NUMBER.findall(answer)]
        return bool(numbers) and any(abs(n - want) < 1e-6 * max(1.0, abs(want)) for n in (numbers[0], numbers[-1]))
    return expected.casefold() in answer.casefold()


def toolset(names: Sequence[str], root: Path) -> list[Tool]:
    files = {t.name: t for t in Files(root).tools()}
    available = {"calculator": calculator, **files}
    unknown = [n for n in names if n not in available]
    if unknown:
        raise ValueError(f"unknown tools in the task file: {', '.join(unknown)} (have {', '.join(available)})")
    chosen = [available[n] for n in names]
    if "search" in names and "read" not in names:
        chosen.append(files["read"])
    return chosen


def evaluate(
    tasks: Sequence[Task],
    model: Model,
    *,
    root: Path,
    concurrency: int = 1,
    limits: Limits | None = None,
    prompting: Prompting | None = None,
    parser: Parser = parse,
) -> Iterator[Outcome]:
    """Run every task; yield the outcomes in task order. `root` is the folder the file tools read."""

    def one(task: Task) -> Outcome:
        agent = Agent(model, tools=toolset(task.tools, root), limits=limits, prompting=prompting, parser=parser)
        started = time.perf_counter()
        result = agent.run(task.task)
        return _outcome(task, result, time.perf_counter() - started)

    if concurrency <= 1:
        yield from map(one, tasks)
        return
    with ThreadPoolExecutor(concurrency) as pool:
        yield from pool.map(one, tasks)


def _outcome(task: Task, result: RunResult, seconds: float) -> Outcome:
    return Outcome(
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
    )


def table(outcomes: Sequence[Outcome]) -> str:
    """A plain-text results table with a summary line."""
    lines = [f"{'task':<10} {'ok':<3} {'steps':>5} {'tools':>5} {'tokens':>7} {'time':>7}  stop / answer"]
    for o in outcomes:
        answer = (o.answer or "").replace("\n", " ")[:40]
        lines.append(
            f"{o.id:<10} {'✓' if o.ok else '✗':<3} {o.steps:>5} {o.tool_calls:>5} {o.tokens:>7} "
            f"{o.seconds:>6.2f}s  {o.stop_reason}: {answer}"
        )
    lines.append(summary(outcomes))
    return "\n".join(lines)


def summary(outcomes: Sequence[Outcome]) -> str:
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


def as_json(outcome: Outcome) -> str:
    return json.dumps(asdict(outcome), ensure_ascii=False)
