"""What one run reads, as one frozen value: `EpisodeSpec`, made once before a run starts (the Agent
makes it: `agent.spec(window)`), and all the episode knows of the agent, the model and the tools."""

from __future__ import annotations

from dataclasses import dataclass, field

from react_text.core.limits import Limits
from react_text.core.types import Api, Parser
from react_text.parser import parse
from react_text.prompting import Prompting
from react_text.tokens.meter import Counter
from react_text.tools.tool import Tool

__all__ = [
    "EpisodeSpec",
]


@dataclass(frozen=True, slots=True)
class EpisodeSpec:
    """All that a run reads, made once before it starts (`Agent.spec`); the episode sees no Agent
    and no model. A test writes one by hand: `EpisodeSpec("You answer.", count=len)`.

    `grammar` is the choice made: True sends the protocol grammar with every request (the Agent
    decides it with `model_info.grammar_on`: `prompting.grammar`, else the model's); the episode
    reads it, not `prompting.grammar`. `asks_approval`: risky tools are put to an approver
    (Approve); without one they are declined. `window`: the model's context window in tokens, when
    known.
    """

    instructions: str  # the instruction block: the protocol, the tool list, the worked example
    count: Counter  # tokens of a text, as the model counts them (or an estimate)
    api: Api = "chat"
    tools: tuple[Tool, ...] = ()
    limits: Limits = field(default_factory=Limits)
    prompting: Prompting = field(default_factory=Prompting)
    parser: Parser = parse
    grammar: bool = False
    asks_approval: bool = False
    window: int | None = None
    prefill: bool = False  # the model continues a turn begun with `Request.prefill` (ModelInfo.prefill)
    counted: tuple[
        tuple[str, int], ...
    ] = ()  # (text, its count) known already: the instruction block's, once an agent's

    def __post_init__(self) -> None:
        if self.api not in ("chat", "completion"):
            raise ValueError(f"EpisodeSpec.api must be 'chat' or 'completion', not {self.api!r}")
        if not isinstance(self.instructions, str):
            raise TypeError(f"EpisodeSpec.instructions must be a string, not {type(self.instructions).__name__}")
        if not isinstance(self.tools, tuple) or not all(isinstance(t, Tool) for t in self.tools):
            raise TypeError("EpisodeSpec.tools must be a tuple of Tool (tools.as_tools makes one)")
        if not isinstance(self.limits, Limits) or not isinstance(self.prompting, Prompting):
            raise TypeError("EpisodeSpec.limits must be a Limits and EpisodeSpec.prompting a Prompting")
        if any(type(flag) is not bool for flag in (self.grammar, self.asks_approval, self.prefill)):
            raise TypeError("EpisodeSpec.grammar, asks_approval and prefill must be True or False (decided)")
        if not isinstance(self.counted, tuple) or not all(
            isinstance(c, tuple) and len(c) == 2 and isinstance(c[0], str) and type(c[1]) is int for c in self.counted
        ):
            raise TypeError("EpisodeSpec.counted must be a tuple of (text, tokens) pairs")
        window = self.window
        if window is not None and (isinstance(window, bool) or not isinstance(window, int) or window <= 0):
            raise ValueError(f"EpisodeSpec.window must be a positive whole number of tokens or None, not {window!r}")
