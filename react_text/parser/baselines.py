"""The baselines of the robustness scoreboard, beside the tolerant default: the naive parser of
the 40-line tutorials and the strict canonical form; `PARSERS` names all three.
"""

from __future__ import annotations

import re
from collections.abc import Collection

from react_text.core.protocol import ACTION_LABEL, FINAL_LABEL
from react_text.core.types import Action, Final, Parsed
from react_text.parser.common import error
from react_text.parser.reading import parse

__all__ = ["PARSERS", "parse_naive", "parse_strict"]

_NAIVE_ACTION = re.compile(rf"{re.escape(ACTION_LABEL)} (\w++)\[")


def parse_naive(text: str, *, tools: Collection[str] = ()) -> Parsed:
    """The parser of the 40-line tutorials: FINAL: checked first, then one regex for ACTION: tool[input].

    Kept as the baseline of the robustness scoreboard; not used by the engine. Ignores `tools`.
    """
    if FINAL_LABEL in text:
        return Final(text.split(FINAL_LABEL, 1)[1].strip())
    # What `ACTION: (\w+)\[(.*)\]` reads (the input runs to the last "]" on its line), found without
    # backtracking: a line whose first call has no "]" after it has none for the later calls either.
    pos = 0
    while (m := _NAIVE_ACTION.search(text, pos)) is not None:
        line_end = text.find("\n", m.end())
        line_end = len(text) if line_end == -1 else line_end
        close = text.rfind("]", m.end(), line_end)
        if close != -1:
            return Action(m.group(1), text[m.end() : close])
        pos = line_end
    return error("empty" if not text.strip() else "no_directive")


def parse_strict(text: str, *, tools: Collection[str] = ()) -> Parsed:
    return parse(text, strict=True, tools=tools)


PARSERS = {"naive": parse_naive, "strict": parse_strict, "tolerant": parse}
