"""The engine's `Rules`: what it hands a backend with each request about the protocol (where a
made-up observation begins, the grammar with a think block first, what to say of a reply that the
grammar it was sent does not admit), so that the backends import none of the guard or the grammar
(tests/test_layout_backends.py)."""

from __future__ import annotations

from react_text.grammar import protocol as grammar
from react_text.parser import guard

__all__ = ["RULES", "EngineRules"]


class EngineRules:
    """`types.Rules`, as the guard and the protocol grammar say."""

    __slots__ = ()

    def cut(self, text: str, since: int) -> bool:
        return guard.is_cut(text, since)

    def thinking(self, grammar_text: str) -> str:
        return grammar.with_thinking(grammar_text)

    def ignored(self, grammar_text: str, text: str, *, cut: bool, where: str) -> str | None:
        return grammar.ignored_words(where, text) if grammar.ignored(grammar_text, text, cut=cut) else None

    def __repr__(self) -> str:
        return "RULES"


RULES = EngineRules()
