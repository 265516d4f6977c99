"""The tolerant reader: a reply's labelled sections, in order, up to the first directive.

An action in any dialect the package's docstring lists (`tool[input]`, `tool` then `Action Input:`,
a JSON blob, a call later on the line, "no action" then the answer), an answer that ends at
chatter, and the thought before them. Sections are found lazily (`labels.Labels`); after
_SECTIONS of them that are no directive, the next directive is searched for directly.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass

import regex

from react_text.core.protocol import DECOR
from react_text.core.types import Action, Final, Parsed, ParseError
from react_text.parser import families, guard, markup
from react_text.parser.blobs import decoded_blob, json_directive, skip_space
from react_text.parser.calls import keyword_answer
from react_text.parser.common import Names, error, finishes, word_char
from react_text.parser.fences import fence_body, unquote, unwrap
from react_text.parser.labels import AFTER_COLON, Kind, Labels, label_kind

__all__ = ["directive", "read_tolerant"]

_SECTIONS = 64
_NEAR = 512  # characters a pattern matched at a position may read
_DECORATION = re.compile(r"(?:[*_]{1,3}[ \t]++)?[`'\"*]{0,3}")  # before a tool name: "** Search", "`add`"
_IDENTIFIER = re.compile(r"[A-Za-z_][\w.\-]{0,63}")  # with the names given: an unregistered name, as before
# Without the names: a name starts with any letter ("天气", "погода", "हिंदी": `regex`'s \w holds the
# combining marks), and may be up to five such words ("web search", "Ask question to coworker").
_NAME = regex.compile(r"[^\W\d][\w.\-]{0,63}+")
_WORDS = regex.compile(r"[^\W\d][\w.\-]{0,63}+(?: [^\W\d][\w.\-]{0,63}+){1,4}+")
_NAME_START, _NAME_CHAR = regex.compile(r"[^\W\d]"), regex.compile(r"[\w.\-]")  # one character each
# Words that make a run of words a sentence, not a tool's name: a subject, a modal, a gerund, an
# article ("I will use search[x]", "Using the calculator[...]"); then only the last word is the name,
# as a call later on the line. Imperatives are not among them: names are often one ("Use Requests",
# "Ask question to coworker").
_PROSE = frozenset({
    "i", "we", "me", "my", "you", "let", "lets",
    "will", "shall", "should", "would", "could", "can", "must", "need", "want", "going",
    "now", "then", "next", "using", "calling", "invoking", "trying", "the", "a", "an",
})  # fmt: skip
_FINAL_NAME = re.compile(r"(?i)final[ \t_]+answer\b")  # "Action: Final Answer" names the answer
_OPEN = re.compile(r"[ \t]*[\[(]")
# What leads from a tool name to its input label: a description in parentheses, decoration, line
# breaks, then "Action Input:" / "Tool Input:" / "Input:" (also when glued: "SearchToolAction Input:").
# Possessive: each run is taken whole, so adjacent runs that accept the same characters (spaces
# before and after a description) cannot split one long run in every possible way.
_INPUT_LABEL = re.compile(
    rf"(?i)[`'\"*.]{{0,3}}+[ \t]*+(?:\([^()\n]{{0,200}}+\))?+[ \t*_`'\".]*+(?:\n[ \t]*+)*+{DECOR}"
    rf"(?:(?:action|tool|function)[ \t_]*+)?input(?:[ \t]*+\d{{1,4}}+)?+[ \t*_]{{0,6}}+[:：]{AFTER_COLON}"
)
# Bee's "Tool Caption: Searching for ..." between the name and the input.
_CAPTION = re.compile(r"[ \t]*+\n[ \t]*+(?i:tool[ \t_]*caption)[ \t]*+:[^\n]{0,500}")
# "Action: None", "Action: I have the final answer": no tool, the answer follows.
_NO_ACTION = re.compile(
    r"(?i)[\s`'\"*]*+(?:none|n/?a|null|nil|nothing|no[ _-]?(?:action|tool)s?(?:[ \t]++(?:needed|required))?"
    r"|(?:[^\n]{0,40}[ \t])?final[ \t]++answer)[\s`'\".*!]*+"
)
_NO_TOOLS = frozenset({"none", "n/a", "na", "null", "nil", "nothing"})
_CALL_TRIES = 8  # at most this many brackets on an action line are tried as a call
_NO_INPUT = re.compile(r"[ \t`'\"*.]*+")  # what is left of an action line with nothing on it
_LABEL_LIKE = re.compile(r"[ \t]*[A-Z][A-Za-z _]{0,24}:")
_BARE_LABEL = re.compile(r"[^\W\d]\w{0,30}[ \t]*[:：]")


@dataclass(frozen=True, slots=True)
class _Section:
    kind: Kind
    label: int  # where the label begins
    start: int  # where the body begins
    end: int  # where the body ends (the next label, or the end of the reply)


def _sections(text: str, labels: Labels) -> Iterator[_Section]:
    """The labelled sections of a reply, in order, found lazily: parsing stops at the first directive.

    After _SECTIONS sections that are no directive, the next directive is searched for directly.
    """
    m = labels.next(0)
    others = 0
    while m is not None:
        following = labels.next(m.end())
        kind = label_kind(m)
        yield _Section(kind, m.start(), m.end(), following.start() if following is not None else len(text))
        if kind not in ("action", "final"):
            others += 1
            if others >= _SECTIONS and following is not None:
                following = labels.next_directive(following.start())
        m = following


def read_tolerant(text: str, names: Names | None) -> Parsed:
    labels = Labels(text)
    early = families.first(text, labels, names)  # a markup call, code or unlabelled call before any label
    if early.parsed is not None:
        return early.parsed
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
            if section.start < early.start < section.end:  # a call opens on a later line: the answer ends there
                section = _Section(section.kind, section.label, section.start, early.start)
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
    blob = json_directive(text, "", names, thinking=thoughts is not None)
    if blob is not None:
        return blob
    return error("no_directive", "\n".join(t for t in thoughts if t) if thoughts else text.strip())


def _no_action(text: str, section: _Section, found: Parsed, names: Names | None) -> bool:
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
        return error("empty_answer", thought)
    return Final(answer, thought, text[end:])


def _answer(text: str, start: int, end: int) -> tuple[str, int]:
    """The answer of a FINAL section, and where it ends in `text`.

    A one-line answer followed by a blank line or by a label-like line ("RESULT: ...") is
    complete: small models keep talking after it ("FINAL: 2192\n\nThe answer is 2192."). An answer
    that goes on over several plain lines, or whose first line introduces what follows
    ("Here are the steps:"), is kept whole.
    """
    body = text[start:end]
    answer = unquote(unwrap(body))
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


def _read_action(text: str, section: _Section, labels: Labels, thought: str, names: Names | None) -> Parsed:
    start = min(skip_space(text, section.start), section.end)
    token = markup.opening(text, start)  # "action:\n<action><tool_name>...", "Action: <tool_call>..."
    if token is not None and (call := markup.read(text, start, token, thought, names)) is not None:
        return call
    brace = _blob_start(text, start, section.end)
    if brace is not None:  # a JSON blob, bare or fenced (LangChain structured chat, smolagents)
        found = decoded_blob(text, brace, thought, names)
        return found if found is not None else error("bad_action", thought)
    name = _name_at(text, start, section.end, names)
    if name is not None:
        tool, after = name
        follows = _input_after(text, after, section.end)
        if follows is not None:
            labelled, at = follows
            if labelled:  # tool [(description)] then Action Input: value (LangChain/MRKL)
                return _labelled_input(text, tool, at, labels, thought, names)
            return _bracketed(text, tool, at, section, thought, names)  # tool[input]
    call = _call_in_line(text, start, section.end, section, thought, names)
    if call is not None:  # "I will use calculator[17*23]"
        return call
    line_end = text.find("\n", start, section.end)
    rest = text[name[1] : section.end if line_end == -1 else line_end] if name is not None else "x"
    return error("missing_input" if _NO_INPUT.fullmatch(rest) else "bad_action", thought)


def _blob_start(text: str, start: int, end: int) -> int | None:
    """Where a JSON blob starts when the section opens with one (perhaps in a fence), else None."""
    if text.startswith("{", start):
        return start
    if text.startswith(("```", "~~~"), start):
        line_end = text.find("\n", start, end)
        if line_end != -1:
            pos = skip_space(text, line_end + 1)
            if text.startswith("{", pos):
                return pos
    return None


def _input_after(text: str, after: int, limit: int) -> tuple[bool, int] | None:
    """What follows a tool name that ends at `after`: (True, where the value of its `Action Input:`
    begins), (False, where its "[" or "(" is), or None."""
    label = _INPUT_LABEL.match(text, after, after + _NEAR)
    if label is None and (caption := _CAPTION.match(text, after, after + _NEAR)) is not None:
        label = _INPUT_LABEL.match(text, caption.end(), caption.end() + _NEAR)
    if label is not None:
        return True, label.end()
    opening = _OPEN.match(text, after, min(limit, after + _NEAR))
    return (False, opening.end() - 1) if opening is not None else None


def _name_at(text: str, pos: int, limit: int, names: Names | None) -> tuple[str, int] | None:
    """The tool name written at `pos`, and the index after it.

    A registered name may run past `limit`: "Tool: Search Tool Input: ..." finds a "Tool Input:"
    label inside the name "Search Tool". With the names given, a name that is not registered is an
    identifier (an ASCII letter first); without them, any letter may come first, and a name may be
    words (`_words_at`).
    """
    decoration = _DECORATION.match(text, pos)
    pos = decoration.end() if decoration is not None else pos
    if names is not None:
        if (registered := names.at(text, pos)) is not None:
            return registered
        m = _FINAL_NAME.match(text, pos, limit) or _IDENTIFIER.match(text, pos, limit)
        return (names.lookup(m.group()), m.end()) if m is not None else None
    alone = _FINAL_NAME.match(text, pos, limit) or _words_at(text, pos, limit) or _NAME.match(text, pos, limit)
    return (alone.group(), alone.end()) if alone is not None else None


def _words_at(text: str, pos: int, limit: int) -> regex.Match[str] | None:
    """A name of two to five words at `pos` ("web search", "Wikipedia Research Tool"), single
    spaces between them, when it is all that comes before its input (a bracket or an `Action
    Input:`) or all of its line; None when it is longer than 64 characters, or reads as a sentence
    (a word of _PROSE: "I will use search", "Use the calculator") or as "no action".
    """
    m = _WORDS.match(text, pos, limit)
    if m is None or len(m.group()) > 64 or _NO_ACTION.fullmatch(m.group()):
        return None
    if any(word.casefold() in _PROSE for word in m.group().split(" ")):
        return None
    line_end = text.find("\n", m.end(), limit)
    line_end = limit if line_end == -1 else line_end
    if _input_after(text, m.end(), limit) is None and not _NO_INPUT.fullmatch(text, m.end(), line_end):
        return None
    return m


def _labelled_input(
    text: str, tool: str, start: int, labels: Labels, thought: str, names: Names | None
) -> Action | Final:
    """The value of an `Action Input:` that starts at `start`: up to the next label."""
    following = labels.next(start)
    end = following.start() if following is not None else len(text)
    raw = text[start:end]
    value = unwrap(raw)
    stop = start + len(raw.rstrip())
    closed = following is not None or "\n" in text[stop:]
    if closed and value and raw.strip().startswith(("```", "~~~")) and fence_body(raw.strip()) is None:
        closed = False  # a fence never closed
    if not closed and value[:1] in "{[":
        closed = _is_json(value)
    return directive(tool, value, thought, text[stop:], closed, names)


def _is_json(value: str) -> bool:
    try:
        json.loads(value)
    except (ValueError, RecursionError):
        return False
    return True


def _bracketed(
    text: str, tool: str, open_at: int, section: _Section, thought: str, names: Names | None
) -> Action | Final | ParseError:
    # The input may hold what looks like a label ("x\nFINAL: y" in a fence): look for its end in
    # the whole reply first, and only then within the section.
    found = _close(text, open_at, section.end)
    if found is None:
        return error("missing_input", thought)
    inner, end, closed = found
    return directive(tool, unwrap(inner), thought, text[end:], closed, names)


def _call_in_line(
    text: str, start: int, limit: int, section: _Section, thought: str, names: Names | None
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
            written = _trailing_identifier(before, any_letter=names is None)
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


def _trailing_identifier(text: str, *, any_letter: bool) -> str | None:
    """The identifier `text` ends with (spaces after it allowed): the longest one of at most 64
    characters that starts with a letter or "_" and holds only word characters, dots and hyphens.
    The letter is an ASCII one unless `any_letter` (then the characters are `_NAME`'s).

    A scan back from the end over at most 64 characters (a searched pattern would try every start).
    """
    end = len(text.rstrip(" \t"))
    start = end
    while start > max(0, end - 64) and _in_name(text[start - 1], any_letter):
        start -= 1
    while start < end and not _starts_name(text[start], any_letter):
        start += 1
    return text[start:end] if start < end else None


def _in_name(char: str, any_letter: bool) -> bool:
    return _NAME_CHAR.match(char) is not None if any_letter else word_char(char) or char in ".-"


def _starts_name(char: str, any_letter: bool) -> bool:
    if any_letter:
        return _NAME_START.match(char) is not None
    return (char.isalpha() and char.isascii()) or char == "_"


def directive(tool: str, value: str, thought: str, discarded: str, closed: bool, names: Names | None) -> Action | Final:
    """An answer loses one pair of quotes around it; a tool's input keeps them, for the binder to read."""
    if finishes(tool, names):
        return Final(keyword_answer(value), thought, discarded)  # `finish(answer="x")` is x
    return Action(tool, value, thought, discarded, closed)


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
