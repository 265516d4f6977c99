"""OpenAIChat and OpenAICompletion: any OpenAI-compatible server through the official `openai` client.

Works with OpenAI itself, vLLM, llama.cpp's servers, Ollama and LM Studio (`base_url=...`). The
client retries timeouts, 429 and 5xx answers with backoff, honouring `Retry-After`, up to
`max_retries`; what still fails becomes `ModelError` with the URL tried and the server's words,
never the API key.

Stop sequences: sent as `stop`; when a server answers 400 naming the `stop` parameter (OpenAI's
reasoning models do), the call is retried without it and `stop` is not sent again by this backend;
the loop's client-side cut still applies. Streaming (`stream=True`) stops reading as soon as a
hallucinated observation begins.
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .. import guard
from ..errors import ModelError, safe_url, scrub
from ..types import Api, Reply, Request, Usage

if TYPE_CHECKING:
    import openai

log = logging.getLogger(__name__)
Piece = Callable[[Any], "str | None"]  # the text of one choice (or one streamed chunk's choice)


class _OpenAIBackend:
    """The shared transport of the two public backends below (not part of the API)."""

    api: Api

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        client: openai.OpenAI | None = None,
        stream: bool = False,
        temperature: float | None = 0.0,
        timeout: float = 120.0,
        max_retries: int = 3,
        grammar: bool = False,
        extra_body: dict[str, Any] | None = None,
    ) -> None:
        self.name = model
        self.stream = stream
        self.temperature = temperature
        self.accepts_grammar = grammar  # the server takes a GBNF "grammar" (llama.cpp does)
        self.extra_body = dict(extra_body or {})
        self.send_stop = True
        if client is None:
            import openai

            # A local server needs no key; the client insists on one, so give it a placeholder.
            key = api_key or os.environ.get("OPENAI_API_KEY") or "not-needed"
            client = openai.OpenAI(base_url=base_url, api_key=key, timeout=timeout, max_retries=max_retries)
        self.client = client

    def __repr__(self) -> str:  # never shows the key
        return f"{type(self).__name__}({self.name!r}, base_url={self.url!r})"

    def _send(self, request: Request, create: Callable[..., Any], piece: Piece) -> Reply:
        """Call `create` with the request's options; turn every failure into ModelError."""
        import openai

        try:
            try:
                return self._read(create(**self._options(request)), piece)
            except openai.BadRequestError as exc:
                if not (self.send_stop and _names_stop(exc)):
                    raise
                log.info("%r rejected `stop`; retrying without it for the rest of the run", self)
                self.send_stop = False
                return self._read(create(**self._options(request)), piece)
        except openai.APITimeoutError as exc:
            raise ModelError(scrub(f"{self.url} did not answer in time ({exc})")) from exc
        except openai.APIConnectionError as exc:
            raise ModelError(scrub(f"could not reach {self.url}: {exc}")) from exc
        except openai.APIStatusError as exc:
            raise ModelError(scrub(f"{self.url} answered {exc.status_code}: {_words(exc)}")) from exc
        except (openai.OpenAIError, ValueError, UnicodeDecodeError) as exc:
            raise ModelError(scrub(f"bad answer from {self.url}: {exc}")) from exc

    @property
    def url(self) -> str:
        """The server's URL, fit for a message (no credentials, no query)."""
        return safe_url(self.client.base_url)

    def _options(self, request: Request) -> dict[str, Any]:
        options: dict[str, Any] = {"model": self.name, "max_tokens": request.max_tokens}
        if self.temperature is not None:
            options["temperature"] = self.temperature
        if self.send_stop and request.stop:
            options["stop"] = list(request.stop)
        body = dict(self.extra_body)
        if request.grammar and self.accepts_grammar:
            body["grammar"] = request.grammar
        if body:
            options["extra_body"] = body
        if self.stream:
            options["stream"] = True
            options["stream_options"] = {"include_usage": True}
        return options

    def _read(self, response: Any, piece: Piece) -> Reply:
        if not self.stream:
            choice = response.choices[0]
            return Reply(piece(choice) or "", _usage(response.usage), choice.finish_reason)
        # A stream: read until it ends or a hallucinated observation begins.
        text = ""
        usage: Usage | None = None
        finish: str | None = None
        try:
            for chunk in response:
                if getattr(chunk, "usage", None) is not None:
                    usage = _usage(chunk.usage)
                if not chunk.choices:
                    continue
                choice = chunk.choices[0]
                finish = choice.finish_reason or finish
                new = piece(choice)
                if new:
                    before = len(text)
                    text += new
                    if guard.is_cut(text, before - 32):
                        finish = "stop"
                        break
        finally:
            response.close()
        return Reply(text, usage, finish)


class OpenAIChat(_OpenAIBackend):
    """A chat model over `/v1/chat/completions`."""

    api: Api = "chat"

    def generate(self, request: Request) -> Reply:
        if isinstance(request.prompt, str):
            raise TypeError("OpenAIChat takes chat messages, not a transcript")
        messages = [{"role": m.role, "content": m.content} for m in request.prompt]
        create = functools.partial(self.client.chat.completions.create, messages=messages)
        return self._send(request, create, _chat_piece)


class OpenAICompletion(_OpenAIBackend):
    """A completion-only model over the legacy `/v1/completions` endpoint."""

    api: Api = "completion"

    def generate(self, request: Request) -> Reply:
        if not isinstance(request.prompt, str):
            raise TypeError("OpenAICompletion takes a transcript string, not chat messages")
        create = functools.partial(self.client.completions.create, prompt=request.prompt)
        return self._send(request, create, _completion_piece)


def _chat_piece(choice: Any) -> str | None:
    message = getattr(choice, "delta", None) or getattr(choice, "message", None)
    return getattr(message, "content", None)


def _completion_piece(choice: Any) -> str | None:
    return getattr(choice, "text", None)


def _usage(raw: Any) -> Usage | None:
    if raw is None:
        return None
    return Usage(int(raw.prompt_tokens or 0), int(raw.completion_tokens or 0))


def _names_stop(exc: openai.BadRequestError) -> bool:
    return "stop" in (exc.param or "") or "'stop'" in str(exc)


def _words(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
    return exc.message
