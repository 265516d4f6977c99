"""How the protocol is put to the model: one frozen value, validated when it is made.

    Agent(model, tools, prompting=Prompting(example=None, act_first=True))

What a run may spend is the other set-up value, `Limits` (limits.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from . import prompting
from .prompting import InstructionsIn

__all__ = ["InstructionsIn", "Prompting", "Reasoning"]

Reasoning = Literal["drop", "keep"]


@dataclass(frozen=True, slots=True)
class Prompting:
    """How the protocol is put to the model.

    `example` is the worked example in the instructions: "auto" (chosen from the tools), None (zero
    shot), a template name, or the example's own text. A value with no whitespace is a name and
    must be a file in prompts/examples ("calculator", "files", "search", "generic"; "examples/calculator"
    too), else it is refused here; a value with a space or a newline is the example's text, as is.
    """

    example: str | None = "auto"  # "auto", None, a template name (no whitespace), or the example's text
    instructions_in: InstructionsIn = "system"  # or "user", for models that follow the system message poorly
    grammar: bool | None = None  # constrain decoding to the protocol; None: when the model accepts one
    act_first: bool = False  # under a grammar, the first reply must be an ACTION (small models answer unaided)
    reasoning: Reasoning = "drop"  # send a reasoning model's thinking back in later turns ("keep") or not
    parallel: bool = False  # the model may write several independent ACTION lines in one reply; they run at once

    def __post_init__(self) -> None:
        if self.instructions_in not in ("system", "user"):
            raise ValueError(f"Prompting.instructions_in must be 'system' or 'user', not {self.instructions_in!r}")
        if self.reasoning not in ("drop", "keep"):
            raise ValueError(f"Prompting.reasoning must be 'drop' or 'keep', not {self.reasoning!r}")
        for name in ("act_first", "parallel"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"Prompting.{name} must be True or False, not {getattr(self, name)!r}")
        if self.grammar is not None and not isinstance(self.grammar, bool):
            raise TypeError(f"Prompting.grammar must be True, False or None, not {self.grammar!r}")
        if self.example is not None and self.example != "auto":
            if not isinstance(self.example, str):
                raise TypeError(
                    f"Prompting.example must be 'auto', None, a template name or text, not {self.example!r}"
                )
            if not self.example.strip():
                raise ValueError("Prompting.example is empty: give None for no worked example")
            prompting.example_name(self.example)  # a name that is no file is refused now, not at run time
