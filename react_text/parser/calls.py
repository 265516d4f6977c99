"""Calls written with no label: continuations of a prompt that ended in `Action 3:`, and call syntax.

    Search[Colorado orogeny]                    a registered tool's call alone on its line (the
    search(query="Colorado orogeny")            ReAct paper's harness asks again with the prompt
                                                ending in `Action {i}:`; the model writes the call)
    Finish[1,800 to 7,000 ft]                   the paper's final answer, alone on its line
    finish(answer="1,800 to 7,000 ft")          a final answer given by keyword: its value
    [get_weather(city='Paris'), f(x=1)]         a Python list of calls (BFCL prompt mode, Llama
                                                3.2, Gemma 3), at a line start: the first call;
                                                `discarded` is the rest of the list (", f(x=1)]"),
                                                which reads as the next call (parallel actions)

A call alone on its line starts at the line start and nothing but spaces follows its closing
bracket on the line where it closes. Its name must be registered (without the names, or for a
name that is not registered, `x[y]` alone on a line is no call: prose and footnotes look like
that); `Finish`, `final_answer` and `answer` need no registration. A call list needs no registered
name: a list whose every element is a call is plainly one, and an unregistered name in it is an
unknown tool, not a call skipped. A call in the middle of a sentence is never read here.

At most `_TRIES` line starts are tried per reply, each reading at most to the end of its call.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from react_text.core.types import Action, Final, Parsed
from react_text.parser import guard
from react_text.parser.common import Names, finishes
from react_text.parser.fences import unquote, unwrap

__all__ = ["call_list", "keyword_answer", "line_call", "line_starts"]

_TRIES = 8  # line starts tried as a call, per reply
_LIST_SIZE = 8192  # a call list is read by `ast` up to this many characters
_IDENT = re.compile(r"[A-Za-z_][\w.\-]{0,63}+")
_LINE_REST = re.compile(r"[ \t]*+(?:\n|\Z)")  # what may follow a call on its last line
_LIST_OPEN = re.compile(r"\[[ \t\n]*+[A-Za-z_][\w.]{0,63}+[ \t]*+\(")  # "[name(" : a call list opens
_LIST_NEXT = re.compile(r"[ \t\n]*+,[ \t\n]*+(?=[A-Za-z_][\w.]{0,63}+[ \t]*+\()")  # ", name(" : the rest of one
_KEYWORD = re.compile(r"[ \t\n]*+[A-Za-z_]\w{0,63}+[ \t]*+=")  # "answer=" before a value


def line_starts(text: str, start: int, end: int) -> Iterator[int]:
    """Where each line in text[start:end] begins, past its spaces and tabs."""
    pos = start
    while pos < end:
        first = pos
        while first < end and text[first] in " \t":
            first += 1
        yield first
        line_end = text.find("\n", first, end)
        if line_end == -1:
            return
        pos = line_end + 1


def line_call(text: str, at: int, thought: str, names: Names | None) -> Parsed | None:
    """A call alone on its line at `at` (`name[...]` or `name(...)`), of a registered tool or of the
    final answer; None when there is none."""
    found = names.at(text, at) if names is not None else None
    if found is None:
        m = _IDENT.match(text, at)
        if m is None or not finishes(m.group(), names):
            return None
        found = (m.group(), m.end())
    tool, after = found
    if after >= len(text) or text[after] not in "[(":
        return None
    end = guard.input_end(text, after)
    if end is None or _LINE_REST.match(text, end) is None:
        return None
    inner = text[after + 1 : end - 1]
    if finishes(tool, names):
        return Final(keyword_answer(unwrap(inner)), thought, text[end:])
    return Action(tool, unwrap(inner), thought, text[end:], True)


def keyword_answer(value: str) -> str:
    """A final answer as written in brackets: one keyword argument (`answer="x"`) gives its value
    (a string's text, a number as written); anything else loses one pair of quotes."""
    if _KEYWORD.match(value) is not None and len(value) <= _LIST_SIZE:
        literal = _single_keyword(value)
        if literal is not None:
            return literal
    return unquote(value)


def _single_keyword(arguments: str) -> str | None:
    try:
        call = ast.parse(f"f({arguments})", mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if not isinstance(call, ast.Call) or call.args or len(call.keywords) != 1:
        return None
    value = call.keywords[0].value
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        return value.value
    if isinstance(value, ast.Constant) and isinstance(value.value, int | float) and not isinstance(value.value, bool):
        return ast.get_source_segment(f"f({arguments})", value) or None
    return None


def call_list(text: str, at: int, thought: str, names: Names | None) -> Parsed | None:
    """The first call of a Python list of calls at `at` (`[f(a=1), g(b=2)]`), or of the rest of one
    (`, g(b=2)]`, what the first call left as `discarded`); None when it is no list of calls."""
    rest = _LIST_NEXT.match(text, at)
    if rest is not None:
        source, offset = "[" + text[rest.end() : rest.end() + _LIST_SIZE], rest.end() - 1
    elif _LIST_OPEN.match(text, at) is not None:
        source, offset = text[at : at + _LIST_SIZE], at
    else:
        return None
    end = guard.input_end(source, 0)
    if end is None:
        return None
    try:
        tree = ast.parse(source[:end], mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    if not isinstance(tree, ast.List) or not tree.elts or not all(isinstance(e, ast.Call) for e in tree.elts):
        return None
    first = tree.elts[0]
    if not isinstance(first, ast.Call):
        return None
    written = ast.get_source_segment(source, first) or ""
    function = ast.get_source_segment(source, first.func) or ""
    at_call = source.find(written)
    if not written or not function or at_call == -1:
        return None
    name = function.strip()
    arguments = written[len(function) :].strip()[1:-1]
    call_end = offset + at_call + len(written)
    discarded = text[call_end:] if len(tree.elts) > 1 else text[offset + end :]
    if finishes(name, names):
        return Final(keyword_answer(arguments), thought, discarded)
    tool = names.lookup(name) if names is not None else name
    return Action(tool, arguments.strip(), thought, discarded, True)
