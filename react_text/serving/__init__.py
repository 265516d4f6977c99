"""Native tool calling for models that have none: an OpenAI-compatible endpoint over the text protocol.

    from react_text.serving import app
    asgi = app(upstream=OpenAIChat("smollm2", base_url="http://127.0.0.1:8080/v1"))   # mount it, or
    asgi = app([OpenAIChat("m", base_url=URL1), OpenAIChat("m", base_url=URL2)])    # several servers
    react-text serve --base-url http://127.0.0.1:8080/v1 --model smollm2               # run it

`POST /v1/chat/completions` takes `tools=[...]` and answers with `tool_calls`, as OpenAI's API does,
for a model that only writes text: the request's tools become the protocol's tool list and
instruction block, its messages the conversation (tool calls written back as the ACTION lines the
model would have written, tool results as their OBSERVATION), and the model's reply is guarded,
parsed and bound against each tool's schema into `tool_calls`, or read as the final answer. Needs
the `serve` extra: `pip install "react-text[serve]"`.

By job, in the order data flows: `requests` (the body checked), `functions` (tool schemas as
Tools and back), `schemas` (arguments checked against a JSON schema), `transcript` (messages as
the protocol writes them), `exchange` (asking and asking again, sans-IO), `replies` (a reply as
tool calls or an answer), `responses` (OpenAI's JSON shapes), `asgi` (the Starlette app: the only
I/O; not `app.py`, whose import would put the module where the function `app` is), `upstream`
(the model and what is read of it once), `spread` (several upstreams: which one a request goes
to), `tracing` (a trace per request), `spans` (OpenTelemetry
spans per request, when a tracer provider is set), `command`
(`react-text serve`).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from react_text.core.errors import ConfigError
from react_text.core.limits import Limits
from react_text.core.types import Model
from react_text.prompting import Prompting

if TYPE_CHECKING:
    from starlette.applications import Starlette

__all__ = ["INSTALL", "app"]

INSTALL = 'the endpoint needs the serve extra: pip install "react-text[serve]"'


def app(
    upstream: Model | Sequence[Model] | None = None,
    *,
    api_key: str | None = None,
    limits: Limits | None = None,
    prompting: Prompting | None = None,
    max_body: int | None = None,
    trace: str | Path | None = None,
) -> Starlette:
    """The endpoint as an ASGI app, over `upstream` (None: the embedded local model, loaded now), or
    over several upstreams, a list: each conversation sticks to one (a hash of its first system and
    user messages picks it, so a server's prefix cache keeps hitting), and one that cannot be reached
    passes the request to the next (`spread`; said in a log line and the x-react-text-failed-over
    header; x-react-text-upstream names the one that answered, by its place in the list from 0).

        `api_key`: requests must present it (`Authorization: Bearer KEY`); `limits` and `prompting`
        replace the model's recommended ones (the reply allowance when a request sets no max_tokens,
        the context window, the tries at an unreadable reply, the most tool calls of one reply);
        `max_body`: the largest request body in bytes (413 past it); `trace`: a folder (made if need
        be) to write one trace a request to, ending with the response (`serving.tracing`)."""
    try:
        from .asgi import MAX_BODY, make_app
    except ImportError as exc:  # starlette is not installed
        raise ConfigError(INSTALL) from exc
    from .tracing import folder
    from .upstream import upstream as read_upstream

    if upstream is None:
        from react_text.backends.local import LocalModel

        upstream = LocalModel()
    models: list[Model] = list(upstream) if isinstance(upstream, Sequence) else [upstream]
    if not models:
        raise ValueError("upstream must be a model or a list of at least one model")
    if api_key is not None and (not isinstance(api_key, str) or not api_key):
        raise ValueError("api_key must be non-empty text or None")
    return make_app(
        [read_upstream(model, limits=limits, prompting=prompting) for model in models],
        api_key=api_key,
        max_body=MAX_BODY if max_body is None else max_body,
        trace=None if trace is None else folder(trace),
    )
