"""OpenAIChat: a chat model over `/v1/chat/completions` (see the package's docstring)."""

from __future__ import annotations

from typing import Any, ClassVar

from react_text.backends.openai_api.base import Backend
from react_text.core.types import Api, Request

__all__ = ["OpenAIChat"]


class OpenAIChat(Backend):
    """A chat model over `/v1/chat/completions`."""

    api: Api = "chat"

    _path: ClassVar[str] = "/chat/completions"

    def _prompt(self, request: Request) -> dict[str, Any]:
        if isinstance(request.prompt, str):
            raise TypeError("OpenAIChat takes chat messages, not a transcript")
        return {"messages": [{"role": m.role, "content": m.content} for m in request.prompt]}
