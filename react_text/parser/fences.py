"""Code fences and quotes: one fence around a value (unwrapped, read by position, never by a back
reference), one pair of quotes around an answer, and a fence around the whole reply.
"""

from __future__ import annotations

import re

__all__ = ["QUOTES", "fence_body", "fenced_reply", "unquote", "unwrap"]

# The opening line of a fence: the fence (all of the run), an info string without backticks, the line break.
_FENCE_LINE = re.compile(r"(?P<fence>`{3,}+|~{3,}+)(?P<info>[^\n`]*+)\n")
_FENCE_RUN = re.compile(r"`{3,}+|~{3,}+")
_FENCE_INFO = re.compile(r"[ \t]*+[\w.+-]{0,20}[ \t]*+")  # "```json", "```py"
QUOTES = "\"'`"


def fenced_reply(text: str) -> tuple[int, int] | None:
    """Where the body of a fence around the whole reply lies, or None: the reply's first line (after
    blank ones) opens a fence, and its last closes that fence, exactly."""
    start = len(text) - len(text.lstrip())
    fence = _FENCE_RUN.match(text, start)
    if fence is None:
        return None
    line_end = text.find("\n", fence.end())
    stripped = text.rstrip()
    run = fence.group()
    if line_end == -1 or not stripped.endswith("\n" + run, line_end):
        return None
    closing = len(stripped) - len(run)
    if closing - 1 < line_end + 1:
        return None
    if _FENCE_INFO.fullmatch(text, fence.end(), line_end) is None:
        return None
    return line_end + 1, closing - 1


def unwrap(value: str) -> str:
    """Strip whitespace and one code fence."""
    value = value.strip()
    body = fence_body(value)
    if body is not None:
        return body
    if value.endswith("```") and value.count("```") % 2:  # a fence closed that was never opened
        value = value[:-3].rstrip()
    return value


def unquote(value: str) -> str:
    """Without one pair of matching quotes or backticks around it (none inside)."""
    if len(value) >= 2 and value[0] == value[-1] and value[0] in QUOTES and value[0] not in value[1:-1]:
        return value[1:-1]
    return value


def fence_body(value: str) -> str | None:
    """The body of `value` when all of it is one fenced block (a fence of three or more backticks or
    tildes and an info string on the first line, the same fence closing it at the very end), else
    None. Read by position, not by a pattern: a fence is a run of any length, and matching its
    closing run by back reference costs the square of its length."""
    m = _FENCE_LINE.match(value)
    if m is None:
        return None
    run = m.group("fence")
    end = len(value.rstrip(" \t"))
    closing = end - len(value[:end].rstrip(run[0]))  # the run of fence characters at the end
    size = len(run) if run[0] == "`" else min(len(run), closing)  # a tilde run may lend its tail to the info
    if size < 3 or closing < size or end - size < m.end() - 1:
        return None
    body_end = end - size
    if body_end > m.end() - 1 and value[body_end - 1] == "\n":
        body_end -= 1
    return value[m.end() : max(body_end, m.end())]
