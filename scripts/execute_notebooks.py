"""Execute the notebooks in place, so the .ipynb files (and the docs site, which shows them) carry
the outputs of a run of every cell in order. Run it after changing a notebook, under the llama
lock (the notebooks run the embedded model and start a llama.cpp server):

    jupytext --sync notebooks/*.py
    flock /tmp/react-text-llama.lock python scripts/execute_notebooks.py [notebooks/01_the_loop.ipynb ...]

tests/test_notebooks.py checks that each .ipynb agrees with its .py twin and that its outputs come
from one run of every cell, in order, with no error.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import nbclient
import nbformat

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"


def execute(path: Path) -> None:
    notebook = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(
        notebook,
        timeout=600,
        kernel_name="python3",
        record_timing=False,  # no timestamps in the stored file: a re-run changes only what the cells print
        resources={"metadata": {"path": str(path.parent)}},
    )
    client.execute()  # raises CellExecutionError, naming the cell, on any error
    nbformat.write(notebook, path)


def main(argv: list[str]) -> int:
    paths = [Path(p) for p in argv] or sorted(NOTEBOOKS.glob("*.ipynb"))
    for path in paths:
        started = time.monotonic()
        execute(path)
        sys.stderr.write(f"{path.name}: {time.monotonic() - started:.0f} s\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
