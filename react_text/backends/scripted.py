"""ScriptedModel: a model that returns given replies in order, for tests and teaching."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from ..errors import ModelError
from ..types import Api, Reply, Request


@dataclass
class ScriptedModel:
    """Returns `replies` one per call, in order; records every request in `calls`.

    A reply may be a string, a `Reply` (to report usage or a finish reason), or an exception,
    which is raised from that call (a `ModelError` plays a server failure). Calling past the end
    of the script raises ModelError, so a run that asks for more than was scripted ends with
    stop_reason "model_error" and says why.
    """

    replies: Iterable[str | Reply | BaseException]
    api: Api = "chat"
    name: str = "scripted"
    accepts_grammar: bool = False
    calls: list[Request] = field(default_factory=list, init=False)

    def __post_init__(self) -> None:
        self._script = list(self.replies)

    def generate(self, request: Request) -> Reply:
        if self.api == "chat" and isinstance(request.prompt, str):
            raise TypeError("a chat ScriptedModel was sent a transcript string")
        if self.api == "completion" and not isinstance(request.prompt, str):
            raise TypeError("a completion ScriptedModel was sent chat messages")
        self.calls.append(request)
        if len(self.calls) > len(self._script):
            raise ModelError(f"the script has {len(self._script)} replies; call {len(self.calls)}")
        item = self._script[len(self.calls) - 1]
        if isinstance(item, BaseException):
            raise item
        reply = item if isinstance(item, Reply) else Reply(item)
        return _within(reply, request.max_tokens)

    def count_tokens(self, text: str) -> int:
        """The scripted model's tokenizer: cl100k_base, exactly (it also cuts replies with it)."""
        from ..budget import encoding

        return len(encoding("cl100k_base").encode(text, disallowed_special=()))

    @property
    def unused(self) -> int:
        """How many scripted replies were never asked for."""
        return max(0, len(self._script) - len(self.calls))

    def assert_all_used(self) -> None:
        """Fail when the run ended before every scripted reply was used."""
        if self.unused:
            raise AssertionError(f"{self.unused} of {len(self._script)} scripted replies unused")


def _within(reply: Reply, allowance: int) -> Reply:
    """Like a real server, never return more than the reply allowance (counted with cl100k_base)."""
    from ..budget import encoding

    enc = encoding("cl100k_base")  # the same tokenizer as ScriptedModel.count_tokens
    tokens = enc.encode(reply.text, disallowed_special=())
    if len(tokens) <= allowance:
        return reply
    return Reply(enc.decode(tokens[:allowance]), reply.usage, "length")
