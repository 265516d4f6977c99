"""The parser corpus and the robustness scoreboard: how each parser reads what models really write.

A corpus is JSON Lines: {"id", "category", "source", "mode", "text", "expected"} and an optional
"tools" (the tool names registered when the reply was written: every parser is given them, as the
agent gives them), where `expected` is {"kind": "action", "tool", "input"} or {"kind": "final",
"answer"} or {"kind": "error", "reason"} (for an error, any reason counts: what matters is that the
reply was not misread). Completion-mode replies continue a prompt that ended with `THOUGHT:`, which
is put back before parsing.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from .types import Action, Final, Parsed


class Parser(Protocol):
    """A parser as `parser.PARSERS` holds them: the reply, and the registered tool names."""

    def __call__(self, text: str, *, tools: Collection[str] = ()) -> Parsed: ...


@dataclass(frozen=True, slots=True)
class Case:
    id: str
    category: str
    source: str
    mode: str
    text: str
    expected: Mapping[str, str]
    tools: tuple[str, ...] = ()

    @property
    def sent(self) -> str:
        return "THOUGHT:" + self.text if self.mode == "completion" else self.text


@dataclass
class Score:
    parser: str
    right: int = 0
    total: int = 0
    by_category: dict[str, list[int]] = field(default_factory=dict)  # category -> [right, total]
    wrong: list[tuple[Case, dict[str, str]]] = field(default_factory=list)

    @property
    def accuracy(self) -> float:
        return self.right / self.total if self.total else 0.0


def load(path: str | Path) -> list[Case]:
    cases = []
    for line in Path(path).read_text(encoding="utf-8").splitlines():
        if line.strip():
            row: dict[str, Any] = json.loads(line)
            cases.append(
                Case(
                    row["id"],
                    row["category"],
                    row["source"],
                    row["mode"],
                    row["text"],
                    row["expected"],
                    tuple(row.get("tools", ())),
                )
            )
    return cases


def reading(parsed: Parsed) -> dict[str, str]:
    if isinstance(parsed, Action):
        return {"kind": "action", "tool": parsed.tool, "input": parsed.input}
    if isinstance(parsed, Final):
        return {"kind": "final", "answer": parsed.answer}
    return {"kind": "error", "reason": parsed.reason}


def agrees(got: Mapping[str, str], expected: Mapping[str, str]) -> bool:
    if expected["kind"] == "error":
        return got["kind"] == "error"
    return dict(got) == dict(expected)


def score(cases: Sequence[Case], parsers: Mapping[str, Parser]) -> list[Score]:
    scores = []
    for name, parse in parsers.items():
        board = Score(name)
        for case in cases:
            got = reading(parse(case.sent, tools=case.tools))
            ok = agrees(got, case.expected)
            board.total += 1
            board.right += ok
            tally = board.by_category.setdefault(case.category, [0, 0])
            tally[0] += ok
            tally[1] += 1
            if not ok:
                board.wrong.append((case, got))
        scores.append(board)
    return scores


def scoreboard(scores: Sequence[Score], *, show_wrong: int = 10) -> str:
    """Accuracy per parser and per category, then the cases each parser gets wrong."""
    names = [s.parser for s in scores]
    lines = [f"{'':<32}" + "".join(f"{n:>10}" for n in names)]
    lines.append(f"{'all cases':<32}" + "".join(f"{s.right:>5}/{s.total:<4}" for s in scores))
    lines.append(f"{'accuracy':<32}" + "".join(f"{100 * s.accuracy:>9.1f}%" for s in scores))
    categories = sorted({c for s in scores for c in s.by_category})
    lines.append("")
    for category in categories:
        cells = []
        for s in scores:
            right, total = s.by_category.get(category, [0, 0])
            cells.append(f"{right:>5}/{total:<4}")
        lines.append(f"{category:<32}" + "".join(cells))
    for s in scores:
        if not s.wrong:
            continue
        lines.append(f"\n{s.parser} misreads {len(s.wrong)}:")
        for case, got in s.wrong[:show_wrong]:
            lines.append(f"  {case.id:<9} {case.category:<18} {json.dumps(case.text[:60])} -> {json.dumps(got)[:80]}")
        if len(s.wrong) > show_wrong:
            lines.append(f"  ... and {len(s.wrong) - show_wrong} more")
    return "\n".join(lines)
