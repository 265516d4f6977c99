"""The JSON the endpoint answers with, in OpenAI's shapes: a chat completion, its stream of chunks,
the model list and an error. Pure: each takes values and returns what is sent.

Beside OpenAI's fields, a completion carries `react_text` (clients ignore what they do not know):
how many tries the reply took, whether usage is the upstream's or counted here, and, for a reply
that could not be read, why (`unread`) and what the model was told (`detail`). The same is said in
response headers (`headers`), for a client that reads no body fields of its own.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from .exchange import Outcome
from .replies import ToolCall

__all__ = ["chunks", "completion", "error", "headers", "models"]

_PIECE = 24  # characters of content or arguments in one streamed delta


def completion(outcome: Outcome, *, id: str, created: int, model: str) -> dict[str, Any]:
    answer = outcome.answer
    message: dict[str, Any] = {"role": "assistant", "content": answer.content}
    if answer.tool_calls:
        message["tool_calls"] = [_call(c) for c in answer.tool_calls]
    if answer.reasoning:
        message["reasoning_content"] = answer.reasoning
    return {
        "id": id,
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": answer.finish_reason, "logprobs": None}],
        "usage": outcome.usage.as_dict(),
        "react_text": _extension(outcome),
    }


def headers(outcome: Outcome) -> dict[str, str]:
    """What the response headers say of the exchange (ASCII only: the reasons are the engine's words)."""
    said = {
        "x-react-text-tries": str(outcome.tries),
        "x-react-text-usage": "counted" if outcome.counted else "upstream",
    }
    if outcome.answer.unread:
        said["x-react-text-unread"] = outcome.answer.unread
    return said


def chunks(outcome: Outcome, *, id: str, created: int, model: str, include_usage: bool) -> Iterator[dict[str, Any]]:
    """The completion as a stream: the role, any reasoning, the content in pieces or each tool
    call (its index, id and name, then its arguments in fragments), the finish reason, and the
    usage in a last chunk of no choices when it was asked for. The reply was read whole first, so
    the guard's cut came before any of it is sent."""
    answer = outcome.answer

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        made: dict[str, Any] = {
            "id": id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}],
        }
        if include_usage:
            made["usage"] = None
        return made

    yield chunk({"role": "assistant", "content": ""})
    for piece in _pieces(answer.reasoning or ""):
        yield chunk({"reasoning_content": piece})
    for piece in _pieces(answer.content or ""):
        yield chunk({"content": piece})
    for index, call in enumerate(answer.tool_calls):
        head = {"index": index, "id": call.id, "type": "function", "function": {"name": call.name, "arguments": ""}}
        yield chunk({"tool_calls": [head]})
        for piece in _pieces(call.arguments):
            yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
    last = chunk({}, answer.finish_reason)
    last["react_text"] = _extension(outcome)
    yield last
    if include_usage:
        yield {
            "id": id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "choices": [],
            "usage": outcome.usage.as_dict(),
        }


def models(name: str) -> dict[str, Any]:
    return {"object": "list", "data": [{"id": name, "object": "model", "created": 0, "owned_by": "react-text"}]}


def error(
    message: str, *, kind: str = "invalid_request_error", param: str | None = None, code: str | None = None
) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


def _call(call: ToolCall) -> dict[str, Any]:
    return {"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}


def _extension(outcome: Outcome) -> dict[str, Any]:
    said: dict[str, Any] = {"tries": outcome.tries, "usage": "counted" if outcome.counted else "upstream"}
    if outcome.answer.unread:
        said["unread"] = outcome.answer.unread
        said["detail"] = outcome.answer.correction
    return said


def _pieces(text: str) -> Iterator[str]:
    for start in range(0, len(text), _PIECE):
        yield text[start : start + _PIECE]
