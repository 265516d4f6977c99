"""OpenAIChat and OpenAICompletion: any OpenAI-compatible server through the official `openai` client.

Works with OpenAI itself, vLLM, llama.cpp's servers, Ollama and LM Studio (`base_url=...`). The
client retries timeouts, 429 and 5xx answers with backoff, honouring `Retry-After`, up to
`max_retries`; what still fails becomes `ModelError` with the URL tried and the server's words,
never the API key. A server that says the prompt does not fit its context window raises
`ContextLengthError`; an answer that is not a reply (no choices, an HTML page) raises ModelError.

Sync and async: `generate` goes through `openai.OpenAI`, `agenerate` through `openai.AsyncOpenAI`
(built on first use, one per event loop, from the sync client's settings, unless `async_client=`
is given). Both build the same request and read the answer with the same code (`wire`), and both
send it with the client's low-level `post` (the body as built here, the answer as plain JSON), not
`chat.completions.create`, whose conversion of every argument against its typed parameters cost
about 1.7 ms a call.

At scale (thousands of async episodes against a server), `agenerate` to a plain `http://` server
takes the lean path (`http1`: a prepared body on a keep-alive connection from one pool per event
loop, shared by the backends in it), when this backend built its own client, no proxy is set in
the environment and the call is not streamed. Its first failure hands the request to the client,
which retries, waits and raises as ever (see `_alean`); the tries add up to the client's own.

A grammar (the protocol's, see `react_text.grammar.protocol`) is sent only when asked for: `grammar=True`
here, or `Prompting(grammar=True)` (`model_info.grammar_on`); naming the server never turns it on.
It goes where the server takes one: llama.cpp's `grammar`, vLLM's `structured_outputs:
{"grammar": ...}`, SGLang's `ebnf`; Ollama and OpenAI take none. What the server is comes from
`server=`, else from the server itself, asked once on first use (`identify`: llama.cpp's /props,
SGLang's /server_info, vLLM's /version, Ollama's /api/version, llama-cpp-python's /openapi.json);
`identity.said` says what was found and why, in the log and in a trace's run_start. A server that
says none of these takes no grammar; `grammar=True` with one that does not say means llama.cpp, as
it always has.

Stop sequences: sent as `stop`; when a server answers 400 naming the `stop` parameter (OpenAI's
reasoning models do), the call is retried without it and this backend never sends `stop` again:
the rejection belongs to the model behind it, not to one run, so later runs would only pay for
the same 400 again. The loop's client-side cut still applies. Streaming (`stream=True`) stops
reading as soon as a made-up observation begins in the content (reasoning is never cut).

The context window (`context_window`, `await acontext_window()`) is asked of the server once:
vLLM's `GET /v1/models` (`max_model_len`), then llama.cpp's `GET /props` (`n_ctx`); None when the
server cannot say (OpenAI itself is not asked). A context-length error that names the window
(most do) sets it when it was unknown: llama-cpp-python's server says it no other way.

Token ids (`token_ids=True`, for trajectories) are asked where each server gives them (`wire.token_fields`);
llama.cpp's server gives the sampled ids in its log-probs but not the prompt's, so it is asked how
it tokenized the prompt (its /tokenize, after /apply-template for chat) and the ids are exact. A
server said llama.cpp that cannot say (llama-cpp-python's) is asked once; `tokenizer=` serves then.

A streamed request that the server drops without a word (llama-cpp-python's server does, for a
prompt past its window) is asked once more unstreamed, to hear the error.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import functools
import json
import logging
import os
import random
import time
import typing
import urllib.parse
import urllib.request
import weakref
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Generator, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from react_text.backends import http1, identify, wire
from react_text.core.errors import ConfigError, ContextLengthError, ModelError, safe_url, scrub
from react_text.core.sampling import check_temperature
from react_text.core.types import Api, Reply, Request, Vocabulary
from react_text.grammar import protocol

if TYPE_CHECKING:
    import openai

__all__ = [
    "OpenAIChat",
    "OpenAICompletion",
]

log = logging.getLogger(__name__)

_LOOKUP_SECONDS = 10.0
_UNKNOWN: Any = object()
CallPlan = Generator[dict[str, Any], "Reply | Exception", Reply]  # yields requests, is sent each outcome


class _OpenAIBackend:
    """The shared transport of the two public backends below (not part of the API)."""

    api: Api
    provider: ClassVar[str] = "openai"  # what model_info reads (it runs on a server: `url`)

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        client: openai.OpenAI | None = None,
        async_client: openai.AsyncOpenAI | None = None,
        stream: bool = False,
        temperature: float | None = 0.0,
        timeout: float = 120.0,
        max_retries: int = 3,
        grammar: bool = False,
        server: wire.Server | None = None,
        think: bool = False,
        send_stop: bool = True,
        extra_body: dict[str, Any] | None = None,
        token_ids: bool = False,
        tokenizer: Vocabulary | None = None,
    ) -> None:
        _check_options(
            model,
            base_url=base_url,
            api_key=api_key,
            timeout=timeout,
            max_retries=max_retries,
            extra_body=extra_body,
            flags={
                "stream": stream,
                "grammar": bool(grammar) if grammar is None else grammar,  # None: not asked, as ever
                "think": think,
                "send_stop": send_stop,
                "token_ids": token_ids,
            },
        )
        self.name = model
        self.stream = stream
        self.temperature = None if temperature is None else check_temperature(temperature)
        if server is not None and server not in wire.SERVERS:
            raise ValueError(f"server must be one of {', '.join(wire.SERVERS)}, not {server!r}")
        if grammar and server is not None and server not in wire.GRAMMAR_SERVERS:
            raise ValueError(f"{server} takes no grammar; leave grammar off (stop sequences and the guard still apply)")
        # What the server is chooses where a grammar goes in the request: said by the caller, else
        # asked of the server once (`identify`), when it is first needed.
        self._grammar_asked = bool(grammar)
        self.think = think  # under the grammar, a free <think> block may come first
        self._identity: identify.Identity | None = None  # asked once, then kept
        self._server: wire.Server | None = None
        self._grammar_ignored = False  # said once: the server does not apply the grammar it is sent
        self.send_stop = send_stop  # False once the server has rejected `stop`, for good
        self.extra_body = dict(extra_body or {})
        # ask the server for the tokens it sampled (a reply then carries `tokens`, for trajectories)
        self.token_ids = token_ids
        self.tokenizer = tokenizer
        self._tokenizes = True  # False once the server has not said how it tokenized a prompt
        self._lean: _Lean | None = None
        if client is None:
            import openai

            # A local server needs no key; the client insists on one, so give it a placeholder.
            # OpenAI itself does: say so now, not with a 401 at the first call.
            key = api_key or os.environ.get("OPENAI_API_KEY")
            url = base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"
            if not key and urllib.parse.urlsplit(url).hostname == "api.openai.com":
                raise ConfigError(
                    f"{model} on api.openai.com needs an API key: set OPENAI_API_KEY (or pass api_key=...); "
                    "for a local server, give its base_url"
                )
            key = key or "not-needed"
            from react_text.backends import deadline  # imports httpx, as openai does: only when a client is made here

            # each whole answer within `timeout` (httpx's own is per read), as on the async path
            http = deadline.client(timeout) if timeout is not None else None
            client = openai.OpenAI(
                base_url=base_url, api_key=key, timeout=timeout, max_retries=max_retries, http_client=http
            )
            if async_client is None:
                self._lean = _lean(client, self._path, timeout)
        self.client = client
        self._async_client = async_client
        self._async_clients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _LoopClient] = (
            weakref.WeakKeyDictionary()
        )
        self._window: int | None = _UNKNOWN
        self._lookups: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Task[None]] = (
            weakref.WeakKeyDictionary()
        )
        if server is not None:
            self._identity = self._settle(identify.Identity(server, f"server={server!r} was given"))

    # -- what the server is: given, or asked once ------------------------------------------------

    @property
    def server(self) -> wire.Server | None:
        """What the server is ("llama.cpp", "vllm", "sglang", "ollama", "openai"), as given or as it
        says itself (asked once, on first use); None when it did not say."""
        self.identity  # noqa: B018 (asked once)
        return self._server

    @property
    def accepts_grammar(self) -> bool:
        """Whether the server can take a grammar (it is llama.cpp, vLLM or SGLang): where one would go,
        not whether one is sent (`grammar`)."""
        return self.server in wire.GRAMMAR_SERVERS

    @property
    def grammar(self) -> bool:
        """Built with grammar=True: a run sends the grammar unless its Prompting says grammar=False."""
        return self._grammar_asked

    @property
    def identity(self) -> identify.Identity:
        """What the server is and why we think so (`said`: the reason, in words); asked once."""
        if self._identity is None:
            found = _drive(identify.plan(str(self.client.base_url)), functools.partial(self._get, quiet=True))
            self._identity = self._settle(found)
        return self._identity

    async def aidentify(self) -> identify.Identity:
        """`identity`, asked over the async client."""
        if self._identity is None:
            found = await _adrive(identify.plan(str(self.client.base_url)), functools.partial(self._aget, quiet=True))
            self._identity = self._settle(found)
        return self._identity

    def _settle(self, found: identify.Identity) -> identify.Identity:
        """Keep what the server said (asked once per model, even when it could not be reached: the
        run's own call will say why) and say, once, where the grammar goes and why."""
        server = found.server
        if server is None and self._grammar_asked:
            server = "llama.cpp"
            said = f"{found.said}; grammar=True alone means llama.cpp: the grammar goes in {identify.FIELDS[server]}"
        elif server is None:
            said = f"{found.said}: no grammar is sent (say server=... to choose where it goes)"
        elif self._grammar_asked or server not in wire.GRAMMAR_SERVERS:
            said = f"{found.said}: {server}; the grammar goes {_where(server)}"
        else:
            said = f"{found.said}: {server}; a grammar would go {_where(server)} (grammar=True sends one)"
        if found.reasoning_parser and server in wire.GRAMMAR_SERVERS:
            said += f"; its reasoning parser ({found.reasoning_parser}) starts the grammar after the thinking"
        self._server = server
        if self._grammar_asked and server not in wire.GRAMMAR_SERVERS:
            log.warning("%r: %s (grammar=True is not honoured)", self, said)
        else:
            log.info("%r: %s", self, said)
        return dataclasses.replace(found, server=server, said=said)

    def __repr__(self) -> str:  # never shows the key
        return f"{type(self).__name__}({self.name!r}, base_url={self.url!r})"

    @property
    def url(self) -> str:
        """The server's URL, fit for a message (no credentials, no query)."""
        return safe_url(self.client.base_url)

    # -- one call, sync and async: the same request, the same reading, the same errors --------

    def generate(self, request: Request) -> Reply:
        with self._failures():
            return self._heard(request, _drive(self._plan(request), self._once, _retried()))

    async def agenerate(self, request: Request) -> Reply:
        if request.grammar and self._identity is None:
            await self.aidentify()  # where the grammar goes, asked over this loop's client
        with self._failures():
            return self._heard(request, await _adrive(self._plan(request), self._aonce, _retried()))

    def _grammar_sent(self, request: Request) -> str | None:
        """The request's grammar as this server gets it: with a free <think> block first when the
        model thinks, unless the server starts the grammar after the thinking itself (SGLang says
        so when it has a reasoning parser)."""
        if not request.grammar or not self.think or self.identity.reasoning_parser:
            return request.grammar
        return protocol.with_thinking(request.grammar)

    def _heard(self, request: Request, reply: Reply) -> Reply:
        """The reply, after saying once (a warning) that the server does not apply the grammar,
        when this reply could not have been written under the one it was sent."""
        if (
            request.grammar
            and not self._grammar_ignored
            and self._server in wire.GRAMMAR_SERVERS
            and protocol.ignored(self._grammar_sent(request) or "", reply.text, cut=reply.finish_reason == "length")
        ):
            self._grammar_ignored = True
            log.warning("%s", protocol.ignored_words(f"{self.url} ({self._server})", reply.text))
        return reply

    def _plan(self, request: Request) -> CallPlan:
        """What to send, and what to send again after a failure, free of I/O (both drivers run it)."""
        arguments = self._arguments(request)
        outcome = yield arguments
        if isinstance(outcome, Exception) and self._stop_rejected(outcome, arguments):
            arguments = self._arguments(request)
            outcome = yield arguments
        if arguments.get("stream") and (isinstance(outcome, wire.EmptyStream) or wire.dropped(outcome)):
            # llama-cpp-python's server fails a stream before its first token (a prompt past n_ctx)
            # by closing the connection, with or without a 200 first: ask once unstreamed to hear why.
            arguments = {k: v for k, v in arguments.items() if k not in ("stream", "stream_options")}
            outcome = yield arguments
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    def _once(self, arguments: dict[str, Any]) -> Reply:
        import openai

        stream = bool(arguments.get("stream"))
        answer: Any = self.client.post(
            self._path, body=_body(arguments), cast_to=object, stream=stream, stream_cls=openai.Stream[object]
        )
        if not stream:
            return self._read(answer, arguments, self._served(arguments))
        reading = self._stream_reading(arguments)
        answer.response = _Watched(answer.response, reading, _read_seconds(self.client.timeout))
        try:
            for chunk in answer:
                if reading.add(chunk):
                    break
        finally:
            answer.close()
        return self._with_tokens(reading.reply(), reading.answer(), arguments, self._served(arguments))

    async def _aonce(self, arguments: dict[str, Any]) -> Reply:
        import openai

        stream = bool(arguments.get("stream"))
        client = await self._aclient() if self._lean is None or stream else None
        if client is None:
            outcome = await self._alean(arguments)
            if isinstance(outcome, Reply):
                return outcome
            client = (await self._aclient()).with_options(max_retries=outcome)
        answer: Any = await client.post(
            self._path, body=_body(arguments), cast_to=object, stream=stream, stream_cls=openai.AsyncStream[object]
        )
        if not stream:
            return self._read(answer, arguments, await self._aserved(arguments))
        reading = self._stream_reading(arguments)
        answer.response = _Watched(answer.response, reading, _read_seconds(client.timeout))
        try:
            async for chunk in answer:
                if reading.add(chunk):
                    break
        finally:
            await answer.close()
        return self._with_tokens(reading.reply(), reading.answer(), arguments, await self._aserved(arguments))

    async def _alean(self, arguments: dict[str, Any]) -> Reply | int:
        """One try over the lean HTTP path (`http1`): the reply, or how many retries the `openai`
        client has left for this request after that try failed (it then asks, retries and raises
        its own errors, from the server's own answer). A failure that may be retried waits as
        `openai` would first (Retry-After, else its first backoff), so the tries and waits add up
        to the client's own. A refused or timed-out last try, and an answer that is not retried
        (a 4xx, the last 5xx), raise the client's error directly: no request is sent twice."""
        import openai

        lean, retries = self._lean, self.client.max_retries
        if lean is None:  # pragma: no cover - the caller checked
            raise RuntimeError("no lean path")
        body = json.dumps(_body(arguments), ensure_ascii=False, separators=(",", ":")).encode()
        try:
            answer = await (await http1.pool()).post(lean.host, lean.port, lean.head, body, lean.timeout)
        except http1.Unsupported:
            return retries
        except http1.TransportError as exc:
            if retries == 0:
                request = _httpx().Request("POST", lean.url)
                failure = openai.APITimeoutError if isinstance(exc, http1.TimedOut) else openai.APIConnectionError
                raise failure(request=request) from exc
            await asyncio.sleep(wire.first_backoff(random.random()))
            return retries - 1
        if 200 <= answer.status < 300:
            return self._read(_decoded(answer), arguments, await self._aserved(arguments))
        if retries == 0 or not wire.retried(answer.status, answer.headers):
            raise self._status_error(answer, lean.url)  # the client's own error, from this answer: not asked again
        await asyncio.sleep(wire.retry_wait(answer.headers, random.random()))
        return retries - 1

    def _status_error(self, answer: http1.Answer, url: str) -> openai.APIStatusError:
        """The error the `openai` client raises for `answer` (its own mapping of a status to a class
        and of the body to a message), so a failure on the lean path reads as one through the client."""
        httpx = _httpx()
        response = httpx.Response(
            answer.status, headers=answer.headers, content=answer.body, request=httpx.Request("POST", url)
        )
        return self.client._make_status_error_from_response(response)

    def _read(self, answer: object, arguments: dict[str, Any], served: tuple[int, ...] | None = None) -> Reply:
        """A whole answer's reply, with its token ids when they were asked for and the answer has
        them (`served`: the prompt's ids as the server tokenized it, asked of it after the answer)."""
        return self._with_tokens(wire.read_answer(answer, chat=self.api == "chat"), answer, arguments, served)

    def _stream_reading(self, arguments: dict[str, Any]) -> wire.StreamReading:
        """A streamed reply's reader; it gathers the chunks' token fields when they were asked for."""
        return wire.StreamReading(
            chat=self.api == "chat", max_tokens=arguments.get("max_tokens"), tokens=self.token_ids
        )

    def _with_tokens(
        self, reply: Reply, answer: object, arguments: dict[str, Any], served: tuple[int, ...] | None = None
    ) -> Reply:
        """The reply with its token ids, when they were asked for and `answer` (a whole answer, or
        a stream's token fields gathered as one) has them (`served`: the prompt's ids as the server
        tokenized it)."""
        if not self.token_ids:
            return reply
        prompt = arguments.get("prompt")
        known = None
        if served is None and self.tokenizer is not None and isinstance(prompt, str):
            known = self.tokenizer.encode(prompt)
        tokens = wire.read_tokens(answer, reply.text, prompt=known, vocabulary=self.tokenizer, served=served)
        if tokens is None:
            log.debug("%r: the answer gave no token ids for its reply", self)
        return dataclasses.replace(reply, tokens=tokens)

    # -- the prompt's ids as llama.cpp's server tokenized it (token_ids=True): its /tokenize ---------

    def _asks_prompt(self) -> bool:
        """Whether to ask the server how it tokenized the prompt: llama.cpp's server, token ids
        asked for, and it has not failed to say (llama-cpp-python's server, also "llama.cpp", has
        no /tokenize: asked once, then not again)."""
        return self.token_ids and self._tokenizes and self._server == "llama.cpp"

    def _served(self, arguments: dict[str, Any]) -> tuple[int, ...] | None:
        if not self._asks_prompt():
            return None
        plan = wire.prompt_plan(str(self.client.base_url), _body(arguments), chat=self.api == "chat")
        return self._tokenized(_drive(plan, lambda asked: self._post(*asked)))

    async def _aserved(self, arguments: dict[str, Any]) -> tuple[int, ...] | None:
        if not self._asks_prompt():
            return None
        plan = wire.prompt_plan(str(self.client.base_url), _body(arguments), chat=self.api == "chat")
        return self._tokenized(await _adrive(plan, lambda asked: self._apost(*asked)))

    def _tokenized(self, ids: tuple[int, ...] | None) -> tuple[int, ...] | None:
        if ids is None:
            self._tokenizes = False
            log.info("%r: the server did not say how it tokenized the prompt; not asked again", self)
        return ids

    def _post(self, url: str, body: object) -> object:
        import openai

        try:
            client = self.client.with_options(max_retries=0, timeout=_LOOKUP_SECONDS)
            return client.post(url, body=body, cast_to=object)
        except (openai.OpenAIError, ValueError) as exc:
            log.info("%r: POST %s failed: %s", self, safe_url(url), scrub(str(exc)))
            return None

    async def _apost(self, url: str, body: object) -> object:
        import openai

        try:
            client = (await self._aclient()).with_options(max_retries=0, timeout=_LOOKUP_SECONDS)
            return await client.post(url, body=body, cast_to=object)
        except (openai.OpenAIError, ValueError) as exc:
            log.info("%r: POST %s failed: %s", self, safe_url(url), scrub(str(exc)))
            return None

    async def _aclient(self) -> openai.AsyncOpenAI:
        """The async client: the one given, or one per event loop, built from the sync client's settings.

        One per loop because connections belong to the loop that opened them: a backend used by
        two `asyncio.run(...)` calls in turn must not reuse the first loop's connections. Each is
        closed when its loop shuts down its async generators (asyncio.run does), so no socket is
        left open behind a closed loop.
        """
        if self._async_client is not None:
            return self._async_client
        loop = asyncio.get_running_loop()
        held = self._async_clients.get(loop)
        if held is None:
            import openai

            sync = self.client
            client = openai.AsyncOpenAI(
                base_url=sync.base_url, api_key=sync.api_key, timeout=sync.timeout, max_retries=sync.max_retries
            )
            held = self._async_clients[loop] = (client, _closed_with_its_loop(client))
            await anext(held[1])  # started in this loop, so this loop will close it
        return held[0]

    _path: str  # the endpoint, under the base URL

    def _prompt(self, request: Request) -> dict[str, Any]:
        raise NotImplementedError

    def _arguments(self, request: Request) -> dict[str, Any]:
        arguments: dict[str, Any] = {"model": self.name, "max_tokens": request.max_tokens, **self._prompt(request)}
        if self.temperature is not None:
            arguments["temperature"] = self.temperature
        if request.seed is not None:
            arguments["seed"] = request.seed
        if self.send_stop and request.stop:
            arguments["stop"] = list(request.stop)
        body = dict(self.extra_body)
        grammar = self._grammar_sent(request)
        if grammar and self.server is not None:
            body.update(wire.grammar_fields(self.server, grammar, self.identity.version))
        if self.token_ids:  # streamed or not: a stream's chunks carry their tokens' share
            body.update(wire.token_fields(self.server, chat=self.api == "chat"))
        if body:
            arguments["extra_body"] = body
        if self.stream:
            arguments["stream"] = True
            arguments["stream_options"] = {"include_usage": True}
        return arguments

    def _stop_rejected(self, exc: Exception, arguments: dict[str, Any]) -> bool:
        """Whether a 400 rejected the `stop` this request sent; if so, never send it again."""
        import openai

        if not isinstance(exc, openai.BadRequestError) or "stop" not in arguments or not wire.names_stop(exc):
            return False
        if self.send_stop:
            log.info("%r rejected `stop`; not sending it to this model again (replies are still cut here)", self)
        self.send_stop = False
        return True

    @contextlib.contextmanager
    def _failures(self) -> Iterator[None]:
        """Turn every failure of a call into ModelError (ContextLengthError when it did not fit)."""
        import openai

        try:
            yield
        except openai.APITimeoutError as exc:
            raise ModelError(scrub(f"{self.url} did not answer in time ({exc})")) from exc
        except openai.APIConnectionError as exc:
            cut = _cut(exc)
            if cut is not None:  # reached, and answering: not "could not reach"
                received, expected = cut
                said = f" after {received} of {expected} bytes" if received is not None else ""
                raise ModelError(
                    scrub(f"the answer from {self.url} was cut short{said} (the connection closed before its end)")
                ) from exc
            raise ModelError(scrub(f"could not reach {self.url}: {exc}")) from exc
        except openai.APIStatusError as exc:
            words = wire.error_words(exc)
            failure = self._context_failure(words, exc.body)
            raise failure(scrub(f"{self.url} answered {exc.status_code}: {words}")) from exc
        except openai.APIError as exc:  # an error event inside a 200 stream
            failure = self._context_failure(exc.message, exc.body)
            raise failure(scrub(f"{self.url} sent an error: {exc.message}")) from exc
        except wire.Stalled as exc:
            raise ModelError(scrub(f"{self.url} did not answer in time ({exc})")) from exc
        except (openai.OpenAIError, ValueError, UnicodeDecodeError) as exc:  # wire.Malformed is a ValueError
            raise ModelError(scrub(f"bad answer from {self.url}: {exc}")) from exc

    def _context_failure(self, *said: object) -> Callable[[str], ModelError]:
        """ContextLengthError when the server says the prompt did not fit, learning the window
        from its words when it could not say it before (llama-cpp-python's server has no /props)."""
        if not wire.exceeds_context(*said):
            return ModelError
        window = wire.window_said(*said)
        if window is not None and self._window in (_UNKNOWN, None):
            log.info("%r: its context window is %d tokens, as its error says", self, window)
            self._window = window
        return functools.partial(ContextLengthError, window=window, prompt_tokens=wire.prompt_said(*said))

    # -- the context window, asked once (or learned from a context-length error) --------------------

    @property
    def context_window(self) -> int | None:
        """The server's context window in tokens, or None when it cannot say. Asked once; never raises.

        A context-length error that names the window (most do) also sets it, when it was unknown."""
        if self._window is _UNKNOWN:
            self._window = self._found(_drive(wire.window_plan(str(self.client.base_url), self.name), self._get))
        return self._window

    async def acontext_window(self) -> int | None:
        """`context_window`, asked over the async client: once, however many runs ask at the same
        time (a thousand episodes starting together wait for the one look-up)."""
        if self._window is _UNKNOWN:
            loop = asyncio.get_running_loop()
            lookup = self._lookups.get(loop)
            if lookup is None:
                lookup = self._lookups[loop] = loop.create_task(self._alookup())
            await asyncio.shield(lookup)
        return self._window

    async def _alookup(self) -> None:
        window = await _adrive(wire.window_plan(str(self.client.base_url), self.name), self._aget)
        if self._window is _UNKNOWN:
            self._window = self._found(window)

    def _found(self, window: int | None) -> int | None:
        if window is None:
            log.info("%r does not say its context window", self)
        return window

    def _get(self, url: str, *, quiet: bool = False) -> object:
        """A look-up's answer (the window, what the server is), or what its failure comes to."""
        import openai

        try:
            return self.client.with_options(max_retries=0, timeout=_LOOKUP_SECONDS).get(url, cast_to=object)
        except (openai.OpenAIError, ValueError) as exc:
            return self._unanswered(url, exc, quiet=quiet)

    async def _aget(self, url: str, *, quiet: bool = False) -> object:
        import openai

        try:
            client = (await self._aclient()).with_options(max_retries=0, timeout=_LOOKUP_SECONDS)
            return await client.get(url, cast_to=object)
        except (openai.OpenAIError, ValueError) as exc:
            return self._unanswered(url, exc, quiet=quiet)

    def _unanswered(self, url: str, exc: Exception, *, quiet: bool) -> object:
        """What a failed look-up comes to: for a probe (`quiet`), UNREACHABLE when the server could
        not be reached and None when it answered otherwise (a 404 is an answer: this server is not
        the one that path is for, and it is not logged); for the window, None."""
        import openai

        reached = not isinstance(exc, openai.APIConnectionError)  # a timeout is one too
        if not (quiet and reached):
            log.info("%r: GET %s failed: %s", self, safe_url(url), scrub(str(exc)))
        return identify.UNREACHABLE if quiet and not reached else None


class OpenAIChat(_OpenAIBackend):
    """A chat model over `/v1/chat/completions`."""

    api: Api = "chat"

    _path = "/chat/completions"

    def _prompt(self, request: Request) -> dict[str, Any]:
        if isinstance(request.prompt, str):
            raise TypeError("OpenAIChat takes chat messages, not a transcript")
        return {"messages": [{"role": m.role, "content": m.content} for m in request.prompt]}


class OpenAICompletion(_OpenAIBackend):
    """A completion-only model over the legacy `/v1/completions` endpoint."""

    api: Api = "completion"

    _path = "/completions"

    def _prompt(self, request: Request) -> dict[str, Any]:
        if not isinstance(request.prompt, str):
            raise TypeError("OpenAICompletion takes a transcript string, not chat messages")
        return {"prompt": request.prompt}


# What the engine writes in every request itself, and what to use instead: in `extra_body` each
# would replace it (the body is the arguments updated with extra_body), so the planned allowance,
# the prompt, the stop sequences or the run's seed would be lost without a word.
_ENGINE_FIELDS = {
    "model": "it is the backend's first argument",
    "messages": "the run writes the prompt",
    "prompt": "the run writes the prompt",
    "max_tokens": "the engine plans each call's allowance (set Limits(reply_tokens=...))",
    "max_completion_tokens": "the engine plans each call's allowance (set Limits(reply_tokens=...))",
    "stop": "the engine sends the protocol's stop sequences (send_stop=False sends none)",
    "stream": "give stream=True",
    "stream_options": "give stream=True",
    "temperature": "give temperature=...",
    "seed": "a run sends its own (agent.run(task, seed=...))",
    "n": "a run reads one reply a call; more would be billed and never read",
}


def _check_options(
    model: object,
    *,
    base_url: object,
    api_key: object,
    timeout: object,
    max_retries: object,
    extra_body: object,
    flags: dict[str, object],
) -> None:
    """The options of OpenAIChat and OpenAICompletion, each refused when the backend is made, naming it
    (not at the first call, as "could not reach" or an error of the client's)."""
    if not isinstance(model, str):
        raise TypeError(f"model must be the model's name on the server, as text, not {model!r}")
    if not model.strip():
        raise ValueError("model is empty: give the model's name on the server")
    if base_url is not None:
        _check_url("base_url", base_url)
    elif os.environ.get("OPENAI_BASE_URL"):  # where the client goes without base_url
        _check_url("OPENAI_BASE_URL", os.environ["OPENAI_BASE_URL"])
    if api_key is not None and not isinstance(api_key, str):
        raise TypeError(f"api_key must be text or None, not {type(api_key).__name__}")  # never the value: a secret
    if timeout is not None:
        if isinstance(timeout, bool) or not isinstance(timeout, int | float):
            raise TypeError(f"timeout must be a number of seconds or None, not {timeout!r}")
        if not (0 < timeout < float("inf")):
            raise ValueError(f"timeout must be a positive number of seconds or None, not {timeout!r}")
    if isinstance(max_retries, bool) or not isinstance(max_retries, int):
        raise TypeError(f"max_retries must be a whole number, not {max_retries!r}")
    if max_retries < 0:
        raise ValueError(f"max_retries must be 0 or more, not {max_retries}")
    for option, value in flags.items():
        if not isinstance(value, bool):
            raise TypeError(f"{option} must be True or False, not {value!r}")
    if extra_body is not None:
        if not isinstance(extra_body, dict):
            raise TypeError(
                f"extra_body must be a dict of fields to add to every request, not {type(extra_body).__name__}"
            )
        for key in extra_body:
            if not isinstance(key, str):
                raise TypeError(f"extra_body's fields are named by text, not {key!r}")
            if key in _ENGINE_FIELDS:
                raise ValueError(f"extra_body may not set {key!r}: {_ENGINE_FIELDS[key]}")


def _check_url(option: str, url: object) -> None:
    if not isinstance(url, str):
        raise TypeError(f"{option} must be the server's URL, as text, not {url!r}")
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        shown = scrub(safe_url(url))
        hint = f"http://{shown}" if "://" not in url and url.strip() else "http://127.0.0.1:8000/v1"
        raise ValueError(f"{option} must be an http:// or https:// URL, not {shown!r} (say {hint})")


# -- driving a plan: what to send, free of I/O (`_plan`, identify.plan, wire.window_plan), carried out
# by the sync or the async client, as httpx's clients drive one auth flow. All but the `await`.

_Asked = TypeVar("_Asked")
_Answer = TypeVar("_Answer")
_Found = TypeVar("_Found")


def _drive(
    plan: Generator[_Asked, _Answer | Exception, _Found],
    carry: Callable[[_Asked], _Answer],
    caught: tuple[type[Exception], ...] = (),
) -> _Found:
    """Run `plan`: each thing it asks, carried out, and sent back (or the `caught` error it raised)."""
    try:
        asked = next(plan)
        while True:
            try:
                answer: _Answer | Exception = carry(asked)
            except caught as exc:
                answer = exc
            asked = plan.send(answer)
    except StopIteration as done:
        return typing.cast(_Found, done.value)


async def _adrive(
    plan: Generator[_Asked, _Answer | Exception, _Found],
    carry: Callable[[_Asked], Awaitable[_Answer]],
    caught: tuple[type[Exception], ...] = (),
) -> _Found:
    """`_drive`, awaiting each thing carried out."""
    try:
        asked = next(plan)
        while True:
            try:
                answer: _Answer | Exception = await carry(asked)
            except caught as exc:
                answer = exc
            asked = plan.send(answer)
    except StopIteration as done:
        return typing.cast(_Found, done.value)


def _retried() -> tuple[type[Exception], ...]:
    """The failures of one try that `_plan` is sent, to decide whether to send again."""
    import openai

    return (openai.BadRequestError, openai.APIConnectionError, wire.EmptyStream)


def _cut(exc: BaseException) -> tuple[int | None, int | None] | None:
    """How many of how many bytes came of an answer cut short (the server closed the connection
    before its end), from what `exc` was raised from: the lean path's Cut, or httpx's words; None
    when it was no such thing."""
    cause = exc.__cause__
    while cause is not None:
        if isinstance(cause, http1.Cut):
            return cause.received, cause.expected
        said = wire.cut_said(str(cause))
        if said is not None:
            return said
        cause = cause.__cause__ or cause.__context__
    return None


_LoopClient = tuple["openai.AsyncOpenAI", AsyncGenerator[None, None]]


async def _closed_with_its_loop(client: openai.AsyncOpenAI) -> AsyncGenerator[None, None]:
    try:
        yield
    finally:
        await client.close()


@dataclass(frozen=True, slots=True)
class _Lean:
    """Where the lean path sends a backend's requests: a plain-HTTP server, the head prepared once."""

    host: str
    port: int
    head: bytes  # request line and headers, up to Content-Length
    url: str
    timeout: float | None


def _lean(client: openai.OpenAI, path: str, timeout: float | None) -> _Lean | None:
    """The lean path for a client built here, or None where only the `openai` client can go: HTTPS
    (its certificates and TLS set-up), a proxy from the environment, headers it cannot send as they are."""
    url = urllib.parse.urlsplit(str(client.base_url))
    proxies = urllib.request.getproxies()
    if url.scheme != "http" or not url.hostname or "http" in proxies or "all" in proxies:
        return None
    headers = {k.lower(): v for k, v in client.default_headers.items() if isinstance(v, str)}
    if client.api_key:
        headers.setdefault("authorization", f"Bearer {client.api_key}")
    headers |= {"accept-encoding": "identity", "connection": "keep-alive"}
    port = url.port or 80
    target = f"{url.path.rstrip('/')}{path}"
    lines = [f"POST {target} HTTP/1.1", f"host: {url.hostname}:{port}"] + [f"{k}: {v}" for k, v in headers.items()]
    if any("\r" in line or "\n" in line for line in lines):
        return None
    head = "".join(f"{line}\r\n" for line in lines).encode("latin-1", "replace")
    return _Lean(url.hostname, port, head, f"http://{url.hostname}:{port}{target}", timeout)


def _body(arguments: dict[str, Any]) -> dict[str, Any]:
    """The JSON body of a request: the arguments, with `extra_body` merged in as the client merges it."""
    body = {k: v for k, v in arguments.items() if k != "extra_body"}
    body.update(arguments.get("extra_body") or {})
    return body


def _decoded(answer: http1.Answer) -> object:
    """A 200 answer's JSON, or its text when it is not JSON or not said to be (as the client hands
    it over: it reads JSON only under a Content-Type ending in `json`)."""
    text = answer.body.decode("utf-8", "replace")
    if not answer.headers.get("content-type", "*").split(";")[0].strip().endswith("json"):
        return text
    try:
        return json.loads(answer.body)
    except ValueError:
        return text


def _httpx() -> Any:
    """The HTTP library of the installed `openai` (httpx2 for 3.x, httpx before), for its errors' requests."""
    try:
        import httpx2

        return httpx2
    except ImportError:  # pragma: no cover - openai before 3.x
        import httpx

        return httpx


class _Watched:
    """A streamed response whose bytes are watched: a server that goes on sending bytes with no
    text in them (keep-alive comments, empty chunks) for the client's read timeout raises
    `wire.Stalled` at the next bytes, as a silent one times out in the client. Everything else
    is the response's own."""

    def __init__(self, response: Any, reading: wire.StreamReading, seconds: float | None) -> None:
        self._response = response
        self._reading = reading
        self._seconds = seconds
        self._texts = -1
        self._since = time.monotonic()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._response, name)

    def _check(self) -> None:
        if self._seconds is None:
            return
        now = time.monotonic()
        if self._reading.texts != self._texts:
            self._texts, self._since = self._reading.texts, now
        elif now - self._since > self._seconds:
            raise wire.Stalled(f"its stream sent no text for {self._seconds:g} seconds")

    def iter_bytes(self, *args: Any, **kwargs: Any) -> Iterator[bytes]:
        for piece in self._response.iter_bytes(*args, **kwargs):
            self._check()
            yield piece

    async def aiter_bytes(self, *args: Any, **kwargs: Any) -> AsyncIterator[bytes]:
        async for piece in self._response.aiter_bytes(*args, **kwargs):
            self._check()
            yield piece


def _read_seconds(timeout: object) -> float | None:
    """The read timeout of a client's `timeout` (seconds, or an httpx Timeout); None: none."""
    read = getattr(timeout, "read", timeout)
    return float(read) if isinstance(read, (int, float)) and not isinstance(read, bool) else None


def _where(server: wire.Server) -> str:
    return ("in " + identify.FIELDS[server]) if server in wire.GRAMMAR_SERVERS else identify.FIELDS[server]
