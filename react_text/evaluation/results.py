"""Results: what each episode of `react-text eval` came to, a line of a results file, and the table.

    for outcome in finished("results.jsonl"): ...   # what a results file holds, one per episode
    done = resume("results.jsonl")                  # what stands, the file made ready to append to
    print(table(outcomes))

A results file is JSON Lines, one `TaskResult` a line, written as each episode ends. `resume` reads
it after a crash and cuts off a last line the crash cut short; an episode that ended in
`model_error` (the server or the network failed) is not a result, and is run again.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from react_text.core.errors import ConfigError
from react_text.observers.written import json_text

__all__ = [
    "TaskResult",
    "as_json",
    "finished",
    "label",
    "resume",
    "said",
    "stands",
    "summary",
    "table",
]


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


def finished(path: str | Path) -> list[TaskResult]:
    """The outcomes already written to a results file, one per episode (a task's sample written
    twice, by two appends, is its last line; a last line cut short by a crash is skipped)."""
    return _results(path)[0]


def resume(path: str | Path) -> list[TaskResult]:
    """The outcomes of a results file that stand (`stands`), with the file made ready to append to:
    a last line cut short by a crash is cut off (its task runs again), and a whole last line that
    lost its newline gets it back. An episode that ended in model_error is left out, to run again:
    its line stays, and the new one written after it is the one `finished` reads."""
    outcomes, whole, size = _results(path)
    outcomes = [o for o in outcomes if stands(o)]
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


def stands(outcome: TaskResult) -> bool:
    """Whether an episode's outcome is a result: not when it ended in model_error (the server or
    the network failed, or the prompt did not fit its window: what it says is the infrastructure's,
    not the model's), which `resume` runs again."""
    return outcome.stop_reason != "model_error"


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


def table(outcomes: Sequence[TaskResult]) -> str:
    """A plain-text results table with a summary line."""
    lines = [f"{'task':<10} {'ok':<3} {'steps':>5} {'tools':>5} {'tokens':>7} {'time':>7}  stop / answer"]
    for o in outcomes:
        lines.append(
            f"{label(o):<10} {'✓' if o.ok else '✗':<3} {o.steps:>5} {o.tool_calls:>5} {o.tokens:>7} "
            f"{o.seconds:>6.2f}s  {o.stop_reason}: {said(o)}"
        )
    lines.append(summary(outcomes))
    return "\n".join(lines)


def label(outcome: TaskResult) -> str:
    """The episode's name in a table or a progress line: its task's id, and `#k` for sample k of a
    group (an episode with a seed: `eval --n`, or `--seed`)."""
    return outcome.id if outcome.seed is None else f"{outcome.id}#{outcome.sample}"


def said(outcome: TaskResult) -> str:
    """What an episode came to, on one line: its answer (its first 40 characters), else why it
    stopped without one (the error, whole: it is the reason to read)."""
    if outcome.answer is not None:
        return outcome.answer.replace("\n", " ")[:40]
    return " ".join((outcome.error or "").split())


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
