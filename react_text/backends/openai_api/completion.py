"""OpenAICompletion: a completion-only model over the legacy `/v1/completions` endpoint (see the
package's docstring)."""

from __future__ import annotations

from typing import Any, ClassVar

from react_text.backends.openai_api.base import Backend
from react_text.core.types import Api, Request

__all__ = ["OpenAICompletion"]


class OpenAICompletion(Backend):
    """A completion-only model over the legacy `/v1/completions` endpoint."""

    api: Api = "completion"

    _path: ClassVar[str] = "/completions"

    def _prompt(self, request: Request) -> dict[str, Any]:
        if not isinstance(request.prompt, str):
            raise TypeError("OpenAICompletion takes a transcript string, not chat messages")
        return {"prompt": request.prompt}
