"""Tool-call arguments against the tool's JSON schema, through the real `openai` client: what the
docs promise is checked (nested objects, types, bounds, lengths, enums, array items), a call that
breaks it is asked again with the model told what was wrong, and property names that are not
Python identifiers (`class`, `first-name`) are taken as the schema spells them."""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest
from serving_support import function, serving

from react_text import ScriptedModel
from react_text.serving import app

BOOK = function(
    "book",
    {
        "guest": {
            "type": "object",
            "properties": {"name": {"type": "string", "minLength": 2}, "age": {"type": "integer", "minimum": 0}},
            "required": ["name"],
        },
        "nights": {"type": "integer", "minimum": 1, "maximum": 30},
        "room": {"type": "string", "enum": ["single", "double"]},
        "code": {"type": "string", "maxLength": 4, "pattern": "^[A-Z]+$"},
        "extras": {"type": "array", "items": {"type": "string", "minLength": 1}, "maxItems": 2},
        "price": {"type": "number", "exclusiveMinimum": 0},
    },
    ("guest",),
    "Book a room.",
)


def first_call(replies: list[str], tools: list[Any]) -> tuple[Any, ScriptedModel]:
    """The tool calls of one request whose upstream plays `replies` (asked again while refused)."""
    model = ScriptedModel(replies)
    with serving(app(model)) as url:
        made = openai.OpenAI(base_url=url, api_key="-", max_retries=0).chat.completions.create(
            model="m", messages=[{"role": "user", "content": "Book it."}], tools=tools
        )
    return made, model


GOOD = '{"guest": {"name": "Ann"}}'


@pytest.mark.parametrize(
    ("arguments", "told"),
    [
        ('{"guest": {"age": 3}}', "guest.name is missing"),
        ('{"guest": {"name": "Ann", "age": "old"}}', 'guest.age takes a whole number, not "old"'),
        ('{"guest": {"name": "Ann", "age": -1}}', "guest.age is at least 0, not -1"),
        ('{"guest": {"name": "A"}}', 'guest.name is at least 2 characters long, not "A"'),
        ('{"guest": {"name": "Ann"}, "nights": 31}', "nights is at most 30, not 31"),
        ('{"guest": {"name": "Ann"}, "nights": 0}', "nights is at least 1, not 0"),
        ('{"guest": {"name": "Ann"}, "code": "ABCDE"}', 'code is at most 4 characters long, not "ABCDE"'),
        ('{"guest": {"name": "Ann"}, "code": "ab"}', 'code matches the pattern ^[A-Z]+$, not "ab"'),
        ('{"guest": {"name": "Ann"}, "extras": ["a", "b", "c"]}', "extras has at most 2 items, not 3"),
        ('{"guest": {"name": "Ann"}, "extras": [""]}', 'extras[0] is at least 1 character long, not ""'),
        ('{"guest": {"name": "Ann"}, "price": 0}', "price is more than 0, not 0"),
    ],
)
def test_arguments_that_break_the_schema_are_asked_again_saying_what_is_wrong(arguments: str, told: str) -> None:
    made, model = first_call([f"THOUGHT: book\nACTION: book[{arguments}]", f"ACTION: book[{GOOD}]"], [BOOK])
    (call,) = made.choices[0].message.tool_calls
    assert json.loads(call.function.arguments) == {"guest": {"name": "Ann"}}
    correction = model.calls[1].prompt[-1].content
    assert correction.startswith("OBSERVATION: The tool book was not run: "), correction
    assert told in correction, correction
    model.assert_all_used()


def test_a_call_that_never_fits_is_returned_as_content_with_why() -> None:
    bad = 'ACTION: book[{"guest": {"name": "Ann"}, "nights": 99}]'
    made, _model = first_call([bad, bad, bad], [BOOK])
    choice = made.choices[0]
    assert choice.message.tool_calls is None and choice.message.content == bad
    assert made.react_text["unread"] == "bad_input"  # type: ignore[attr-defined]
    assert "nights is at most 30, not 99" in made.react_text["detail"]  # type: ignore[attr-defined]


def test_arguments_that_fit_go_out_as_written() -> None:
    arguments = {
        "guest": {"name": "Ann", "age": 40},
        "nights": 2,
        "room": "double",
        "code": "AB",
        "extras": ["tea"],
        "price": 9.5,
    }
    made, _model = first_call([f"ACTION: book[{json.dumps(arguments)}]"], [BOOK])
    (call,) = made.choices[0].message.tool_calls
    assert json.loads(call.function.arguments) == arguments


SCHOOL = function(
    "enrol",
    {"class": {"type": "string"}, "first-name": {"type": "string"}, "2nd": {"type": "integer"}},
    ("class", "first-name"),
    "Enrol a pupil.",
)


@pytest.mark.parametrize(
    ("written", "sent"),
    [
        ('{"class": "4B", "first-name": "Bo", "2nd": 7}', {"class": "4B", "first-name": "Bo", "2nd": 7}),
        ('class="4B", first-name="Bo"', {"class": "4B", "first-name": "Bo"}),
        ("first-name=Bo, class=4B", {"class": "4B", "first-name": "Bo"}),
        ('"4B", "Bo", 7', {"class": "4B", "first-name": "Bo", "2nd": 7}),
    ],
)
def test_property_names_that_are_not_identifiers_are_taken_as_the_schema_spells_them(
    written: str, sent: dict[str, Any]
) -> None:
    made, model = first_call([f"ACTION: enrol[{written}]"], [SCHOOL])
    (call,) = made.choices[0].message.tool_calls
    assert json.loads(call.function.arguments) == sent
    system = model.calls[0].prompt[0].content
    assert "enrol[class, first-name, 2nd: int | null = null]" in system  # the tool list spells them so too


def test_a_missing_property_is_named_as_the_schema_spells_it() -> None:
    made, model = first_call(
        ['ACTION: enrol[{"class": "4B"}]', 'ACTION: enrol[{"class": "4B", "first-name": "Bo"}]'], [SCHOOL]
    )
    assert json.loads(made.choices[0].message.tool_calls[0].function.arguments) == {"class": "4B", "first-name": "Bo"}
    assert "first-name is missing" in model.calls[1].prompt[-1].content


def test_the_grammar_lets_the_model_write_the_names_as_the_schema_spells_them() -> None:
    model = ScriptedModel(['ACTION: enrol[{"class": "4B", "first-name": "Bo"}]'], accepts_grammar=True)
    with serving(app(model)) as url:
        openai.OpenAI(base_url=url, api_key="-", max_retries=0).chat.completions.create(
            model="m", messages=[{"role": "user", "content": "Enrol Bo."}], tools=[SCHOOL]
        )
    grammar = model.calls[0].grammar or ""
    assert '"first-name" "="' in grammar and '"\\"first-name\\""' in grammar and '"\\"2nd\\""' in grammar
    assert '"_2nd" "="' in grammar  # `2nd=` is not read as a name: the Python name is offered there
