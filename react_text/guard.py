"""The stop guard: keep the model from writing its own observation.

The observation label is sent as `stop`, and every reply is cut again here, because many servers
and models ignore `stop` (and some reject it). What is cut is everything from the first
hallucinated observation on:

    an `Observation` label at the start of a line     ...]\\n**Observation 1:** 42
    a capitalised `Observation:` later on a line      ACTION: add[2, 3] Observation: 5
    a partial label at the very end of the reply      ACTION: add[2, 3]\\nObs

All functions are pure and run in time linear in the input.
"""

from __future__ import annotations

from dataclasses import dataclass

import regex

# The Chat API takes at most four. Bare labels catch the label anywhere; the newline forms catch
# numbered or decorated labels ("Observation 1:", "OBSERVATION**:") at the start of a line.
STOP_SEQUENCES: tuple[str, ...] = ("OBSERVATION:", "Observation:", "\nObservation", "\nOBSERVATION")

_DECOR = r"[ \t>#*_\-]{0,12}"
_LINE_LABEL = rf"(?im:^{_DECOR}observation(?:[ \t]*\d{{1,4}})?[ \t*_]{{0,6}}[:：])"
_INLINE_LABEL = r"(?:OBSERVATION|Observation)(?:[ \t]*\d{1,4})?[ \t*_]{0,4}[:：]"
# Two patterns, not one alternation: the regex module scans each far faster alone.
_FULL = (regex.compile(_LINE_LABEL), regex.compile(_INLINE_LABEL))
# A label the stop sequence cut short, or the model stopped in the middle of: "Obs", "OBSERV".
_PREFIXES = "bs|bse|bser|bserv|bserva|bservat|bservati|bservatio|bservation"
_PARTIAL = regex.compile(  # searched in reverse ((?r)): it is anchored at the end
    rf"(?r)(?:(?:^|\n|\]){_DECOR}(?i:o(?:{_PREFIXES}))|[ \t]O(?i:{_PREFIXES}))"
    r"[ \t]*\d{0,4}[ \t*_]{0,6}$"
)
_TAIL = 64  # the partial pattern never spans more than this many characters


@dataclass(frozen=True, slots=True)
class Cut:
    kept: str
    dropped: str  # "" when nothing was cut


def cut(text: str) -> Cut:
    """Cut `text` at the first hallucinated observation. Idempotent: cut(cut(t).kept) keeps the same."""
    end = _first_label(text)
    # Drop partial labels at the very end until none is left (each pass removes at least 3 chars).
    while True:
        start = max(0, end - _TAIL)
        tail = _PARTIAL.search(text, start, end)
        if tail is None:
            break
        # Keep a closing bracket that the partial pattern used as its left anchor.
        end = tail.start() + (1 if text[tail.start()] == "]" else 0)
    return Cut(text[:end], text[end:])


def is_cut(text: str, since: int = 0) -> bool:
    """Whether a full observation label begins in `text` at or after `since` (for streaming).

    Streaming callers pass `since` a little before the new chunk so each check costs the chunk's
    length, not the whole reply's.
    """
    return _first_label(text, max(0, since)) < len(text)


def _first_label(text: str, since: int = 0) -> int:
    """Where the first full observation label starts, or len(text)."""
    starts = [m.start() for m in (p.search(text, since) for p in _FULL) if m is not None]
    return min(starts, default=len(text))


def split_reasoning(text: str) -> tuple[str, str]:
    """(the text inside <think> blocks, the text without them). A lone </think>: all before it is reasoning."""
    reasoning: list[str] = []
    close = text.find("</think>")
    first_open = text.find("<think>")
    if close != -1 and (first_open == -1 or close < first_open):
        reasoning.append(text[:close])
        text = text[close + len("</think>") :]
    parts: list[str] = []
    pos = 0
    while (start := text.find("<think>", pos)) != -1:
        parts.append(text[pos:start])
        end = text.find("</think>", start)
        if end == -1:
            reasoning.append(text[start + len("<think>") :])
            pos = len(text)
            break
        reasoning.append(text[start + len("<think>") : end])
        pos = end + len("</think>")
    parts.append(text[pos:])
    return "\n".join(r.strip("\n") for r in reasoning), "".join(parts)


def stopped_in_thinking(text: str) -> bool:
    """Whether `text` ends inside an unclosed <think> block."""
    return text.rfind("<think>") > text.rfind("</think>")
