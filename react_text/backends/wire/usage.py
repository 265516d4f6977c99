"""The token counts a server reports with its answer (`usage`), read without trusting them."""

from __future__ import annotations

from react_text.backends.wire.fields import count, field
from react_text.core.types import Usage

__all__ = ["read_usage"]


def read_usage(raw: object) -> Usage | None:
    """Token counts as reported; None when absent or not counts (the loop then estimates)."""
    prompt, completion = field(raw, "prompt_tokens"), field(raw, "completion_tokens")
    if count(prompt) and count(completion):
        return Usage(prompt, completion)
    return None
