"""The model behind the endpoint and what the endpoint reads of it once: its api, whether it takes
the protocol grammar and a prefill, its Limits and Prompting (as it recommends them, else the
defaults), how its tokens are counted, its context window.

    upstream(LocalModel())                                the embedded model (the command's default)
    upstream(OpenAIChat("m", base_url="http://..."))      any OpenAI-compatible server
    upstream(OpenAICompletion("m", base_url=...))         a completion-only endpoint
    upstream(ScriptedModel(replies))                      replies played in order (`serve --script`)
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass

from react_text.core.limits import Limits
from react_text.core.model_info import describe, grammar_on
from react_text.core.types import Model
from react_text.prompting import Prompting
from react_text.tokens.meter import Counter, counter

__all__ = ["Upstream", "tempered", "upstream"]


@dataclass(frozen=True, slots=True)
class Upstream:
    model: Model
    api_chat: bool
    grammar: bool  # the protocol grammar goes with every request
    prefill: bool  # a chat turn is begun with the thought cue (the model continues it)
    limits: Limits
    prompting: Prompting
    count: Counter  # tokens of a text, as the model counts them (or an estimate)
    window: int | None = None  # the context window, when known
    temperature: bool = False  # the model has a temperature a request may set


def upstream(model: Model, *, limits: Limits | None = None, prompting: Prompting | None = None) -> Upstream:
    """What the endpoint reads of `model`, once. `limits` and `prompting` replace the model's own."""
    info = describe(model)
    style = prompting or info.prompting or Prompting()
    return Upstream(
        model=model,
        api_chat=model.api == "chat",
        grammar=grammar_on(model, info, style.grammar),
        prefill=info.prefill,
        limits=limits or info.limits or Limits(),
        prompting=style,
        count=info.count_tokens or counter(model.name),
        temperature=isinstance(getattr(model, "temperature", None), float),
    )


async def windowed(found: Upstream) -> Upstream:
    """`found` with its context window, asked of the model once (a server is asked over HTTP)."""
    if found.window is not None or found.limits.context_tokens is not None:
        return found
    info = describe(found.model)
    window = await info.awindow() if info.awindow is not None else info.window() if info.window is not None else None
    return dataclasses.replace(found, window=window) if isinstance(window, int) else found


def tempered(found: Upstream, temperature: float | None) -> Model:
    """The model, sampling at `temperature` for one request (a shallow copy that shares its client
    or its loaded weights); the model itself when none is asked or it has no temperature to set."""
    if temperature is None or not found.temperature or getattr(found.model, "temperature", None) == temperature:
        return found.model
    made = copy.copy(found.model)
    made.temperature = temperature  # type: ignore[attr-defined]
    return made
