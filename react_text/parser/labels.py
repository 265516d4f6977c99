"""The labels of a reply: the label words, their decorations, the label patterns, and `Labels`,
which finds the label lines lazily from any position.

A label opens a section: "THOUGHT:", "**Action 2:**", "### Thought", "[FINAL ANSWER]", or later on
a line "...search.Action:". The words (in five languages, joined by spaces, "_", "-" or nothing) are
a trie of character classes; each kind of label is one pattern on `re`, searched only in its
window (see `react_text.parser.windows`), once per advance through the reply.
"""

from __future__ import annotations

import functools
import re
from typing import Literal

import regex

from react_text.core import protocol
from react_text.core.protocol import DECOR
from react_text.parser import windows

__all__ = ["AFTER_COLON", "SEPARATORS", "Kind", "Labels", "Match", "label_kind"]

Kind = Literal["thought", "action", "input", "final", "turn"]

_LABELS: dict[str, Kind] = {}
for _kind, _words in {
    "thought": "thought thinking reasoning pensamiento razonamiento pensée réflexion gedanke 思考 想法",
    # "Tool Name:" and "Function Name:" open the call of Bee and BeeAI
    "action": "action tool tool_name function_name acción accion aktion 行动 動作 操作",
    "input": "action_input tool_input function_input",
    "final": "final final_answer answer respuesta_final respuesta réponse_finale réponse "
    "endgültige_antwort antwort 最终答案 答案",
    # a made-up next turn ("Task: ...", "QUESTION: ...") ends the section before it
    "turn": "task question",
}.items():
    for _word in _words.split():
        _LABELS[_word] = _kind  # type: ignore[assignment]
# The protocol's own words are labels of their kind whatever they are (today they are in the lists).
for _word, _kind in ((protocol.THOUGHT, "thought"), (protocol.ACTION, "action"), (protocol.FINAL, "final")):
    _LABELS.setdefault(_word.casefold(), _kind)  # type: ignore[arg-type]
# Labels read only in the case written here: LangChain's conversational agent answers after "AI:"
# (in any case, "ai:" would end an input at a line of YAML).
_CASED: dict[str, Kind] = {"AI": "final"}
_KINDS: dict[str, Kind] = {_word.replace("_", ""): _kind for _word, _kind in _LABELS.items()}
_KINDS.update({_word.casefold(): _kind for _word, _kind in _CASED.items()})


_Trie = dict[str, "_Trie"]


def _any_case(words: list[str]) -> str:
    """An alternation of `words` in any case, written out as a trie of character classes.

    `(?i)` would do, but the regex module then tries every position of the reply; spelled out, it
    looks for the required colon first, and a 100 KB reply without labels costs microseconds.
    "_" in a word stands for any run of spaces, tabs, underscores or hyphens, or none: "Final Answer",
    "FINAL_ANSWER", "Final-Answer" and "FinalAnswer" are one label.
    """
    trie: _Trie = {}
    for word in words:
        node = trie
        for char in word.casefold():
            node = node.setdefault(char, {})
        node[""] = {}
    return _alternation(trie)


def _alternation(node: _Trie) -> str:
    branches = []
    for char, child in sorted(node.items()):
        if char == "_":
            branches.append(r"[ \t_\-]*+" + _alternation(child))
        elif char:
            upper = char.upper()
            either = len(upper) == 1 and upper != char
            branches.append((f"[{upper}{char}]" if either else regex.escape(char)) + _alternation(child))
    if not branches:
        return ""
    body = branches[0] if len(branches) == 1 else f"(?:{'|'.join(branches)})"
    return f"(?:{body})?" if "" in node else body


_NUMBER = r"(?:[ \t]*\d{1,4})?"
# After a label's colon: the closing half of a bold label ("**Action:** x", "**Action Input:**2"),
# spaces, and stray decoration before the value ("Action Input: ** {...}", crewAI's tests).
AFTER_COLON = r"(?:\*{1,3}|_{1,3}(?=\s|$))?[ \t]*+(?:[*_]{1,3}[ \t]++)?"


def _initials(words: list[str]) -> str:
    """The characters a label of `words` can start with (a character class's body)."""
    firsts = {w.casefold()[0] for w in words} | {w[0] for w in words}
    either = firsts | {c.upper() for c in firsts if len(c.upper()) == 1}
    return re.escape("".join(sorted(either)))


def _line_label(words: list[str]) -> str:
    """The labels of `words` that begin a line, decorated or in brackets, in one pattern (one scan
    of the reply, not two; after the decoration the two shapes exclude one another, so the match is
    the one each alone would find). Searched in the text with full-width colons made ASCII (see
    `Labels`).

    - decorated, ending in a colon: "**Action 2:**", "### Thought:", "> Final Answer:", "1. Thought:";
    - in square brackets (Semantic Kernel's stepwise planner): "[THOUGHT]", "[ACTION]",
      "[FINAL ANSWER] 42", and a colon after the bracket is taken too.

    The word is the group `bracket` or `word`, whichever matched (`_label_word`).
    """
    trie = _any_case(words)
    cased = [w for w, kind in _CASED.items() if any(_LABELS[v] == kind for v in words)]
    bracket = rf"\[(?=[{_initials(words)}])(?P<bracket>{trie}){_NUMBER}\][ \t]*+(?::[ \t]*+)?"
    line = (
        rf"(?=[\d{_initials(words + cased)}])(?:\d{{1,3}}[.)][ \t]*)?(?P<word>{trie}{''.join(f'|{w}' for w in cased)})"
        rf"{_NUMBER}[ \t*_]{{0,6}}:{AFTER_COLON}"
    )
    return rf"(?m:^{DECOR}(?:{bracket}|{line}))"


def _heading_label(words: list[str]) -> str:
    """A markdown heading that is nothing but a label, its body on the lines below: "### Thought",
    "## Action" (with a colon, "### Action:" is a line label). Its own pattern: in one with the
    line labels, every line start would try both."""
    return rf"(?m:^[ \t]{{0,3}}#{{1,6}}[ \t]++(?P<word>{_any_case(words)})[ \t]*+\n)"


# Later on a line, in the canonical capitals or title case, after a space or glued to the end of a
# sentence or a name: "THOUGHT: ... ACTION: x[y]", "...search.Action:SearchToolAction Input:{...}".
# A space in a word stands for any run of spaces and tabs, or none ("FinalAnswer:").
_INLINE_WORDS = [
    "Action Input",
    "Tool Input",
    "Final Answer",
    "Action",
    protocol.ACTION,
    "FINAL ANSWER",
    protocol.FINAL,
]
_INLINE_AFTER = r"[ \t.,;!?)\]\"'`*a-z0-9]"  # what may come just before an inline label


def _inline_label(words: list[str]) -> str:
    """The words grouped by their first letter, which opens each group and is only then checked for
    what comes before it: the engines skip to the letters fast, a lookbehind first tries every place."""
    groups: dict[str, list[str]] = {}
    for word in words:
        groups.setdefault(word[0], []).append(word[1:].replace(" ", r"[ \t]*+"))
    alternatives = "|".join(
        f"{first}(?<={_INLINE_AFTER}{first})(?:{'|'.join(rests)})" for first, rests in groups.items()
    )
    return rf"(?P<word>{alternatives})(?:[ \t]++\d{{1,4}}+)?+[ \t]*:[ \t]*"


def _passes(words: list[str], inline_words: list[str]) -> tuple[windows.Window, ...]:
    """The three label patterns of `words`, each searched in its window (see `windows`) on `re`:
    faster than the regex module on these, short reply or long (`re` skips fast to the characters a
    pattern opens with; each opens with a class of them or a line start). A line label holds a
    colon or brackets, an inline label a colon, a heading a "#"."""
    return (
        windows.Window(re.compile(_line_label(words)), ":[", ":]", lines=True),
        windows.Window(re.compile(_inline_label(inline_words)), ":", ":", lines=False),
        windows.Window(re.compile(_heading_label(words)), "#", "#", lines=True),
    )


_LABEL_PASSES = _passes(list(_LABELS), _INLINE_WORDS)
# Only the labels that open a directive: after _SECTIONS other sections, the next one is searched
# for directly, so a reply of 10,000 "Thought:" lines costs one search, not 10,000. Pass i of these
# matches a subset of what pass i of _LABEL_PASSES matches (its words are a subset).
_DIRECTIVE_WORDS = [w for w, kind in _LABELS.items() if kind in ("action", "final")]
_DIRECTIVE_PASSES = _passes(_DIRECTIVE_WORDS, [w for w in _INLINE_WORDS if "Input" not in w])
SEPARATORS = re.compile(r"[ \t_\-]+")
Match = re.Match[str]


class Labels:
    """The labels of a reply, found lazily from any position (each pass searched once per advance)."""

    def __init__(self, text: str) -> None:
        self.text = protocol.fold_colons(text)  # same length, same positions
        self.found: list[tuple[int, Match | None]] = [(-1, None)] * len(_LABEL_PASSES)
        self.lasts: dict[str, int] = {}  # characters -> where one of them last occurs in the text

    def next_directive(self, pos: int) -> Match | None:
        """The first action or answer label that starts at or after `pos` (one search each)."""
        found = []
        for i, label in enumerate(_DIRECTIVE_PASSES):
            origin, m = self.found[i]
            if origin != -1 and origin <= pos and m is None:
                continue  # the same pass of every label word found none from before `pos` on
            if (m := windows.search(label, self.text, pos, self.lasts)) is not None:
                found.append(m)
        return min(found, key=_match_start, default=None)

    def next(self, pos: int) -> Match | None:
        """The first label that starts at or after `pos`."""
        best: Match | None = None
        for i, label in enumerate(_LABEL_PASSES):
            origin, m = self.found[i]
            if origin == -1 or origin > pos or (m is not None and m.start() < pos):
                m = windows.search(label, self.text, pos, self.lasts)
                self.found[i] = (pos, m)
            if m is not None and (best is None or m.start() < best.start()):
                best = m
        return best


def _match_start(m: Match) -> int:
    return m.start()


def _label_word(m: Match) -> str:
    """The label word a match of a label pattern holds (the last group it matched)."""
    return m.group(m.lastgroup or "word")


def label_kind(m: Match) -> Kind:
    return _kind_of(_label_word(m))


@functools.lru_cache(maxsize=256)
def _kind_of(word: str) -> Kind:
    return _KINDS.get(SEPARATORS.sub("", word.casefold()), "final")
