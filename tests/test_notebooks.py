"""The course in notebooks/: each .ipynb agrees with its reviewable .py twin, carries the outputs of
one run of every cell in order (the docs site shows them), and runs top to bottom."""

from __future__ import annotations

from pathlib import Path

import pytest

jupytext = pytest.importorskip("jupytext", reason='needs pip install "react-text[notebooks]"')
nbclient = pytest.importorskip("nbclient")

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.py"))


def cells(notebook: object) -> list[tuple[str, str]]:
    return [(c["cell_type"], c["source"].strip()) for c in notebook["cells"]]  # type: ignore[index]


def test_there_are_eight_notebooks() -> None:
    assert [p.stem[:2] for p in NOTEBOOKS] == ["01", "02", "03", "04", "05", "06", "07", "08"]


@pytest.mark.parametrize("source", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_ipynb_agrees_with_its_py_twin(source: Path) -> None:
    twin = source.with_suffix(".ipynb")
    assert twin.exists(), f"run: jupytext --to ipynb {source}"
    stored = jupytext.read(twin)
    assert cells(stored) == cells(jupytext.read(source)), f"out of step: jupytext --sync {source}"


@pytest.mark.parametrize("source", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_stored_outputs_come_from_one_run_of_every_cell(source: Path) -> None:
    """The outputs the docs site shows are those of the cells as they are: every code cell was run,
    once, in order (a cell edited since has no count), and none failed."""
    stored = jupytext.read(source.with_suffix(".ipynb"))
    code = [c for c in stored["cells"] if c["cell_type"] == "code"]
    again = f"run: flock /tmp/react-text-llama.lock python scripts/execute_notebooks.py {source.with_suffix('.ipynb')}"
    assert [c.get("execution_count") for c in code] == list(range(1, len(code) + 1)), again
    assert not [o for c in code for o in c.get("outputs", []) if o.get("output_type") == "error"], again


@pytest.mark.parametrize("source", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_opens_with_what_you_learn_and_ends_with_exercises(source: Path) -> None:
    markdown = [c for c in jupytext.read(source)["cells"] if c["cell_type"] == "markdown"]
    assert "What you will learn" in markdown[0]["source"]
    assert "## Exercises" in "\n".join(c["source"] for c in markdown[-2:])


@pytest.mark.slow
@pytest.mark.parametrize("source", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_runs_top_to_bottom(source: Path) -> None:
    notebook = jupytext.read(source.with_suffix(".ipynb"))
    client = nbclient.NotebookClient(
        notebook, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(source.parent)}}
    )
    client.execute()  # raises CellExecutionError, naming the cell, on any error
    outputs = [o for c in notebook["cells"] for o in c.get("outputs", [])]
    assert not [o for o in outputs if o.get("output_type") == "error"]
