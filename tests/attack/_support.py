"""Shared helpers for the attack tests: both drivers, and a subprocess with a hard time limit."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from react_text import Agent, RunResult

ROOT = Path(__file__).resolve().parents[2]


def run_sync(agent: Agent, task: str) -> RunResult:
    return agent.run(task)


def run_async(agent: Agent, task: str) -> RunResult:
    return asyncio.run(agent.arun(task))


DRIVERS: dict[str, Callable[[Agent, str], RunResult]] = {"sync": run_sync, "async": run_async}


def python(code: str, timeout: float) -> subprocess.CompletedProcess[str] | None:
    """Run `code` in a fresh interpreter; None when it did not finish within `timeout` seconds."""
    try:
        return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return None


def cli(*args: str, cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "react_text.cli", *args], capture_output=True, text=True, timeout=timeout, cwd=cwd
    )
