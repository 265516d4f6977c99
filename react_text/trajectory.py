"""A run as token ids, exported for RL trainers: `as_verl`, `as_trl`, `group_advantages`, ...

A public face kept for imports written before 0.4: the code lives in `react_text.observers.trajectory`."""

from react_text.observers.trajectory import *  # noqa: F403
from react_text.observers.trajectory import __all__ as __all__
