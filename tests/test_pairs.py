"""Issue 33, the pairs matrix: every pair of the features that change a run (tests/pairs/features.py,
one line a feature) runs together under both drivers, and each feature asserts its own promise.

Failures live where two features meet. A new feature adds one line to FEATURES and gets its pairs.
All pairs, not a covering array: 13 features, 78 pairs, 156 runs, a few seconds.
"""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
import shlex
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pairs.features import FEATURES, Feature, Mcp, Player, Ran, Reply, Setup, build

from react_text import RunResult
from react_text.observers import observing

PAIRS = list(itertools.combinations(FEATURES, 2))
DEMO = f"{shlex.quote(sys.executable)} {shlex.quote(str(Path(__file__).resolve().parent / 'mcp_servers' / 'demo.py'))}"


@pytest.fixture(scope="module", autouse=True)
def mcp_session() -> Iterator[None]:
    """One MCP session for the whole matrix (a server started a pair would cost half a second each)."""
    pytest.importorskip("mcp", reason='needs pip install "react-text[mcp]"')
    from react_text.tools.mcp import mcp_tools

    with mcp_tools(DEMO) as tools:
        Mcp.tools = tuple(tools)
        try:
            yield
        finally:
            Mcp.tools = ()


def play(driver: str, setup: Setup, replies: list[str | Reply | Exception] | None = None) -> tuple[RunResult, Player]:
    """Run the setup's agent to the end under `driver` (iterating `iter_steps`, or `await arun`)."""
    agent, model = build(setup, replies)
    observer = observing.both(list(setup.observers)) if setup.observers else None
    if setup.streamed:  # agent.stream / astream: the events, then the RunEnd's result
        if driver == "sync":
            events = list(agent.stream("Do the scenes.", observer=observer))
        else:

            async def collect() -> list[Any]:
                return [event async for event in agent.astream("Do the scenes.", observer=observer)]

            events = asyncio.run(collect())
        for sink in setup.streamed:
            sink[:] = events
        return events[-1].result, model
    if driver == "sync":
        run = agent.iter_steps("Do the scenes.", observer=observer)
        for _ in run:
            pass
        return run.result, model
    return asyncio.run(agent.arun("Do the scenes.", observer=observer)), model


@pytest.mark.parametrize("driver", ["sync", "async"])
@pytest.mark.parametrize("pair", PAIRS, ids=[f"{a.__name__}-{b.__name__}" for a, b in PAIRS])
def test_every_pair_of_features_keeps_both_promises(driver: str, pair: tuple[type[Feature], type[Feature]]) -> None:
    features = sorted((kind() for kind in pair), key=lambda f: f.ends)  # a feature that ends the run: last
    setup = Setup()
    for feature in features:
        setup = feature.configure(setup)
    result, model = play(driver, setup)
    quiet = dataclasses.replace(setup, observers=())  # a replay writes no second trace
    ran = Ran(result, model, lambda replies: play(driver, quiet, replies)[0])
    for feature in sorted(features, key=lambda f: f.replays):  # a check that runs the agent again: last
        feature.check(ran)


def test_the_matrix_holds_every_pair() -> None:
    names = [kind.name for kind in FEATURES]
    assert len(set(names)) == len(names) >= 13
    assert len(PAIRS) == len(FEATURES) * (len(FEATURES) - 1) // 2
