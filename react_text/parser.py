"""Read a model's reply: `parse(text, tools=names) -> Action | Final | ParseError`. Never raises; linear time.

The canonical form, and what the tolerant default also reads:

    reply     := ["```" line] [<think>...</think>] [echoed observation] section* [made-up observation ...]
                 ["```"]                         one fence around the whole reply is unwrapped;
                                                 CRLF line ends are read as LF
    section   := label ":" body                 labels at a line start, any case, with markdown
               | "[" label "]" [":"] body          decoration ("**Action 2:**", "### Thought:") or
                                                 in brackets ("[THOUGHT]", "[FINAL ANSWER] 42")
    label     := THOUGHT | ACTION | ACTION INPUT | TOOL | TOOL NAME | TOOL INPUT | FUNCTION NAME
               | FUNCTION INPUT | FINAL [ANSWER] | ANSWER | "AI" (in capitals only: LangChain's
                 conversational answer) (and the same words in Spanish, French, German and
                 Chinese); the words of a label may be joined by spaces, "_", "-" or nothing
                 ("FINAL_ANSWER", "FinalAnswer")
    ACTION    := tool "[" input "]" junk?        balanced brackets; input may span lines, sit in a
                                                 code fence or in quotes; "(" ")" also accepted
               | tool ["(" description ")"] [TOOL CAPTION: ...]  ACTION INPUT: input
                                                 (LangChain/MRKL, Haystack, Bee, BeeAI)
               | JSON blob, bare or fenced        see "JSON blobs" below
               | Finish[answer]                   the ReAct paper's final answer (also answer[...],
                                                 final_answer[...], Final Answer + Action Input)
               | None  then  FINAL ANSWER: ...    "no action" (None, N/A, "I have the final answer")
                                                 followed by the answer is the answer

With no labelled directive, a JSON action blob anywhere in the reply is read, unless it only
looks like a record (a name and members that are no input: {"name": "Bob", "age": 3}) or it is
quoted in the middle of a line of a labelled thought ("Thought: ...called as {"action": ...}").
Upper-case `ACTION:` and `FINAL:` (and `Action:`, `Action Input:`, `Tool Input:`, `Final Answer:`)
also count later on a line, after a space or glued to a sentence ("...search.Action:SearchToolAction
Input:{...}"). Stray decoration after a label's colon is not part of the value ("Action Input: **
{...}"). The first directive wins; the text after it is returned as `discarded`, exactly as written.
Thinking is dropped (of an unclosed <think>, only the tag) and everything from a made-up
observation on is cut first (see `guard`); an observation label that opens the reply is the model
echoing the last observation, and is skipped, not cut.

JSON blobs: keys are compared ignoring case, with spaces and hyphens as "_" ("Action Input"). The
tool is the first string under action, tool, tool_name, name, function, api_name, action_name or
function_name; the input is the value under action_input, tool_input, input, arguments, args,
parameters, action_variables or query (or any key ending in "_input"). The call may sit one level
down, under function, tool_call, function_call, command or tool ({"command": {"name", "args"}},
AutoGPT; {"tool": {"name", "args"}}, SuperAGI). A blob with no name but final_answer, answer or
final is the answer. Strings may hold raw line breaks; a blob may be a Python literal with single
quotes (up to 4096 characters). A blob that names a tool but holds its arguments under a key it
does not know is the error `unread_arguments`: a tool is never run with less than the model wrote.

What an action carries:
- `tool`: a registered name when `tools` are given and one matches where a name is expected
  (exactly, then ignoring case; the registered spelling is returned), so names may hold spaces,
  hyphens, dots and any letters ("Wikipedia Research Tool", `fs.read_file`, `加法`); otherwise an
  identifier, as written. `Finish`, `answer`, `final_answer` (and `final`) name the final answer
  only when no tool of that name is registered.
- `input`: as written, after unwrapping one code fence; quotes around it stay (`"Sunol, CA"` is
  one value, which only the binder can tell; an answer loses one pair). A JSON object or array
  stays JSON text (in a blob, the text of that value); a blob input that is a JSON string is that
  string's text (OpenAI-style `"arguments": "{\\"a\\": 1}"`). An `Action Input:` written as a
  Python literal (`{'a': 1}`) is kept as written too: the parser knows no signatures, the binder
  reads JSON and Python literals alike. An empty `Action Input:` is "".
- `closed`: False when the input had no definite end: a bracket never closed, an `Action Input:`
  that runs to the very end of the reply with no line break after it, a fence never closed.

`parse(text, strict=True)` reads only the canonical form: upper-case labels at a line start, no
decoration, `tool[input]` with nothing after the closing bracket (a registered name exactly as
registered, or an identifier).

Speed: a canonical reply is matched by one anchored regular expression first (a few microseconds);
everything else goes through the sections (bench/parser_speed.py measures both).

Linear time, by construction (a reply of 10,000 spaces after "Action: x" once took 28 s):
- Searched patterns (labels, observations) begin at a line start, a literal word or a lookbehind of
  one character, and every repeat in them is bounded or possessive, so each start costs a bounded
  amount; each is searched once per advance through the reply, never again from the same place.
  Label words are a trie of character classes with possessive separators; a bracket label is only
  tried after "[" and a label's first letter.
- Patterns matched at a position read a window of _NEAR characters at most (labels and names are
  short); runs that adjacent parts could share (spaces before and after a description) are
  possessive, so a long run is never split in every possible way. A fence is read by position.
- Tool names are found by a dictionary of first letters, never by an alternation of names; the
  identifier before a bracket by a scan back over at most 64 characters.
- Repeated work is capped: _SECTIONS sections before the next directive is searched for directly,
  _JSON_TRIES starts of a JSON blob, _CALL_TRIES brackets on an action line, and a Python literal
  only twice per reply and only up to 4096 characters (a quote-aware scan finds its end).
tests/test_pumping.py checks it: every pattern in the package, pumped from its own structure to
100 KB (each repeated part and each pair of adjacent optional or repeated parts, with and without
a failing suffix), and whole replies of every such shape through `parse`, the guard and `Agent`.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import json
import re
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from typing import Literal

import regex

from . import guard, prompting, windows
from .types import Action, Final, Parsed, ParseError, ParseErrorReason

__all__ = [
    "PARSERS",
    "parse",
    "parse_naive",
    "parse_strict",
    "render_action",
]

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


_DECOR = r"[ \t>#*_\-]{0,12}+"  # possessive: no label word starts with one of these characters
_NUMBER = r"(?:[ \t]*\d{1,4})?"
# After a label's colon: the closing half of a bold label ("**Action:** x", "**Action Input:**2"),
# spaces, and stray decoration before the value ("Action Input: ** {...}", crewAI's tests).
_AFTER_COLON = r"(?:\*{1,3}|_{1,3}(?=\s|$))?[ \t]*+(?:[*_]{1,3}[ \t]++)?"


def _initials(words: list[str]) -> str:
    """The characters a label of `words` can start with (a character class's body)."""
    firsts = {w.casefold()[0] for w in words} | {w[0] for w in words}
    either = firsts | {c.upper() for c in firsts if len(c.upper()) == 1}
    return re.escape("".join(sorted(either)))


def _line_label(words: list[str]) -> str:
    """The labels of `words` that begin a line, decorated or in brackets, in one pattern (one scan
    of the reply, not two; after the decoration the two shapes exclude one another, so the match is
    the one each alone would find). Searched in the text with full-width colons made ASCII (see
    `_Labels`).

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
        rf"{_NUMBER}[ \t*_]{{0,6}}:{_AFTER_COLON}"
    )
    return rf"(?m:^{_DECOR}(?:{bracket}|{line}))"


def _heading_label(words: list[str]) -> str:
    """A markdown heading that is nothing but a label, its body on the lines below: "### Thought",
    "## Action" (with a colon, "### Action:" is a line label). Its own pattern: in one with the
    line labels, every line start would try both."""
    return rf"(?m:^[ \t]{{0,3}}#{{1,6}}[ \t]++(?P<word>{_any_case(words)})[ \t]*+\n)"


# Later on a line, in the canonical capitals or title case, after a space or glued to the end of a
# sentence or a name: "THOUGHT: ... ACTION: x[y]", "...search.Action:SearchToolAction Input:{...}".
# A space in a word stands for any run of spaces and tabs, or none ("FinalAnswer:").
_INLINE_WORDS = ["Action Input", "Tool Input", "Final Answer", "Action", "ACTION", "FINAL ANSWER", "FINAL"]
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
    return rf"(?P<word>{alternatives})[ \t]*:[ \t]*"


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
_SECTIONS = 64
_NEAR = 512  # characters a pattern matched at a position may read
_SEPARATORS = re.compile(r"[ \t_\-]+")
_DECORATION = re.compile(r"(?:[*_]{1,3}[ \t]++)?[`'\"*]{0,3}")  # before a tool name: "** Search", "`add`"
_IDENTIFIER = re.compile(r"[A-Za-z_][\w.\-]{0,63}")
_FINAL_NAME = re.compile(r"(?i)final[ \t_]+answer\b")  # "Action: Final Answer" names the answer
_OPEN = re.compile(r"[ \t]*[\[(]")
# What leads from a tool name to its input label: a description in parentheses, decoration, line
# breaks, then "Action Input:" / "Tool Input:" / "Input:" (also when glued: "SearchToolAction Input:").
# Possessive: each run is taken whole, so adjacent runs that accept the same characters (spaces
# before and after a description) cannot split one long run in every possible way.
_INPUT_LABEL = re.compile(
    rf"(?i)[`'\"*.]{{0,3}}+[ \t]*+(?:\([^()\n]{{0,200}}+\))?+[ \t*_`'\".]*+(?:\n[ \t]*+)*+{_DECOR}"
    rf"(?:(?:action|tool|function)[ \t_]*+)?input(?:[ \t]*+\d{{1,4}}+)?+[ \t*_]{{0,6}}+[:：]{_AFTER_COLON}"
)
# Bee's "Tool Caption: Searching for ..." between the name and the input.
_CAPTION = re.compile(r"[ \t]*+\n[ \t]*+(?i:tool[ \t_]*caption)[ \t]*+:[^\n]{0,500}")
# "Action: None", "Action: I have the final answer": no tool, the answer follows.
_NO_ACTION = re.compile(
    r"(?i)[\s`'\"*]*+(?:none|n/?a|null|nil|nothing|no[ _-]?(?:action|tool)s?(?:[ \t]++(?:needed|required))?"
    r"|(?:[^\n]{0,40}[ \t])?final[ \t]++answer)[\s`'\".*!]*+"
)
_NO_TOOLS = frozenset({"none", "n/a", "na", "null", "nil", "nothing"})
# The opening line of a fence: the fence (all of the run), an info string without backticks, the line break.
_FENCE_LINE = re.compile(r"(?P<fence>`{3,}+|~{3,}+)(?P<info>[^\n`]*+)\n")
_FENCE_TAIL = re.compile(r"[ \t]*+\n?+[ \t]*+(?:`{3,}+|~{3,}+)")
_FENCE_RUN = re.compile(r"`{3,}+|~{3,}+")
_FENCE_INFO = re.compile(r"[ \t]*+[\w.+-]{0,20}[ \t]*+")  # "```json", "```py"
_FINISH_TOOLS = frozenset({"finish", "final", "final_answer", "answer"})
_JSON_TRIES = 8  # at most this many "{" are tried as the start of a JSON blob
_JSON_NESTED = 2048  # a JSON object up to this size is also searched inside for a blob
_CALL_TRIES = 8  # at most this many brackets on an action line are tried as a call
_NO_INPUT = re.compile(r"[ \t`'\"*.]*+")  # what is left of an action line with nothing on it
_LABEL_LIKE = re.compile(r"[ \t]*[A-Z][A-Za-z _]{0,24}:")
_BARE_LABEL = re.compile(r"[^\W\d]\w{0,30}[ \t]*[:：]")
_STRICT_TOOL = re.compile(r"(?P<tool>[A-Za-z_][\w.\-]{0,63})\[")
_STRICT = regex.compile(r"(?m)^(?P<word>THOUGHT|ACTION|FINAL):[ \t]?")
# The canonical reply, read in one match (the `re` module: faster than `regex` for this). Nothing in
# it can be a label, an observation, a tag, a fence or quotes to unwrap, so it reads exactly as the
# tolerant path would (a property test checks it); anything else takes that path. Possessive
# repeats, and only replies up to guard.SHORT characters: it never costs more than a scan.
_CANONICAL = re.compile(
    r"[ \t\n]*+(?<![ \t]{13})(?:THOUGHT:[ \t]*+(?P<thought>[^\n:：<\[\]`]*+)\n[ \t\n]*+(?<![ \t]{13}))?"
    r"(?:ACTION:[ \t]*+(?P<tool>[A-Za-z_][\w.\-]{0,63})\[(?P<input>[^\[\]\n:：<`]*+)\]"
    r"|FINAL:[ \t]*+(?P<answer>[^\n:：<\[\]`]*+))(?P<rest>[ \t\n]*+)\Z"
)
_QUOTES = "\"'`"
_BACKTICKS = re.compile(r"`+")
_Match = re.Match[str]


@dataclass(frozen=True, slots=True)
class _Section:
    kind: Kind
    label: int  # where the label begins
    start: int  # where the body begins
    end: int  # where the body ends (the next label, or the end of the reply)


@dataclass(frozen=True, slots=True)
class _Names:
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
            if end < len(text) and _word_char(name[-1]) and _word_char(text[end]):
                continue  # "add" is not the start of "address"
            return name, end
        return None

    def ending(self, text: str) -> str | None:
        """The longest registered name that `text` ends with (any case), after a non-word character."""
        folded = text.casefold()
        for name in self.longest_first:
            if folded.endswith(name.casefold()):
                before = len(text) - len(name)
                if before <= 0 or not (_word_char(text[before - 1]) and _word_char(name[0])):
                    return name
        return None


def _word_char(char: str) -> bool:
    return char.isalnum() or char == "_"


@functools.lru_cache(maxsize=64)
def _names(tools: tuple[str, ...]) -> _Names:
    folded: dict[str, str] = {}
    by_initial: dict[str, list[str]] = {}
    tools = tuple(name for name in tools if name)  # an empty name names nothing
    for name in tools:
        folded.setdefault(name.casefold(), name)
        by_initial.setdefault(name[0].casefold(), []).append(name)
    ordered = {k: tuple(sorted(v, key=len, reverse=True)) for k, v in by_initial.items()}
    return _Names(frozenset(tools), tuple(sorted(set(tools), key=len, reverse=True)), folded, ordered)


def parse(text: str, *, strict: bool = False, tools: Collection[str] = ()) -> Parsed:
    """Read one reply. Returns a ParseError (never raises) for a reply it cannot read.

    `tools`: the registered tool names, matched wherever a name is expected.
    """
    names = _names((tools,) if isinstance(tools, str) else tuple(tools)) if tools else None
    if "\r\n" in text and text.count("\n") == text.count("\r\n"):
        # A reply written with CRLF line ends is read with "\n" ones (its input and answer too);
        # `discarded` stays the reply's own text. Mixed line ends are read as they are.
        parsed = _parse(text.replace("\r\n", "\n"), strict, names)
        if isinstance(parsed, ParseError) or not parsed.discarded:
            return parsed
        # Every "\n" of the discarded suffix was a "\r\n": the suffix as written is that much longer.
        written = len(parsed.discarded) + parsed.discarded.count("\n")
        return dataclasses.replace(parsed, discarded=text[len(text) - written :])
    return _parse(text, strict, names)


def _parse(text: str, strict: bool, names: _Names | None, *, fenced: bool = True) -> Parsed:
    if not strict and (fast := _canonical(text, names)) is not None:
        return fast
    if not strict and fenced and (body := _fenced_reply(text)) is not None:  # a fence around the reply
        start, end = body
        parsed = _parse(text[start:end], strict, names, fenced=False)  # one fence, not a nest of them
        if isinstance(parsed, ParseError):
            return parsed
        # The closing fence belongs to the directive's reply, unless words came after the directive.
        rest = text[end - len(parsed.discarded) :] if parsed.discarded.strip() else ""
        return dataclasses.replace(parsed, discarded=rest)
    readable, pieces = _readable(text)
    if not readable.strip():
        return _error("empty")
    parsed = _parse_strict(readable, names) if strict else _parse_tolerant(readable, names)
    if isinstance(parsed, ParseError) or readable == text:
        return parsed
    # `discarded` is a suffix of what was read; make it the same suffix of the reply as written.
    discarded = text[_position(pieces, len(readable) - len(parsed.discarded)) :]
    if isinstance(parsed, Final):
        return Final(parsed.answer, parsed.thought, discarded)
    return Action(parsed.tool, parsed.input, parsed.thought, discarded, parsed.closed)


def _fenced_reply(text: str) -> tuple[int, int] | None:
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


def _error(reason: ParseErrorReason, thought: str = "") -> ParseError:
    return ParseError(reason, prompting.render(f"errors/{reason}"), thought)


def _readable(text: str) -> tuple[str, list[tuple[int, int]]]:
    """The reply without its thinking and cut by the guard, and the (start, end) pieces of `text`
    it is made of.

    Closed think blocks go, and all before a lone </think>; of an unclosed <think> only the tag
    goes (a small model that opens a block and never closes it writes its protocol there).
    """
    pieces: list[tuple[int, int]] = []
    pos = 0
    if guard.THINK_OPEN in text or guard.THINK_CLOSE in text:
        for start, end in guard.thinking(text):
            pieces.append((pos, start))
            closed = text.endswith(guard.THINK_CLOSE, 0, end)
            pos = end if closed else start + len(guard.THINK_OPEN)
    pieces.append((pos, len(text)))
    readable = text if pos == 0 else "".join(text[a:b] for a, b in pieces)
    return guard.cut(readable).kept, pieces


def _position(pieces: list[tuple[int, int]], index: int) -> int:
    """Where `index` of the readable text lies in the reply."""
    seen = 0
    for start, end in pieces:
        if index <= seen + end - start:
            return start + index - seen
        seen += end - start
    return pieces[-1][1]


def _canonical(text: str, names: _Names | None) -> Action | Final | None:
    """The canonical reply, read fast; None for anything else (the tolerant path then reads it)."""
    m = _CANONICAL.match(text) if len(text) <= guard.SHORT else None
    if m is None:
        return None
    thought = _plain(m.group("thought") or "")
    if thought is None:
        return None
    if (raw := m.group("answer")) is not None:
        answer = _plain(raw)
        if not answer or answer[-1] in _QUOTES:
            return None
        return Final(answer, thought, text[m.start("answer") + len(raw.rstrip(" \t")) :])
    tool, value = m.group("tool"), _plain(m.group("input"))
    if value is None or value[:1] in _QUOTES or value[-1:] in _QUOTES:
        return None
    if names is not None:
        tool = names.lookup(tool)
        if not names.registered(tool):
            return None
    return _directive(tool, value, thought, m.group("rest"), True, names)


def _plain(raw: str) -> str | None:
    """`raw` without its spaces and tabs around, or None when the tolerant reading could differ
    (other whitespace around it; a leading "*" or "_" that a label may take as decoration)."""
    value = raw.strip(" \t")
    return value if value == value.strip() and value[:1] not in ("*", "_") else None


# --- the tolerant default -------------------------------------------------------------------------


class _Labels:
    """The labels of a reply, found lazily from any position (each pass searched once per advance)."""

    def __init__(self, text: str) -> None:
        self.text = text.replace("：", ":") if "：" in text else text  # same length, same positions
        self.found: list[tuple[int, _Match | None]] = [(-1, None)] * len(_LABEL_PASSES)
        self.lasts: dict[str, int] = {}  # characters -> where one of them last occurs in the text

    def next_directive(self, pos: int) -> _Match | None:
        """The first action or answer label that starts at or after `pos` (one search each)."""
        found = []
        for i, label in enumerate(_DIRECTIVE_PASSES):
            origin, m = self.found[i]
            if origin != -1 and origin <= pos and m is None:
                continue  # the same pass of every label word found none from before `pos` on
            if (m := windows.search(label, self.text, pos, self.lasts)) is not None:
                found.append(m)
        return min(found, key=_match_start, default=None)

    def next(self, pos: int) -> _Match | None:
        """The first label that starts at or after `pos`."""
        best: _Match | None = None
        for i, label in enumerate(_LABEL_PASSES):
            origin, m = self.found[i]
            if origin == -1 or origin > pos or (m is not None and m.start() < pos):
                m = windows.search(label, self.text, pos, self.lasts)
                self.found[i] = (pos, m)
            if m is not None and (best is None or m.start() < best.start()):
                best = m
        return best


def _match_start(m: _Match) -> int:
    return m.start()


def _label_word(m: _Match) -> str:
    """The label word a match of a label pattern holds (the last group it matched)."""
    return m.group(m.lastgroup or "word")


def _label_kind(m: _Match) -> Kind:
    return _kind_of(_label_word(m))


@functools.lru_cache(maxsize=256)
def _kind_of(word: str) -> Kind:
    return _KINDS.get(_SEPARATORS.sub("", word.casefold()), "final")


def _sections(text: str, labels: _Labels) -> Iterator[_Section]:
    """The labelled sections of a reply, in order, found lazily: parsing stops at the first directive.

    After _SECTIONS sections that are no directive, the next directive is searched for directly.
    """
    m = labels.next(0)
    others = 0
    while m is not None:
        following = labels.next(m.end())
        kind = _label_kind(m)
        yield _Section(kind, m.start(), m.end(), following.start() if following is not None else len(text))
        if kind not in ("action", "final"):
            others += 1
            if others >= _SECTIONS and following is not None:
                following = labels.next_directive(following.start())
        m = following


def _parse_tolerant(text: str, names: _Names | None) -> Parsed:
    labels = _Labels(text)
    thoughts: list[str] | None = None  # None until a thought label is seen
    sections = _sections(text, labels)
    for section in sections:
        if section.kind == "thought":
            if thoughts is None:
                thoughts = []
            if len(thoughts) < _SECTIONS:
                thoughts.append(text[section.start : section.end].strip())
            continue
        if section.kind not in ("final", "action"):
            continue
        thought = text[: section.label].strip() if thoughts is None else "\n".join(t for t in thoughts if t)
        if section.kind == "final":
            return _read_final(text, section, thought)
        found = _read_action(text, section, labels, thought, names)
        if _no_action(text, section, found, names):
            # "Action: None" / "Action: I have the final answer", then the answer.
            for later in sections:
                if later.kind == "final":
                    return _read_final(text, later, thought)
                if later.kind not in ("input", "thought"):
                    break
        return found
    blob = _json_directive(text, "", names, thinking=thoughts is not None)
    if blob is not None:
        return blob
    return _error("no_directive", "\n".join(t for t in thoughts if t) if thoughts else text.strip())


def _no_action(text: str, section: _Section, found: Parsed, names: _Names | None) -> bool:
    """Whether an action section says there is no action (and so the answer may follow)."""
    if isinstance(found, Action):
        return found.tool.casefold() in _NO_TOOLS and not (names is not None and names.registered(found.tool))
    if isinstance(found, Final):
        return False
    line_end = text.find("\n", section.start, section.end)
    line_end = section.end if line_end == -1 else line_end
    return line_end - section.start <= 80 and _NO_ACTION.fullmatch(text, section.start, line_end) is not None


def _read_final(text: str, section: _Section, thought: str) -> Final | ParseError:
    answer, end = _answer(text, section.start, section.end)
    if not answer or _only_labels(answer):
        return _error("empty_answer", thought)
    return Final(answer, thought, text[end:])


def _answer(text: str, start: int, end: int) -> tuple[str, int]:
    """The answer of a FINAL section, and where it ends in `text`.

    A one-line answer followed by a blank line or by a label-like line ("RESULT: ...") is
    complete: small models keep talking after it ("FINAL: 2192\n\nThe answer is 2192."). An answer
    that goes on over several plain lines, or whose first line introduces what follows
    ("Here are the steps:"), is kept whole.
    """
    body = text[start:end]
    answer = _unquote(_unwrap(body))
    first, newline, rest = answer.partition("\n")
    first = first.strip()
    if newline and first and not first.endswith(":") and (rest.startswith("\n") or _LABEL_LIKE.match(rest)):
        return first, start + body.find(first) + len(first)
    return answer, start + len(body.rstrip())


def _only_labels(answer: str) -> bool:
    """An "answer" that is nothing but bare labels ("FINISH:\n\nFINISH:") holds no answer."""
    if ":" not in answer and "：" not in answer:
        return False
    if not _BARE_LABEL.fullmatch(answer.partition("\n")[0].strip()):
        return False
    return all(_BARE_LABEL.fullmatch(line.strip()) for line in answer.splitlines() if line.strip())


def _read_action(text: str, section: _Section, labels: _Labels, thought: str, names: _Names | None) -> Parsed:
    start = min(_skip_space(text, section.start), section.end)
    brace = _blob_start(text, start, section.end)
    if brace is not None:  # a JSON blob, bare or fenced (LangChain structured chat, smolagents)
        found = _decoded_blob(text, brace, thought, names)
        return found if found is not None else _error("bad_action", thought)
    name = _name_at(text, start, section.end, names)
    if name is not None:
        tool, after = name
        label = _INPUT_LABEL.match(text, after, after + _NEAR)
        if label is None and (caption := _CAPTION.match(text, after, after + _NEAR)) is not None:
            label = _INPUT_LABEL.match(text, caption.end(), caption.end() + _NEAR)
        if label is not None:  # tool [(description)] then Action Input: value (LangChain/MRKL)
            return _labelled_input(text, tool, label.end(), labels, thought, names)
        opening = _OPEN.match(text, after, min(section.end, after + _NEAR))
        if opening is not None:  # tool[input]
            return _bracketed(text, tool, opening.end() - 1, section, thought, names)
    call = _call_in_line(text, start, section.end, section, thought, names)
    if call is not None:  # "I will use calculator[17*23]"
        return call
    line_end = text.find("\n", start, section.end)
    rest = text[name[1] : section.end if line_end == -1 else line_end] if name is not None else "x"
    return _error("missing_input" if _NO_INPUT.fullmatch(rest) else "bad_action", thought)


def _blob_start(text: str, start: int, end: int) -> int | None:
    """Where a JSON blob starts when the section opens with one (perhaps in a fence), else None."""
    if text.startswith("{", start):
        return start
    if text.startswith(("```", "~~~"), start):
        line_end = text.find("\n", start, end)
        if line_end != -1:
            pos = _skip_space(text, line_end + 1)
            if text.startswith("{", pos):
                return pos
    return None


def _name_at(text: str, pos: int, limit: int, names: _Names | None) -> tuple[str, int] | None:
    """The tool name written at `pos`, and the index after it.

    A registered name may run past `limit`: "Tool: Search Tool Input: ..." finds a "Tool Input:"
    label inside the name "Search Tool".
    """
    decoration = _DECORATION.match(text, pos)
    pos = decoration.end() if decoration is not None else pos
    if names is not None and (registered := names.at(text, pos)) is not None:
        return registered
    m = _FINAL_NAME.match(text, pos, limit) or _IDENTIFIER.match(text, pos, limit)
    if m is None:
        return None
    return (names.lookup(m.group()) if names is not None else m.group()), m.end()


def _labelled_input(
    text: str, tool: str, start: int, labels: _Labels, thought: str, names: _Names | None
) -> Action | Final:
    """The value of an `Action Input:` that starts at `start`: up to the next label."""
    following = labels.next(start)
    end = following.start() if following is not None else len(text)
    raw = text[start:end]
    value = _unwrap(raw)
    stop = start + len(raw.rstrip())
    closed = following is not None or "\n" in text[stop:]
    if closed and value and raw.strip().startswith(("```", "~~~")) and _fenced(raw.strip()) is None:
        closed = False  # a fence never closed
    if not closed and value[:1] in "{[":
        closed = _is_json(value)
    return _directive(tool, value, thought, text[stop:], closed, names)


def _is_json(value: str) -> bool:
    try:
        json.loads(value)
    except (ValueError, RecursionError):
        return False
    return True


def _bracketed(
    text: str, tool: str, open_at: int, section: _Section, thought: str, names: _Names | None
) -> Action | Final | ParseError:
    # The input may hold what looks like a label ("x\nFINAL: y" in a fence): look for its end in
    # the whole reply first, and only then within the section.
    found = _close(text, open_at, section.end)
    if found is None:
        return _error("missing_input", thought)
    inner, end, closed = found
    return _directive(tool, _unwrap(inner), thought, text[end:], closed, names)


def _call_in_line(
    text: str, start: int, limit: int, section: _Section, thought: str, names: _Names | None
) -> Action | Final | ParseError | None:
    """A call later on the action's first line: the first bracket with a tool name before it."""
    line_end = text.find("\n", start, limit)
    line_end = limit if line_end == -1 else line_end
    for tries, bracket in enumerate(_brackets(text, start, line_end)):
        if tries == _CALL_TRIES:
            break
        before = text[max(start, bracket - 80) : bracket].rstrip(" \t")
        tool = names.ending(before) if names is not None else None
        if tool is None:
            written = _trailing_identifier(before)
            if written is None:
                continue
            tool = names.lookup(written) if names is not None else written
        return _bracketed(text, tool, bracket, section, thought, names)
    return None


def _brackets(text: str, start: int, end: int) -> Iterator[int]:
    """Where each "[" and "(" of text[start:end] is, in order (found by str.find, not a scan)."""
    square, round_ = text.find("[", start, end), text.find("(", start, end)
    while square != -1 or round_ != -1:
        if round_ == -1 or (square != -1 and square < round_):
            yield square
            square = text.find("[", square + 1, end)
        else:
            yield round_
            round_ = text.find("(", round_ + 1, end)


def _trailing_identifier(text: str) -> str | None:
    """The identifier `text` ends with (spaces after it allowed): the longest one of at most 64
    characters that starts with a letter or "_" and holds only word characters, dots and hyphens.

    A scan back from the end over at most 64 characters (a searched pattern would try every start).
    """
    end = len(text.rstrip(" \t"))
    start = end
    while start > max(0, end - 64) and (_word_char(text[start - 1]) or text[start - 1] in ".-"):
        start -= 1
    while start < end and not ((text[start].isalpha() and text[start].isascii()) or text[start] == "_"):
        start += 1
    return text[start:end] if start < end else None


def _directive(
    tool: str, value: str, thought: str, discarded: str, closed: bool, names: _Names | None
) -> Action | Final:
    """An answer loses one pair of quotes around it; a tool's input keeps them, for the binder to read."""
    if _finishes(tool, names):
        return Final(_unquote(value), thought, discarded)
    return Action(tool, value, thought, discarded, closed)


def _finishes(tool: str, names: _Names | None) -> bool:
    """Whether `tool` names the final answer: Finish, answer, final_answer, unless registered."""
    return tool.casefold().replace(" ", "_") in _FINISH_TOOLS and not (names is not None and names.registered(tool))


def _close(text: str, open_at: int, fallback_limit: int) -> tuple[str, int, bool] | None:
    """The input between the bracket at `open_at` and its balanced partner, the index after it, and
    whether it closed.

    An input whose closing bracket never comes runs to the last closing bracket before
    `fallback_limit` (the end of its section), or to that point; it is not closed.
    """
    end = guard.input_end(text, open_at)
    if end is not None:
        return text[open_at + 1 : end - 1], end, True
    pos = open_at + 1
    last = text.rfind("]" if text[open_at] == "[" else ")", pos, fallback_limit)
    inner = text[pos:last] if last != -1 else text[pos:fallback_limit]
    if not inner.strip():
        return None
    return inner, (last + 1 if last != -1 else pos + len(inner.rstrip())), False


def _unwrap(value: str) -> str:
    """Strip whitespace and one code fence."""
    value = value.strip()
    fenced = _fenced(value)
    if fenced is not None:
        return fenced
    if value.endswith("```") and value.count("```") % 2:  # a fence closed that was never opened
        value = value[:-3].rstrip()
    return value


def _unquote(value: str) -> str:
    """Without one pair of matching quotes or backticks around it (none inside)."""
    if len(value) >= 2 and value[0] == value[-1] and value[0] in _QUOTES and value[0] not in value[1:-1]:
        return value[1:-1]
    return value


def _fenced(value: str) -> str | None:
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


# --- JSON action blobs ----------------------------------------------------------------------------

# Keys are compared casefolded, with spaces and hyphens as underscores ("Action Input" is action_input).
_NAME_KEYS = ("action", "tool", "tool_name", "name", "function", "api_name", "action_name", "function_name")
# An object under one of these holds the call: {"function": {"name", "arguments"}}, {"tool_call": {...}},
# AutoGPT's {"command": {"name", "args"}}, SuperAGI's {"tool": {"name", "args"}}.
_WRAPPERS = ("function", "tool_call", "function_call", "command", "tool")
_INPUT_KEYS = (
    "action_input", "tool_input", "input", "arguments", "args", "parameters", "action_variables", "query",
)  # fmt: skip
_FINAL_KEYS = ("final_answer", "answer", "final")
# Members that say something about a call but are no part of its arguments.
_NOTE_KEYS = frozenset({"thought", "thoughts", "reasoning", "plan", "criticism", "speak", "explanation", "id", "type"})
_DECODER = json.JSONDecoder(strict=False)  # strings may hold raw line breaks, as models write them
_JSON_SPACE = re.compile(r"[ \t\n\r]*")
_LITERAL_SIZE = 4096  # a Python-literal blob ({'action': 'x'}) is read up to this size
_LITERAL_TRIES = 2  # and at most this many are tried in a reply
_LITERAL_START = re.compile(r"\{\s{0,16}'")
# What may come before a blob that makes up the whole reply: a fence opener, ModelScope's marker.
_BLOB_LEAD = re.compile(r"(?:<\|startofthink\|>)?[ \t\n]*+(?:(?:`{3,}|~{3,})[\w-]{0,20})?[ \t\n]*+")


@dataclass(frozen=True, slots=True)
class _Object:
    """A decoded object and its text exactly as written (JSON, or a Python literal)."""

    value: dict[str, object]
    source: str
    python: bool

    def keys(self) -> dict[str, str]:
        """Normalised key -> the key as written (the first of any that normalise alike)."""
        keyed: dict[str, str] = {}
        for key in self.value:
            keyed.setdefault(_SEPARATORS.sub("_", key.strip().casefold()), key)
        return keyed

    def written(self, key: str) -> str:
        """The text of member `key`'s value, as written."""
        if self.python:
            body = ast.parse(self.source, mode="eval").body
            if isinstance(body, ast.Dict):
                for k, v in zip(body.keys, body.values, strict=True):
                    if isinstance(k, ast.Constant) and k.value == key:
                        return ast.get_source_segment(self.source, v) or ""
            return ""
        start, end = _members(self.source, 0)[key]
        return self.source[start:end]

    def inner(self, key: str) -> _Object:
        value = self.value[key]
        return _Object(value if isinstance(value, dict) else {}, self.written(key), self.python)


def _json_directive(text: str, thought: str, names: _Names | None, *, thinking: bool) -> Parsed | None:
    """The first JSON object in `text` that names a tool or an answer (few tries, linear).

    A blob in prose must look like a call (a name and its input); one with a name and members that
    are no input is a record the model quotes, not a call. A blob that is the whole reply is read as
    one under an Action label is. `thinking`: the reply has a Thought label, and a blob that starts
    in the middle of a line ("...called with a blob like {...}") is quoted in the thought, not a call.
    """
    pos = 0
    literals = _LITERAL_TRIES
    for _ in range(_JSON_TRIES):
        brace = text.find("{", pos)
        if brace == -1:
            return None
        decoded = _decode(text, brace, literals > 0)
        if decoded is None:
            literals -= _LITERAL_START.match(text, brace) is not None
            pos = brace + 1
            continue
        obj, stop = decoded
        if thinking and _mid_line(text, brace):
            pos = stop
            continue
        alone = _BLOB_LEAD.fullmatch(text, 0, brace) is not None
        found = _blob(text, obj, stop, thought, names, prose=not alone)
        if found is not None:
            return found
        # Look inside a small object ({"tool_calls": [{...}]}); step over a large one, so the
        # tries decode at most a few kilobytes more than the reply holds.
        pos = brace + 1 if stop - brace <= _JSON_NESTED else stop
    return None


def _mid_line(text: str, brace: int) -> bool:
    """Whether words come before `brace` on its line (a fence opener or marker does not count)."""
    line_start = text.rfind("\n", max(0, brace - 200), brace) + 1
    if line_start == 0 and brace > 200:
        return True
    return _BLOB_LEAD.fullmatch(text, line_start, brace) is None


def _decoded_blob(text: str, brace: int, thought: str, names: _Names | None) -> Parsed | None:
    """The directive of the object at `brace` under an Action label, or None if there is none."""
    decoded = _decode(text, brace, True)
    if decoded is None:
        return None
    obj, stop = decoded
    return _blob(text, obj, stop, thought, names, prose=False)


def _decode(text: str, brace: int, literal: bool) -> tuple[_Object, int] | None:
    """The object at `brace` and the index after it: JSON, or (when `literal`) a small Python literal."""
    try:
        value, stop = _DECODER.raw_decode(text, brace)
    except (ValueError, RecursionError):
        return _literal(text, brace) if literal and _LITERAL_START.match(text, brace) else None
    return (_Object(value, text[brace:stop], False), stop) if isinstance(value, dict) else None


def _literal(text: str, brace: int) -> tuple[_Object, int] | None:
    """A Python dict literal ({'action': 'search'}) at `brace`, up to _LITERAL_SIZE characters."""
    stop = _literal_end(text, brace, min(len(text), brace + _LITERAL_SIZE))
    if stop is None:
        return None
    source = text[brace:stop]
    try:
        value = ast.literal_eval(source)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
        return None
    return _Object(value, source, True), stop


def _literal_end(text: str, start: int, limit: int) -> int | None:
    """Just past the brace that closes the one at `start`, skipping quoted strings, or None."""
    depth = 0
    quote = ""
    pos = start
    while pos < limit:
        char = text[pos]
        if quote:
            if char == "\\":
                pos += 1
            elif char == quote:
                quote = ""
            elif char == "\n":
                return None
        elif char in "'\"":
            quote = char
        elif char in "{[(":
            depth += 1
        elif char in "}])":
            depth -= 1
            if depth == 0:
                return pos + 1
        pos += 1
    return None


def _blob(text: str, obj: _Object, stop: int, thought: str, names: _Names | None, *, prose: bool) -> Parsed | None:
    """The directive of a decoded object that ends at `stop`, or None if it is not one.

    `prose`: the object sits in free text, so one that is not plainly a call is no directive. Not
    in prose, a tool named with members that are no input it can read is an error: a call is never
    made with less than the model wrote.
    """
    fence = _FENCE_TAIL.match(text, stop)
    discarded = text[fence.end() if fence is not None else stop :]
    keys = obj.keys()
    for wrapper in _WRAPPERS:
        if wrapper in keys and isinstance(obj.value[keys[wrapper]], dict):
            obj = obj.inner(keys[wrapper])
            keys = obj.keys()
            break
    named = next((k for k in _NAME_KEYS if k in keys and isinstance(obj.value[keys[k]], str)), None)
    if named is None:
        for key in _FINAL_KEYS:
            if key in keys and isinstance(obj.value[keys[key]], str | int | float):
                return Final(_answer_text(obj, keys[key]), thought, discarded)
        return None
    name = str(obj.value[keys[named]]).strip()
    if not name:
        return None
    tool = names.lookup(name) if names is not None else name
    given = next((k for k in _INPUT_KEYS if k in keys), None)
    given = given or next((k for k in keys if k.endswith("_input")), None)  # Dify: any key holding "input"
    if given is None:
        unread = [k for k in keys if k != named and k not in _NOTE_KEYS]
        if unread:
            return None if prose else _error("unread_arguments", thought)
        return Final("", thought, discarded) if _finishes(tool, names) else Action(tool, "", thought, discarded)
    if _finishes(tool, names):
        return Final(_answer_text(obj, keys[given]), thought, discarded)
    return Action(tool, _input_text(obj, keys[given]), thought, discarded)


def _input_text(obj: _Object, key: str) -> str:
    """A blob's input as tool input text: a string's text; any other value as written."""
    value = obj.value[key]
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    return obj.written(key)


def _answer_text(obj: _Object, key: str) -> str:
    """A blob's final answer: as _input_text, and a one-key object gives its value ({"answer": x})."""
    value = obj.value[key]
    if isinstance(value, dict) and len(value) == 1:
        inner = next(iter(value.values()))
        return inner if isinstance(inner, str) else json.dumps(inner, ensure_ascii=False)
    return _input_text(obj, key)


def _members(text: str, brace: int) -> dict[str, tuple[int, int]]:
    """Where each member's value of the (valid) JSON object at `brace` is written: key -> (start, end)."""
    spans: dict[str, tuple[int, int]] = {}
    pos = _skip_space(text, brace + 1)
    while text.startswith('"', pos):
        key, pos = _DECODER.raw_decode(text, pos)
        start = _skip_space(text, _skip_space(text, pos) + 1)  # after the colon
        _, end = _DECODER.raw_decode(text, start)
        spans[key] = (start, end)
        pos = _skip_space(text, end)
        if text.startswith(",", pos):
            pos = _skip_space(text, pos + 1)
    return spans


def _skip_space(text: str, pos: int) -> int:
    m = _JSON_SPACE.match(text, pos)
    return m.end() if m is not None else pos


# --- the strict canonical form --------------------------------------------------------------------


def _parse_strict(text: str, names: _Names | None = None) -> Parsed:
    labels = list(_STRICT.finditer(text))
    thought = ""
    for i, m in enumerate(labels):
        end = labels[i + 1].start() if i + 1 < len(labels) else len(text)
        body = text[m.end() : end]
        word = m.group("word")
        if word == "THOUGHT":
            thought = body.strip()
        elif word == "FINAL":
            answer = body.strip()
            stop = m.end() + len(body.rstrip())
            return Final(answer, thought, text[stop:]) if answer else _error("empty_answer", thought)
        else:
            tool = _strict_tool(body, names)
            if tool is None:
                return _error("bad_action", thought)
            name, open_at = tool
            close = guard.input_end(body, open_at)
            if close is None or body[close:].strip():
                return _error("missing_input" if close is None else "bad_action", thought)
            return Action(name, body[open_at + 1 : close - 1], thought, text[m.end() + close :])
    return _error("no_directive", thought)


def _strict_tool(body: str, names: _Names | None) -> tuple[str, int] | None:
    """The tool name at the start of a strict ACTION body (a registered name exactly as registered,
    or an identifier), and where its "[" is."""
    if names is not None:
        for name in names.longest_first:
            if name and body.startswith(name + "["):
                return name, len(name)
    m = _STRICT_TOOL.match(body)
    return (m.group("tool"), m.end() - 1) if m is not None else None


# --- rendering an action ---------------------------------------------------------------------------


def render_action(tool: str, value: str) -> str:
    """`ACTION: tool[value]`, written so that `parse` reads back exactly `tool` and `value`.

    A value that the tolerant reading would change (surrounding space, several lines, unbalanced
    brackets, fences) goes in a code fence longer than any run of backticks in it.
    Values holding an observation label or a <think> tag are beyond any text protocol: the guard
    cuts the first, the parser drops the second.
    """
    plain = f"ACTION: {tool}[{value}]"
    closes_at_end = guard.input_end(plain, len(f"ACTION: {tool}")) == len(plain)
    if "\n" not in value and "```" not in value and _unwrap(value) == value and closes_at_end:
        return plain
    longest = max((len(m) for m in _BACKTICKS.findall(value)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"ACTION: {tool}[{fence}\n{value}\n{fence}]"


# --- the naive baseline, for comparison -----------------------------------------------------------

_NAIVE_ACTION = re.compile(r"ACTION: (\w++)\[")


def parse_naive(text: str, *, tools: Collection[str] = ()) -> Parsed:
    """The parser of the 40-line tutorials: FINAL: checked first, then one regex for ACTION: tool[input].

    Kept as the baseline of the robustness scoreboard; not used by the engine. Ignores `tools`.
    """
    if "FINAL:" in text:
        return Final(text.split("FINAL:", 1)[1].strip())
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
    return _error("empty" if not text.strip() else "no_directive")


def parse_strict(text: str, *, tools: Collection[str] = ()) -> Parsed:
    return parse(text, strict=True, tools=tools)


PARSERS = {"naive": parse_naive, "strict": parse_strict, "tolerant": parse}
