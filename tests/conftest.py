"""Shared fixtures: the tools of the loop tests, and the two drivers every loop test runs under."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest
from hypothesis import settings

from react_text import Agent, Limits, Prompting, RunResult
from react_text.core.limits import field_names

# CI explores the same examples every run (.ci/run sets HYPOTHESIS_PROFILE=ci), so a red CI is a
# change's doing, not a new draw; a run elsewhere draws afresh, and what it finds is pinned as an
# @example (or, while it fails, a strict xfail beside its property).
settings.register_profile("ci", derandomize=True, print_blob=True)
if os.environ.get("HYPOTHESIS_PROFILE"):
    settings.load_profile(os.environ["HYPOTHESIS_PROFILE"])

Drive = Callable[[Agent, str], RunResult]


def lookup(item: str) -> str:
    """Return the price of one item."""
    prices = {"train ticket": "89", "hotel night": "145"}
    if item not in prices:
        raise KeyError(f"no price for {item!r}")
    return prices[item]


def add(a: float, b: float) -> float:
    """Add two numbers."""
    return a + b


@pytest.fixture
def tools() -> list[object]:
    return [lookup, add]


@pytest.fixture(params=["sync", "async"])
def drive(request: pytest.FixtureRequest) -> Drive:
    """Runs an agent to the end with the sync driver (`run`) or the async one (`arun`)."""

    def sync(agent: Agent, task: str) -> RunResult:
        return agent.run(task)

    def in_a_loop(agent: Agent, task: str) -> RunResult:
        return asyncio.run(agent.arun(task))

    return sync if request.param == "sync" else in_a_loop


def make_agent(model: Any, tools: Any = (), **options: Any) -> Agent:
    """An Agent from flat options: Limits and Prompting fields by name, the rest as Agent's."""
    limits = {k: options.pop(k) for k in list(options) if k in field_names(Limits)}
    prompting = {k: options.pop(k) for k in list(options) if k in field_names(Prompting)}
    agent = Agent(model, tools=tools, **options)
    return replace(agent, limits=replace(agent.limits, **limits), prompting=replace(agent.prompting, **prompting))


@pytest.fixture
def driver(drive: Drive) -> Drive:
    """The two drivers, by the name the promise tests (test_promises_*.py) use."""
    return drive
