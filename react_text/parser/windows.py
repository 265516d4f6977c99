"""Search a label pattern only where it can match: `search(window, text, pos, lasts)`.

A label of the protocol never spans more than one line (and its line break), and each kind holds a
character that most text lacks: a colon ("Action:"), a bracket ("[THOUGHT]"), a "#" ("### Thought").
So a search for one begins at the line of the first such character at or after where it starts and
ends with the line of the last such character in the text. A reply without them costs two
look-ups of a character (memchr, a few microseconds for 100 KB) instead of a scan by a regular
expression; a reply with them costs one scan of the lines between. A pattern anchored at line starts
is not searched in the rest of the line where the search begins. Which match is found does not
change: no match can begin before the window or end after it. A short text is searched whole.

Pure functions; `lasts` is the caller's cache of where each character last occurs in `text`.
"""

from __future__ import annotations

import re
from typing import NamedTuple

__all__ = ["SHORT", "Window", "search"]

SHORT = 1024  # characters: a text up to this long is searched whole


class Window(NamedTuple):
    """A pattern whose every match has one of `first` on the line where it starts and one of
    `last` on the line where it ends (a NamedTuple, so the pumping tests find its pattern)."""

    pattern: re.Pattern[str]
    first: str  # characters: the match's first line holds one of them
    last: str  # characters: the match's last line holds one of them
    lines: bool  # every match starts at a line start


def search(window: Window, text: str, pos: int, lasts: dict[str, int]) -> re.Match[str] | None:
    """The first match of `window.pattern` that starts at or after `pos`, as `pattern.search(text,
    pos)` finds it, read only between the lines its characters allow."""
    if len(text) <= SHORT:  # a whole scan costs less than working out the window
        return window.pattern.search(text, pos)
    if window.lines and pos > 0 and text[pos - 1] != "\n":  # no match starts in the rest of this line
        pos = text.find("\n", pos) + 1
        if pos == 0:
            return None
    first = -1
    for char in window.first:
        at = text.find(char, pos, first if first != -1 else len(text))
        first = at if at != -1 else first
    if first == -1:
        return None
    last = lasts.get(window.last)
    if last is None:
        last = lasts[window.last] = max(text.rfind(char) for char in window.last)
    if last < first:
        return None
    start = max(pos, text.rfind("\n", pos, first) + 1)
    end = text.find("\n", last)
    return window.pattern.search(text, start, len(text) if end == -1 else end + 1)
