"""Limits: what a run may spend (also `from react_text import Limits`).

A public face kept for imports written before 0.4: the code lives in `react_text.core.limits`."""

from react_text.core.limits import *  # noqa: F403
from react_text.core.limits import __all__ as __all__
