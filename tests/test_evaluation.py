from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from react_text import ScriptedModel
from react_text.evaluation import Task, correct, evaluate, load, table

SUITE = Path(__file__).resolve().parent.parent / "bench" / "tasks" / "suite.jsonl"


@pytest.mark.parametrize(
    ("answer", "expected", "ok"),
    [
        ("396", "396", True),
        ("The total is 1,234 euros.", "1234", True),
        ("234 (89 + 145)", "234", True),
        ("17 * 3 = 51", "51", True),
        ("17 * 3 = 51 and more 7", "51", False),
        ("14.7", "14.7", True),
        ("Ines Okafor leads the tours.", "Ines Okafor", True),
        ("no idea", "12", False),
        (None, "12", False),
    ],
)
def test_correct(answer: str | None, expected: str, ok: bool) -> None:
    assert correct(answer, expected) is ok


def test_the_suite_has_twenty_or_more_tasks_over_built_in_tools() -> None:
    tasks = load(SUITE)
    assert len(tasks) >= 20
    assert {name for t in tasks for name in t.tools} <= {"calculator", "search", "read"}


def test_evaluate_with_the_files_and_the_calculator() -> None:
    task = Task("t", "What do a train ticket and one hotel night cost together?", "234", ("search", "calculator"))
    model = ScriptedModel(
        ["ACTION: search[train ticket]", "ACTION: search[hotel night]", "ACTION: calculator[89 + 145]", "FINAL: 234"]
    )
    (outcome,) = evaluate([task], model, root=SUITE.parent / "docs")
    assert (outcome.ok, outcome.tool_calls, outcome.stop_reason) == (True, 3, "final")
    assert "prices.txt:3: train ticket: 89" in model.calls[1].prompt[-1].content  # type: ignore[union-attr]
    assert "1/1 right (100%)" in table([outcome])


def test_a_bad_task_file_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "tasks.jsonl"
    path.write_text('{"id": "a", "task": "x", "answer": "1"}\n{"id": "b"}\n')
    with pytest.raises(ValueError, match=r"tasks\.jsonl:2: not a task"):
        load(path)


@pytest.mark.slow
def test_eval_command_on_the_embedded_model(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps({"id": "c1", "task": "What is 17 * 23 + 5?", "answer": "396"}) + "\n")
    out = tmp_path / "results.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "react_text.cli", "eval", str(tasks), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1/1 right" in done.stdout
    assert json.loads(out.read_text())["ok"] is True
