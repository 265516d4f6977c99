"""attack2: binding tool inputs to Python signatures (docs/concepts/binder.md), both drivers."""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import Any, NamedTuple, TypedDict

import pytest
from _attack2_fake import drive

from react_text import Agent, Rest, ScriptedModel

DRIVERS = ["sync", "async"]
got: list[Any] = []


class Point(TypedDict):
    x: int
    y: int


@dataclass(frozen=True)
class Box:
    w: int
    h: float = 1.0


class Pair(NamedTuple):
    a: int
    b: str


def place(p: Point) -> str:
    """Place a point."""
    got.append(p)
    return "ok"


def pack(b: Box) -> str:
    """Pack a box."""
    got.append(b)
    return "ok"


def pair(v: Pair) -> str:
    """Take a pair."""
    got.append(v)
    return "ok"


def two(a: int, b: int) -> str:
    """Take two numbers."""
    got.append((a, b))
    return "ok"


def write(path: str, content: Rest) -> str:
    """Write a file."""
    got.append((path, content))
    return "ok"


def many(first: str, *more: int) -> str:
    """Take one text and numbers."""
    got.append((first, more))
    return "ok"


def day(d: datetime.date) -> str:
    """Take a date."""
    got.append(d)
    return "ok"


TOOLS = [place, pack, pair, two, write, many, day]


def _bind(written: str, driver: str) -> tuple[list[Any], str | None]:
    got.clear()
    result = drive(Agent(ScriptedModel([f"ACTION: {written}", "FINAL: done"]), tools=TOOLS), "Go.", driver)
    return list(got), result.steps[0].observation


# binder.md: "TypedDicts, dataclasses, NamedTuples and pydantic models are built from a JSON
# object; dates from ISO text"; "search[["cats", 3]]" (a JSON array) binds positionally;
# "More values than parameters are refused, saying what the tool takes, unless the last parameter
# takes the rest: `*args`, or `content: Rest` ... so `write[notes.txt, Dear Bob, hello]` works."
BINDS = {
    'place[{"x": 1, "y": 2}]': [{"x": 1, "y": 2}],
    'pack[{"w": 3}]': [Box(3, 1.0)],
    'pack[{"w": 3, "h": 2.5}]': [Box(3, 2.5)],
    'pair[{"a": 1, "b": "x"}]': [Pair(1, "x")],
    "two[1, 2]": [(1, 2)],
    "two[a=1, b=2]": [(1, 2)],
    "two[[1, 2]]": [(1, 2)],
    "write[notes.txt, Dear Bob, hello]": [("notes.txt", "Dear Bob, hello")],
    'write[path="a.txt", content="b, c"]': [("a.txt", "b, c")],
    "many[x, 1, 2, 3]": [("x", (1, 2, 3))],
    "day[2024-02-03]": [datetime.date(2024, 2, 3)],
}


@pytest.mark.parametrize("driver", DRIVERS)
@pytest.mark.parametrize("written", sorted(BINDS))
def test_a_documented_form_binds_to_exactly_its_values(written: str, driver: str) -> None:
    calls, _ = _bind(written, driver)
    assert calls == BINDS[written]


# binder.md: "An input a tool cannot take is refused, without running it, with a note that says
# what it takes"; troubleshooting: "The tool $tool was not run: $problem. Its inputs: $form".
REFUSED = {
    "two[1, 2, 3]": "two[a: int, b: int]",
    "two[1]": "two[a: int, b: int]",
    "two[1.5, 2]": "two[a: int, b: int]",
    'place[{"x": 1}]': "place[p: Point]",
    'place[{"x": 1, "y": 2, "z": 3}]': "place[p: Point]",
    'pack[{"w": 3, "q": 1}]': "pack[b: Box]",
    "day[2024-02-30]": "day[d: date]",
    "many[x, 1, two]": "many[first, *more: int]",
    "write[notes.txt]": "write[path, content]",
}


@pytest.mark.parametrize("driver", DRIVERS)
@pytest.mark.parametrize("written", sorted(REFUSED))
def test_an_input_the_tool_cannot_take_is_refused_saying_what_it_takes(written: str, driver: str) -> None:
    calls, observation = _bind(written, driver)
    assert calls == []
    tool_name = written.split("[", 1)[0]
    assert observation is not None
    assert observation.startswith(f"The tool {tool_name} was not run: ")
    assert observation.endswith(f"Its inputs: {REFUSED[written]}")


# binder.md: "One binder, built on `inspect.Signature.bind`"; "only what the model wrote sent on".
# Python refuses two(1, a=2) ("multiple values for argument 'a'"): the model gave `a` twice and
# never gave `b`. The binder instead moves the positional 1 to b and calls two(a=2, b=1).
@pytest.mark.parametrize("driver", DRIVERS)
def test_a_parameter_given_by_position_and_by_name_is_refused(driver: str) -> None:
    calls, observation = _bind("two[1, a=2]", driver)
    assert calls == []
    assert observation is not None and observation.startswith("The tool two was not run: ")


# The same promise: `two[a=1, a=2]` names `a` twice. The refusal should say so; it says
# 'b takes a whole number, not "a=2"', blaming a parameter the model never wrote.
@pytest.mark.parametrize("driver", DRIVERS)
def test_a_name_given_twice_is_refused_naming_it(driver: str) -> None:
    calls, observation = _bind("two[a=1, a=2]", driver)
    assert calls == []
    assert observation is not None
    assert observation.startswith("The tool two was not run: ")
    assert "b takes" not in observation, observation
