"""The parser corpus and the robustness scoreboard: how each parser reads what models really write.

A corpus is JSON Lines, one reply a line:

    {"id": "r1", "text": "Thought: x\nAction: lookup\nAction Input: cats",
     "expected": {"kind": "action", "tool": "lookup", "input": "cats"}}

`text` (the reply) and `expected` (its right reading) are required: `expected` is {"kind":
"action", "tool", "input"} or {"kind": "final", "answer"} or {"kind": "error"} with an optional
"reason" (for an error, any reason counts: what matters is that the reply was not misread). The
rest is optional: "id" (default: the line number), "category" (the scoreboard's rows; default
"uncategorised"), "source" (where the reply came from), "mode" ("chat", the default, or
"completion": a completion-mode reply continues a prompt that ended with `THOUGHT:`, which is put
back before parsing) and "tools" (the tool names registered when the reply was written: every
parser is given them, as the agent gives them). A line that breaks this is a ConfigError naming
the line and the field.

A parser here is any callable `(text, *, tools) -> reading`, where a reading is a react-text
`Parsed` value or a dict as `reading` makes. An action's input may be a decoded value rather than a
string (a peer that decodes `{"a": 1}` for its tool): it agrees when the expected input, read as
JSON or as a Python literal, is that value. `react_text.evaluation.peers` adapts other frameworks'
parsers and the user's own.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any, Protocol

from react_text.core.errors import ConfigError
from react_text.core.protocol import THOUGHT_CUE
from react_text.core.types import Action, Final, Parsed, ParseError

__all__ = [
    "Case",
    "Parser",
    "Reading",
    "Score",
    "agrees",
    "as_reading",
    "bundled",
    "load",
    "reading",
    "score",
    "scoreboard",
    "scoreboard_cases",
]

Reading = Mapping[str, Any]
"""{"kind": "action", "tool", "input"} | {"kind": "final", "answer"} | {"kind": "error", "reason"}."""

_FIELDS = {"action": ("tool", "input"), "final": ("answer",), "error": ()}


class Parser(Protocol):
    """A parser as `parser.PARSERS` holds them: the reply, and the registered tool names."""

    def __call__(self, text: str, *, tools: Collection[str] = ()) -> Parsed | Reading: ...


@dataclass(frozen=True, slots=True)
class Case:
    id: str
    category: str
    source: str
    mode: str
    text: str
    expected: Reading
    tools: tuple[str, ...] = ()

    @property
    def sent(self) -> str:
        return THOUGHT_CUE + self.text if self.mode == "completion" else self.text


@dataclass
class Score:
    parser: str
    right: int = 0
    total: int = 0
    by_category: dict[str, list[int]] = field(default_factory=dict)  # category -> [right, total]
    wrong: list[tuple[Case, Reading]] = field(default_factory=list)

    @property
    def accuracy(self) -> float:
        return self.right / self.total if self.total else 0.0


def bundled(name: str = "replies.jsonl") -> Path:
    """A corpus that ships with the package (`tests/data/NAME` in a source checkout): the replies
    of the frameworks (`replies.jsonl`), or the families of issue 34 (`families.jsonl`)."""
    packaged = resources.files("react_text") / "data" / name
    if packaged.is_file():
        return Path(str(packaged))
    return Path(__file__).resolve().parents[2] / "tests" / "data" / name


def scoreboard_cases() -> list[Case]:
    """What `react-text parse --compare` scores without a corpus given: the bundled replies, then
    the families (continuations, call syntax, markup calls, code actions), each in its rows."""
    return load(bundled()) + load(bundled("families.jsonl"))


def load(path: str | Path) -> list[Case]:
    """The cases of a corpus file; a line that is not a case is a ConfigError naming line and field."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise ConfigError(f"no corpus at {path}: give a corpus file (JSON lines with text and expected)") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read the corpus {path}: {exc}") from exc
    cases = [_case(line, f"{path}:{number}", number) for number, line in enumerate(lines, 1) if line.strip()]
    if not cases:
        raise ConfigError(f"{path}: no cases in the corpus (JSON lines with text and expected)")
    return cases


def _case(line: str, where: str, number: int) -> Case:
    try:
        row = json.loads(line)
    except ValueError as exc:
        raise ConfigError(f"{where}: not JSON ({exc})") from None
    if not isinstance(row, dict):
        raise ConfigError(f"{where}: not a JSON object")
    for key in ("text", "expected"):
        if key not in row:
            raise ConfigError(f'{where}: field "{key}" is missing')
    strings = {"id": str(number), "category": "uncategorised", "source": "", "mode": "chat", "text": ""}
    for key in strings:
        value = row.get(key, strings[key])
        if not isinstance(value, str):
            raise ConfigError(f'{where}: field "{key}" must be a string, not {json.dumps(value)[:40]}')
        strings[key] = value
    if strings["mode"] not in ("chat", "completion"):
        raise ConfigError(f'{where}: field "mode" must be "chat" or "completion", not {json.dumps(strings["mode"])}')
    tools = row.get("tools", [])
    if not (isinstance(tools, list) and all(isinstance(name, str) for name in tools)):
        raise ConfigError(f'{where}: field "tools" must be a list of tool names (strings)')
    try:
        expected = _checked(row["expected"], strict=True)
    except ValueError as exc:
        raise ConfigError(f'{where}: field "expected" {exc}') from None
    return Case(
        strings["id"], strings["category"], strings["source"], strings["mode"], strings["text"], expected, tuple(tools)
    )


def _checked(value: object, *, strict: bool) -> dict[str, Any]:
    """`value` as a reading, or ValueError saying what is wrong (an expected input must be text;
    a parser's reading may hold a JSON value as its input)."""
    if not isinstance(value, Mapping):
        raise ValueError(f"must be an object with a kind, not {json.dumps(value, default=repr)[:40]}")
    kind = value.get("kind")
    if kind not in _FIELDS:
        raise ValueError(f'has kind {json.dumps(kind, default=repr)}: give "action", "final" or "error"')
    for key in _FIELDS[kind]:
        if key not in value:
            raise ValueError(f'is an {kind} without "{key}"')
        if (strict or key != "input") and not isinstance(value[key], str):
            raise ValueError(f'has "{key}" {json.dumps(value[key], default=repr)[:40]}: it must be a string')
    if "reason" in value and not isinstance(value["reason"], str):
        raise ValueError('has a "reason" that is not a string')
    return dict(value)


def reading(parsed: Parsed) -> dict[str, str]:
    if isinstance(parsed, Action):
        return {"kind": "action", "tool": parsed.tool, "input": parsed.input}
    if isinstance(parsed, Final):
        return {"kind": "final", "answer": parsed.answer}
    return {"kind": "error", "reason": parsed.reason}


def as_reading(got: object) -> dict[str, Any]:
    """A parser's result as a reading: a `Parsed` value, or a dict checked as one (ValueError if not)."""
    if isinstance(got, Action | Final | ParseError):
        return reading(got)
    return _checked(got, strict=False)


def agrees(got: Reading, expected: Reading) -> bool:
    if expected["kind"] == "error" or got["kind"] != expected["kind"]:
        return bool(got["kind"] == expected["kind"])
    if got["kind"] == "final":
        return bool(got["answer"] == expected["answer"])
    return bool(got["tool"] == expected["tool"]) and _same_input(got["input"], expected["input"])


def _same_input(got: object, expected: str) -> bool:
    if isinstance(got, str):  # quotes around the whole input are the binder's to read: `"a"` is a
        return got == expected or _unquoted(got) == _unquoted(expected)  # tool's `a`, as peers give it
    try:  # a parser that decoded the input: the value the reply wrote, as JSON or a Python literal
        return bool(json.loads(expected, strict=False) == got)
    except ValueError:
        pass
    try:
        return bool(ast.literal_eval(expected.strip()) == got)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False


def _unquoted(text: str) -> str:
    """Without one pair of matching quotes or backticks around it (none inside)."""
    stripped = text.strip()
    if (
        len(stripped) >= 2
        and stripped[0] == stripped[-1]
        and stripped[0] in "\"'`"
        and stripped[0] not in stripped[1:-1]
    ):
        return stripped[1:-1]
    return text


def score(cases: Sequence[Case], parsers: Mapping[str, Parser]) -> list[Score]:
    """Each parser's readings of the cases, tallied. A reading that is not one is a ConfigError
    (a user's parser that returned something else)."""
    scores = []
    for name, parse in parsers.items():
        board = Score(name)
        for case in cases:
            result = parse(case.sent, tools=case.tools)
            try:
                got = as_reading(result)
            except ValueError as exc:
                raise ConfigError(
                    f"parser {name} read case {case.id} as {json.dumps(result, default=repr)[:60]}, which {exc}"
                    " (give a react_text Parsed value or a dict with kind action, final or error)"
                ) from None
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


def scoreboard(scores: Sequence[Score], *, show_wrong: int = 10, notes: Sequence[str] = ()) -> str:
    """Accuracy per parser and per category, then `notes` (what the peers are, which are not
    installed), then the cases each parser gets wrong."""
    widths = [max(10, len(s.parser) + 2) for s in scores]

    def row(label: str, cells: Sequence[str]) -> str:
        return f"{label:<32}" + "".join(cell.rjust(width) for cell, width in zip(cells, widths, strict=True))

    lines = [row("", [s.parser for s in scores])]
    lines.append(row("all cases", [f"{s.right:>5}/{s.total:<4}" for s in scores]))
    lines.append(row("accuracy", [f"{100 * s.accuracy:>9.1f}%" for s in scores]))
    categories = sorted({c for s in scores for c in s.by_category})
    lines.append("")
    for category in categories:
        tallies = [s.by_category.get(category, [0, 0]) for s in scores]
        lines.append(row(category, [f"{right:>5}/{total:<4}" for right, total in tallies]))
    if notes:
        lines.append("")
        lines.extend(notes)
    for s in scores:
        if not s.wrong:
            continue
        lines.append(f"\n{s.parser} misreads {len(s.wrong)}:")
        for case, got in s.wrong[:show_wrong]:
            shown = json.dumps(got, ensure_ascii=False, default=repr)[:80]
            lines.append(f"  {case.id:<9} {case.category:<18} {json.dumps(case.text[:60])} -> {shown}")
        if len(s.wrong) > show_wrong:
            lines.append(f"  ... and {len(s.wrong) - show_wrong} more")
    return "\n".join(lines)
