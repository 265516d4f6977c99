"""What each event of a trace holds, checked where a trace is read: a hand-edited or damaged trace is
refused naming the line and the field, never half-read into a traceback.

    problem = trace_schema.check(event)   # None, or "reply.text must be text, not null"

The schema is plain data: for each event kind an object rule, a field name mapped to a rule and
whether the field must be there. Fields the writer (`trace.Tracer`) always writes are required
where the readers use them; fields older traces lacked are optional, checked when present.
Unknown fields, and events of a kind not listed here, are let through: a newer writer may add them.
A step's `parsed` is closed: exactly the fields of its kind (Action, Actions, Final or ParseError).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import get_args

from react_text.core.limits import Limits
from react_text.core.types import ParseErrorReason, StopReason
from react_text.parser import PARSERS
from react_text.prompting import Prompting

__all__ = [
    "check",
]

_Rule = Callable[[object, str], str | None]  # (value, its path) -> what is wrong, or None


def _said(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f"the text {value[:30]!r}"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return f"{value!r}"[:30]


def _type(what: str, *types: type) -> _Rule:
    def rule(value: object, path: str) -> str | None:
        if isinstance(value, types) and (bool in types or not isinstance(value, bool)):
            return None
        return f"{path} must be {what}, not {_said(value)}"

    return rule


_TEXT = _type("text", str)
_FLAG = _type("true or false", bool)
_NUMBER = _type("a number", int, float)


def _count(value: object, path: str) -> str | None:
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return None
    return f"{path} must be a whole number, not {_said(value)}"


def _or_null(rule: _Rule) -> _Rule:
    def either(value: object, path: str) -> str | None:
        return None if value is None else rule(value, path)

    return either


def _list_of(rule: _Rule) -> _Rule:
    def each(value: object, path: str) -> str | None:
        if not isinstance(value, list):
            return f"{path} must be a list, not {_said(value)}"
        return next((p for n, item in enumerate(value) if (p := rule(item, f"{path}[{n}]"))), None)

    return each


def _one_of(values: tuple[str, ...]) -> _Rule:
    def rule(value: object, path: str) -> str | None:
        if isinstance(value, str) and value in values:
            return None
        return f"{path} must be one of {', '.join(values)}, not {_said(value)}"

    return rule


def _object(fields: Mapping[str, tuple[_Rule, bool]], *, closed: bool = False) -> _Rule:
    """An object whose fields follow their rules; `True` beside a rule: the field must be there."""

    def rule(value: object, path: str) -> str | None:
        if not isinstance(value, dict):
            return f"{path} must be an object, not {_said(value)}"
        for name, (check, required) in fields.items():
            if name not in value:
                if required:
                    return f"{path}.{name} is missing"
                continue
            problem = check(value[name], f"{path}.{name}")
            if problem:
                return problem
        if closed:
            unknown = [k for k in value if k not in fields]
            if unknown:
                return f"{path} has no field {unknown[0]!r} (it holds {', '.join(fields)})"
        return None

    return rule


def _made(kind: type[Limits] | type[Prompting]) -> _Rule:
    """An object of a Limits' (or Prompting's) fields, by name, that makes a valid one."""
    known = {f.name for f in dataclasses.fields(kind)}

    def rule(value: object, path: str) -> str | None:
        if not isinstance(value, dict):
            return f"{path} must be an object, not {_said(value)}"
        try:
            kind(**{k: v for k, v in value.items() if k in known})
        except (TypeError, ValueError) as exc:
            return f"{path}: {exc}"
        return None

    return rule


def _parser(value: object, path: str) -> str | None:
    """A built-in parser's name, as the command line's --parser takes it, or `module:function` (a
    function of the user's own, which `config.describe` records so, and only Python can hand on)."""
    if isinstance(value, str) and (value in PARSERS or all(side.strip() for side in value.partition(":")[::2])):
        return None
    return f"{path} must be one of {', '.join(sorted(PARSERS))} (or a module:function), not {_said(value)}"


def _all(*rules: _Rule) -> _Rule:
    def every(value: object, path: str) -> str | None:
        return next((p for rule in rules if (p := rule(value, path))), None)

    return every


def _limit(name: str) -> _Rule:
    """A value the field `name` of Limits takes."""

    def rule(value: object, path: str) -> str | None:
        try:
            Limits(**{name: value})  # type: ignore[arg-type]  # checking what it takes is the point
        except (TypeError, ValueError) as exc:
            return f"{path}: {exc}"
        return None

    return rule


_USAGE = _object(
    {"prompt_tokens": (_count, True), "completion_tokens": (_count, True), "total_tokens": (_count, False)}
)
_THOUGHT = {"thought": (_TEXT, False), "discarded": (_TEXT, False)}
_PARSED: dict[str, _Rule] = {
    "action": _object(
        {"kind": (_TEXT, True), "tool": (_TEXT, True), "input": (_TEXT, True), **_THOUGHT, "closed": (_FLAG, False)},
        closed=True,
    ),
    "final": _object({"kind": (_TEXT, True), "answer": (_TEXT, True), **_THOUGHT}, closed=True),
    "error": _object(
        {
            "kind": (_TEXT, True),
            "reason": (_one_of(get_args(ParseErrorReason)), True),
            "message": (_TEXT, True),
            "thought": (_TEXT, False),
        },
        closed=True,
    ),
}
# Several actions read from one reply (`Prompting(parallel=True)`): each an action, in the order written.
_PARSED["actions"] = _object(
    {
        "kind": (_TEXT, True),
        "actions": (_list_of(_all(_object({"kind": (_one_of(("action",)), True)}), _PARSED["action"])), True),
        "thought": (_TEXT, False),
        "discarded": (_TEXT, False),
    },
    closed=True,
)


def _parsed(value: object, path: str) -> str | None:
    if not isinstance(value, dict):
        return f"{path} must be an object, not {_said(value)}"
    kind = value.get("kind")
    if kind not in _PARSED:
        return f"{path}.kind must be one of {', '.join(_PARSED)}, not {_said(kind)}"
    return _PARSED[str(kind)](value, path)


_EVENTS: dict[str, _Rule] = {
    "run_start": _object(
        {
            "task": (_TEXT, True),
            "model": (
                _object(
                    {
                        "api": (_one_of(("chat", "completion")), False),
                        "name": (_or_null(_TEXT), False),
                        "accepts_grammar": (_FLAG, False),
                        "grammar": (_FLAG, False),  # whether the run used the grammar
                        "tokenizer": (_or_null(_TEXT), False),
                        "server": (_or_null(_TEXT), False),  # what the server is: it said so, or it was given
                        "server_said": (_TEXT, False),  # why we think so, in words
                    }
                ),
                True,
            ),
            "limits": (_made(Limits), False),
            "prompting": (_all(_made(Prompting), _object({"example": (_or_null(_TEXT), False)})), False),
            "parser": (_or_null(_parser), False),
            "max_tokens": (_or_null(_count), False),  # written by 0.1
            "sources": (
                _object(
                    {
                        "root": (_or_null(_TEXT), False),
                        "modules": (_list_of(_TEXT), False),
                        "mcp": (_list_of(_TEXT), False),
                    }
                ),
                False,
            ),
            "task_id": (_TEXT, False),
            "sample": (_count, False),  # which of a task's n episodes (eval --n), in a group only
            "approve": (_one_of(("yes", "ask")), False),  # run's --yes, or not; older traces lack it
        }
    ),
    "request": _object({"max_tokens": (_count, False), "stop": (_list_of(_TEXT), False)}),
    "reply": _object(
        {
            "text": (_TEXT, True),
            "usage": (_or_null(_USAGE), False),
            "finish_reason": (_or_null(_TEXT), False),
            "reasoning": (_or_null(_TEXT), False),
        }
    ),
    "grammar_ignored": _object({"said": (_TEXT, True), "reply": (_TEXT, False)}),
    # A served request's last event (react-text serve --trace): what the client got.
    "response": _object(
        {"status": (_count, True), "stream": (_FLAG, False), "headers": (_type("an object", dict), False)}
    ),
    "model_error": _object(
        {"error": (_TEXT, True), "type": (_or_null(_TEXT), False), "window": (_or_null(_count), False)}
    ),
    "step": _object(
        {
            "number": (_count, True),
            "reply": (_TEXT, True),
            "parsed": (_parsed, True),
            "observation": (_or_null(_TEXT), True),
            "usage": (_USAGE, True),
            "total_usage": (_USAGE, True),
            "seconds": (_NUMBER, True),
            "cut": (_TEXT, False),
            "forced": (_FLAG, False),
            "reasoning": (_TEXT, False),
            "finish_reason": (_or_null(_TEXT), False),
            "elided": (_list_of(_count), False),
            "observations": (_list_of(_TEXT), False),  # after several actions: each call's, in order
        }
    ),
    "run_end": _object(
        {
            "answer": (_or_null(_TEXT), True),
            "stop_reason": (_one_of(get_args(StopReason)), True),
            "forced": (_FLAG, True),
            "error": (_or_null(_TEXT), True),
            "usage": (_USAGE, True),
            "tool_calls": (_count, False),
            "context_window": (_or_null(_limit("context_tokens")), False),  # a replay plans against it
        }
    ),
}


def check(event: dict[str, object]) -> str | None:
    """What is wrong with an event (its field named as `kind.field`), or None when it is sound."""
    kind = event["event"]
    rule = _EVENTS.get(str(kind))
    if rule is None:
        return None
    problem = rule(event, str(kind))
    if problem is None and "t" in event:
        problem = _NUMBER(event["t"], f"{kind}.t")
    return problem
