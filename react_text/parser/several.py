"""Read several actions from one reply (`Prompting(parallel=True)`): `parse_several(text, tools=names)`.

    THOUGHT: the weather and the rate do not depend on each other
    ACTION: weather[Athens]                         ->  Actions((weather[Athens], fx[100 USD]))
    ACTION: fx[100 USD]

The reply is read by a one-directive parser (`parse` by default, or the agent's own); while what it
read is an action with text left after it, that text is read again, so every dialect the parser
knows works here too, numbered labels (`Action 1:` ... `Action 2:`) included. The reading stops at
the first thing that is not an action: a FINAL after actions is not taken (the answer cannot know
the results), prose is left as `discarded`. A JSON array of action objects (`[{"action": ...},
{"action": ...}]`) is read element by element. One action alone is returned as the `Action` it is,
so a reply with one call reads exactly as it does with parallel actions off.

Linear time per reading: at most `most + 1` actions are read (the one past `most` tells the loop the
cap was passed), each a reading of the rest of the reply.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection
from dataclasses import replace

from react_text.core.protocol import DECOR, THOUGHT
from react_text.core.types import Action, Actions, Parsed, Reading
from react_text.parser import parse
from react_text.parser.labels import AFTER_COLON

__all__ = [
    "SingleParser",
    "parse_several",
]

SingleParser = Callable[..., Parsed]

# A JSON array of objects at a line start ("[{", "[ {", "[\n  {"), after any fence line.
_ARRAY = re.compile(r"(?m)^[ \t]*+\[[ \t\n]*+\{")
# The thought label before the array, decorated as a label line may be ("- Thought:", "**Thought:**").
_THOUGHT_LABEL = re.compile(rf"(?i)\A{DECOR}{re.escape(THOUGHT)}[ \t*_]{{0,6}}+:{AFTER_COLON}")
_DECODER = json.JSONDecoder(strict=False)


def parse_several(text: str, *, tools: Collection[str] = (), most: int = 4, parser: SingleParser = parse) -> Reading:
    """Every action of the reply, in order (at most `most + 1` are read); never raises.

    Returns an `Actions` for two or more; otherwise what `parser` reads of the reply.
    """
    array = _array(text, tools, most, parser)
    if array is not None:
        return array
    first = parser(text, tools=tools)
    if not isinstance(first, Action):
        return first  # a FINAL, or what the parser could not read
    found = [first]
    rest = first.discarded
    while rest.strip() and len(found) <= most:
        following = parser(rest, tools=tools)
        if not isinstance(following, Action):
            break  # a FINAL (refused next to actions), prose or noise: it stays discarded
        found.append(following)
        rest = following.discarded
    if len(found) == 1:
        return first
    return Actions(tuple(replace(a, discarded="") for a in found), first.thought, rest)


def _array(text: str, tools: Collection[str], most: int, parser: SingleParser) -> Actions | None:
    """A JSON array whose every element reads as an action; None otherwise."""
    opening = _ARRAY.search(text)
    if opening is None:
        return None
    start = text.index("[", opening.start())
    try:
        value, end = _DECODER.raw_decode(text, start)
    except ValueError:
        return None
    if not isinstance(value, list) or len(value) < 2 or not all(isinstance(v, dict) for v in value):
        return None
    found: list[Action] = []
    for element in value[: most + 1]:
        read = parser(json.dumps(element, ensure_ascii=False), tools=tools)
        if not isinstance(read, Action):
            return None
        found.append(replace(read, discarded=""))
    thought = _THOUGHT_LABEL.sub("", text[:start].strip(), count=1).strip()
    if thought.startswith(("```", "~~~")):
        thought = ""
    return Actions(tuple(found), thought, text[end:])
