"""Matching what the text holds to a function's parameters: `shape(fn)` once, then `bind(tool, text)`."""

from __future__ import annotations

import functools
import inspect
import json
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from react_text import prompting
from react_text.tools.binding import reading
from react_text.tools.binding.converting import Type, Unfit, literal, nullable, plain, type_of

__all__ = ["Bindable", "Key", "Parameter", "Refusal", "Rest", "Shape", "bind", "shape"]

_EMPTY = inspect.Parameter.empty
_POSITIONAL_ONLY = inspect.Parameter.POSITIONAL_ONLY
_VAR_POSITIONAL = inspect.Parameter.VAR_POSITIONAL
_VAR_KEYWORD = inspect.Parameter.VAR_KEYWORD
_KEYWORD_ONLY = inspect.Parameter.KEYWORD_ONLY
_BLANK = frozenset({"", "none", "null", "{}", "[]"})
_PREVIEW = 60  # characters of a refused value shown back to the model


class _TakesTheRest:
    def __repr__(self) -> str:
        return "Rest"


_REST = _TakesTheRest()
Rest = typing.Annotated[str, _REST]
"""Text that takes the rest of the input: `def write(path: str, content: Rest)` reads
`write[notes.txt, Dear Bob, hello]` as content "Dear Bob, hello". Only the last parameter may be Rest."""


@dataclass(frozen=True, slots=True)
class Key:
    """The name a parameter is written by when it cannot be its Python name (a JSON schema's
    `class`, `first-name`): `Annotated[str, Key("first-name")]` on a parameter named `first_name`.
    The tool list shows it, and the model may write either name."""

    name: str


@dataclass(frozen=True, slots=True)
class Refusal:
    """An input the tool cannot take; `message` is the observation that says what it takes."""

    message: str


@dataclass(frozen=True, slots=True)
class Parameter:
    """One parameter as binding sees it."""

    name: str
    kind: inspect._ParameterKind
    default: object  # inspect.Parameter.empty when required
    type: Type
    rest: bool = False  # annotated Rest: takes the rest of the text
    key: str = ""  # annotated Key: the name it is written by, when not its own

    @property
    def written(self) -> str:
        """The name the model writes: its Key's, else its own."""
        return self.key or self.name

    def named(self, name: str) -> bool:
        """Whether `name` names it (either way, case folded)."""
        folded = name.casefold()
        return folded == self.name.casefold() or (bool(self.key) and folded == self.key.casefold())

    @property
    def required(self) -> bool:
        return self.default is _EMPTY and self.kind not in (_VAR_POSITIONAL, _VAR_KEYWORD)

    @property
    def shown(self) -> str:
        """How the tool list shows it: `query`, `a: float`, `limit=5`, `n: int | null = null`, `*rest`."""
        star = "*" if self.kind is _VAR_POSITIONAL else "**" if self.kind is _VAR_KEYWORD else ""
        typed = self.type.shown
        name = self.written
        if self.default is _EMPTY:
            return f"{star}{name}: {typed}" if typed else f"{star}{name}"
        if not typed or (type(self.default) in (int, float, bool) and typed == type(self.default).__name__):
            return f"{name}={literal(self.default)}"
        return f"{name}: {typed} = {literal(self.default)}"


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
        made_type = type_of(annotation)
        if p.default is None:  # `note: str = None`: null is what its default says it takes
            made_type = nullable(made_type)
        marks = typing.get_args(annotation)[1:] if typing.get_origin(annotation) is typing.Annotated else ()
        rest = any(m is _REST for m in marks)
        key = next((m.name for m in marks if isinstance(m, Key) and m.name != p.name), "")
        made.append(Parameter(p.name, p.kind, p.default, made_type, rest, key))
    named = [p for p in made if p.kind not in (_VAR_POSITIONAL, _VAR_KEYWORD)]
    if any(p.rest for p in named[:-1]) or any(p.rest and p.kind is _KEYWORD_ONLY for p in named):
        raise TypeError(f"only the last positional parameter of {fn!r} may be Rest (it takes the rest of the input)")
    return Shape(
        signature=signature,
        parameters=tuple(named),
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


# --- binding ------------------------------------------------------------------------------------------


class Bindable(typing.Protocol):
    """What binding reads of a tool (`Tool` is one): its name, its shape, how a call is written. A
    protocol, so that binding needs nothing of the module that makes tools from functions."""

    @property
    def name(self) -> str: ...
    @property
    def shape(self) -> Shape: ...
    @property
    def form(self) -> str: ...


def bind(tool: Bindable, text: str) -> inspect.BoundArguments | Refusal:
    """The arguments the model wrote in `text` for a call to `tool` (defaults are not applied: the
    function applies its own, an MCP server its own), or why there are none."""
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
        written = reading.literal(text)
        if text.strip().casefold() in _BLANK or (written is not None and written.value in ("", None, {}, [])):
            return _assign(s, [], {})
        raise _Refused(f"it takes no input, and was given {_preview(text)}")
    if len(named) == 1 and s.var_positional is None and s.var_keyword is None:
        return _bind_one(s, named[0], text)
    decoded = reading.structured(text)
    first = named[0] if named else None
    if isinstance(decoded, dict):
        keys = {str(k): v for k, v in decoded.items()}
        if first is not None and first.type.mapping and s.var_keyword is None and not _names_any(s, keys):
            return _assign(s, [decoded], {})  # keyed by none of its parameters: the first one's value
        return _assign(s, [], keys)
    if isinstance(decoded, list):
        if not (first is not None and first.type.sequence):
            return _assign(s, decoded, {})
        # One array for a first parameter that takes one is its value (`join[["a", "b"]]`), unless
        # the array's own first item is an array (`f[[[1, 2], 3]]`) or *args may take the items:
        # then it lists the values. Either way the other reading is tried when that one is refused,
        # and a refusal of both says what the first parameter takes.
        spread_first = s.var_positional is not None or (bool(decoded) and isinstance(decoded[0], list | tuple))
        if spread_first:
            try:
                return _assign(s, decoded, {})
            except _Refused:
                return _assign(s, [decoded], {})
        try:
            return _assign(s, [decoded], {})
        except _Refused as refused:
            whole = refused
        try:
            return _assign(s, decoded, {})
        except _Refused:
            raise whole from None
    return _assign(s, *_from_fields(s, text, reading.fields(text)))


def _names_any(s: Shape, keys: Mapping[str, object]) -> bool:
    """Whether any key names a parameter (by name, or folded as the model may write it)."""
    return any(p.named(k) for p in s.parameters for k in keys)


def _bind_one(s: Shape, only: Parameter, text: str) -> inspect.BoundArguments:
    """One parameter: by name when the text names it (a JSON object, `name=value`), else the whole text."""
    blank = text.strip()
    if only.default is not _EMPTY and (not blank or (blank == "{}" and not only.type.mapping)):
        return _assign(s, [], {})
    decoded = reading.structured(text) if blank.startswith("{") else None
    if isinstance(decoded, dict):
        if len(decoded) == 1 and only.named(str(next(iter(decoded)))):
            return _assign(s, list(decoded.values()), {})
        if not only.type.mapping:  # an object keyed by what the tool does not take
            return _assign(s, [], {str(k): v for k, v in decoded.items()})
        return _assign(s, [text], {})
    said = only.name.casefold() in text.casefold() or only.written.casefold() in text.casefold()
    found = reading.fields(text) if said else []
    if any(f.name is not None and only.named(f.name) for f in found):
        return _assign(s, *_from_fields(s, text, found))  # `lookup[item="train ticket"]`
    written = reading.literal(text)
    if written is not None and isinstance(written.value, str):  # `lookup["train ticket"]`
        return _assign(s, [written.value], {})
    if only.type.text and len(blank) >= 2 and blank[0] == blank[-1] == "`" and "`" not in blank[1:-1]:
        return _assign(s, [blank[1:-1]], {})
    return _assign(s, [text], {})


def _from_fields(s: Shape, text: str, found: list[reading.Field]) -> tuple[list[object], dict[str, object], list[str]]:
    """Positional values, keywords and the names written twice; a `name=` that names no parameter is a value."""
    positional: list[int] = []  # the fields that are values, by index
    keywords: dict[str, object] = {}
    twice: list[str] = []  # names written twice (`two[a=1, a=2]`)
    names = {n.casefold() for p in s.parameters for n in (p.name, p.written)}
    for i, f in enumerate(found):
        # `name=` binds by name when it names a parameter (or **kwargs takes it), or when its value is
        # a literal (`type="credit"`: an unknown name, refused as such); else the field is a value.
        known = f.name is not None and (f.name.casefold() in names or s.var_keyword is not None)
        if f.name is None or not (known or isinstance(f.value, reading.Written)):
            positional.append(i)
        elif any(k.casefold() == f.name.casefold() for k in keywords):
            twice.append(f.name)
        else:
            keywords[f.name] = f.value
    params = s.parameters
    last = params[-1] if params and params[-1].rest and s.var_positional is None else None
    at = next((i for i, f in enumerate(found) if f.name is not None and last is not None and last.named(f.name)), None)
    if at is not None and not twice:
        # The last parameter takes the rest, given by name (`write[path=notes.txt, content=Dear
        # Bob, hello]`): the text as written from its value up to a field that names another
        # parameter, or to the end (a `name=` that names none is part of it, with no **kwargs).
        def joins(f: reading.Field) -> bool:
            return f.name is None or (s.var_keyword is None and f.name.casefold() not in names)

        end = next((j for j in range(at + 1, len(found)) if not joins(found[j])), len(found))
        if end > at + 1:
            stop = found[end].start - 1 if end < len(found) else len(text)  # the comma before it
            positional = [i for i in positional if not at < i < end]
            for f in found[at + 1 : end]:
                if f.name is not None:
                    keywords.pop(f.name, None)
            keywords[str(found[at].name)] = text[found[at].start : stop].strip().partition("=")[2].strip()
    values: list[object] = [found[i].value if found[i].name is None else found[i].whole for i in positional]
    if len(positional) > len(params) and params and params[-1].rest and s.var_positional is None:
        # More values than parameters, and the last takes the rest (not given by name): the rest of
        # the text as written, when every field from its first on is a value.
        first = positional[len(params) - 1]
        if not any(params[-1].named(k) for k in keywords) and len(found) - first == len(positional) - (len(params) - 1):
            values = [*values[: len(params) - 1], text[found[first].start :].strip()]
    return values, keywords, twice


def _assign(
    s: Shape, positional: list[object], keywords: Mapping[str, object], twice: Sequence[str] = ()
) -> inspect.BoundArguments:
    """Match the values to the parameters, convert them, and bind; _Refused names every problem.

    As `Signature.bind` does, positional values take the parameters in order from the first, and a
    parameter given both by position and by name (or by name twice) is refused, not moved along.
    """
    values: dict[str, object] = {}
    extra_keywords: dict[str, object] = {}
    problems: list[str] = [f"{name} is given twice" for name in dict.fromkeys(twice)]
    unknown: list[str] = []
    by_name = {p.name: p for p in s.parameters}
    folded = {n.casefold(): p for p in s.parameters for n in (p.written, p.name)}
    extra_positional: list[object] = []
    for key, value in keywords.items():
        p = by_name.get(key) or folded.get(key.casefold())
        if p is not None and p.name not in values:
            values[p.name] = value
        elif s.var_positional is not None and key == s.var_positional.name and isinstance(plain(value), list):
            extra_positional = list(typing.cast(list[object], plain(value)))
        elif s.var_keyword is not None and p is None:
            extra_keywords[key] = value
        elif p is None:
            unknown.append(key)
        else:
            problems.append(f"{p.written} is given twice")
    for p, value in zip(s.parameters, positional, strict=False):
        if p.name in values:
            problems.append(f"{p.written} is given twice, by position and by name")
        else:
            values[p.name] = value
    surplus = positional[len(s.parameters) :]
    if surplus and s.var_positional is not None:
        extra_positional = surplus + extra_positional
    elif surplus:
        most = "" if all(p.required for p in s.parameters) else "at most "
        took = f"{most}{len(s.parameters)} value{'s' if len(s.parameters) != 1 else ''}"
        problems.append(f"it takes {took} and was given {len(positional) + len(keywords)}")
        if any("," in str(plain(v)) for v in positional):
            problems[-1] += " (put a value that holds a comma in double quotes)"
    if unknown:
        valid = ", ".join(p.written for p in s.parameters) or "none"
        names = ", ".join(literal(k) for k in unknown)
        problems.append(f"it has no input named {names} (its inputs: {valid})")
    missing = [p.written for p in s.parameters if p.required and p.name not in values]
    if missing:
        problems.append(f"{_and(missing)} {'is' if len(missing) == 1 else 'are'} missing")
    converted: dict[str, object] = {}
    for name, value in values.items():
        try:
            converted[name] = by_name[name].type.convert(value)
        except Unfit as unfit:
            problems.append(f"{by_name[name].written} takes {unfit.wants}, not {_preview(value)}")
    star = _convert_each(s.var_positional, dict(enumerate(extra_positional)), problems)
    extra_keywords = _convert_each(s.var_keyword, extra_keywords, problems)
    if problems:
        raise _Refused("; ".join(problems))
    return _arguments(s, converted, list(star.values()), extra_keywords)


_K = typing.TypeVar("_K", int, str)


def _convert_each(p: Parameter | None, items: dict[_K, object], problems: list[str]) -> dict[_K, object]:
    """The values of *args or **kwargs, each converted by its annotation."""
    done: dict[_K, object] = {}
    for key, value in items.items():
        try:
            done[key] = plain(value) if p is None else p.type.convert(value)
        except Unfit as unfit:
            problems.append(f"{typing.cast(Parameter, p).name} takes {unfit.wants}, not {_preview(value)}")
    return done


def _arguments(
    s: Shape, values: dict[str, object], star: list[object], extra: dict[str, object]
) -> inspect.BoundArguments:
    """Bind by kind: positional-only (and, before *args, all) parameters by position, the rest by name.

    Only what the model wrote is bound; a default fills a positional gap only (`f(a=1, b=2, /)`
    given b alone), where Python has no other way to skip a parameter.
    """
    by_position = [p for p in s.parameters if p.kind is _POSITIONAL_ONLY or (star and p.kind is not _KEYWORD_ONLY)]
    # Positional values up to the last one given (all of them before *args), defaults filling gaps.
    last = len(by_position) - 1 if star else max((i for i, p in enumerate(by_position) if p.name in values), default=-1)
    args = [values.get(p.name, p.default) for p in by_position[: last + 1]]
    placed = {p.name for p in by_position}
    kwargs = {name: value for name, value in values.items() if name not in placed}
    try:
        return s.signature.bind(*args, *star, **kwargs, **extra)
    except TypeError as exc:  # e.g. a **kwargs key that is also a positional-only name
        raise _Refused(str(exc)) from None


# --- words ----------------------------------------------------------------------------------------


def _preview(value: object) -> str:
    value = plain(value)
    if isinstance(value, str):
        short = value if len(value) <= _PREVIEW else value[:_PREVIEW] + "..."
        return json.dumps(short, ensure_ascii=False)
    shown = literal(value)
    return shown if len(shown) <= _PREVIEW else shown[:_PREVIEW] + "..."


def _and(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
