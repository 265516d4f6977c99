"""What a run may spend: one frozen value, validated when it is made.

    Agent(model, tools, limits=Limits(steps=6, tokens=6000))

How a run is prompted, its other set-up value, is `Prompting` (prompting.py; imported from here
too, where it lived before). A model may recommend its own of both (`recommended_limits`,
`recommended_prompting`: the embedded 135M model wants to act before it answers); an agent built
without them takes the model's, or the defaults. The Python API and the command line share them,
so one task behaves the same from both.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from react_text.prompting import Prompting, Reasoning

__all__ = [
    "MIN_CONTEXT_TOKENS",
    "MIN_REPLY_TOKENS",
    "Limits",
    "Prompting",
    "Reasoning",
    "field_names",
]

MIN_REPLY_TOKENS = 16  # a reply allowance smaller than this is not worth a request
_MIN_OBSERVATION_TOKENS = 32  # room for a cut note and some of the head and tail
MIN_CONTEXT_TOKENS = 256  # a smaller window holds no instruction block and a reply
_MAX_ACTIONS = 32  # actions of one reply read at most (each is one more reading of the reply's rest)


@dataclass(frozen=True, slots=True)
class Limits:
    """The limits of one run. Running into one is a `stop_reason`, never an exception."""

    steps: int = 10  # model calls, not counting the one forced-final call
    tokens: int | None = None  # prompt + completion tokens over the whole run; None: no limit
    reply_tokens: int = 512  # the completion allowance of a call (shrunk to fit the budget)
    observation_tokens: int = 1000  # longer tool results are cut to this, head and tail
    context_tokens: int | None = None  # the model's context window; None: as the model says, if it can
    format_errors: int = 3  # unreadable replies in a row that end the run
    tool_seconds: float | None = 60.0  # time limit of a tool that sets none of its own; None: wait
    force_final: bool = True  # at a limit, one last call asks for the final answer (its room is reserved)
    actions: int = 4  # with Prompting(parallel=True): the most actions of one reply that run (at once)
    repeats: int | None = 3  # the most identical calls in a row (one tool, one input); one more ends the run

    def __post_init__(self) -> None:
        _at_least("steps", self.steps, 1)
        if self.tokens is not None:
            _at_least("tokens", self.tokens, MIN_REPLY_TOKENS)
        _at_least("reply_tokens", self.reply_tokens, MIN_REPLY_TOKENS)
        _at_least("observation_tokens", self.observation_tokens, _MIN_OBSERVATION_TOKENS)
        if self.context_tokens is not None:
            _at_least("context_tokens", self.context_tokens, MIN_CONTEXT_TOKENS)
        _at_least("format_errors", self.format_errors, 1)
        _at_least("actions", self.actions, 1)
        if self.repeats is not None:
            _at_least("repeats", self.repeats, 1)
        if self.actions > _MAX_ACTIONS:
            raise ValueError(f"Limits.actions must be at most {_MAX_ACTIONS}, not {self.actions}")
        if self.tool_seconds is not None and not (
            isinstance(self.tool_seconds, int | float)
            and not isinstance(self.tool_seconds, bool)
            and self.tool_seconds > 0
        ):
            raise ValueError(
                f"Limits.tool_seconds must be a positive number of seconds or None, not {self.tool_seconds!r}"
            )
        if not isinstance(self.force_final, bool):
            raise TypeError(f"Limits.force_final must be True or False, not {self.force_final!r}")


def _at_least(name: str, value: object, minimum: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"Limits.{name} must be a whole number, not {value!r}")
    if value < minimum:
        raise ValueError(f"Limits.{name} must be at least {minimum}, not {value}")


def field_names(cls: type[Limits] | type[Prompting]) -> tuple[str, ...]:
    return tuple(f.name for f in fields(cls))
