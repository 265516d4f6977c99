"""The grammars this package writes, read back: could a reply have been written under one?

A server that takes a grammar field but does not apply it (an old vLLM that dropped `guided_*`, a
proxy that strips unknown fields, a build without the grammar backend) returns replies the grammar
could not have produced. `admits(grammar, text)` says whether it could, reading the GBNF subset
`react_text.grammar.protocol` writes (one rule a line: `name ::= alternatives`; "literals", [classes],
rule names, ( groups ), and ?, *, + and {m,n} after any of them). It is no grammar engine: the
engines are llama.cpp's and xgrammar (tests/grammars.py asks them); this only has to agree with
them on the grammars written here, which the tests check.

Matching is by sets of end positions, memoised per (expression, start), so it is polynomial in
the reply's length whatever the grammar's nesting. With `cut=True` (a reply stopped at its
allowance) a text that is the beginning of an admitted one is admitted.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass

import regex

__all__ = ["Alt", "Chars", "GrammarError", "Lit", "Node", "Ref", "Rep", "Seq", "admits", "rules"]

_PREFIX = -1  # an end "position": the text ran out inside the expression, consistently with it


@dataclass(frozen=True, slots=True)
class Lit:
    text: str


@dataclass(frozen=True, slots=True)
class Chars:
    ranges: tuple[tuple[str, str], ...]
    negated: bool

    def has(self, char: str) -> bool:
        inside = any(low <= char <= high for low, high in self.ranges)
        return inside != self.negated


@dataclass(frozen=True, slots=True)
class Ref:
    name: str


@dataclass(frozen=True, slots=True)
class Seq:
    items: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Alt:
    choices: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Rep:
    item: Node
    least: int
    most: int | None  # None: no bound


Node = Lit | Chars | Ref | Seq | Alt | Rep


class GrammarError(ValueError):
    """A grammar outside the subset read here."""


_RULE = regex.compile(r"(?P<name>[A-Za-z][A-Za-z0-9-]*+) ::= (?P<body>.*+)")
_NAME = regex.compile(r"[A-Za-z][A-Za-z0-9-]*+")
_STRING = regex.compile(r'"(?:[^"\\]|\\.)*+"')
_COUNT = regex.compile(r"\{(\d++)(,(\d*+))?\}")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "[": "[", "]": "]", "-": "-", "^": "^", '"': '"'}


@functools.lru_cache(maxsize=64)
def rules(grammar: str) -> dict[str, Node]:
    """The grammar's rules by name; GrammarError for a grammar outside the subset."""
    found: dict[str, Node] = {}
    for line in grammar.splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        match = _RULE.fullmatch(line.strip())
        if match is None:
            raise GrammarError(f"not a rule: {line!r}")
        node, end = _alternatives(match["body"], 0)
        if end != len(match["body"]):
            raise GrammarError(f"cannot read {match['body'][end:]!r} in {line!r}")
        found[match["name"]] = node
    if "root" not in found:
        raise GrammarError("a grammar needs a root rule")
    return found


def _alternatives(body: str, at: int) -> tuple[Node, int]:
    choices: list[Node] = []
    while True:
        node, at = _sequence(body, at)
        choices.append(node)
        at = _space(body, at)
        if at < len(body) and body[at] == "|":
            at += 1
            continue
        return (choices[0] if len(choices) == 1 else Alt(tuple(choices))), at


def _sequence(body: str, at: int) -> tuple[Node, int]:
    items: list[Node] = []
    while True:
        at = _space(body, at)
        if at >= len(body) or body[at] in "|)":
            return (items[0] if len(items) == 1 else Seq(tuple(items))), at
        item, at = _term(body, at)
        items.append(_postfix(item, body, at))
        at = _postfix_end(body, at)


def _term(body: str, at: int) -> tuple[Node, int]:
    char = body[at]
    if char == '"':
        match = _STRING.match(body, at)
        if match is None:
            raise GrammarError(f"an unclosed string at {body[at:]!r}")
        return Lit(json.loads(match[0])), match.end()
    if char == "[":
        return _chars(body, at)
    if char == "(":
        node, at = _alternatives(body, at + 1)
        if at >= len(body) or body[at] != ")":
            raise GrammarError(f"an unclosed group in {body!r}")
        return node, at + 1
    match = _NAME.match(body, at)
    if match is None:
        raise GrammarError(f"cannot read {body[at:]!r}")
    return Ref(match[0]), match.end()


def _chars(body: str, at: int) -> tuple[Node, int]:
    at += 1
    negated = body.startswith("^", at)
    at += negated
    ranges: list[tuple[str, str]] = []
    while at < len(body) and body[at] != "]":
        low, at = _char(body, at)
        high = low
        if body.startswith("-", at) and not body.startswith("-]", at):
            high, at = _char(body, at + 1)
        ranges.append((low, high))
    if at >= len(body):
        raise GrammarError(f"an unclosed class in {body!r}")
    return Chars(tuple(ranges), negated), at + 1


def _char(body: str, at: int) -> tuple[str, int]:
    if body[at] != "\\":
        return body[at], at + 1
    code = body[at + 1]
    if code in _ESCAPES:
        return _ESCAPES[code], at + 2
    if code == "u":
        return chr(int(body[at + 2 : at + 6], 16)), at + 6
    raise GrammarError(f"an escape not read here: \\{code}")


def _postfix(item: Node, body: str, at: int) -> Node:
    if at < len(body) and body[at] in "?*+":
        return Rep(item, 1 if body[at] == "+" else 0, 1 if body[at] == "?" else None)
    match = _COUNT.match(body, at)
    if match is None:
        return item
    least = int(match[1])
    most = least if match[2] is None else (int(match[3]) if match[3] else None)
    return Rep(item, least, most)


def _postfix_end(body: str, at: int) -> int:
    if at < len(body) and body[at] in "?*+":
        return at + 1
    match = _COUNT.match(body, at)
    return match.end() if match else at


def _space(body: str, at: int) -> int:
    while at < len(body) and body[at] == " ":
        at += 1
    return at


def admits(grammar: str, text: str, *, cut: bool = False) -> bool:
    """Whether `text` could have been written under `grammar` (with `cut`: the beginning of such a
    text). GrammarError for a grammar outside the subset read here. A text nested too deep to
    follow here (brackets inside brackets some hundreds deep) is admitted: it is not refused
    without a reason."""
    try:
        return _Match(rules(grammar), text, cut).whole()
    except RecursionError:
        return True


class _Match:
    def __init__(self, named: dict[str, Node], text: str, cut: bool) -> None:
        self.named, self.text, self.cut = named, text, cut
        self.memo: dict[tuple[int, int], frozenset[int]] = {}

    def whole(self) -> bool:
        ends = self.ends(self.named["root"], 0)
        return len(self.text) in ends or (self.cut and _PREFIX in ends)

    def ends(self, node: Node, at: int) -> frozenset[int]:
        key = (id(node), at)
        found = self.memo.get(key)
        if found is None:
            self.memo[key] = frozenset()  # a rule reached again at the same place adds nothing new
            found = self.memo[key] = frozenset(self._ends(node, at))
        return found

    def _ends(self, node: Node, at: int) -> set[int]:
        text = self.text
        if isinstance(node, Lit):
            if text.startswith(node.text, at):
                return {at + len(node.text)}
            rest = text[at:]
            return {_PREFIX} if self.cut and node.text.startswith(rest) and len(rest) < len(node.text) else set()
        if isinstance(node, Chars):
            if at < len(text):
                return {at + 1} if node.has(text[at]) else set()
            return {_PREFIX} if self.cut else set()
        if isinstance(node, Ref):
            if node.name not in self.named:
                raise GrammarError(f"no rule {node.name}")
            return set(self.ends(self.named[node.name], at))
        if isinstance(node, Alt):
            return set().union(*(self.ends(choice, at) for choice in node.choices))
        if isinstance(node, Seq):
            here = {at}
            reached: set[int] = set()
            for item in node.items:
                here = set().union(*(self.ends(item, p) for p in here))
                if _PREFIX in here:
                    reached.add(_PREFIX)
                    here.discard(_PREFIX)
            return here | reached
        return self._repeated(node, at)

    def _repeated(self, node: Rep, at: int) -> set[int]:
        if isinstance(node.item, Chars):  # a run of characters: as far as they match, at once
            text, end = self.text, at
            limit = len(text) if node.most is None else min(len(text), at + node.most)
            while end < limit and node.item.has(text[end]):
                end += 1
            found = set(range(at + node.least, end + 1))
            if self.cut and end == len(text) and (node.most is None or end - at < node.most):
                found.add(_PREFIX)
            return found
        found = {at} if node.least == 0 else set()
        frontier, seen = {at}, {at}
        count = 0
        while frontier and (node.most is None or count < node.most):
            count += 1
            step: set[int] = set().union(*(self.ends(node.item, p) for p in frontier))
            if _PREFIX in step:
                found.add(_PREFIX)
                step.discard(_PREFIX)
            if count >= node.least:
                found |= step
            elif self.cut and len(self.text) in step:
                found.add(_PREFIX)  # fewer than the least, but the text ended: more could come
            frontier = step if node.most is not None else step - seen
            seen |= step
        return found
