"""One trace per request (`react-text serve --trace DIR`, `app(trace=DIR)`), in the format runs write
(`observers.trace`), so `trace.read` checks it and `trace.replies` plays its replies back:

    DIR/000001-chatcmpl-1f2e....jsonl      (its number in this process, then the response's id)
      run_start    the task (the last user message), the model, the limits, and `served`: the
                   request's tools, tool_choice, parallel_tool_calls, stream
      request      what is new in each prompt sent upstream (asked again: another request)
      reply        each upstream reply (model_error: an upstream failure)
      response     the status, the react-text headers and the body the client got (for a stream,
                   the completion its chunks add up to); an error's body as it was sent

Nothing of the request's headers is written (its API key is there), the upstream's URL is written
without credentials, and every string passes the tracer's scrub (API keys, bearer tokens).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

from react_text.core.errors import ConfigError, safe_url
from react_text.core.model_info import describe
from react_text.observers.observing import Observer, Quiet
from react_text.observers.trace import Tracer

from .requests import ChatRequest, Said
from .upstream import Upstream

__all__ = ["RequestTrace", "folder"]


def folder(path: str | Path) -> Path:
    """The traces' folder, made if need be; ConfigError in one line when it cannot be."""
    made = Path(path)
    try:
        made.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"cannot write traces to {path}: {exc.strerror or exc}") from None
    return made


class RequestTrace:
    """The trace of one request: `begin` once it is read, `observer` for the upstream calls, `end`
    with the response (which closes it)."""

    def __init__(self, where: Path, number: int, completion_id: str) -> None:
        self.tracer = Tracer(where / f"{number:06d}-{completion_id}.jsonl")
        self._begun = False

    @property
    def observer(self) -> Observer:
        return self.tracer.observer

    def begin(self, upstream: Upstream, chat: ChatRequest | None) -> None:
        if self._begun:
            return
        self._begun = True
        model = upstream.model
        url = getattr(model, "base_url", None)
        config: dict[str, Any] = {
            "model": {
                "api": "chat" if upstream.api_chat else "completion",
                "name": model.name,
                "grammar": upstream.grammar,
                **({"url": safe_url(url)} if isinstance(url, str) else {}),
            },
            "limits": dataclasses.asdict(upstream.limits),
        }
        task = ""
        if chat is not None:
            task = next((m.text for m in reversed(chat.messages) if isinstance(m, Said) and m.role == "user"), "")
            config["served"] = {
                "tools": [f.name for f in chat.functions],
                "tool_choice": chat.named if chat.choice == "named" else chat.choice,
                "parallel_tool_calls": chat.parallel,
                "stream": chat.stream,
            }
        self.tracer.start(task, config)
        self.tracer.observer.begin(describe(model))

    def end(self, upstream: Upstream, status: int, body: object, headers: dict[str, str], *, stream: bool) -> None:
        self.begin(upstream, None)
        said = {k: v for k, v in headers.items() if k.startswith("x-react-text-")}
        self.tracer.event("response", status=status, stream=stream, headers=said, body=body)
        self.tracer.close()


QUIET: Observer = Quiet()
