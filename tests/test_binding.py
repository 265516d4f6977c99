"""The binder: every row of issue 12's table and every conversion, through Agent, then `bind` itself.

Each tool below answers with the call it received, so an observation shows exactly what was bound.
"""

from __future__ import annotations

import ast
import datetime
import enum
import inspect
import json
import string
import time
import warnings
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple, Optional, TypedDict

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from react_text import Agent, Rest, ScriptedModel, Tool, tool
from react_text.prompting import render
from react_text.tools.binding import Refusal, bind, reading


def shown(name: str, *args: object, **kwargs: object) -> str:
    return f"{name}({', '.join([*map(repr, args), *(f'{k}={v!r}' for k, v in kwargs.items())])})"


def now() -> str:
    """The time."""
    return shown("now")


def search(query: str, limit: int = 5) -> str:
    return shown("search", query, limit)


def write(path: str, content: str) -> str:
    return shown("write", path, content)


def weather(city: str) -> str:
    return shown("weather", city)


def flag(on: bool) -> str:
    return shown("flag", on)


def opt(n: int | None) -> str:
    return shown("opt", n)


def answer(question: str) -> str:
    return shown("answer", question)


def scale(x: float, factor: float = 2.0) -> str:
    return shown("scale", x, factor)


def convert(value: float, unit: Literal["c", "f"]) -> str:
    return shown("convert", value, unit)


class Unit(enum.Enum):
    CELSIUS = "celsius"
    FAHRENHEIT = "fahrenheit"


class Level(enum.Enum):
    LOW = 1
    HIGH = 2


def thermo(unit: Unit) -> str:
    return shown("thermo", unit)


def level(level: Level) -> str:
    return shown("level", level)


def total(numbers: list[int]) -> str:
    return shown("total", numbers)


def config(options: dict[str, int]) -> str:
    return shown("config", options)


def note(text: str | None = None) -> str:
    return shown("note", text)


def pick(first: int, *rest: float, **flags: bool) -> str:
    return shown("pick", first, *rest, **flags)


async def later(seconds: int) -> str:
    return shown("later", seconds)


def refused(fn: Any, problem: str) -> str:
    made = tool(fn)
    return render("corrections/bad_input", tool=made.name, problem=problem, form=made.form)


def observe(fn: Any, reply: str) -> str | None:
    """The observation of the first step of a run whose model writes `reply`."""
    model = ScriptedModel([reply, "FINAL: done"])
    result = Agent(model, tools=[fn]).run("Use the tool.")
    return result.steps[0].observation


# Issue 12's table, row by row, then the conversions it lists.
TABLE = [
    pytest.param(now, "ACTION: now[]", shown("now"), id="now[]"),
    pytest.param(search, "ACTION: search[cats]", shown("search", "cats", 5), id="default"),
    pytest.param(
        write, 'ACTION: write["a.txt", "hello, world"]', shown("write", "a.txt", "hello, world"), id="quoted-csv"
    ),
    pytest.param(weather, 'ACTION: weather[{"city": "Paris"}]', shown("weather", "Paris"), id="one-key-object"),
    pytest.param(
        search,
        '{"action": "search", "action_input": {"limit": 3}}',
        refused(search, "query is missing"),
        id="blob-missing-query",
    ),
    pytest.param(
        flag,
        "ACTION: flag[maybe]",
        refused(flag, 'on takes true or false (also yes/no, 1/0), not "maybe"'),
        id="bool-refused",
    ),
    pytest.param(opt, "ACTION: opt[5]", shown("opt", 5), id="optional-int"),
    pytest.param(
        answer,
        "ACTION: answer[refund window?]",
        shown("answer", "refund window?"),
        id="tool-named-answer",
    ),
    # the conversions
    pytest.param(now, "ACTION: now[ ]", shown("now"), id="now-blank"),
    pytest.param(now, "ACTION: now[{}]", shown("now"), id="now-empty-object"),
    pytest.param(now, "ACTION: now[Paris]", refused(now, 'it takes no input, and was given "Paris"'), id="now-refused"),
    pytest.param(search, "ACTION: search[cats, 3]", shown("search", "cats", 3), id="csv"),
    pytest.param(search, 'ACTION: search["cats", 3]', shown("search", "cats", 3), id="csv-quoted"),
    pytest.param(search, "ACTION: search['cats, dogs', 3]", shown("search", "cats, dogs", 3), id="python-args"),
    pytest.param(
        search, 'ACTION: search(query="cats, dogs", limit=3)', shown("search", "cats, dogs", 3), id="python-keywords"
    ),
    pytest.param(search, "ACTION: search[query=cats, limit=3]", shown("search", "cats", 3), id="keyword=value"),
    pytest.param(search, "ACTION: search[cats, limit=3]", shown("search", "cats", 3), id="positional-and-keyword"),
    pytest.param(search, 'ACTION: search[["cats", 3]]', shown("search", "cats", 3), id="json-array"),
    pytest.param(search, "ACTION: search[{'query': 'cats'}]", shown("search", "cats", 5), id="single-quoted-object"),
    pytest.param(
        search,
        '{"action": "search", "action_input": {"query": "cats", "limit": 3}}',
        shown("search", "cats", 3),
        id="blob",
    ),
    pytest.param(
        weather,
        '{"action": "weather", "action_input": {"city": "Paris"}}',
        shown("weather", "Paris"),
        id="blob-one-key",
    ),
    pytest.param(weather, "ACTION: weather[Paris, France]", shown("weather", "Paris, France"), id="one-param-whole"),
    pytest.param(
        search,
        'ACTION: search[{"q": "cats"}]',
        refused(search, 'it has no input named "q" (its inputs: query, limit); query is missing'),
        id="unknown-key",
    ),
    pytest.param(write, 'ACTION: write[{"path": "a.txt"}]', refused(write, "content is missing"), id="missing-key"),
    pytest.param(
        search,
        "ACTION: search[cats, 3, 4]",
        refused(search, "it takes at most 2 values and was given 3"),
        id="too-many",
    ),
    pytest.param(
        write,
        "ACTION: write[notes.txt, Dear Bob, hello]",
        refused(write, "it takes 2 values and was given 3"),
        id="more-values-than-parameters",  # the rest goes to a parameter annotated Rest only (issue 20)
    ),
    pytest.param(
        write, 'ACTION: write[{"path": "a.txt", "content": 42}]', shown("write", "a.txt", "42"), id="str-from-number"
    ),
    pytest.param(
        write, 'ACTION: write[{"path": "a.txt", "content": true}]', shown("write", "a.txt", "true"), id="str-from-bool"
    ),
    pytest.param(scale, "ACTION: scale[3, 1.5]", shown("scale", 3.0, 1.5), id="float"),
    pytest.param(scale, "ACTION: scale[x=2]", shown("scale", 2.0, 2.0), id="float-default"),
    pytest.param(scale, "ACTION: scale[two, 1]", refused(scale, 'x takes a number, not "two"'), id="float-refused"),
    pytest.param(
        search,
        "ACTION: search[cats, many]",
        refused(search, 'limit takes a whole number, not "many"'),
        id="int-refused",
    ),
    pytest.param(flag, "ACTION: flag[YES]", shown("flag", True), id="bool-yes"),
    pytest.param(flag, "ACTION: flag[0]", shown("flag", False), id="bool-0"),
    pytest.param(flag, "ACTION: flag[False]", shown("flag", False), id="bool-False"),
    pytest.param(opt, "ACTION: opt[null]", shown("opt", None), id="optional-null"),
    pytest.param(
        opt, "ACTION: opt[five]", refused(opt, 'n takes a whole number or null, not "five"'), id="optional-refused"
    ),
    pytest.param(note, "ACTION: note[]", shown("note", None), id="optional-default"),
    pytest.param(note, "ACTION: note[none]", shown("note", "none"), id="optional-str-keeps-text"),
    pytest.param(convert, "ACTION: convert[100, f]", shown("convert", 100.0, "f"), id="literal"),
    pytest.param(convert, "ACTION: convert[100, F]", shown("convert", 100.0, "f"), id="literal-any-case"),
    pytest.param(
        convert,
        "ACTION: convert[100, kelvin]",
        refused(convert, 'unit takes one of "c", "f", not "kelvin"'),
        id="literal-refused",
    ),
    pytest.param(thermo, "ACTION: thermo[Celsius]", shown("thermo", Unit.CELSIUS), id="enum-value"),
    pytest.param(thermo, "ACTION: thermo[FAHRENHEIT]", shown("thermo", Unit.FAHRENHEIT), id="enum-name"),
    pytest.param(level, "ACTION: level[2]", shown("level", Level.HIGH), id="enum-int-value"),
    pytest.param(
        level, "ACTION: level[medium]", refused(level, 'level takes one of LOW, HIGH, not "medium"'), id="enum-refused"
    ),
    pytest.param(total, "ACTION: total[[1, 2, 3]]", shown("total", [1, 2, 3]), id="list"),
    pytest.param(total, "ACTION: total[1, 2, 3]", shown("total", [1, 2, 3]), id="list-from-csv"),
    pytest.param(
        total,
        'ACTION: total[[1, "x"]]',
        refused(total, 'numbers takes a JSON array of int, not "[1, \\"x\\"]"'),
        id="list-refused",
    ),
    pytest.param(config, 'ACTION: config[{"a": 1, "b": "2"}]', shown("config", {"a": 1, "b": 2}), id="dict"),
    pytest.param(config, 'ACTION: config[{"options": {"a": 1}}]', shown("config", {"a": 1}), id="dict-under-its-name"),
    pytest.param(pick, "ACTION: pick[1, 2, 3]", shown("pick", 1, 2.0, 3.0), id="varargs"),
    pytest.param(pick, 'ACTION: pick[{"first": 1, "fast": "yes"}]', shown("pick", 1, fast=True), id="varkw"),
    pytest.param(later, "ACTION: later[3]", shown("later", 3), id="async"),
]


@pytest.mark.parametrize(("fn", "reply", "observation"), TABLE)
def test_binding_table_through_the_agent(fn: Any, reply: str, observation: str) -> None:
    assert observe(fn, reply) == observation


# --- bind, directly --------------------------------------------------------------------------------


def arguments(fn: Any, text: str) -> dict[str, object] | str:
    bound = bind(tool(fn), text)
    return bound.message if isinstance(bound, Refusal) else dict(bound.arguments)


@pytest.mark.parametrize(
    ("fn", "text", "expected"),
    [
        # the rows that through the Agent need the parser branch
        (weather, '{"city": "Paris"}', {"city": "Paris"}),
        (search, '{"limit": 3}', refused(search, "query is missing")),
        (answer, "refund window?", {"question": "refund window?"}),
        # a one-parameter tool gets the whole text, unless the text names what it takes...
        (
            weather,
            '{"town": "Paris"}',
            refused(weather, 'it has no input named "town" (its inputs: city); city is missing'),
        ),
        (weather, '{"city": "Paris", "x": 1}', refused(weather, 'it has no input named "x" (its inputs: city)')),
        (weather, "  Paris  ", {"city": "  Paris  "}),
        # ...and leaves its default to the function when the text is blank
        (note, "", {}),
        (note, "{}", {}),
        (total, '{"numbers": [1, 2]}', {"numbers": [1, 2]}),
        (search, "", refused(search, "query is missing")),
        (search, "cats,", {"query": "cats"}),
        (search, 'cats, "3"', {"query": "cats", "limit": 3}),
        (search, "cats , 3 ", {"query": "cats", "limit": 3}),
        (search, "'cats', 3", {"query": "cats", "limit": 3}),
        (search, "limit=3, cats", {"query": "cats", "limit": 3}),
        (search, "Query=cats", {"query": "cats"}),
        (search, '{"QUERY": "cats"}', {"query": "cats"}),
        (search, "cats, 3.0", {"query": "cats", "limit": 3}),
        (search, "cats, 3.5", refused(search, "limit takes a whole number, not 3.5")),
        (search, '{"query": null}', refused(search, "query takes text, not null")),
        (
            search,
            '{"query": "a", "query ": "b"}',
            refused(search, 'it has no input named "query " (its inputs: query, limit)'),
        ),
        (search, "#cats, 3", {"query": "#cats", "limit": 3}),
        (search, "C:\\new, 3", {"query": "C:\\new", "limit": 3}),
        (write, "a.txt, 007", {"path": "a.txt", "content": "007"}),
        (write, "'a.txt', 1.50", {"path": "a.txt", "content": "1.50"}),
        (write, "a.txt, line 1\nline 2", {"path": "a.txt", "content": "line 1\nline 2"}),
        (write, '"a.txt", "line 1\nline 2"', {"path": "a.txt", "content": "line 1\nline 2"}),
        (write, 'a.txt, He said "hi", then left', refused(write, "it takes 2 values and was given 3")),
        (
            write,
            '"a, b.txt", c, d',
            refused(write, "it takes 2 values and was given 3 (put a value that holds a comma in double quotes)"),
        ),
        (write, '{"path": "a.txt", "content": {"k": [1]}}', {"path": "a.txt", "content": '{"k": [1]}'}),
        (
            write,
            '{"path": "a.txt", "content": "x", "path ": 1}',
            refused(write, 'it has no input named "path " (its inputs: path, content)'),
        ),
        (flag, "true", {"on": True}),
        (flag, " No ", {"on": False}),
        (flag, "1", {"on": True}),
        (flag, '{"on": 1}', {"on": True}),
        (flag, '{"on": 2}', refused(flag, "on takes true or false (also yes/no, 1/0), not 2")),
        (opt, "", {"n": None}),
        (opt, "None", {"n": None}),
        (opt, '{"n": null}', {"n": None}),
        (scale, "1e3", {"x": 1000.0}),
        (scale, '{"x": 1, "factor": true}', refused(scale, "factor takes a number, not true")),
        (level, '{"level": 1}', {"level": Level.LOW}),
        (level, "high", {"level": Level.HIGH}),
        (total, "[]", {"numbers": []}),
        (total, "[1, 2.0]", {"numbers": [1, 2]}),
        (config, "{'a': 1}", {"options": {"a": 1}}),
        (config, "[1]", refused(config, 'options takes a JSON object with int values, not "[1]"')),
        (pick, "1", {"first": 1}),
        (pick, '{"first": 1, "rest": [2, 3]}', {"first": 1, "rest": (2.0, 3.0)}),
        (pick, "1, x", refused(pick, 'rest takes a number, not "x"')),
        (now, "null", {}),
        (now, "[ ]", {}),
        # As Signature.bind: values by position take the parameters in order; one also given by
        # name (or a name written twice) is refused, never moved to a parameter the model did not name.
        (write, "x, path=a.txt", refused(write, "path is given twice, by position and by name; content is missing")),
        (write, "path=a.txt, x", refused(write, "path is given twice, by position and by name; content is missing")),
        (write, "content=x, a.txt", {"path": "a.txt", "content": "x"}),
        (write, "path=a.txt, path=b.txt", refused(write, "path is given twice; content is missing")),
        (search, "cats, query=dogs", refused(search, "query is given twice, by position and by name")),
    ],
)
def test_bind(fn: Any, text: str, expected: object) -> None:
    assert arguments(fn, text) == expected


def test_binding_keeps_types() -> None:
    bound = bind(tool(flag), "1")
    assert not isinstance(bound, Refusal)
    assert type(bound.arguments["on"]) is bool
    bound = bind(tool(scale), "3, 2")
    assert not isinstance(bound, Refusal)
    assert [type(v) for v in bound.arguments.values()] == [float, float]


def positional_only(a: int, b: str = "x", /, *, c: bool = False) -> str:
    return shown("positional_only", a, b, c=c)


def keyword_only(*, query: str, limit: int = 5) -> str:
    return shown("keyword_only", query, limit)


@pytest.mark.parametrize(
    ("fn", "text", "observation"),
    [
        (positional_only, '{"a": 1, "c": "yes"}', shown("positional_only", 1, "x", c=True)),
        (positional_only, "1, y, true", shown("positional_only", 1, "y", c=True)),
        (keyword_only, "cats, 3", shown("keyword_only", "cats", 3)),
        (keyword_only, "cats", shown("keyword_only", "cats", 5)),
    ],
)
def test_every_kind_of_parameter_is_bound(fn: Any, text: str, observation: str) -> None:
    bound = bind(tool(fn), text)
    assert not isinstance(bound, Refusal)
    assert fn(*bound.args, **bound.kwargs) == observation


def test_a_synthesized_signature_is_honoured() -> None:
    """How MCP tools will come: a function of **arguments with a signature made for it."""

    def call(**arguments: object) -> str:
        return json.dumps(arguments, sort_keys=True)

    call.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [
            inspect.Parameter("city", inspect.Parameter.KEYWORD_ONLY, annotation=str),
            inspect.Parameter("days", inspect.Parameter.KEYWORD_ONLY, annotation=int | None, default=None),
        ]
    )
    made = Tool("forecast", "The weather to come.", call)
    assert made.form == "forecast[city, days: int | null = null]"
    bound = bind(made, "Paris, 3")
    assert not isinstance(bound, Refusal)
    assert call(*bound.args, **bound.kwargs) == '{"city": "Paris", "days": 3}'
    assert observe(made, 'ACTION: forecast[{"city": "Paris"}]') == '{"city": "Paris"}'  # days: not written


# --- properties ------------------------------------------------------------------------------------

VALUES: dict[object, st.SearchStrategy[object]] = {
    str: st.text(),
    int: st.integers(-(10**18), 10**18),
    float: st.floats(allow_nan=False, allow_infinity=False),
    bool: st.booleans(),
}
KINDS = [inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY]


@st.composite
def signatures_and_values(draw: st.DrawFn) -> tuple[inspect.Signature, dict[str, object], dict[str, object]]:
    """A signature of up to 4 parameters, a JSON object of valid values for it, and the binding expected."""
    count = draw(st.integers(1, 4))
    names = draw(
        st.lists(
            st.sampled_from(["query", "limit", "city", "on", "n", "x", "text", "ratio"]),
            min_size=count,
            max_size=count,
            unique=True,
        )
    )
    drawn = []
    for name in names:
        base = draw(st.sampled_from([str, int, float, bool]))
        optional = draw(st.booleans())
        values = st.one_of(st.none(), VALUES[base]) if optional else VALUES[base]
        default = draw(st.one_of(st.just(inspect.Parameter.empty), values))
        annotation = draw(st.sampled_from([base | None, Optional[base]])) if optional else base  # noqa: UP045 - both spellings of an optional
        drawn.append((draw(st.sampled_from(KINDS)), name, annotation, default, values))
    drawn.sort(key=lambda d: d[0])
    # Among positional parameters a default may not be followed by a required one: drop such defaults.
    positional = [i for i, d in enumerate(drawn) if d[0] is not inspect.Parameter.KEYWORD_ONLY]
    last_required = max((i for i in positional if drawn[i][3] is inspect.Parameter.empty), default=-1)
    params = []
    for i, (kind, name, annotation, default, _) in enumerate(drawn):
        if i in positional and i < last_required:
            default = inspect.Parameter.empty
        params.append(inspect.Parameter(name, kind, annotation=annotation, default=default))
    given: dict[str, object] = {}
    expected: dict[str, object] = {}
    for p, (*_, values) in zip(params, drawn, strict=True):
        if p.default is inspect.Parameter.empty or draw(st.booleans()):
            given[p.name] = expected[p.name] = draw(values)
        else:
            expected[p.name] = p.default
    return inspect.Signature(params), given, expected


def typed(values: dict[str, object]) -> list[tuple[str, type, object]]:
    return [(k, type(v), v) for k, v in values.items()]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(signatures_and_values())
def test_a_json_object_of_valid_values_binds_to_exactly_those_values(
    case: tuple[inspect.Signature, dict[str, object], dict[str, object]],
) -> None:
    signature, given, expected = case

    def fn(*args: object, **kwargs: object) -> None:
        return None

    fn.__signature__ = signature  # type: ignore[attr-defined]
    bound = bind(Tool("t", "", fn), json.dumps(given))
    assert not isinstance(bound, Refusal), bound.message
    assert set(given) <= set(bound.arguments)  # and defaults only where a positional gap needs one
    bound.apply_defaults()
    assert typed(dict(bound.arguments)) == typed(expected)


# --- issue 26's classes (found in real calls) and issue 20's binding items, for plain functions -----


def forecast(city: str, date: str = "today") -> str:
    return shown("forecast", city, date)


def book(city: str, date: str, extras: list[str] | None = None, pets: bool = False) -> str:
    return shown("book", city, date, extras, pets)


def derive(function: str, x: float, order: int = 1) -> str:
    return shown("derive", function, x, order)


def regress(predictors: list[str], target: str, standardize: bool = False) -> str:
    return shown("regress", predictors, target, standardize)


def implicit(city: str, note: str = None) -> str:  # type: ignore[assignment] # noqa: RUF013 - what users write
    return shown("implicit", city, note)


def lookup(item: str) -> str:
    return shown("lookup", item)


def copies(n: int) -> str:
    return shown("copies", n)


def units(value: float, from_unit: str, to_unit: str) -> str:
    return shown("units", value, from_unit, to_unit)


class Person(TypedDict):
    name: str
    age: int


class Filters(TypedDict, total=False):
    city: str
    stars: int


@dataclass
class Point:
    x: float
    y: float
    label: str = ""


class Range(NamedTuple):
    low: int
    high: int


def greet(person: Person) -> str:
    return shown("greet", person)


def hotels(filters: Filters, limit: int = 5) -> str:
    return shown("hotels", filters, limit)


def plot(point: Point) -> str:
    return shown("plot", point)


def span(points: list[Point], within: Range) -> str:
    return shown("span", points, within)


def on(day: datetime.date) -> str:
    return shown("on", day)


def jot(path: str, content: Rest) -> str:
    return shown("jot", path, content)


def keep(first: str, *more: str) -> str:
    return shown("keep", first, *more)


CLASSES = [
    # A quoted value that holds a comma is one value, whatever the tool takes.
    pytest.param(forecast, 'ACTION: forecast["Sunol, CA"]', shown("forecast", "Sunol, CA", "today"), id="quoted-comma"),
    pytest.param(
        forecast, "ACTION: forecast['Sunol, CA']", shown("forecast", "Sunol, CA", "today"), id="single-quoted-comma"
    ),
    pytest.param(
        forecast,
        'Action: forecast\nAction Input: "Sunol, CA"',
        shown("forecast", "Sunol, CA", "today"),
        id="mrkl-quoted",
    ),
    pytest.param(weather, 'ACTION: weather["Paris"]', shown("weather", "Paris"), id="one-param-quoted"),
    pytest.param(forecast, "ACTION: forecast[Sunol, CA]", shown("forecast", "Sunol", "CA"), id="unquoted-is-two"),
    # A digit followed by a letter inside a string does not stop the literal reader.
    pytest.param(
        book,
        'ACTION: book["Paris", "20th June", ["gym", "free breakfast"]]',
        shown("book", "Paris", "20th June", ["gym", "free breakfast"], False),
        id="digit-letter-positional",
    ),
    pytest.param(
        book,
        'ACTION: book[city="San Francisco, CA", date="July 1st", extras=["pet friendly, quiet"]]',
        shown("book", "San Francisco, CA", "July 1st", ["pet friendly, quiet"], False),
        id="digit-letter-keywords",
    ),
    pytest.param(
        derive,
        'ACTION: derive["2x**3 - 3x**2 + 4x - 5", 2]',
        shown("derive", "2x**3 - 3x**2 + 4x - 5", 2.0, 1),
        id="formula",
    ),
    pytest.param(derive, 'ACTION: derive["# not a comment", 2]', shown("derive", "# not a comment", 2.0, 1), id="hash"),
    pytest.param(derive, r'ACTION: derive["\\frac{1}{x}", 2]', shown("derive", "\\frac{1}{x}", 2.0, 1), id="backslash"),
    # JSON literals (true, false, null) in the keyword form, as Python's are read.
    pytest.param(
        regress,
        'ACTION: regress[predictors=["Age", "Income"], target="Spending, total", standardize=true]',
        shown("regress", ["Age", "Income"], "Spending, total", True),
        id="json-true",
    ),
    pytest.param(
        book,
        'ACTION: book[city="Oslo", date="1st", extras=null, pets=false]',
        shown("book", "Oslo", "1st", None, False),
        id="json-null-false",
    ),
    pytest.param(
        book,
        'ACTION: book["Oslo", "1st", null, True]',
        shown("book", "Oslo", "1st", None, True),
        id="positional-literals-mixed",
    ),
    pytest.param(
        search, "ACTION: search[query=cats and dogs, limit=3]", shown("search", "cats and dogs", 3), id="bare-keywords"
    ),
    # An explicit null for a parameter whose default is null.
    pytest.param(
        implicit, "ACTION: implicit[Oslo, null]", shown("implicit", "Oslo", None), id="null-default-positional"
    ),
    pytest.param(
        implicit,
        'ACTION: implicit[{"city": "Oslo", "note": null}]',
        shown("implicit", "Oslo", None),
        id="null-default-json",
    ),
    # A one-parameter tool: a keyword naming its parameter binds by name; otherwise the whole text.
    pytest.param(
        lookup, 'ACTION: lookup[item="train ticket"]', shown("lookup", "train ticket"), id="one-param-keyword"
    ),
    pytest.param(
        lookup, "ACTION: lookup[item=train ticket]", shown("lookup", "train ticket"), id="one-param-bare-keyword"
    ),
    pytest.param(copies, "ACTION: copies[n=3]", shown("copies", 3), id="one-param-int-keyword"),
    pytest.param(lookup, "ACTION: lookup[x=1, y=2]", shown("lookup", "x=1, y=2"), id="one-param-not-a-call"),
    pytest.param(
        lookup,
        'ACTION: lookup[{"name": "train ticket"}]',
        refused(lookup, 'it has no input named "name" (its inputs: item); item is missing'),
        id="one-param-other-key",
    ),
    # More values than parameters: refused, unless the last parameter takes the rest.
    pytest.param(
        units,
        "ACTION: units[1, km, mi, extra]",
        refused(units, "it takes 3 values and was given 4"),
        id="too-many-values",
    ),
    pytest.param(
        jot, "ACTION: jot[notes.txt, Dear Bob, hello]", shown("jot", "notes.txt", "Dear Bob, hello"), id="rest"
    ),
    pytest.param(keep, "ACTION: keep[a, b, c]", shown("keep", "a", "b", "c"), id="varargs-rest"),
    # Typed dicts, dataclasses and other annotations are built from a JSON object, or refused.
    pytest.param(
        greet, 'ACTION: greet[{"name": "Ada", "age": "36"}]', shown("greet", {"name": "Ada", "age": 36}), id="typeddict"
    ),
    pytest.param(
        greet,
        'ACTION: greet[{"person": {"name": "Ada", "age": 36}}]',
        shown("greet", {"name": "Ada", "age": 36}),
        id="typeddict-by-name",
    ),
    pytest.param(
        greet,
        'ACTION: greet[{"name": "Ada"}]',
        refused(greet, 'person takes a JSON object {"name": str, "age": int}, not "{\\"name\\": \\"Ada\\"}"'),
        id="typeddict-missing-key",
    ),
    pytest.param(
        greet,
        "ACTION: greet[Ada]",
        refused(greet, 'person takes a JSON object {"name": str, "age": int}, not "Ada"'),
        id="typeddict-from-text",
    ),
    pytest.param(hotels, 'ACTION: hotels[{"stars": 4}, 2]', shown("hotels", {"stars": 4}, 2), id="typeddict-not-total"),
    pytest.param(plot, 'ACTION: plot[{"x": 1, "y": 2.5}]', shown("plot", Point(1.0, 2.5)), id="dataclass"),
    pytest.param(
        plot,
        'ACTION: plot[{"x": 1, "z": 2}]',
        refused(
            plot, 'point takes a JSON object {"x": float, "y": float, "label"?: str}, not "{\\"x\\": 1, \\"z\\": 2}"'
        ),
        id="dataclass-unknown-field",
    ),
    pytest.param(
        span,
        'ACTION: span[points=[{"x": 0, "y": 0}, {"x": 1, "y": 1}], within=[0, 9]]',
        shown("span", [Point(0.0, 0.0), Point(1.0, 1.0)], Range(0, 9)),
        id="nested-dataclasses-namedtuple",
    ),
    pytest.param(on, "ACTION: on[2024-05-01]", shown("on", datetime.date(2024, 5, 1)), id="date"),
    pytest.param(
        on, "ACTION: on[next week]", refused(on, 'day takes a date (YYYY-MM-DD), not "next week"'), id="date-refused"
    ),
]


@pytest.mark.parametrize(("fn", "reply", "observation"), CLASSES)
def test_real_call_forms_bind_for_plain_functions(fn: Any, reply: str, observation: str) -> None:
    assert observe(fn, reply) == observation


class Opaque:
    """A class binding does not know, built from the text as argparse's `type=` builds it."""

    def __init__(self, text: str) -> None:
        if not text.startswith("id-"):
            raise ValueError("an id starts with id-")
        self.text = text

    def __repr__(self) -> str:
        return f"Opaque({self.text!r})"


def fetch(thing: Opaque) -> str:
    return shown("fetch", thing)


def test_an_unknown_class_is_built_from_the_text_or_refused() -> None:
    assert observe(fetch, "ACTION: fetch[id-7]") == shown("fetch", Opaque("id-7"))
    assert observe(fetch, "ACTION: fetch[7]") == refused(fetch, 'thing takes an Opaque, not "7"')


@pytest.mark.parametrize(
    ("fn", "text", "written"),
    [
        (search, "cats", {"query": "cats"}),
        (search, '{"query": "cats"}', {"query": "cats"}),
        (book, 'city="Oslo", date="1st"', {"city": "Oslo", "date": "1st"}),
        (note, "", {}),
        (keyword_only, "cats", {"query": "cats"}),
    ],
)
def test_bind_holds_only_what_the_model_wrote(fn: Any, text: str, written: dict[str, object]) -> None:
    """Defaults are the function's to apply (an MCP server applies its own): none are bound."""
    assert arguments(fn, text) == written


def test_a_synthesized_signature_receives_only_what_was_written() -> None:
    def call(**arguments: object) -> str:
        return json.dumps(arguments, sort_keys=True)

    call.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [
            inspect.Parameter("city", inspect.Parameter.KEYWORD_ONLY, annotation=str),
            inspect.Parameter("pets", inspect.Parameter.KEYWORD_ONLY, annotation=bool, default="false"),
            inspect.Parameter("note", inspect.Parameter.KEYWORD_ONLY, annotation=str, default=None),
        ]
    )
    made = Tool("stay", "", call)
    assert observe(made, "ACTION: stay[Oslo]") == '{"city": "Oslo"}'
    assert observe(made, "ACTION: stay[city=Oslo, note=null]") == '{"city": "Oslo", "note": null}'
    assert observe(made, "ACTION: stay[Oslo, true]") == '{"city": "Oslo", "pets": true}'


def test_rest_marks_only_the_last_parameter() -> None:
    def bad(first: Rest, second: str) -> str:
        return first + second

    with pytest.raises(TypeError, match="Rest"):
        tool(bad)


# --- the literal reader against Python's and JSON's own, and against adversarial inputs --------------

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(JSON_VALUES)
def test_the_literal_reader_reads_json_and_python_as_they_read_themselves(value: object) -> None:
    """The oracles are json.loads and ast.literal_eval: the binder's reader must agree with both."""
    as_json = json.dumps(value, ensure_ascii=False)
    found = reading.literal(as_json)
    assert found is not None and found.value == json.loads(as_json), as_json
    as_python = repr(value)
    found = reading.literal(as_python)
    assert found is not None and found.value == ast.literal_eval(as_python), as_python


@pytest.mark.parametrize(
    "text",
    [
        " " * 100_000 + "x",
        "1" * 100_000 + "x",
        "1." + "1" * 100_000 + "e",
        "1e" + "1" * 100_000 + "x",
        "a" * 100_000 + " ==",
        "a" + " " * 100_000 + "==",
        "a," * 50_000,
        '"a", ' * 25_000,
        "x=1, " * 20_000,
        '"' + "\\" * 100_000,
        '"' + "\\n" * 50_000,
        '"a' * 50_000,
        "'a, " * 25_000,
        "[" * 100_000,
        "[1, " * 25_000,
        "[a, " * 25_000,
        "{" * 100_000,
        '{"a": ' * 20_000,
        "(" * 100_000,
        "\\u" * 50_000,
    ],
)
def test_adversarial_100kb_inputs_bind_in_linear_time(text: str) -> None:
    # Not a timing assertion (bench/ measures speed): a generous bound that only quadratic or
    # exponential reading would break, so the test cannot flake on a busy machine.
    for made in (tool(search), tool(lookup), tool(total), tool(greet), tool(book), tool(jot)):
        started = time.process_time()
        bound = bind(made, text)
        assert time.process_time() - started < 2.0, made.name
        assert isinstance(bound, Refusal | inspect.BoundArguments)


# --- bind never raises -------------------------------------------------------------------------------


def any_kind(a, b: int = 1, *rest: float, **more: bool):  # type: ignore[no-untyped-def]
    return None


def many(
    path: str,
    mode: Literal["r", "w"],
    count: int | None,
    ratio: float,
    items: list[int],
    table: dict[str, Level],
    flag: bool = False,
) -> None:
    return None


TOOLS = [
    tool(fn)
    for fn in (
        now,
        search,
        write,
        weather,
        flag,
        opt,
        scale,
        convert,
        thermo,
        level,
        total,
        config,
        note,
        pick,
        positional_only,
        keyword_only,
        any_kind,
        many,
        book,
        implicit,
        units,
        greet,
        hotels,
        plot,
        span,
        on,
        jot,
        keep,
        fetch,
    )
]
TEXT = st.one_of(
    st.text(),
    st.text(alphabet=string.printable + "{}[]\"'=,#\\é中😀"),
    st.lists(st.one_of(st.text(alphabet="ab1 ,'\"=[]{}"), st.integers().map(str)), max_size=5).map(", ".join),
    st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(),
        lambda inner: (
            st.lists(inner, max_size=3)
            | st.dictionaries(st.sampled_from(["a", "path", "query", "first", "rest", "x"]), inner, max_size=3)
        ),
    ).map(json.dumps),
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(TOOLS), TEXT)
def test_bind_never_raises_nor_warns(made: Tool, text: str) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        bound = bind(made, text)
    assert not caught, [str(w.message) for w in caught]
    if isinstance(bound, Refusal):
        assert bound.message.startswith(f"The tool {made.name} was not run: ")
        assert bound.message.endswith(made.form)
    else:
        assert isinstance(bound, inspect.BoundArguments)
