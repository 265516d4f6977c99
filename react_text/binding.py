"""The binder: a tool's input text becomes the arguments of its function, or a refusal the model can read.

    search(query: str, limit: int = 5)
    bind(search_tool, "cats")                          search("cats", 5): the default
    bind(search_tool, "cats, 3")                       search("cats", 3)
    bind(search_tool, '{"query": "cats", "limit": 3}') search("cats", 3)
    bind(search_tool, 'query="cats, dogs", limit=3')   search("cats, dogs", 3)
    bind(search_tool, "cats, many")                    Refusal: limit takes a whole number, not "many"

How a text is read depends on what the tool takes (`inspect.signature(fn)`, which honours a
synthesized `__signature__`):
- No parameters: a blank input ("", "{}", "[]", "none", "null"); anything else is refused.
- One parameter: the whole text, converted by its annotation, unless the text is a JSON object
  (or a Python dict literal) whose only key is the parameter's name: then that key's value. A
  blank input (or "{}", unless the parameter takes objects) gives the parameter's default.
- Several: a JSON object binds by name, a JSON array by position (single-quoted Python literals
  are read the same way). Otherwise the text is read as call arguments (`"cats", limit=3`) when
  every value is a literal, else as comma-separated values (the csv module: double quotes keep a
  comma inside a value), any of which may be `name=value` for a parameter's name. Positional values
  fill, in order, the parameters not given by name. When there are more values than parameters and
  the last one takes text, it gets the rest of the text as written (`write[notes.txt, Hi, Bob]`).
- `*args` take the positional values after the named parameters (or a JSON array under their
  name); `**kwargs` take the names that match no parameter. Without them, extra values and
  unknown names are refused, naming what the tool takes.

Conversion, by annotation: str and unannotated parameters take text (a JSON number or boolean
gives its text, an object or array its JSON); int, float; bool (true/false, yes/no, 1/0, any case);
`X | None` (also from "", "none", "null" when X refuses them); unions in their declared order;
`Literal[...]` and `Enum` (by value or name; exact, then ignoring case); list/tuple/set and dict
from JSON (elements converted where typed; a list also from comma-separated text); Path from
text; `Any`/`object`, and classes the binder does not know, get the value as written or decoded.

`bind` is pure: it reads only the text and the signature (and, once, the refusal's template),
and never raises for any input text. Everything it derives from a signature is computed once per
function, when the Tool is made (`shape`).
"""

from __future__ import annotations

import ast
import csv
import enum
import functools
import inspect
import io
import json
import math
import pathlib
import re
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from . import prompting

if typing.TYPE_CHECKING:
    from .tools import Tool

__all__ = ["Parameter", "Refusal", "Shape", "bind", "shape"]

_EMPTY = inspect.Parameter.empty
_POSITIONAL_ONLY = inspect.Parameter.POSITIONAL_ONLY
_VAR_POSITIONAL = inspect.Parameter.VAR_POSITIONAL
_VAR_KEYWORD = inspect.Parameter.VAR_KEYWORD
_KEYWORD_ONLY = inspect.Parameter.KEYWORD_ONLY

_TRUE = frozenset({"true", "yes", "1"})
_FALSE = frozenset({"false", "no", "0"})
_NULL = frozenset({"", "none", "null"})
_BLANK = frozenset({"", "none", "null", "{}", "[]"})
# Python literal and call-argument reading goes through `ast.parse`, whose tokenizer warns
# (SyntaxWarning, DeprecationWarning) about backslash escapes and a digit run into a letter ("1if"),
# and a "#" would make the rest of a line a comment. Such texts skip it (silencing warnings is not
# thread-safe before Python 3.14); csv still reads them.
_NOT_PYTHON = re.compile(r"\\|\d[^\W\d]|#")
_PYTHON_LIMIT = 10_000  # characters; longer inputs are read as JSON or csv only
_KEYWORD = re.compile(r"\s*([^\W\d]\w*)\s*=(?!=)\s*(.*)", re.DOTALL)
_PREVIEW = 60  # characters of a refused value shown back to the model


@dataclass(frozen=True, slots=True)
class Refusal:
    """An input the tool cannot take; `message` is the observation that says what it takes."""

    message: str


class _Unfit(Exception):
    """A value an annotation refuses; `wants` says what it takes ("a whole number")."""

    def __init__(self, wants: str) -> None:
        super().__init__(wants)
        self.wants = wants


Convert = Callable[[object], object]
_K = typing.TypeVar("_K", int, str)


@dataclass(frozen=True, slots=True)
class _Type:
    """What binding knows about one annotation."""

    convert: Convert  # raises _Unfit
    wants: str  # for a refusal: "a whole number"
    shown: str  # for the listing: "int"; "" for text
    text: bool = False  # takes text as written (str, unannotated)
    sequence: bool = False  # list, tuple, set
    mapping: bool = False  # may take a JSON object as its value (dict, Any, unknown classes)


@dataclass(frozen=True, slots=True)
class Parameter:
    """One parameter as binding sees it."""

    name: str
    kind: inspect._ParameterKind
    default: object  # inspect.Parameter.empty when required
    type: _Type

    @property
    def required(self) -> bool:
        return self.default is _EMPTY and self.kind not in (_VAR_POSITIONAL, _VAR_KEYWORD)

    @property
    def shown(self) -> str:
        """How the tool list shows it: `query`, `a: float`, `limit=5`, `n: int | null = null`, `*rest`."""
        star = "*" if self.kind is _VAR_POSITIONAL else "**" if self.kind is _VAR_KEYWORD else ""
        typed = self.type.shown
        if self.default is _EMPTY:
            return f"{star}{self.name}: {typed}" if typed else f"{star}{self.name}"
        if not typed or (type(self.default) in (int, float, bool) and typed == type(self.default).__name__):
            return f"{self.name}={_literal(self.default)}"
        return f"{self.name}: {typed} = {_literal(self.default)}"


@dataclass(frozen=True, slots=True)
class Shape:
    """What a function takes, derived once from its signature."""

    signature: inspect.Signature
    parameters: tuple[Parameter, ...]  # the named ones, in order (not *args/**kwargs)
    var_positional: Parameter | None
    var_keyword: Parameter | None

    def form(self, name: str) -> str:
        """How the model writes a call: `search[query, limit=5]`."""
        shown = [p.shown for p in self.parameters]
        if self.var_positional is not None:
            shown.append(self.var_positional.shown)
        if self.var_keyword is not None:
            shown.append(self.var_keyword.shown)
        return f"{name}[{', '.join(shown)}]"


def shape(fn: Callable[..., object]) -> Shape:
    """What `fn` takes. Raises TypeError for a function whose parameters cannot be read or resolved."""
    try:
        hash(fn)
    except TypeError:  # a callable object that cannot be a cache key
        return _shape(fn)
    return _cached_shape(fn)


@functools.lru_cache(maxsize=512)
def _cached_shape(fn: Callable[..., object]) -> Shape:
    # Cached by function: `dataclasses.replace(tool, timeout=...)` makes a new Tool per call.
    return _shape(fn)


def _shape(fn: Callable[..., object]) -> Shape:
    try:
        signature = inspect.signature(fn)
    except (ValueError, TypeError) as exc:
        raise TypeError(f"cannot read the parameters of {fn!r}: wrap it in a plain function") from exc
    made: list[Parameter] = []
    for p in signature.parameters.values():
        annotation = _resolve(fn, p.name, p.annotation)
        made.append(Parameter(p.name, p.kind, p.default, _type_of(annotation)))
    return Shape(
        signature=signature,
        parameters=tuple(p for p in made if p.kind not in (_VAR_POSITIONAL, _VAR_KEYWORD)),
        var_positional=next((p for p in made if p.kind is _VAR_POSITIONAL), None),
        var_keyword=next((p for p in made if p.kind is _VAR_KEYWORD), None),
    )


def _resolve(fn: Callable[..., object], name: str, annotation: object) -> object:
    """An annotation written as a string (`from __future__ import annotations`) evaluated where fn lives."""
    for _ in range(2):  # "'int'" under the future import is a string holding a string
        if not isinstance(annotation, str):
            return annotation
        target: object = inspect.unwrap(fn) if callable(fn) else fn
        while isinstance(target, functools.partial):
            target = target.func
        namespace = getattr(target, "__globals__", None) or vars(inspect.getmodule(target) or typing)
        try:
            annotation = eval(annotation, dict(namespace))  # as inspect.get_annotations(eval_str=True) does
        except Exception as exc:  # evaluating the user's annotation may raise anything: say which
            raise TypeError(f"cannot resolve the annotation {annotation!r} of parameter {name!r} of {fn!r}") from exc
    return annotation


# --- annotations ------------------------------------------------------------------------------------


def _type_of(annotation: object) -> _Type:
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        return _type_of(args[0])
    if annotation is _EMPTY or annotation is str:
        return _Type(_to_text, "text", "", text=True)
    if annotation is typing.Any or annotation is object:
        return _Type(_as_is, "any value", "any", mapping=True)
    if annotation is None or annotation is type(None):
        return _Type(_to_none, "null", "null")
    if origin in (typing.Union, types.UnionType):
        return _union([_type_of(a) for a in args])
    if origin is typing.Literal:
        return _literal_type(args)
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        return _enum_type(annotation)
    if annotation is bool:
        return _Type(_to_bool, "true or false (also yes/no, 1/0)", "bool")
    if annotation is int:
        return _Type(_to_int, "a whole number", "int")
    if annotation is float:
        return _Type(_to_float, "a number", "float")
    if annotation in (list, tuple, set, frozenset) or origin in (list, tuple, set, frozenset):
        return _sequence_type(origin or annotation, args)
    if annotation is dict or origin is dict:
        return _dict_type(args)
    if isinstance(annotation, type) and issubclass(annotation, pathlib.PurePath):
        path_class = annotation
        return _Type(lambda v: path_class(_to_text(v)), "a path", "", text=True)
    supertype = getattr(annotation, "__supertype__", None)  # typing.NewType
    if supertype is not None:
        return _type_of(supertype)
    # A class the binder does not know (or a forward reference): the value as written or decoded.
    return _Type(_as_is, "a value", getattr(annotation, "__name__", None) or str(annotation), mapping=True)


def _as_is(value: object) -> object:
    return value.value if isinstance(value, _Written) else value


def _to_text(value: object) -> str:
    if isinstance(value, _Written):
        return value.value if isinstance(value.value, str) else value.source
    if isinstance(value, str):
        return value
    if value is None:
        raise _Unfit("text")
    if isinstance(value, bool | int | float | list | dict):
        return json.dumps(value, ensure_ascii=False)
    return str(value)


def _to_none(value: object) -> None:
    value = _as_is(value)
    if value is None or (isinstance(value, str) and value.strip().casefold() in _NULL):
        return None
    raise _Unfit("null")


def _to_bool(value: object) -> bool:
    value = _as_is(value)
    if isinstance(value, bool):
        return value
    if isinstance(value, int) and value in (0, 1):
        return bool(value)
    if isinstance(value, str):
        word = value.strip().casefold()
        if word in _TRUE:
            return True
        if word in _FALSE:
            return False
    raise _Unfit("true or false (also yes/no, 1/0)")


def _to_int(value: object) -> int:
    value = _as_is(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:  # also a string of more digits than int() takes
            try:
                value = float(value.strip())
            except ValueError:
                raise _Unfit("a whole number") from None
    if isinstance(value, float) and value.is_integer():
        return int(value)
    raise _Unfit("a whole number")


def _to_float(value: object) -> float:
    value = _as_is(value)
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            return float(value)
        except OverflowError:
            raise _Unfit("a number") from None
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            pass
    raise _Unfit("a number")


def _union(members: list[_Type]) -> _Type:
    def convert(value: object) -> object:
        for member in members:
            try:
                return member.convert(value)
            except _Unfit:
                continue
        raise _Unfit(wants)

    wants = " or ".join(m.wants for m in members)
    shown = " | ".join(m.shown or "str" for m in members)
    return _Type(convert, wants, shown, text=any(m.text for m in members), mapping=any(m.mapping for m in members))


def _literal_type(values: tuple[object, ...]) -> _Type:
    return _choice([(v, v, [v if isinstance(v, str) else _literal(v)]) for v in values], [_literal(v) for v in values])


def _enum_type(cls: type[enum.Enum]) -> _Type:
    members = list(cls)
    by_value = all(isinstance(m.value, str) for m in members)
    forms = [(m, m.value, [m.value if isinstance(m.value, str) else _literal(m.value), m.name]) for m in members]
    return _choice(forms, [_literal(m.value) if by_value else m.name for m in members])


def _choice(options: Sequence[tuple[object, object, list[str]]], names: list[str]) -> _Type:
    """A closed set (Literal values, Enum members): an option, its raw value, or a written form of it
    (exactly, then ignoring case). `options` holds (option, raw value, written forms)."""
    wants = "one of " + ", ".join(names)
    exact: dict[str, object] = {}
    folded: dict[str, object] = {}
    for option, _, written in options:
        for form in written:
            exact.setdefault(form, option)
            folded.setdefault(form.casefold(), option)

    def convert(value: object) -> object:
        value = _as_is(value)
        for option, raw in ((o, r) for o, r, _ in options):
            if option is value or (type(raw) is type(value) and raw == value):
                return option
        if isinstance(value, str):
            word = value.strip()
            if word in exact:
                return exact[word]
            if word.casefold() in folded:
                return folded[word.casefold()]
        raise _Unfit(wants)

    return _Type(convert, wants, " | ".join(names))


def _sequence_type(container: object, args: tuple[object, ...]) -> _Type:
    fixed = container is tuple and bool(args) and args[-1] is not Ellipsis
    members = [_type_of(a) for a in (args if fixed else args[:1])]
    element = members[0] if members and not fixed else None
    inner = ", ".join(m.shown or "str" for m in members)
    shown = f"list[{inner}]" if inner else "list"
    wants = f"a JSON array of {inner}" if inner else "a JSON array"
    build = typing.cast("Callable[[list[object]], object]", container)

    def convert(value: object) -> object:
        value = _as_is(value)
        if isinstance(value, str):
            decoded = _structured(value)
            value = decoded if isinstance(decoded, list) else _fields(value)
        if not isinstance(value, list | tuple | set | frozenset):
            raise _Unfit(wants)
        items = list(value)
        if fixed:
            if len(items) != len(members):
                raise _Unfit(wants)
            try:
                return build([m.convert(v) for m, v in zip(members, items, strict=True)])
            except _Unfit:
                raise _Unfit(wants) from None
        if element is not None:
            try:
                items = [element.convert(v) for v in items]
            except _Unfit:
                raise _Unfit(wants) from None
        try:
            return build(items)
        except TypeError:  # an unhashable element of a set
            raise _Unfit(wants) from None

    return _Type(convert, wants, shown, sequence=True)


def _dict_type(args: tuple[object, ...]) -> _Type:
    key, item = (_type_of(args[0]), _type_of(args[1])) if len(args) == 2 else (None, None)
    shown = f"dict[{key.shown or 'str'}, {item.shown or 'str'}]" if key and item else "dict"
    wants = f"a JSON object with {item.shown or 'text'} values" if item else "a JSON object"

    def convert(value: object) -> object:
        value = _as_is(value)
        if isinstance(value, str):
            value = _structured(value)
        if not isinstance(value, dict):
            raise _Unfit(wants)
        if key is None or item is None:
            return value
        try:
            return {key.convert(k): item.convert(v) for k, v in value.items()}
        except (_Unfit, TypeError):  # TypeError: a key converted to something unhashable
            raise _Unfit(wants) from None

    return _Type(convert, wants, shown, mapping=True)


# --- reading the text -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Written:
    """A Python literal from call arguments, with its source: a text parameter gets `007`, not `7`."""

    value: object
    source: str


def bind(tool: Tool, text: str) -> inspect.BoundArguments | Refusal:
    """The arguments of a call to `tool` with input `text` (defaults applied), or why there are none."""
    try:
        return _bind(tool.shape, text)
    except _Refused as refused:
        message = prompting.render("corrections/bad_input", tool=tool.name, problem=refused.problem, form=tool.form)
        return Refusal(message)


class _Refused(Exception):
    def __init__(self, problem: str) -> None:
        super().__init__(problem)
        self.problem = problem


def _bind(s: Shape, text: str) -> inspect.BoundArguments:
    named = s.parameters
    if not named and s.var_positional is None and s.var_keyword is None:
        if text.strip().casefold() in _BLANK or _structured(text) in ({}, []):
            return _assign(s, [], {})
        raise _Refused(f"it takes no input, and was given {_preview(text)}")
    if len(named) == 1 and s.var_positional is None and s.var_keyword is None:
        only = named[0]
        blank = text.strip()
        if only.default is not _EMPTY and (not blank or (blank == "{}" and not only.type.mapping)):
            return _assign(s, [], {})
        decoded = _structured(text) if text.lstrip().startswith("{") else None
        if isinstance(decoded, dict) and len(decoded) == 1 and only.name in decoded:
            return _assign(s, [decoded[only.name]], {})
        return _assign(s, [text], {})
    decoded = _structured(text)
    if isinstance(decoded, dict):
        return _assign(s, [], {str(k): v for k, v in decoded.items()})
    if isinstance(decoded, list):
        try:
            return _assign(s, decoded, {})
        except _Refused:
            if not (named and named[0].type.sequence):
                raise
            return _assign(s, [decoded], {})  # the array is the first parameter's value
    called = _call_arguments(text)
    if called is not None:
        return _assign(s, *called)
    return _assign(s, *_comma_separated(s, text))


def _structured(text: str) -> object:
    """A JSON object or array (or the same as a Python literal, single quotes and all); else None."""
    stripped = text.strip()
    if stripped[:1] not in ("{", "["):
        return None
    try:
        return json.loads(stripped, strict=False)  # strings may hold raw line breaks, as models write them
    except (ValueError, RecursionError):
        pass
    if len(stripped) > _PYTHON_LIMIT or _NOT_PYTHON.search(stripped):
        return None
    try:
        value = ast.literal_eval(stripped)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    if isinstance(value, tuple):
        value = list(value)
    return value if isinstance(value, dict | list) else None


def _call_arguments(text: str) -> tuple[list[object], dict[str, object]] | None:
    """`"cats", limit=3` read as Python call arguments, when every one of them is a literal."""
    if len(text) > _PYTHON_LIMIT or _NOT_PYTHON.search(text) or not text.strip():
        return None
    source = f"f({text}\n)"
    try:
        tree = ast.parse(source, mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None
    call = tree.body
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "f"):
        return None
    if call.end_col_offset != 1 or call.end_lineno != source.count("\n") + 1:  # "1), g(2" is not one call
        return None
    try:
        positional: list[object] = [_written(source, a) for a in call.args]
        keywords: dict[str, object] = {k.arg: _written(source, k.value) for k in call.keywords if k.arg is not None}
    except ValueError:
        return None
    if len(keywords) != len(call.keywords):  # **mapping
        return None
    return positional, keywords


def _written(source: str, node: ast.expr) -> _Written:
    if isinstance(node, ast.Starred):
        raise ValueError("not a literal")
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        raise ValueError("not a literal") from None
    return _Written(list(value) if isinstance(value, tuple) else value, ast.get_source_segment(source, node) or "")


def _fields(text: str) -> list[str]:
    """Comma-separated values; double quotes keep commas (and line breaks) inside a value."""
    try:
        rows = list(csv.reader(io.StringIO(text, newline=""), skipinitialspace=True, strict=False))
    except csv.Error:  # a value longer than csv's field limit
        rows = [text.split(",")]
    fields: list[str] = []
    for i, row in enumerate(rows):
        if i < len(rows) - 1 and row and not row[-1].strip():  # "2,\n3": the line break after a comma
            row = row[:-1]
        fields.extend(_unquote(f.strip()) for f in row)
    return fields


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"`" and value[0] not in value[1:-1]:
        return value[1:-1]
    return value


def _comma_separated(s: Shape, text: str) -> tuple[list[object], dict[str, object]]:
    positional: list[object] = []
    keywords: dict[str, object] = {}
    names = {p.name.casefold() for p in s.parameters}
    fields = _fields(text)
    if len(fields) > 1 and not fields[-1] and text.rstrip().endswith(","):  # "cats," : a trailing comma
        fields.pop()
    for field in fields:
        m = _KEYWORD.fullmatch(field)
        if m is not None and (m.group(1).casefold() in names or s.var_keyword) and m.group(1) not in keywords:
            keywords[m.group(1)] = _unquote(m.group(2).strip())
        else:
            positional.append(field)
    free = [p for p in s.parameters if p.name not in keywords]
    if len(positional) > len(free) and free and s.var_positional is None and free[-1].type.text and not keywords:
        # More values than parameters: the last one, when it takes text, takes the rest as written,
        # unless a quote makes the leading values ambiguous (then the count is refused below).
        head = text.split(",", len(free) - 1)
        if len(head) == len(free) and not any('"' in h for h in head[:-1]):
            positional = [*positional[: len(free) - 1], head[-1].strip()]
    return positional, keywords


def _assign(s: Shape, positional: list[object], keywords: Mapping[str, object]) -> inspect.BoundArguments:
    """Match the values to the parameters, convert them, and bind; _Refused names every problem."""
    values: dict[str, object] = {}
    extra_keywords: dict[str, object] = {}
    problems: list[str] = []
    unknown: list[str] = []
    by_name = {p.name: p for p in s.parameters}
    folded = {p.name.casefold(): p for p in s.parameters}
    extra_positional: list[object] = []
    for key, value in keywords.items():
        p = by_name.get(key) or folded.get(key.casefold())
        if p is not None and p.name not in values:
            values[p.name] = value
        elif s.var_positional is not None and key == s.var_positional.name and isinstance(value, list):
            extra_positional = list(value)
        elif s.var_keyword is not None and p is None:
            extra_keywords[key] = value
        elif p is None:
            unknown.append(key)
        else:
            problems.append(f"{p.name} is given twice")
    free = [p for p in s.parameters if p.name not in values]
    for p, value in zip(free, positional, strict=False):
        values[p.name] = value
    surplus = positional[len(free) :]
    if surplus and s.var_positional is not None:
        extra_positional = surplus + extra_positional
    elif surplus:
        most = "" if all(p.required for p in s.parameters) else "at most "
        took = f"{most}{len(s.parameters)} value{'s' if len(s.parameters) != 1 else ''}"
        problems.append(f"it takes {took} and was given {len(positional) + len(keywords)}")
        if any("," in str(v) for v in positional):
            problems[-1] += " (put a value that holds a comma in double quotes)"
    if unknown:
        valid = ", ".join(p.name for p in s.parameters) or "none"
        names = ", ".join(_literal(k) for k in unknown)
        problems.append(f"it has no input named {names} (its inputs: {valid})")
    missing = [p.name for p in s.parameters if p.required and p.name not in values]
    if missing:
        problems.append(f"{_and(missing)} {'is' if len(missing) == 1 else 'are'} missing")
    converted: dict[str, object] = {}
    for name, value in values.items():
        p = by_name[name]
        try:
            converted[name] = p.type.convert(value)
        except _Unfit as unfit:
            problems.append(f"{name} takes {unfit.wants}, not {_preview(value)}")
    star = _convert_each(s.var_positional, dict(enumerate(extra_positional)), problems)
    extra_keywords = _convert_each(s.var_keyword, extra_keywords, problems)
    if problems:
        raise _Refused("; ".join(problems))
    return _call(s, converted, list(star.values()), extra_keywords)


def _convert_each(p: Parameter | None, items: dict[_K, object], problems: list[str]) -> dict[_K, object]:
    """The values of *args or **kwargs, each converted by its annotation."""
    done: dict[_K, object] = {}
    for key, value in items.items():
        try:
            done[key] = value if p is None else p.type.convert(value)
        except _Unfit as unfit:
            problems.append(f"{typing.cast(Parameter, p).name} takes {unfit.wants}, not {_preview(value)}")
    return done


def _call(s: Shape, values: dict[str, object], star: list[object], extra: dict[str, object]) -> inspect.BoundArguments:
    """Bind by kind: positional-only (and, before *args, all) parameters by position, the rest by name."""
    by_position = [p for p in s.parameters if p.kind is _POSITIONAL_ONLY or (star and p.kind is not _KEYWORD_ONLY)]
    # Positional values up to the last one given (all of them before *args), defaults filling gaps.
    last = len(by_position) - 1 if star else max((i for i, p in enumerate(by_position) if p.name in values), default=-1)
    args = [values.get(p.name, p.default) for p in by_position[: last + 1]]
    placed = {p.name for p in by_position}
    kwargs = {name: value for name, value in values.items() if name not in placed}
    try:
        bound = s.signature.bind(*args, *star, **kwargs, **extra)
    except TypeError as exc:  # e.g. a **kwargs key that is also a positional-only name
        raise _Refused(str(exc)) from None
    bound.apply_defaults()
    return bound


# --- words --------------------------------------------------------------------------------------


def _literal(value: object) -> str:
    """A value as the model would write it: JSON where JSON has a form for it."""
    if isinstance(value, enum.Enum):
        return _literal(value.value) if isinstance(value.value, str) else value.name
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, pathlib.PurePath):
        return json.dumps(str(value), ensure_ascii=False)
    if value is None or isinstance(value, str | int | float | bool):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, tuple):
        value = list(value)
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return repr(value)


def _preview(value: object) -> str:
    value = _as_is(value)
    if isinstance(value, str):
        short = value if len(value) <= _PREVIEW else value[:_PREVIEW] + "..."
        return json.dumps(short, ensure_ascii=False)
    shown = _literal(value)
    return shown if len(shown) <= _PREVIEW else shown[:_PREVIEW] + "..."


def _and(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
