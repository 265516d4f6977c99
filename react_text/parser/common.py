"""What the readers of the package share: the registered tool names (`Names`, matched where a
name is expected: exactly, then ignoring case), whether a name is the final answer's, and the
`ParseError` value with its corrective message.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from react_text import prompting
from react_text.core.types import Action, Final, ParseError, ParseErrorReason

__all__ = ["Names", "error", "finishes", "made_action", "made_final", "tool_names", "word_char"]

_FINISH_TOOLS = frozenset({"finish", "final", "final_answer", "answer"})


@dataclass(frozen=True, slots=True)
class Names:
    """The registered tool names, for matching where a name is expected."""

    exact: frozenset[str]
    longest_first: tuple[str, ...]
    folded: dict[str, str]  # casefolded -> the registered spelling
    by_initial: dict[str, tuple[str, ...]]  # casefolded first letter -> names, longest first

    def lookup(self, name: str) -> str:
        """The registered spelling of `name` (exact, then ignoring case), or `name` as written."""
        return name if name in self.exact else self.folded.get(name.casefold(), name)

    def registered(self, name: str) -> bool:
        return name in self.exact

    def at(self, text: str, pos: int) -> tuple[str, int] | None:
        """The longest registered name written at `pos` (any case), and the index after it."""
        for name in self.by_initial.get(text[pos : pos + 1].casefold(), ()):
            end = pos + len(name)
            written = text[pos:end]
            if written != name and written.casefold() != name.casefold():
                continue
            if end < len(text) and word_char(name[-1]) and word_char(text[end]):
                continue  # "add" is not the start of "address"
            return name, end
        return None

    def ending(self, text: str) -> str | None:
        """The longest registered name that `text` ends with (any case), after a non-word character."""
        folded = text.casefold()
        for name in self.longest_first:
            if folded.endswith(name.casefold()):
                before = len(text) - len(name)
                if before <= 0 or not (word_char(text[before - 1]) and word_char(name[0])):
                    return name
        return None


def word_char(char: str) -> bool:
    return char.isalnum() or char == "_"


@functools.lru_cache(maxsize=64)
def tool_names(tools: tuple[str, ...]) -> Names:
    folded: dict[str, str] = {}
    by_initial: dict[str, list[str]] = {}
    tools = tuple(name for name in tools if name)  # an empty name names nothing
    for name in tools:
        folded.setdefault(name.casefold(), name)
        by_initial.setdefault(name[0].casefold(), []).append(name)
    ordered = {k: tuple(sorted(v, key=len, reverse=True)) for k, v in by_initial.items()}
    return Names(frozenset(tools), tuple(sorted(set(tools), key=len, reverse=True)), folded, ordered)


def error(reason: ParseErrorReason, thought: str = "") -> ParseError:
    return ParseError(reason, prompting.render(f"errors/{reason}"), thought)


def finishes(tool: str, names: Names | None) -> bool:
    """Whether `tool` names the final answer: Finish, answer, final_answer, unless registered."""
    return tool.casefold().replace(" ", "_") in _FINISH_TOOLS and not (names is not None and names.registered(tool))


# Action and Final made without their dataclass __init__ (which sets each field through
# object.__setattr__, being frozen): the same values, in half the time. They have no __post_init__
# to skip (tests/test_readings.py checks it). For the fast paths and blobs, where it shows.
_SET_TOOL, _SET_INPUT, _SET_THOUGHT, _SET_DISCARDED, _SET_CLOSED = (
    vars(Action)[name].__set__ for name in ("tool", "input", "thought", "discarded", "closed")
)
_SET_ANSWER, _SET_FINAL_THOUGHT, _SET_FINAL_DISCARDED = (
    vars(Final)[name].__set__ for name in ("answer", "thought", "discarded")
)
_new = object.__new__


def made_action(tool: str, value: str, thought: str, discarded: str, closed: bool) -> Action:
    made = _new(Action)
    _SET_TOOL(made, tool)
    _SET_INPUT(made, value)
    _SET_THOUGHT(made, thought)
    _SET_DISCARDED(made, discarded)
    _SET_CLOSED(made, closed)
    return made


def made_final(answer: str, thought: str, discarded: str) -> Final:
    made = _new(Final)
    _SET_ANSWER(made, answer)
    _SET_FINAL_THOUGHT(made, thought)
    _SET_FINAL_DISCARDED(made, discarded)
    return made
