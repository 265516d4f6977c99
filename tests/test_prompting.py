"""Templates: only known variables, every label the parser expects, a golden rendering, and a wheel."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from react_text import Agent, Prompting, ScriptedModel, parse, prompting
from react_text.core import protocol
from react_text.core.types import Action, Final

GOLDEN = Path(__file__).parent / "data" / "instructions.golden.txt"
ROOT = Path(__file__).resolve().parent.parent

KNOWN = {
    "instructions": {"tools", "example", "rules"},
    "rules/one": set(),
    "rules/parallel": {"most"},
    "task": {"task"},
    "transcript": {"instructions", "task"},
    "corrections/format_error": {"problem"},
    "corrections/unknown_tool": {"tool", "suggestion", "tools"},
    "corrections/unknown_tool_suggestion": {"closest"},
    "corrections/repeated_action": {"tool", "input", "step", "result"},
    "corrections/repeated_call": {"result", "tool", "input", "times"},
    "corrections/repeats_limit": {"tool", "input", "times"},
    "corrections/tool_error": {"tool", "error_type", "error"},
    "corrections/tool_timeout": {"tool", "seconds"},
    "corrections/tool_bad_result": {"tool", "kind"},
    "corrections/tool_no_result": {"tool", "kind"},
    "corrections/bad_input": {"tool", "problem", "form"},
    "corrections/declined": {"tool", "input"},
    "corrections/denied": {"tool", "input", "reason"},
    "corrections/outcome_unknown": {"tool", "input"},
    "corrections/budget_low": {"observation", "left"},
    "corrections/force_final": {"limit"},
    "corrections/force_final_short": set(),
    "corrections/truncated": {"omitted"},
    "corrections/reply_cut": {"tokens"},
    "corrections/answer_cut": {"tokens"},
    "corrections/input_open": set(),
    "corrections/observation_dropped": set(),
    "history/elided_observation": {"source", "tokens"},
    "history/elided_reply": set(),
    "history/folded_steps": {"first", "last", "calls"},
    "history/folded_results": set(),
    "corrections/too_many_actions": {"most", "skipped"},
    "examples/generic": {"tool", "call"},
    "serving/choice_named": {"tool"},
    "serving/wrong_tool": {"tool", "called"},
    "serving/schema/missing": {"at"},
    "serving/schema/type": {"at", "wants", "value"},
    "serving/schema/minimum": {"at", "limit", "value"},
    "serving/schema/maximum": {"at", "limit", "value"},
    "serving/schema/exclusive_minimum": {"at", "limit", "value"},
    "serving/schema/exclusive_maximum": {"at", "limit", "value"},
    "serving/schema/min_length": {"at", "limit", "unit", "value"},
    "serving/schema/max_length": {"at", "limit", "unit", "value"},
    "serving/schema/pattern": {"at", "pattern", "value"},
    "serving/schema/choice": {"at", "choices", "value"},
    "serving/schema/min_items": {"at", "limit", "unit", "count"},
    "serving/schema/max_items": {"at", "limit", "unit", "count"},
    "serving/schema/unknown_key": {"at", "key", "known"},
    "serving/schema/no_form": {"at", "value"},
}


def test_every_template_uses_only_known_variables() -> None:
    names = prompting.template_names()
    used = prompting.known_variables(names)
    for name in names:
        assert used[name] <= KNOWN.get(name, set()), name
    assert set(KNOWN) <= set(names)


def lookup(item: str) -> str:
    """Return the price of one item."""
    return item


def test_instruction_block_matches_the_golden_file() -> None:
    block = Agent(ScriptedModel([]), tools=[lookup]).instructions()
    if os.environ.get("UPDATE_GOLDEN"):
        GOLDEN.write_text(block + "\n", encoding="utf-8")
    assert block + "\n" == GOLDEN.read_text(encoding="utf-8")


def test_instruction_block_teaches_what_the_parser_reads() -> None:
    block = Agent(ScriptedModel([]), tools=[lookup]).instructions()
    for label in (*protocol.LABELS, "lookup[item]"):  # the prompt files spell the labels as protocol.py does
        assert label in block
    example = prompting.render("examples/generic", tool="lookup", call="lookup[item]")
    first_turn = example.split(protocol.OBSERVATION_LABEL)[0].split("QUESTION:")[1].split("\n", 1)[1]
    assert isinstance(parse(first_turn), Action)
    assert isinstance(parse(example.rsplit(protocol.OBSERVATION_LABEL, 1)[1].split("\n", 1)[1]), Final)


def convert(amount: float, unit: str, digits: int = 2) -> str:
    """Convert an amount to another unit."""
    return unit


def calculator(expression: str) -> str:
    """The user's own calculator, not the toolbox's."""
    return expression


def search(query: str) -> str:
    """The user's own search."""
    return query


@pytest.mark.parametrize(
    "tools",
    [[convert], [convert, lookup], [lookup], [search], [search, convert], [calculator, convert], [calculator]],
    ids=["convert", "convert+lookup", "lookup", "search", "search+convert", "calculator+convert", "calculator"],
)
def test_the_example_names_only_the_users_tools_and_no_numbers_to_copy(tools: list[object]) -> None:
    """Seen: the generic example's `lookup` and 0.5, 1.5 were copied into answers and tool choices."""
    agent = Agent(ScriptedModel([]), tools=tools)
    example = agent.instructions().split("\nExample", 1)[1]
    names = {t.name for t in agent.tools}
    called = {
        line.removeprefix("ACTION: ").split("[", 1)[0] for line in example.splitlines() if line.startswith("ACTION: ")
    }
    assert called and called <= names, (called, names)
    if names != {"calculator"}:  # the calculator's own example computes
        assert not any(c.isdigit() for c in example), example


def test_the_example_is_built_from_the_first_tools_signature() -> None:
    example = Agent(ScriptedModel([]), tools=[convert]).instructions().split("\nExample", 1)[1]
    assert "ACTION: convert[amount, unit]" in example
    assert isinstance(parse("ACTION: convert[amount, unit]", tools=["convert"]), Action)


def test_the_generic_example_by_name_is_made_from_the_tools_too() -> None:
    """Prompting(example="generic") names the generic example, which is made from the user's tools."""
    named = Agent(ScriptedModel([]), tools=[convert], prompting=Prompting(example="generic")).instructions()
    assert named == Agent(ScriptedModel([]), tools=[convert]).instructions()
    assert "Example" not in Agent(ScriptedModel([]), prompting=Prompting(example="generic")).instructions()


def test_no_tools_no_example() -> None:
    assert "Example" not in Agent(ScriptedModel([])).instructions()


def test_zero_shot_leaves_the_example_out() -> None:
    block = Agent(ScriptedModel([]), tools=[lookup], prompting=Prompting(example=None)).instructions()
    assert "Example" not in block and "apple" not in block


@pytest.mark.slow
def test_templates_load_from_an_installed_wheel(tmp_path: Path) -> None:
    wheels = tmp_path / "wheels"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pip",
            "wheel",
            "--no-deps",
            "--no-build-isolation",
            "-q",
            "-w",
            str(wheels),
            str(ROOT),
        ],
        check=True,
    )
    (wheel,) = wheels.glob("react_text-*.whl")
    assert "react_text/prompts/instructions.txt" in zipfile.ZipFile(wheel).namelist()
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target), str(wheel)],
        check=True,
    )
    code = (
        "import react_text, react_text.prompting as p;"
        f"assert react_text.__file__.startswith({str(target)!r}), react_text.__file__;"
        "print(p.render('corrections/force_final', limit='L'))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "PYTHONPATH": str(target)},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
    )
    assert "reached the limit (L)" in out.stdout


def test_the_file_tools_without_the_calculator_get_the_search_example(tmp_path: Path) -> None:
    """Seen (bench/suite_changes.py): the generic example made from `search(words)` was copied whole
    by the embedded model, `search[words]` and "FINAL: the answer, as the observation says it"."""
    from react_text.tools.toolbox import Files

    block = Agent(ScriptedModel([]), tools=Files(tmp_path).tools()).instructions()
    example = prompting.render("examples/search")
    assert block.endswith(example)
    assert "ACTION: search[words]" not in block
    first_turn = example.split("OBSERVATION:")[0].split("QUESTION:")[1].split("\n", 1)[1]
    assert isinstance(parse(first_turn, tools=["search", "read"]), Action)
    assert isinstance(parse(example.rsplit("OBSERVATION:", 1)[1].split("\n", 1)[1]), Final)
