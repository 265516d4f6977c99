"""Pumped inputs built from a regular expression's own structure, to catch backtracking blow-ups.

Backtracking costs more than linear time when a repeated part can match the same text in many ways:
one repeat over a long run that the rest of the pattern then refuses, or two adjacent optional or
repeated parts that can both take the same character (`[ \\t]*[ \\t*]*`: n characters split n ways).
So, from the pattern's parse tree (`re._parser`, which reads the syntax both engines share):

- every repeated part is pumped with each kind of character it accepts;
- every pair of adjacent optional or repeated parts is pumped with a character both accept;

each placed after the shortest text that leads the match there (lookbehinds satisfied, the right
branch taken), with nothing after it, with a character that makes the match fail, and with the
rest of the pattern's shortest text and then that character. `cases(pattern)` yields them as
functions of the pumped length, so a test can time the same shape at two sizes.
"""

from __future__ import annotations

import ast
import re
import re._constants as c
import re._parser as sre
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Characters tried wherever a class accepts "some" characters: what replies are made of.
UNIVERSE = " \t\n\r*_-#>`'\".,:;!?()[]{}<>/\\|=+~@&%$^0123456789aAbBxXzZ：é中\x01"
FAIL = "\x01"  # the failing suffix, unless the pumped part accepts it (then one of FAILS)
FAILS = ("\x01", "\n\x01", "\n", "!", "a", " ")
_FLAGS = re.IGNORECASE | re.MULTILINE | re.DOTALL | re.VERBOSE
_REPEATS = (c.MAX_REPEAT, c.MIN_REPEAT, c.POSSESSIVE_REPEAT)


@dataclass(frozen=True, slots=True)
class Case:
    name: str  # what was pumped, for the test id
    build: Callable[[int], str]  # pumped length -> the input


def tree(pattern: str, flags: int) -> Any:
    """The parse tree of `pattern` (the regex module's reverse flag dropped: same structure)."""
    return sre.parse(pattern.replace("(?r)", ""), flags & _FLAGS)


def _candidates(item: tuple[Any, Any]) -> str:
    """UNIVERSE, with the characters a class names itself first (so "[Aa]" gives "A")."""
    op, av = item
    named = ""
    if op is c.LITERAL:
        named = chr(av)
    elif op is c.IN:
        named = "".join(chr(m[1]) if m[0] is c.LITERAL else chr(m[1][0]) for m in av if m[0] in (c.LITERAL, c.RANGE))
    return named + UNIVERSE


def _accepts(item: tuple[Any, Any], char: str) -> bool:
    """Whether a one-character item (LITERAL, NOT_LITERAL, IN, ANY) accepts `char`."""
    op, av = item
    code = ord(char)
    if op is c.LITERAL:
        return code == av
    if op is c.NOT_LITERAL:
        return code != av
    if op is c.ANY:
        return char != "\n"
    if op is c.IN:
        negate = bool(av) and av[0][0] is c.NEGATE
        found = any(_in(member, char) for member in (av[1:] if negate else av))
        return found != negate
    return False


def _in(member: tuple[Any, Any], char: str) -> bool:
    op, av = member
    code = ord(char)
    if op is c.LITERAL:
        return code == av
    if op is c.RANGE:
        return av[0] <= code <= av[1]
    if op is c.CATEGORY:
        tests = {
            c.CATEGORY_DIGIT: str.isdecimal,
            c.CATEGORY_SPACE: str.isspace,
            c.CATEGORY_WORD: lambda ch: ch.isalnum() or ch == "_",
            c.CATEGORY_NOT_DIGIT: lambda ch: not ch.isdecimal(),
            c.CATEGORY_NOT_SPACE: lambda ch: not ch.isspace(),
            c.CATEGORY_NOT_WORD: lambda ch: not (ch.isalnum() or ch == "_"),
        }
        test = tests.get(av)
        return bool(test(char)) if test is not None else False
    return False


def first_chars(seq: Any) -> set[str]:
    """The characters of UNIVERSE that a match of `seq` can begin with (over-approximated)."""
    found: set[str] = set()
    for op, av in seq:
        if op in (c.LITERAL, c.NOT_LITERAL, c.IN, c.ANY):
            return found | {ch for ch in _candidates((op, av)) if _accepts((op, av), ch)}
        if op in _REPEATS:
            found |= first_chars(av[2])
            if av[0] > 0:
                return found
            continue
        if op is c.SUBPATTERN:
            inner = first_chars(av[3])
            found |= inner
            if not _nullable(av[3]):
                return found
            continue
        if op is c.ATOMIC_GROUP:
            found |= first_chars(av)
            if not _nullable(av):
                return found
            continue
        if op is c.BRANCH:
            for alternative in av[1]:
                found |= first_chars(alternative)
            if not any(_nullable(a) for a in av[1]):
                return found
            continue
        # anchors, assertions, back references: zero width here (an over-approximation)
    return found


def _starts(seq: Any, char: str) -> bool:
    """Whether a match of `seq` may begin with `char` (for characters outside UNIVERSE too)."""
    for op, av in seq:
        if op in (c.LITERAL, c.NOT_LITERAL, c.IN, c.ANY):
            return _accepts((op, av), char)
        if op in _REPEATS:
            if _starts(av[2], char):
                return True
            if av[0] > 0:
                return False
        elif op is c.SUBPATTERN:
            if _starts(av[3], char) or not _nullable(av[3]):
                return _starts(av[3], char)
        elif op is c.BRANCH:
            return any(_starts(a, char) for a in av[1])
    return False


def _nullable(seq: Any) -> bool:
    for op, av in seq:
        if op in (c.LITERAL, c.NOT_LITERAL, c.IN, c.ANY):
            return False
        if op in _REPEATS and av[0] > 0 and not _nullable(av[2]):
            return False
        if op is c.SUBPATTERN and not _nullable(av[3]):
            return False
        if op is c.ATOMIC_GROUP and not _nullable(av):
            return False
        if op is c.BRANCH and not any(_nullable(a) for a in av[1]):
            return False
    return True


class _Shortest:
    """The shortest text matching a tree, with group captures remembered for back references."""

    def __init__(self) -> None:
        self.groups: dict[int, str] = {}

    def seq(self, seq: Any) -> str:
        return "".join(self.item(item) for item in seq)

    def item(self, item: tuple[Any, Any]) -> str:
        op, av = item
        if op is c.LITERAL:
            return chr(av)
        if op in (c.NOT_LITERAL, c.IN, c.ANY):
            return next((ch for ch in _candidates(item) if _accepts(item, ch)), "")
        if op in _REPEATS:
            return self.seq(av[2]) * av[0]
        if op is c.SUBPATTERN:
            text = self.seq(av[3])
            if av[0] is not None:
                self.groups[av[0]] = text
            return text
        if op is c.ATOMIC_GROUP:
            return self.seq(av)
        if op is c.BRANCH:
            return min((self.seq(a) for a in av[1]), key=len)
        if op is c.GROUPREF:
            return self.groups.get(av, "")
        if op is c.ASSERT and av[0] < 0:  # a lookbehind: what it wants is written before
            return self.seq(av[1])
        return ""


def _units(body: Any) -> list[str]:
    """The texts to pump a repeated `body` with: each kind of character it accepts, when it is one
    character; its shortest match otherwise (and that match with each first character varied)."""
    if len(body) == 1 and body[0][0] in (c.LITERAL, c.NOT_LITERAL, c.IN, c.ANY):
        return _kinds({ch for ch in _candidates(body[0]) if _accepts(body[0], ch)} - {FAIL}) or [""]
    shortest = _Shortest().seq(body)
    return [shortest] if shortest else []


def _kinds(chars: set[str]) -> list[str]:
    """One character of each kind in `chars` (space, line break, punctuation, digit, letter, other),
    and every punctuation character (decorations are where replies differ)."""
    kinds: dict[str, str] = {}
    for ch in sorted(chars):
        kind = "space" if ch in " \t" else ch if not ch.isalnum() else "digit" if ch.isdigit() else "letter"
        kinds.setdefault(kind if ch.isascii() else "other", ch)
    return sorted(kinds.values())


def _places(seq: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], int, Any]]:
    """Every (path, index, seq) where seq[index] is an item, depth first; path is the outer items."""
    for i, (op, av) in enumerate(seq):
        yield path, i, seq
        if op in _REPEATS:
            yield from _places(av[2], (*path, (seq, i)))
        elif op is c.SUBPATTERN:
            yield from _places(av[3], (*path, (seq, i)))
        elif op is c.ATOMIC_GROUP:
            yield from _places(av, (*path, (seq, i)))
        elif op is c.BRANCH:
            for alternative in av[1]:
                yield from _places(alternative, (*path, (seq, i)))


def _around(path: tuple[Any, ...], seq: Any, index: int) -> tuple[str, str]:
    """The shortest text before seq[index] that leads there, and the shortest text after it."""
    shortest = _Shortest()
    before = ""
    for outer, i in path:
        before += shortest.seq(outer[:i])
    before += shortest.seq(seq[:index])
    after = shortest.seq(seq[index + 1 :])
    for outer, i in reversed(path):
        after += shortest.seq(outer[i + 1 :])
    return before, after


def cases(pattern: str, flags: int = 0) -> list[Case]:
    """The pumped inputs for `pattern`: each repeated part, and each adjacent pair of optional or
    repeated parts that share a character, each with no suffix, a failing one, and the rest."""
    found: dict[str, Case] = {}

    def add(name: str, before: str, unit: str, after: str, body: Any) -> None:
        fails = [f for f in FAILS if f not in unit and not _starts(body, f[0])][:4] or [FAIL]
        tails = [("", "")] + [(f"+{f!r}", f) for f in fails] + [(f"+rest+{f!r}", after + f) for f in fails]
        for label, tail in tails:
            key = f"{name}{label}"
            if key not in found:
                found[key] = Case(key, lambda n, b=before, u=unit, t=tail: b + u * max(1, n // max(1, len(u))) + t)

    parsed = tree(pattern, flags)
    for path, i, seq in _places(parsed):
        op, av = seq[i]
        if op not in _REPEATS:
            continue
        before, after = _around(path, seq, i)
        if av[1] > 1:  # repeated (not merely optional)
            for unit in _units(av[2]):
                if unit:
                    add(f"repeat@{len(before)}:{unit!r}", before, unit, after, av[2])
            # many starts, each running into the repeat: what a search tries at every position
            unit = (_units(av[2]) or [""])[0]
            if before and unit:
                add(f"starts@{len(before)}:{before + unit!r}", "", before + unit, after, av[2])
        # adjacent pairs: this part and each later optional or repeated one that nothing but
        # optional parts separate it from ("[ \t]*\n?[ \t]*"), taking a shared character
        for j in range(i + 1, len(seq)):
            later = seq[j : j + 1]
            if _nullable(later) or later[0][0] in _REPEATS:
                shared = (first_chars(av[2]) & first_chars(later)) - {FAIL}
                for ch in sorted(shared)[:8]:
                    add(f"pair@{len(before)}+{j - i}:{ch!r}", before, ch, after, av[2])
            if not _nullable(later):
                break
    return list(found.values())


# --- finding every pattern of the package ---------------------------------------------------------

PatternLike = Any  # re.Pattern[str] | regex.Pattern[str]


def patterns_of(module: Any) -> Iterator[tuple[str, PatternLike]]:
    """Every compiled pattern a module holds at its top level, in tuples, lists and dicts too."""

    def walk(name: str, value: object, depth: int = 0) -> Iterator[tuple[str, PatternLike]]:
        if hasattr(value, "pattern") and hasattr(value, "search") and isinstance(value.pattern, str):
            yield name, value
        elif depth < 3 and isinstance(value, tuple | list):
            for k, v in enumerate(value):
                yield from walk(f"{name}[{k}]", v, depth + 1)
        elif depth < 3 and isinstance(value, dict):
            for k, v in value.items():
                yield from walk(f"{name}[{k!r}]", v, depth + 1)

    for name, value in vars(module).items():
        yield from walk(f"{module.__name__}.{name}", value)


_COMPILES = {"compile"}
_INLINE = {"search", "match", "fullmatch", "sub", "subn", "findall", "finditer", "split"}


def inline_patterns(root: Path) -> list[str]:
    """Places in the package that use a pattern not held in a module-level constant: a call like
    `regex.sub(r"...", ...)`, or a compile in a function that runs after import (the walk above
    finds only what a module holds once imported). A compile inside a function that the module
    only calls at its top level (a builder of constants) is fine, and so is a call given a `timeout=`:
    the `regex` package's bound on a pattern the package does not own and cannot pump (a JSON
    schema's `pattern`, a client's)."""
    found = []
    for path in sorted(root.rglob("*.py")):
        module = ast.parse(path.read_text(encoding="utf-8"))
        builders = _builders(module)
        for function in [module, *[n for n in ast.walk(module) if isinstance(n, ast.FunctionDef | ast.Lambda)]]:
            body = function.body if isinstance(function, ast.Module | ast.FunctionDef) else [function.body]
            for node in _own_nodes(body):
                if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                    continue
                owner = node.func.value
                if not (isinstance(owner, ast.Name) and owner.id in ("re", "regex")):
                    continue
                if any(k.arg == "timeout" for k in node.keywords):
                    continue  # a pattern the package does not own (a client's), bounded in time instead
                compiled_when_imported = function is module or getattr(function, "name", None) in builders
                if node.func.attr in _INLINE or (node.func.attr in _COMPILES and not compiled_when_imported):
                    found.append(f"{path.relative_to(root.parent)}:{node.lineno}: {owner.id}.{node.func.attr}")
    return found


def _own_nodes(body: list[ast.AST]) -> Iterator[ast.AST]:
    """The nodes of `body`, not descending into nested functions and lambdas (they are walked alone)."""
    todo = list(body)
    while todo:
        node = todo.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                todo.append(child)


def _builders(module: ast.Module) -> set[str]:
    """Functions of `module` that are called only from its top level (builders of its constants)."""
    top = {
        id(n) for stmt in module.body if not isinstance(stmt, ast.FunctionDef | ast.ClassDef) for n in ast.walk(stmt)
    }
    called: dict[str, bool] = {}
    for node in ast.walk(module):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            called[node.func.id] = called.get(node.func.id, True) and id(node) in top
    return {name for name, only_top in called.items() if only_top}


def matched_only(root: Path) -> set[str]:
    """Names of module-level patterns the package only ever `match`es or `fullmatch`es (at a
    position it chose), never searches: those are timed with `match`, the others with `search`."""
    used: dict[str, set[str]] = {}
    for path in sorted(root.rglob("*.py")):
        module = ast.parse(path.read_text(encoding="utf-8"))
        dotted = ".".join(path.relative_to(root.parent).with_suffix("").parts)
        owners: set[int] = set()
        for node in ast.walk(module):
            if isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load):
                owner = node.value
                if isinstance(owner, ast.Subscript):
                    owner = owner.value
                if isinstance(owner, ast.Name):
                    owners.add(id(owner))
                    used.setdefault(f"{dotted}.{owner.id}", set()).add(node.attr)
        for node in ast.walk(module):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and id(node) not in owners:
                # a pattern passed on by name (to a function, into a tuple) may be searched there
                used.setdefault(f"{dotted}.{node.id}", set()).add("?")
    return {name for name, attrs in used.items() if attrs <= {"match", "fullmatch", "pattern"}}
