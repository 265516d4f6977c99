"""Strings drawn from a grammar this package writes (react_text.grammar.gbnf's reading of it), at random:
for property tests of what a grammar admits. Deep in a recursive rule the first alternative and
the fewest repeats are taken, so every draw ends."""

from __future__ import annotations

import random
import string

from react_text.grammar import gbnf

POOL = [*string.ascii_letters, *string.digits, *" .,:;=-+*/%^()_?!'\"{}@#&<>|~`$\\", "é", "天", "气", "北"]


def draw(grammar: str, rule: str, rng: random.Random, *, depth: int = 8) -> str:
    named = gbnf.rules(grammar)
    return _draw(named, named[rule], rng, depth)


def _draw(named: dict[str, gbnf.Node], node: gbnf.Node, rng: random.Random, depth: int) -> str:
    if isinstance(node, gbnf.Lit):
        return node.text
    if isinstance(node, gbnf.Chars):
        return rng.choice([c for c in POOL if node.has(c)])
    if isinstance(node, gbnf.Ref):
        return _draw(named, named[node.name], rng, depth - 1)
    if isinstance(node, gbnf.Seq):
        return "".join(_draw(named, item, rng, depth) for item in node.items)
    if isinstance(node, gbnf.Alt):
        choice = node.choices[0] if depth <= 0 else rng.choice(node.choices)
        return _draw(named, choice, rng, depth)
    most = node.least if depth <= 0 else (node.most if node.most is not None else node.least + 4)
    count = rng.randint(node.least, min(most, node.least + 6))
    return "".join(_draw(named, node.item, rng, depth - 1) for _ in range(count))
