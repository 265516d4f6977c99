"""A tools module for the CLI tests: one risky tool that leaves a mark when it runs."""

from __future__ import annotations

import os

from react_text import tool


@tool(risky=True)
def touch(name: str) -> str:
    """Create an empty file in the folder named by $MARKS."""
    path = os.path.join(os.environ["MARKS"], name)
    open(path, "w").close()
    return f"created {name}"
