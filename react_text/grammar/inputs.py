"""The grammar of each tool's input, from what the tool takes (its signature, as the binder reads it).

With the grammar on, `ACTION: tool[...]` admits only inputs the binder will bind:

    int                 -12, 345                float           3, -0.5, 1e3
    bool                true, false             Literal, Enum   the listed values (text bare or quoted)
    str                 bare text, or "quoted"  dict, list, typed dicts, dataclasses, Any: JSON
    X | None            X, or null              a tool that takes nothing: []
    the calculator      arithmetic only (numbers, + - * / // % ** ^, parentheses, its functions)

in the call forms the binder reads: the values in order (`add[2, 3]`), `name=value` pairs
(`add[a=2, b=3]`), or a JSON object (`add[{"a": 2, "b": 3}]`); a one-parameter tool also takes its
value alone. Values in order may leave parameters with defaults off the end; `name=value` pairs and
a JSON object's keys come in any order, each at most once, any with a default left out (a keyword
call as BFCL writes one, `f[b=3, a=2]`, or one that skips a defaulted parameter in the middle): one
rule for each set of names written so far, up to `ANY_ORDER` parameters (past it, in order).
What the grammar cannot type (a date, a path, *args, **kwargs, Rest, an annotation it cannot
resolve) takes any bracket-balanced text, as every input did before. JSON strings and bare text
hold no brackets or newlines (the protocol's own brackets must balance), bare text no commas or
quotes where several values are read.
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
import json
import re
import types
import typing
from collections.abc import Callable, Sequence

if typing.TYPE_CHECKING:
    from react_text.tools.tool import Tool

__all__ = ["ANY_ORDER", "VALUE_RULES", "input_rule"]

_FIELD_NAME = re.compile(r"[^\W\d]\w*(?:-\w+)*")  # a `name=` the binder reads as a name (binding.reading)
ANY_ORDER = 5  # parameters whose names may come in any order: 2**n - 1 rules a form

_ANY = 'input ::= ([^\\[\\]\\n] | "[" input "]")+'
VALUE_RULES = {
    "input": _ANY,
    "int": 'int ::= "-"? [0-9]{1,18}',
    "num": 'num ::= "-"? [0-9]{1,18} ("." [0-9]{1,18})? ([eE] [-+]? [0-9]{1,3})?',
    "bool": 'bool ::= "true" | "false"',
    "null": 'null ::= "null"',
    "jstr": 'jstr ::= "\\"" ([^"\\\\\\[\\]\\n] | "\\\\" ["\\\\/bfnrt])* "\\""',
    "json": "json ::= jstr | num | bool | null | jobj | jarr",
    "jobj": 'jobj ::= "{" " "? (jstr ":" " "? json ("," " "? jstr ":" " "? json)*)? " "? "}"',
    "jarr": 'jarr ::= "[" (json ("," " "? json)*)? "]"',
    "text": 'text ::= [^\\[\\]\\n"{ ] ([^\\[\\]\\n]* [^\\[\\]\\n ])?',  # one value alone: any text
    "field": 'field ::= [^\\[\\]\\n",={ ] ([^\\[\\]\\n",=]* [^\\[\\]\\n",= ])?',  # one of several: no , = "
    "arith": 'arith ::= " "* term (" "* op " "* term)* " "*',
    "term": 'term ::= [-+]? " "* (anum | "pi" | "e" | fn " "* "(" arith ("," arith)* ")" | "(" arith ")")',
    "op": 'op ::= "**" | "//" | [-+*/%^]',
    "anum": 'anum ::= [0-9]{1,18} ("." [0-9]{1,18})? | "." [0-9]{1,18}',
    "fn": 'fn ::= "sqrt" | "abs" | "round" | "min" | "max" | "floor" | "ceil" | "log"',
}
_DEPENDS = {"json": ("jstr", "num", "bool", "null", "jobj", "jarr"), "jobj": ("jstr", "json"), "jarr": ("json",)}
_DEPENDS |= {"arith": ("term", "op"), "term": ("anum", "fn", "arith")}


def input_rule(tool: Tool, name: str) -> tuple[str, set[str]]:
    """The rule `name ::= ...` for `tool`'s input, and the value rules it uses (see VALUE_RULES)."""
    from react_text.tools.toolbox import calculate

    if tool.fn is calculate:
        return f"{name} ::= arith", _closed({"arith"})
    made = _body(tool, name)
    if made is None:
        return f"{name} ::= input", {"input"}
    body, more = made
    used = {word for word in VALUE_RULES if any(_mentions(text, word) for text in (body, *more))}
    return "\n".join([f"{name} ::= {body}", *more]), _closed(used)


def _mentions(body: str, word: str) -> bool:
    return any(part == word for part in body.replace("(", " ").replace(")", " ").replace("|", " ").split())


def _closed(used: set[str]) -> set[str]:
    todo, found = list(used), set(used)
    while todo:
        for more in _DEPENDS.get(todo.pop(), ()):
            if more not in found:
                found.add(more)
                todo.append(more)
    return found


def _body(tool: Tool, name: str) -> tuple[str, list[str]] | None:
    """The input's alternatives and the rules they name (`name` and a suffix), or None when some
    part cannot be typed (any text then)."""
    shape = tool.shape
    if shape.var_positional is not None or shape.var_keyword is not None or any(p.rest for p in shape.parameters):
        return None
    params = list(shape.parameters)
    if not params:
        return '""', []  # takes nothing: `tool[]`
    hints = _hints(tool.fn, shape.signature)
    if hints is None:
        return None
    required = [p.required for p in params]
    plain, named, keyed = [], [], []
    for p in params:
        annotation = hints.get(p.name, inspect.Parameter.empty)
        alone = _value(annotation, "alone" if len(params) == 1 else "field")
        field, inside = _value(annotation, "field"), _value(annotation, "json")
        if alone is None or field is None or inside is None:
            return None
        plain.append(alone)
        said = p.written if _FIELD_NAME.fullmatch(p.written) else p.name  # `2nd=` is not read as a name
        named.append(f'{json.dumps(said)} "=" ({field})')
        keyed.append(f'{json.dumps(json.dumps(p.written))} ":" " "? ({inside})')
    more: list[str] = []
    if 1 < len(params) <= ANY_ORDER:
        forms = [
            _any_order(named, required, f"{name}-n", more),
            '"{" ' + _any_order(keyed, required, f"{name}-k", more) + ' "}"',
        ]
    else:
        forms = [_listed(named, required), '"{" ' + _listed(keyed, required) + ' "}"']
    if len(params) == 1 or not _may_open(plain[0]):  # several values, the first an object: read as the keys
        forms.insert(0, _listed(plain, required))
    return " | ".join(f"({form})" for form in forms), more


def _any_order(items: Sequence[str], required: Sequence[bool], name: str, rules: list[str]) -> str:
    """Items in any order, "," between, each at most once, every required one written: the
    expression, with a rule added to `rules` for each item (`name`-i) and for each set of items
    written so far (`name`-s and the set as a bit mask), which offers the items not yet written
    (and the end, once every required one is)."""
    count = len(items)
    needed = sum(1 << i for i, r in enumerate(required) if r)
    rules += [f"{name}-i{i} ::= {item}" for i, item in enumerate(items)]
    for mask in range(1, 1 << count):
        nexts = [f'"," " "? {name}-i{i} {name}-s{mask | 1 << i}' for i in range(count) if not mask & 1 << i]
        ends = ['""'] if mask & needed == needed else []
        rules.append(f"{name}-s{mask} ::= {' | '.join(nexts + ends)}")
    first = " | ".join(f"{name}-i{i} {name}-s{1 << i}" for i in range(count))
    return f"({first})" if needed else f"({first})?"


def _may_open(value: str) -> bool:
    """Whether a value may be a JSON object (which, written first of several, is read as the call's keys)."""
    return any(word in value for word in ("jobj", "json", '"{"'))


def _listed(items: Sequence[str], required: Sequence[bool]) -> str:
    """Items in order, "," between; those after the last required one may be left off the end."""
    last = max((i for i, r in enumerate(required) if r), default=-1)
    suffix = ""
    for item in reversed(items[last + 1 :] if last >= 0 else items[1:]):
        suffix = f'(("," " "?) ({item}) {suffix})?'
    if last < 0:
        return f"(({items[0]}) {suffix})?"
    head = ' "," " "? '.join(f"({item})" for item in items[: last + 1])
    return f"{head} {suffix}".strip()


def _hints(fn: Callable[..., object], signature: inspect.Signature) -> dict[str, object] | None:
    raw = {name: p.annotation for name, p in signature.parameters.items()}
    if not any(isinstance(a, str) for a in raw.values()):
        return raw
    try:
        return dict(typing.get_type_hints(inspect.unwrap(fn), include_extras=True)) | {
            n: a for n, a in raw.items() if a is inspect.Parameter.empty
        }
    except (NameError, TypeError, AttributeError, SyntaxError):  # annotations that do not resolve: any text
        return None


def _value(annotation: object, where: str) -> str | None:
    """The grammar of one value written `where` ("alone": the whole input; "field": one of several;
    "json": inside a JSON object), or None when it cannot be typed."""
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        return _value(args[0], where)
    if annotation is inspect.Parameter.empty or annotation is str:
        return {"alone": "jstr | text", "field": "jstr | field", "json": "jstr"}[where]
    if annotation is bool:
        return "bool"
    if annotation is int:
        return "int"
    if annotation is float:
        return "num"
    if annotation is None or annotation is type(None):
        return "null"
    if origin in (typing.Union, types.UnionType):
        parts = [_value(a, where) for a in args if a is not type(None)]
        if any(p is None for p in parts):
            return None
        joined = " | ".join(f"({p})" for p in parts if p)
        return f"null | {joined}" if type(None) in args else joined
    if origin is typing.Literal:
        return _choices(args, bare=where != "json")
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return _choices([member.value for member in annotation], bare=where != "json")
    if annotation is typing.Any or annotation is object:
        return "json"
    if annotation is list or (origin is list and not args):
        return "jarr"
    if annotation is dict or (origin is dict and not args):
        return "jobj"
    if origin is list:
        item = _value(args[0], "json")
        return None if item is None else f'"[" (({item}) ("," " "? ({item}))*)? "]"'
    if origin is dict and args[0] is str:
        item = _value(args[1], "json")
        return None if item is None else f'"{{" (jstr ":" " "? ({item}) ("," " "? jstr ":" " "? ({item}))*)? "}}"'
    if typing.is_typeddict(annotation) or (isinstance(annotation, type) and dataclasses.is_dataclass(annotation)):
        return _object_of(typing.cast(type, annotation))
    return None


def _object_of(cls: type) -> str | None:
    """A JSON object with a typed dict's or a dataclass's keys: the required ones, in order, first."""
    try:
        hints = typing.get_type_hints(cls)
    except (NameError, TypeError, AttributeError, SyntaxError):  # annotations that do not resolve: any text
        return None
    if dataclasses.is_dataclass(cls):
        missing = (dataclasses.MISSING,)
        keys = [
            (f.name, f.default is missing[0] and f.default_factory is missing[0])
            for f in dataclasses.fields(cls)
            if f.init
        ]
    else:
        required = getattr(cls, "__required_keys__", frozenset(hints))
        keys = [(k, k in required) for k in hints]
    keys.sort(key=lambda k: not k[1])  # required first, as written
    items = []
    for name, _ in keys:
        value = _value(hints.get(name, typing.Any), "json")
        if value is None:
            return None
        items.append(f'{json.dumps(json.dumps(name))} ":" " "? ({value})')
    return '"{" ' + _listed(items, [r for _, r in keys]) + ' "}"' if items else '"{}"'


def _choices(values: Sequence[object], *, bare: bool) -> str | None:
    written: list[str] = []
    for value in values:
        if isinstance(value, bool) or value is None or isinstance(value, int | float):
            written.append(json.dumps(json.dumps(value)))
        elif isinstance(value, str) and value and not any(c in value for c in '[]\n"\\'):
            written.append(json.dumps(json.dumps(value)))  # quoted
            if bare and value.strip() == value and not any(c in value for c in ",={"):
                written.append(json.dumps(value))  # bare
        else:
            return None
    return " | ".join(dict.fromkeys(written))
