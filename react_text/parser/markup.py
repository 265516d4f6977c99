"""Markup calls: the tool-call markup of serving engines and coding agents, written out as text.

    <tool_call><function=NAME><parameter=P>v</parameter></function></tool_call>   Qwen3-Coder (and
                                               the bare <function=...> of coding agents)
    <tool_call>{"name": ..., "arguments": ...}</tool_call>                       Hermes, Qwen
    <|tool_calls_section_begin|><|tool_call_begin|>functions.NAME:0<|tool_call_argument_begin|>{...}
        <|tool_call_end|>                                                        Kimi K2
    [TOOL_CALLS][{"name", "arguments"}] | [TOOL_CALLS]NAME{...} | [TOOL_CALLS]NAME[ARGS]{...}  Mistral
    <|python_tag|>{"name", "parameters"} | <|python_tag|>NAME.call(k=v)         Llama 3.x
    <action><tool_name>NAME</tool_name><parameters>{...}</parameters></action>   dspy-go (and
        <arguments><arg key="k">v</arg></arguments>; <action>Finish</action> then "answer:")

`read(text, at, thought, names)` reads the call whose token opens at `at` (a key of `TOKENS`);
`find(text, start, end)` is where the first token lies. The input is what the call wrote for its
arguments: a JSON object's text as written; parameters written as markup become a JSON object of
their text values (one line break trimmed at each end, as vLLM does), for the binder to read. An
unregistered name is read as written: the episode answers it as an unknown tool. Every scan is a
`str.find` from the token on, so a reply costs one pass per token.
"""

from __future__ import annotations

import json
import re

from react_text.core.types import Action, Final, Parsed
from react_text.parser import guard
from react_text.parser.blobs import decoded_blob, skip_space
from react_text.parser.common import Names, error, finishes

__all__ = ["TOKENS", "find", "opening", "read"]

_NAME = re.compile(r"[A-Za-z_][\w.\-]{0,63}+")
_ANSWER = re.compile(r"(?im)^[ \t#*>_\-]{0,12}+answer[ \t*_]{0,6}+[:：][ \t*]*+")
_CLOSE_WRAPPER = re.compile(r"[ \t\n]*+</tool_call>")
_ARG_KEY = re.compile(r"<arg[ \t]++key=[\"']([^\"'<>\n]{1,64}+)[\"'][ \t]*+>")


def _tag(text: str, open_tag: str, close_tag: str, start: int, end: int) -> tuple[str, int] | None:
    """The text between `open_tag` and `close_tag` in text[start:end], and the index after the close."""
    opened = text.find(open_tag, start, end)
    if opened == -1:
        return None
    closed = text.find(close_tag, opened + len(open_tag), end)
    if closed == -1:
        return None
    return text[opened + len(open_tag) : closed], closed + len(close_tag)


def _trimmed(value: str) -> str:
    """A parameter's text without one line break at each end (vLLM's Qwen3-Coder parser does so)."""
    if value.startswith("\n"):
        value = value[1:]
    return value[:-1] if value.endswith("\n") else value


def _action(name: str, value: str, thought: str, discarded: str, names: Names | None, closed: bool = True) -> Parsed:
    name = name.strip()
    if not name:
        return error("bad_action", thought)
    tool = names.lookup(name) if names is not None else name
    if finishes(tool, names):
        return Final(_answer(value), thought, discarded)
    return Action(tool, value, thought, discarded, closed)


def _answer(value: str) -> str:
    """A final answer written as arguments: the value of a JSON object's one member, else as written."""
    if value.startswith("{"):
        try:
            decoded = json.loads(value)
        except (ValueError, RecursionError):
            return value
        if isinstance(decoded, dict) and len(decoded) == 1:
            only = next(iter(decoded.values()))
            return only if isinstance(only, str) else json.dumps(only, ensure_ascii=False)
    return value


def _function(text: str, at: int, thought: str, names: Names | None) -> Parsed:
    """<function=NAME> <parameter=P>value</parameter> ... </function> (and a </tool_call> after it)."""
    name_end = text.find(">", at, at + 200)
    if name_end == -1:
        return error("bad_action", thought)
    name = text[at + len("<function=") : name_end]
    close = text.find("</function>", name_end)
    end = len(text) if close == -1 else close
    params: dict[str, str] = {}
    pos = text.find("<parameter=", name_end, end)
    while pos != -1:
        key_end = text.find(">", pos, min(end, pos + 200))
        if key_end == -1:
            break
        following = text.find("<parameter=", key_end, end)
        stop = text.find("</parameter>", key_end, end if following == -1 else following)
        value_end = stop if stop != -1 else (end if following == -1 else following)
        params[text[pos + len("<parameter=") : key_end].strip()] = _trimmed(text[key_end + 1 : value_end])
        pos = following
    after = end + len("</function>") if close != -1 else len(text)
    wrapper = _CLOSE_WRAPPER.match(text, after, after + 64) if close != -1 else None
    if wrapper is not None:
        after = wrapper.end()
    value = json.dumps(params, ensure_ascii=False) if params else ""
    return _action(name, value, thought, text[after:], names, close != -1)


def _tool_call(text: str, at: int, thought: str, names: Names | None) -> Parsed | None:
    """<tool_call> then a JSON object (Hermes) or a <function=...> call (Qwen3-Coder)."""
    pos = skip_space(text, at + len("<tool_call>"))
    if text.startswith("<function=", pos):
        return _function(text, pos, thought, names)
    if not text.startswith("{", pos):
        return None
    found = decoded_blob(text, pos, thought, names)
    if not isinstance(found, Action | Final):
        return found
    wrapper = _CLOSE_WRAPPER.match(text, len(text) - len(found.discarded))
    return _with_discarded(found, text[wrapper.end() :]) if wrapper is not None else found


def _with_discarded(found: Parsed, rest: str) -> Parsed:
    if isinstance(found, Action):
        return Action(found.tool, found.input, found.thought, rest, found.closed)
    if isinstance(found, Final):
        return Final(found.answer, found.thought, rest)
    return found


def _kimi(text: str, at: int, thought: str, names: Names | None) -> Parsed:
    """<|tool_call_begin|>functions.NAME:0<|tool_call_argument_begin|>{...}<|tool_call_end|>."""
    start = at + len("<|tool_call_begin|>")
    argument = text.find("<|tool_call_argument_begin|>", start, start + 300)
    if argument == -1:
        return error("bad_action", thought)
    call_id = text[start:argument].strip()
    name = call_id.split(":", 1)[0].rsplit(".", 1)[-1]
    value_start = argument + len("<|tool_call_argument_begin|>")
    end = text.find("<|tool_call_end|>", value_start)
    closed = end != -1
    value = text[value_start : end if closed else len(text)].strip()
    after = end + len("<|tool_call_end|>") if closed else len(text)
    section_end = text.find("<|tool_calls_section_end|>", after, after + 64)
    if section_end != -1 and not text[after:section_end].strip():
        after = section_end + len("<|tool_calls_section_end|>")
    return _action(name, value, thought, text[after:], names, closed)


def _section(text: str, at: int, thought: str, names: Names | None) -> Parsed | None:
    begin = text.find("<|tool_call_begin|>", at, at + 200)
    return _kimi(text, begin, thought, names) if begin != -1 else None


def _mistral(text: str, at: int, thought: str, names: Names | None) -> Parsed | None:
    """[TOOL_CALLS] then a JSON array of calls, or NAME{...}, or NAME[ARGS]{...}."""
    pos = skip_space(text, at + len("[TOOL_CALLS]"))
    if text.startswith("[", pos):
        brace = skip_space(text, pos + 1)
        return decoded_blob(text, brace, thought, names) if text.startswith("{", brace) else None
    m = _NAME.match(text, pos)
    if m is None:
        return None
    brace = m.end() + (len("[ARGS]") if text.startswith("[ARGS]", m.end()) else 0)
    brace = skip_space(text, brace)
    if not text.startswith("{", brace):
        return None
    try:
        _, stop = json.JSONDecoder(strict=False).raw_decode(text, brace)
    except (ValueError, RecursionError):
        return _action(m.group(), text[brace:].strip(), thought, "", names, closed=False)
    return _action(m.group(), text[brace:stop], thought, text[stop:], names)


def _python_tag(text: str, at: int, thought: str, names: Names | None) -> Parsed | None:
    """<|python_tag|> then a JSON call, or a built-in tool's NAME.call(k=v)."""
    pos = skip_space(text, at + len("<|python_tag|>"))
    if text.startswith("{", pos):
        return decoded_blob(text, pos, thought, names)
    m = _NAME.match(text, pos)
    if m is None:
        return None
    name = m.group()
    name = name[: -len(".call")] if name.endswith(".call") else name
    if not text.startswith("(", m.end()):
        return None
    end = guard.input_end(text, m.end())
    if end is None:
        return _action(name, text[m.end() + 1 :].strip(), thought, "", names, closed=False)
    after = end + len("<|eom_id|>") if text.startswith("<|eom_id|>", end) else end
    return _action(name, text[m.end() + 1 : end - 1], thought, text[after:], names)


def _dspy(text: str, at: int, thought: str, names: Names | None) -> Parsed | None:
    """<action><tool_name>NAME</tool_name> with <parameters>{...}</parameters> or <arguments><arg
    key="k">v</arg>...</arguments>; <action>Finish</action> then an "answer:" field."""
    body = _tag(text, "<action>", "</action>", at, len(text))
    if body is None:
        return None
    inner, after = body
    named = _tag(inner, "<tool_name>", "</tool_name>", 0, len(inner))
    name = named[0] if named is not None else inner
    if named is None and finishes(name.strip(), names):
        answer = _ANSWER.search(text, after)
        if answer is None:
            return error("empty_answer", thought)
        value = text[answer.end() :].strip()
        return Final(value, thought, "") if value else error("empty_answer", thought)
    if named is None:
        return _action(name, "", thought, text[after:], names)
    parameters = _tag(inner, "<parameters>", "</parameters>", 0, len(inner))
    if parameters is not None:
        return _action(name, parameters[0].strip(), thought, text[after:], names)
    arguments = _tag(inner, "<arguments>", "</arguments>", 0, len(inner))
    values: dict[str, str] = {}
    if arguments is not None:
        pos = 0
        while (m := _ARG_KEY.search(arguments[0], pos)) is not None:
            close = arguments[0].find("</arg>", m.end())
            if close == -1:
                break
            values[m.group(1)] = arguments[0][m.end() : close]
            pos = close
    return _action(name, json.dumps(values, ensure_ascii=False) if values else "", thought, text[after:], names)


TOKENS = {
    "<function=": _function,
    "<tool_call>": _tool_call,
    "<|tool_calls_section_begin|>": _section,
    "<|tool_call_begin|>": _kimi,
    "[TOOL_CALLS]": _mistral,
    "<|python_tag|>": _python_tag,
    "<action>": _dspy,
}


_BY_FIRST: dict[str, tuple[str, ...]] = {}
for _token in TOKENS:
    _BY_FIRST[_token[0]] = (*_BY_FIRST.get(_token[0], ()), _token)


def find(text: str, start: int, end: int) -> tuple[int, str] | None:
    """The first markup token in text[start:end] and where it is (one `str.find` per token)."""
    best: tuple[int, str] | None = None
    if "<" not in text and "[TOOL_CALLS]" not in text:
        return None
    for token in TOKENS:
        at = text.find(token, start, end if best is None else best[0])
        if at != -1 and (best is None or at < best[0]):
            best = (at, token)
    return best


def read(text: str, at: int, token: str, thought: str, names: Names | None) -> Parsed | None:
    """The call whose markup `token` opens at `at`, or None when what follows the token is no call."""
    return TOKENS[token](text, at, thought, names)


def opening(text: str, at: int) -> str | None:
    """The markup token that opens at `at`, if one does (a look-up by its first character)."""
    for token in _BY_FIRST.get(text[at : at + 1], ()):
        if text.startswith(token, at):
            return token
    return None
