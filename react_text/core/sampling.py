"""What a sampling setting may be, checked once wherever one is taken (the Python API, the config,
the CLI's flags): a temperature is a finite number >= 0; a seed a whole number from 0 to
2**32 - 2 (llama.cpp reads 0xFFFFFFFF, and -1 cast to it, as "a random seed": an episode with it
would not repeat). Each check raises ValueError or TypeError with what was given."""

from __future__ import annotations

import math

__all__ = ["SEEDS", "check_seed", "check_temperature"]

SEEDS = range(2**32 - 1)  # 0 .. 2**32 - 2


def check_temperature(value: object, what: str = "temperature") -> float:
    """`value` as a temperature: a finite number, 0 or more."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{what} must be a number, not {value!r}")
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{what} must be a finite number, 0 or more, not {value!r}")
    return float(value)


def check_seed(value: object, what: str = "the seed") -> int:
    """`value` as a seed: a whole number from 0 to 2**32 - 2."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} must be a whole number, not {type(value).__name__}")
    if value not in SEEDS:
        raise ValueError(f"{what} must be from 0 to {SEEDS[-1]} (2**32 - 2), not {value}")
    return value
