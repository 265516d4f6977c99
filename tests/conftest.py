"""Shared fixtures: the tools of the loop tests."""

from __future__ import annotations

import pytest


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
