"""Runs at scale: task files and scoring (`react-text eval`), replies played back instead of a model,
episodes on a Ray cluster, what a run is made of from what a user types, and the parser scoreboard."""

from react_text.evaluation.episodes import *  # noqa: F403  (the public names of `react_text.evaluation`)
from react_text.evaluation.episodes import __all__ as __all__
from react_text.evaluation.episodes import __getattr__ as __getattr__  # the old names, with a warning
