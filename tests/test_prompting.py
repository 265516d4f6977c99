"""Templates: only known variables, every label the parser expects, a golden rendering, and a wheel."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from react_text import Agent, Prompting, ScriptedModel, parse, prompting
from react_text.types import Action, Final

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
    "corrections/tool_error": {"tool", "error_type", "error"},
    "corrections/tool_timeout": {"tool", "seconds"},
    "corrections/tool_bad_result": {"tool", "kind"},
    "corrections/bad_input": {"tool", "problem", "form"},
    "corrections/declined": {"tool", "input"},
    "corrections/budget_low": {"observation", "left"},
    "corrections/force_final": {"limit"},
    "corrections/truncated": {"omitted"},
    "corrections/reply_cut": {"tokens"},
    "corrections/answer_cut": {"tokens"},
    "corrections/input_open": set(),
    "corrections/observation_dropped": set(),
    "history/elided_observation": {"source", "tokens"},
    "history/elided_reply": set(),
    "corrections/too_many_actions": {"most", "skipped"},
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
    for label in ("THOUGHT:", "ACTION:", "FINAL:", "OBSERVATION:", "lookup[item]"):
        assert label in block
    example = prompting.render("examples/generic")
    first_turn = example.split("OBSERVATION:")[0].split("QUESTION:")[1].split("\n", 1)[1]
    assert isinstance(parse(first_turn), Action)
    assert isinstance(parse(example.rsplit("OBSERVATION:", 1)[1].split("\n", 1)[1]), Final)


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
