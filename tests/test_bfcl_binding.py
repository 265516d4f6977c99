"""Binding held against real function calls (issue 26): MCP tools served by a real server that echoes
what it received, called in the forms a model writes.

First a few schemas written here for each class of mistake the issue lists; then a deterministic
sample of 300 of the Berkeley Function Calling Leaderboard's 1,747 ground-truth Python calls, every
category represented, in all four forms (`python bench/bfcl_binding.py` runs them all). The BFCL
data comes from the bfcl-eval wheel: $REACT_TEXT_BFCL, else ~/.cache/react-text/bfcl, where it is
downloaded with `pip download --no-deps` when missing; without it (no network) that test skips,
unless REACT_TEXT_BFCL_REQUIRED is set (CI sets it), when it fails.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason='needs pip install "react-text[mcp]"')

import bfcl

from react_text import Agent, ScriptedModel, Tool
from react_text.tools.mcp import mcp_tools

SCHEMAS = {
    "get_weather": {
        "type": "object",
        "properties": {"city": {"type": "string"}, "date": {"type": "string", "default": "2019-03-01"}},
        "required": ["city"],
    },
    "lookup": {"type": "object", "properties": {"item": {"type": "string"}}, "required": ["item"]},
    "book": {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "date": {"type": "string"},
            "extras": {"type": "array", "items": {"type": "string"}},
            "pets": {"type": "boolean", "default": "false"},  # a default of the wrong type, as BFCL has
            "note": {"type": "string", "default": None},
        },
        "required": ["city", "date"],
    },
}


@pytest.fixture(scope="module")
def echo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Tool]]:
    listing = tmp_path_factory.mktemp("echo") / "tools.json"
    listing.write_text(json.dumps([{"name": k, "inputSchema": v} for k, v in SCHEMAS.items()]), encoding="utf-8")
    with mcp_tools(shlex.join([sys.executable, str(bfcl.ECHO), str(listing)])) as tools:
        yield {t.name: t for t in tools}


def received(tool: Tool, call: str) -> object:
    """What the server received when the model wrote `ACTION: <call>`, or the refusal the model read."""
    result = Agent(ScriptedModel([f"ACTION: {call}", "FINAL: done"]), tools=[tool]).run("Call it.")
    observation = result.steps[0].observation or ""
    return json.loads(observation.removeprefix(bfcl.RECEIVED)) if observation.startswith(bfcl.RECEIVED) else observation


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        # a quoted value that holds a comma is one value
        ('get_weather["Sunol, CA"]', {"city": "Sunol, CA"}),
        ("get_weather['Sunol, CA']", {"city": "Sunol, CA"}),
        ('get_weather["Sunol, CA", "2023-04-01"]', {"city": "Sunol, CA", "date": "2023-04-01"}),
        # a digit followed by a letter inside a string does not stop the literal reader
        (
            'book["Paris", "20th June", ["gym", "free breakfast"]]',
            {"city": "Paris", "date": "20th June", "extras": ["gym", "free breakfast"]},
        ),
        ('book[city="San Francisco, CA", date="July 1st"]', {"city": "San Francisco, CA", "date": "July 1st"}),
        # JSON literals in the keyword form, a quoted comma after name=
        ('book[city="Rome, IT", date="May 2nd", pets=true]', {"city": "Rome, IT", "date": "May 2nd", "pets": True}),
        (
            'book[city="Oslo", date="1st", pets=false, note=null]',
            {"city": "Oslo", "date": "1st", "pets": False, "note": None},
        ),
        # defaults the model left out are not sent (the server applies its own)
        ("get_weather[Oslo]", {"city": "Oslo"}),
        ('book[{"city": "Oslo", "date": "today"}]', {"city": "Oslo", "date": "today"}),
        # an explicit null for a parameter whose default is null
        ('book[{"city": "Oslo", "date": "today", "note": null}]', {"city": "Oslo", "date": "today", "note": None}),
        # a one-parameter tool: its name binds by name; the whole text otherwise
        ('lookup[item="train ticket"]', {"item": "train ticket"}),
        ('lookup["train ticket"]', {"item": "train ticket"}),
        ("lookup[price=high, size=small]", {"item": "price=high, size=small"}),
    ],
)
def test_an_mcp_server_receives_what_the_model_wrote(echo: dict[str, Tool], call: str, expected: object) -> None:
    assert received(echo[call.partition("[")[0]], call) == expected


def test_a_one_parameter_tool_refuses_an_object_keyed_by_another_name(echo: dict[str, Tool]) -> None:
    told = received(echo["lookup"], 'lookup[{"name": "train ticket"}]')
    assert isinstance(told, str)
    assert 'it has no input named "name" (its inputs: item)' in told


def test_more_values_than_parameters_are_refused(echo: dict[str, Tool]) -> None:
    told = received(echo["get_weather"], "get_weather[Oslo, today, extra]")
    assert isinstance(told, str)
    assert "it takes at most 2 values and was given 3" in told
    assert told.endswith('get_weather[city, date="2019-03-01"]')


# --- the Berkeley Function Calling Leaderboard -----------------------------------------------------


@pytest.fixture(scope="module")
def bfcl_data() -> Path:
    found = bfcl.data_path()
    if found is not None:
        return found
    try:
        return bfcl.fetch()
    except Exception as exc:  # no network, no pip: say why and skip (CI requires it)
        if os.environ.get("REACT_TEXT_BFCL_REQUIRED"):
            raise
        pytest.skip(f"no bfcl-eval {bfcl.VERSION} data (set REACT_TEXT_BFCL, or let pip reach PyPI): {exc}")


def test_bfcl_ground_truth_binds_exactly_in_every_form(bfcl_data: Path) -> None:
    cases = bfcl.load(bfcl_data)
    assert len(cases) == 1747
    picked = bfcl.sample(cases, 300)
    assert {c.category for c in picked} == set(bfcl.CATEGORIES)
    outcomes = bfcl.run(picked)
    report = bfcl.table(outcomes)
    for form in bfcl.FORMS:
        fair = [o for o in outcomes if o.form == form and not o.contradicts]
        missed = [f"{o.case.id} {o.case.tool}[{o.text}] -> {o.observation[:300]}" for o in fair if not o.exact]
        assert len(missed) <= 0.01 * len(fair), (
            f"{form}: {len(missed)} of {len(fair)} not exact\n{report}\n" + "\n".join(missed)
        )
    # A ground truth that contradicts its own schema is refused, never sent as something else.
    assert all(o.kind == "refused" for o in outcomes if o.contradicts), report
