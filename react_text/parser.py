"""Read a model's reply: `parse(text) -> Action | Final | ParseError`. Never raises; linear time.

The canonical form, and what the tolerant default also reads:

    reply     := [<think>...</think>] section* [hallucinated observation ...]
    section   := label ":" body                 labels at a line start, any case, with markdown
                                                 decoration ("**Action 2:**", "### Thought:")
    label     := THOUGHT | ACTION | ACTION INPUT | TOOL | TOOL INPUT | FINAL [ANSWER] | ANSWER
                 (and the same words in Spanish, French, German and Chinese)
    ACTION    := tool "[" input "]" junk?        balanced brackets; input may span lines, sit in a
                                                 code fence or in quotes; "(" ")" also accepted
               | tool  then  ACTION INPUT: input  (LangChain/MRKL, Haystack's Tool/Tool Input)
               | JSON blob                        {"action": t, "action_input": i} and kin
               | Finish[answer]                   the ReAct paper's final answer

With no labelled directive, a JSON action blob anywhere in the reply is read. Upper-case `ACTION:` and
`FINAL:` (and `Action:`, `Final Answer:`) also count in the middle of a line. The first directive
wins; the text after it is returned as `discarded`. Everything from a hallucinated observation on is
cut first (see `guard`).

`parse(text, strict=True)` reads only the canonical form: upper-case labels at a line start, no
decoration, `tool[input]` with nothing after the closing bracket.
"""

from __future__ import annotations

import heapq
import json
from collections.abc import Collection, Iterator
from dataclasses import dataclass
from typing import Literal

import regex

from . import guard, prompting
from .types import Action, Final, Parsed, ParseError, ParseErrorReason

Kind = Literal["thought", "action", "input", "final", "turn"]

_LABELS: dict[str, Kind] = {}
for _kind, _words in {
    "thought": "thought thinking reasoning pensamiento razonamiento pensée réflexion gedanke 思考 想法",
    "action": "action tool acción accion aktion 行动 動作 操作",
    "input": "action_input tool_input",
    "final": "final final_answer answer respuesta_final respuesta réponse_finale réponse "
    "endgültige_antwort antwort 最终答案 答案",
    # a made-up next turn ("Task: ...", "QUESTION: ...") ends the section before it
    "turn": "task question",
}.items():
    for _word in _words.split():
        _LABELS[_word] = _kind  # type: ignore[assignment]

_LABEL_WORDS = "|".join(w.replace("_", r"[ \t_]+") for w in sorted(_LABELS, key=len, reverse=True))
_DECOR = r"[ \t>#*_\-]{0,12}"
_NUMBER = r"(?:[ \t]*\d{1,4})?"
# At a line start, decorated: "**Action 2:**", "### Thought:", "> Final Answer:". (Two patterns, not one
# alternation: the regex module scans each far faster alone.)
_LINE_LABEL = regex.compile(
    rf"(?im:^{_DECOR}(?:\d{{1,3}}[.)][ \t]*)?(?P<word>{_LABEL_WORDS}){_NUMBER}"
    r"[ \t*_]{0,6}[:：](?:[*_]{1,3}(?=\s|$))?[ \t]*)"
)
# Later on a line, only in the canonical capitals or title case: "THOUGHT: ... ACTION: x[y]".
_INLINE_LABEL = regex.compile(r"(?<=[ \t])(?P<word>ACTION|FINAL|FINAL ANSWER|Action|Final Answer)[ \t]*:[ \t]*")
_TOOL = regex.compile(r"[`'\"*]{0,3}(?P<tool>[A-Za-z_][\w.\-]{0,63})[ \t]*(?P<open>[\[(])")
_BARE_TOOL = regex.compile(r"[`'\"*]{0,3}(?P<tool>[A-Za-z_][\w.\-]{0,63})[`'\"*.]{0,3}[ \t]*(?:\n|$)")
_FENCE = regex.compile(r"(?s)^(?P<fence>`{3,}|~{3,})[^\n`]*\n(?P<body>.*?)\n?(?P=fence)[ \t]*$")
_FINISH_TOOLS = frozenset({"finish", "final", "final_answer", "answer"})
_JSON_TRIES = 8  # at most this many "{" are tried as the start of a JSON blob
_BRACKET_RUNS = {"[": regex.compile(r"\[+|\]+"), "(": regex.compile(r"\(+|\)+")}
_LABEL_LIKE = regex.compile(r"[ \t]*[A-Z][A-Za-z _]{0,24}:")
_SPACES = regex.compile(r"[ \t_]+")
_FENCE_OPEN = regex.compile(r"[ \t]*\n?(?P<fence>`{3,})")
_CLOSE_AFTER_FENCE = {c: regex.compile(rf"[ \t]*\n?[ \t]*{regex.escape(c)}") for c in "])"}
_STRICT_TOOL = regex.compile(r"(?P<tool>[A-Za-z_][\w.\-]{0,63})\[")
_STRICT = regex.compile(r"(?m)^(?P<word>THOUGHT|ACTION|FINAL):[ \t]?")


@dataclass(frozen=True, slots=True)
class _Section:
    kind: Kind
    start: int  # where the body begins
    end: int  # where the body ends (the next label, or the end of the reply)


def parse(text: str, *, strict: bool = False, tools: Collection[str] = ()) -> Parsed:
    """Read one reply. Returns a ParseError (never raises) for a reply it cannot read."""
    text = guard.cut(_drop_thinking(text)).kept
    if not text.strip():
        return _error("empty")
    return _parse_strict(text) if strict else _parse_tolerant(text)


def _error(reason: ParseErrorReason, thought: str = "") -> ParseError:
    return ParseError(reason, prompting.render(f"errors/{reason}"), thought)


def _drop_thinking(text: str) -> str:
    """Remove <think>...</think> blocks, and all before a lone </think> (its opening was in the prompt)."""
    lone_close = text.find("</think>")
    first_open = text.find("<think>")
    if lone_close != -1 and (first_open == -1 or lone_close < first_open):
        text = text[lone_close + len("</think>") :]
    parts: list[str] = []
    pos = 0
    while (start := text.find("<think>", pos)) != -1:
        close = text.find("</think>", start)
        if close == -1:  # never closed: keep the text, drop the tag
            parts.append(text[pos:start])
            pos = start + len("<think>")
            break
        parts.append(text[pos:start])
        pos = close + len("</think>")
    parts.append(text[pos:])
    return "".join(parts)


# --- the tolerant default -------------------------------------------------------------------------


def _sections(text: str) -> Iterator[_Section]:
    """The labelled sections of a reply, in order, found lazily: parsing stops at the first directive."""
    labels = heapq.merge(_LINE_LABEL.finditer(text), _INLINE_LABEL.finditer(text), key=lambda m: m.start())
    previous: tuple[Kind, int] | None = None  # the kind and body start of the section being read
    end = -1
    for m in labels:
        if m.start() < end:  # the same label found by both patterns
            continue
        end = m.end()
        if previous is not None:
            yield _Section(previous[0], previous[1], m.start())
        previous = (_LABELS.get(_SPACES.sub("_", m.group("word").casefold()), "final"), m.end())
    if previous is not None:
        yield _Section(previous[0], previous[1], len(text))


def _parse_tolerant(text: str) -> Parsed:
    thoughts: list[str] = []
    sections = _sections(text)
    section = next(sections, None)
    while section is not None:
        following = next(sections, None)
        body = text[section.start : section.end]
        if section.kind == "thought":
            thoughts.append(body.strip())
        elif section.kind in ("final", "action"):
            thought = "\n".join(t for t in thoughts if t) or text[: _label_start(text, section)].strip()
            if section.kind == "action":
                return _read_action(text, section, following, thought)
            answer, chatter = _answer(body)
            if not answer:
                return _error("empty_answer", thought)
            return Final(answer, thought, "\n\n".join(p for p in (chatter, text[section.end :].strip()) if p))
        section = following
    blob = _json_directive(text, 0, len(text))
    if blob is not None:
        return blob
    return _error("no_directive", "\n".join(thoughts) or text.strip())


def _answer(body: str) -> tuple[str, str]:
    """The answer of a FINAL section, and the chatter after it.

    A one-line answer followed by a blank line or by a label-like line ("RESULT: ...") is
    complete: small models keep talking after it ("FINAL: 2192\n\nThe answer is 2192."). An answer
    that goes on over several plain lines, or whose first line introduces what follows
    ("Here are the steps:"), is kept whole.
    """
    answer = _unwrap(body)
    first, newline, rest = answer.partition("\n")
    first = first.strip()
    if newline and first and not first.endswith(":") and (rest.startswith("\n") or _LABEL_LIKE.match(rest)):
        return first, rest.strip()
    return answer, ""


def _label_start(text: str, section: _Section) -> int:
    """Where the label that opens `section` begins (the start of its line)."""
    return max(0, text.rfind("\n", 0, section.start))


def _read_action(text: str, section: _Section, following: _Section | None, thought: str) -> Parsed:
    body = text[section.start : section.end]
    lead = len(body) - len(body.lstrip())
    start = section.start + lead
    stripped = _unwrap(body)
    if stripped.startswith("{"):
        found = _json_directive(stripped, 0, len(stripped), thought)
        return found if found is not None else _error("bad_action", thought)
    line_end = text.find("\n", start, section.end)
    m = _TOOL.match(text, start, section.end) or _TOOL.search(text, start, section.end if line_end == -1 else line_end)
    if m is not None:
        # The input may hold what looks like a label ("x\nFINAL: y" in a fence): look for its end
        # in the whole reply first, and only then within the section.
        closed = _close(text, m.end() - 1, len(text), fallback_limit=section.end)
        if closed is None:
            return _error("missing_input", thought)
        inner, end = closed
        return _directive(m.group("tool"), inner, thought, text[end:].strip())
    m = _BARE_TOOL.match(text, start, section.end)
    if m is not None:
        if following is not None and following.kind == "input":
            value = _unwrap(text[following.start : following.end])
            if not value:
                return _error("missing_input", thought)
            return _directive(m.group("tool"), _json_input(value), thought, text[following.end :].strip())
        return _error("missing_input", thought)
    return _error("bad_action", thought)


def _directive(tool: str, raw_input: str, thought: str, discarded: str) -> Action | Final:
    value = _unwrap(raw_input)
    if tool.casefold() in _FINISH_TOOLS:
        return Final(value, thought, discarded)
    return Action(tool, value, thought, discarded)


def _close(text: str, open_at: int, limit: int, fallback_limit: int | None = None) -> tuple[str, int] | None:
    """The input between the bracket at `open_at` and its balanced partner, and the index after it.

    A fenced input (tool[```...```]) may hold unbalanced brackets. An input whose closing bracket
    never comes before `limit` runs to the last closing bracket before `fallback_limit` (the end of
    its section), or to that point.
    """
    opener = text[open_at]
    closer = "]" if opener == "[" else ")"
    pos = open_at + 1
    fence = _FENCE_OPEN.match(text, pos, min(limit, pos + 64))
    if fence is not None:
        ticks = fence.group("fence")
        end_fence = text.find("\n" + ticks, fence.end(), limit)
        if end_fence != -1:
            after = end_fence + 1 + len(ticks)
            m = _CLOSE_AFTER_FENCE[closer].match(text, after, limit)
            if m is not None:
                return text[pos:after], m.end()
    depth = 1
    for run in _BRACKET_RUNS[opener].finditer(text, pos, limit):  # a run of brackets at a time
        size = run.end() - run.start()
        if text[run.start()] == opener:
            depth += size
        elif size >= depth:
            close_at = run.start() + depth - 1
            return text[pos:close_at], close_at + 1
        else:
            depth -= size
    limit = limit if fallback_limit is None else fallback_limit
    last = text.rfind(closer, pos, limit)
    inner = text[pos:last] if last != -1 else text[pos:limit]
    if not inner.strip():
        return None
    return inner, (last + 1 if last != -1 else limit)


def _unwrap(value: str) -> str:
    """Strip whitespace, one code fence, and one pair of matching quotes or backticks."""
    value = value.strip()
    fenced = _FENCE.match(value)
    if fenced is not None:
        return str(fenced.group("body"))
    if value.endswith("```") and value.count("```") % 2:  # a fence closed that was never opened
        value = value[:-3].rstrip()
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'`":
        inner = value[1:-1]
        if value[0] not in inner:
            return inner
    return value


# --- JSON action blobs ----------------------------------------------------------------------------

_NAME_KEYS = ("action", "tool", "tool_name", "name", "function")
_INPUT_KEYS = ("action_input", "tool_input", "input", "arguments", "args", "parameters", "query")
_FINAL_KEYS = ("final_answer", "answer", "final")
_DECODER = json.JSONDecoder()


def _json_directive(text: str, start: int, end: int, thought: str = "") -> Action | Final | None:
    """The first JSON object in text[start:end] that names a tool or an answer (few tries, linear)."""
    pos = start
    for _ in range(_JSON_TRIES):
        brace = text.find("{", pos, end)
        if brace == -1:
            return None
        try:
            value, stop = _DECODER.raw_decode(text[brace:end])
        except (ValueError, RecursionError):
            pos = brace + 1
            continue
        found = _from_json(value, thought, text[brace + stop : end].strip())
        if found is not None:
            return found
        pos = brace + 1
    return None


def _from_json(value: object, thought: str, discarded: str) -> Action | Final | None:
    if not isinstance(value, dict):
        return None
    blob: dict[str, object] = value
    function = blob.get("function")
    if isinstance(function, dict):  # {"function": {"name": ..., "arguments": ...}}
        blob = function
    for key in _FINAL_KEYS:
        if isinstance(blob.get(key), str | int | float) and not any(k in blob for k in _NAME_KEYS):
            return Final(str(blob[key]), thought, discarded)
    name = next((v for k in _NAME_KEYS if isinstance(v := blob.get(k), str)), None)
    if not name:
        return None
    raw = next((blob[k] for k in _INPUT_KEYS if k in blob), "")
    arg = _scalar(raw)
    if name.casefold().replace(" ", "_") in _FINISH_TOOLS:
        return Final(arg, thought, discarded)
    return Action(name, arg, thought, discarded)


def _scalar(value: object) -> str:
    """A JSON input as tool input text: a lone value of a one-key object is unwrapped."""
    if isinstance(value, str):
        try:  # OpenAI-style arguments are a JSON string holding an object
            decoded = json.loads(value)
        except (ValueError, RecursionError):
            return value
        return _scalar(decoded) if isinstance(decoded, dict) else value
    if isinstance(value, dict) and len(value) == 1:
        return _scalar(next(iter(value.values())))
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False)
    return "" if value is None else str(value)


def _json_input(value: str) -> str:
    """`Action Input:` holding JSON (LlamaIndex) is unwrapped like a blob's input."""
    if value[:1] in '{["':
        try:
            return _scalar(json.loads(value))
        except (ValueError, RecursionError):
            return value
    return value


# --- the strict canonical form --------------------------------------------------------------------


def _parse_strict(text: str) -> Parsed:
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
            rest = text[end:].strip()
            return Final(answer, thought, rest) if answer else _error("empty_answer", thought)
        else:
            tool = _STRICT_TOOL.match(body)
            if tool is None:
                return _error("bad_action", thought)
            closed = _close(body, tool.end() - 1, len(body))
            if closed is None or body[closed[1] :].strip():
                return _error("missing_input" if closed is None else "bad_action", thought)
            return Action(tool.group("tool"), closed[0], thought, text[end:].strip())
    return _error("no_directive", thought)


# --- rendering an action ---------------------------------------------------------------------------


def render_action(tool: str, value: str) -> str:
    """`ACTION: tool[value]`, written so that `parse` reads back exactly `tool` and `value`.

    A value that the tolerant reading would change (quotes, surrounding space, several lines,
    unbalanced brackets, fences) goes in a code fence longer than any run of backticks in it.
    Values holding an observation label or a <think> tag are beyond any text protocol: the guard
    cuts the first, the parser drops the second.
    """
    plain = f"ACTION: {tool}[{value}]"
    closed = _close(plain, len(f"ACTION: {tool}"), len(plain))
    if "\n" not in value and "```" not in value and _unwrap(value) == value and closed == (value, len(plain)):
        return plain
    longest = max((len(m) for m in regex.findall(r"`+", value)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"ACTION: {tool}[{fence}\n{value}\n{fence}]"


# --- the naive baseline, for comparison -----------------------------------------------------------

_NAIVE_ACTION = regex.compile(r"ACTION: (\w+)\[(.*)\]")


def parse_naive(text: str, *, tools: Collection[str] = ()) -> Parsed:
    """The parser of the 40-line tutorials: FINAL: checked first, then one regex for ACTION: tool[input].

    Kept as the baseline of the robustness scoreboard; not used by the engine.
    """
    if "FINAL:" in text:
        return Final(text.split("FINAL:", 1)[1].strip())
    m = _NAIVE_ACTION.search(text)
    if m is not None:
        return Action(m.group(1), m.group(2))
    return _error("empty" if not text.strip() else "no_directive")


def parse_strict(text: str, *, tools: Collection[str] = ()) -> Parsed:
    return parse(text, strict=True, tools=tools)


PARSERS = {"naive": parse_naive, "strict": parse_strict, "tolerant": parse}
