"""Task files and scoring: what `react-text eval` runs, and whether an answer is right.

    tasks = load("bench/tasks/suite.jsonl")
    correct("17 * 3 = 51", "51")                    # True
    toolset(task.tools, root)                       # the tools a task's line names

A task file is JSON Lines: {"id": ..., "task": ..., "answer": ..., "tools": ["calculator", ...]}: an
id (text, or a whole number), a task (text), the expected answer (text or a number) and, if not
only the calculator, the built-in tools it may use; `load` checks every field, and names the line
and the field that is wrong (a file with no task at all is refused too: nothing to run is a slip).

Scoring (`correct`): a textual answer is right when it contains the expected text (case-insensitive).
A numeric one is right when the expected value is the answer's only number, or its final (or first)
number with the rest of the numbers an arithmetic working that comes to it (`17 * 3 = 51`,
`234 (89 + 145)`); any other number in the answer makes it wrong (`10: 2: 2: 2` is not a 2).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import regex

from react_text.core.errors import ConfigError
from react_text.tools.tool import Tool
from react_text.tools.toolbox import CalculatorError, calculate, default_tools

__all__ = [
    "Task",
    "correct",
    "load",
    "toolset",
]

_NUMBER = regex.compile(r"-?\d[\d,]*(?:\.\d+)?")


@dataclass(frozen=True, slots=True)
class Task:
    id: str
    task: str
    answer: str
    tools: tuple[str, ...] = ("calculator",)


def load(path: str | Path) -> list[Task]:
    """The tasks of a task file; ConfigError naming the line and the field when one is not a task,
    and when the file holds none."""
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
    if not tasks:  # nothing to run is a slip (the wrong file, a file not yet written), never "0/0 right"
        raise ConfigError(f"{path} holds no task: {_TASK_LINE}, one a line")
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
