"""Runs at scale: task files and scoring (`react-text eval`), replies played back instead of a model,
episodes on a Ray cluster, what a run is made of from what a user types, and the parser scoreboard."""

import warnings

from react_text.evaluation.episodes import ModelFor, Options, aevaluate, evaluate
from react_text.evaluation.results import TaskResult, as_json, finished, resume, summary, table
from react_text.evaluation.tasks import Task, correct, load, toolset

__all__ = [
    "ModelFor",
    "Options",
    "Task",
    "TaskResult",
    "aevaluate",
    "as_json",
    "correct",
    "evaluate",
    "finished",
    "load",
    "resume",
    "summary",
    "table",
    "toolset",
]


def __getattr__(name: str) -> object:
    if name == "Outcome":  # 0.2's name; types.Outcome is what running a tool came to
        warnings.warn("react_text.evaluation.Outcome is now TaskResult", DeprecationWarning, stacklevel=2)
        return TaskResult
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
