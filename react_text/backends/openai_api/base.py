"""The backend that OpenAIChat and OpenAICompletion share (not part of the API): its options, what
its server is, one call sync and async (the same plan, the same reading, the same errors), and the
context window. How requests travel is `transport`'s; what a failure comes to, `failures`'."""

from __future__ import annotations

import functools
import logging
from collections.abc import AsyncIterator, Generator, Iterator
from typing import TYPE_CHECKING, Any, ClassVar

from react_text.backends import identify, wire
from react_text.backends.openai_api import lean
from react_text.backends.openai_api.drive import adrive, drive
from react_text.backends.openai_api.failures import failures
from react_text.backends.openai_api.identity import settle
from react_text.backends.openai_api.options import check_client, check_options
from react_text.backends.openai_api.plans import CallPlan, call_plan, retried
from react_text.backends.openai_api.tokens import TokenIds
from react_text.backends.openai_api.transport import Transport, make_client
from react_text.backends.openai_api.window import ContextWindow
from react_text.core.errors import safe_url
from react_text.core.model_info import ReplyDelta
from react_text.core.sampling import check_temperature
from react_text.core.types import Api, Reply, Request, Vocabulary

if TYPE_CHECKING:
    import openai

__all__ = ["Backend"]

log = logging.getLogger(__name__)


class Backend:
    """The shared transport of the two public backends (not part of the API)."""

    api: Api
    provider: ClassVar[str] = "openai"  # what model_info reads (it runs on a server: `url`)
    _path: ClassVar[str]  # the endpoint, under the base URL

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
        check_options(
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
        lean_path = None
        if client is not None:
            check_client(type(self).__name__, client, async_client)
        else:
            client = make_client(model, base_url, api_key, timeout, max_retries)
            if async_client is None:
                lean_path = lean.lean(client, self._path, timeout)
        self.client = client
        self._transport = Transport(client, async_client, lean_path, repr(self))
        # ask the server for the tokens it sampled (a reply then carries `tokens`, for trajectories)
        self._tokens = TokenIds(token_ids, tokenizer, self._transport, chat=self.api == "chat", who=repr(self))
        self._window = ContextWindow(self._transport, model, repr(self))
        self._given = server  # named by the caller: asked only what the name does not decide (vLLM's version)
        if server is not None:
            self._server = server
            if server != "vllm":
                self._identity = self._settle(drive(self._identify(), self._transport.get))

    @property
    def token_ids(self) -> bool:
        """Whether each reply carries the call as token ids (`Reply.tokens`), asked of the server."""
        return self._tokens.asked

    @token_ids.setter
    def token_ids(self, asked: bool) -> None:
        self._tokens.asked = asked

    @property
    def tokenizer(self) -> Vocabulary | None:
        """The model's tokenizer, for servers that name sampled tokens only by their text."""
        return self._tokens.tokenizer

    # -- what the server is: given, or asked once ------------------------------------------------

    @property
    def server(self) -> wire.Server | None:
        """What the server is ("llama.cpp", "vllm", "sglang", "ollama", "openai"), as given or as it
        says itself (asked once, on first use); None when it did not say."""
        if self._given is None:
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
            get = functools.partial(self._transport.get, quiet=True)
            self._identity = self._settle(drive(self._identify(), get))
        return self._identity

    async def aidentify(self) -> identify.Identity:
        """`identity`, asked over the async client."""
        if self._identity is None:
            get = functools.partial(self._transport.aget, quiet=True)
            self._identity = self._settle(await adrive(self._identify(), get))
        return self._identity

    def _identify(self) -> Generator[str, object, identify.Identity]:
        """What to ask the server of itself: all of it, or what its given name does not decide."""
        base = str(self.client.base_url)
        return identify.plan(base) if self._given is None else identify.given(base, self._given)

    def _settle(self, found: identify.Identity) -> identify.Identity:
        settled = settle(found, grammar=self._grammar_asked, who=repr(self))
        self._server = settled.server
        return settled

    def __repr__(self) -> str:  # never shows the key
        return f"{type(self).__name__}({self.name!r}, base_url={self.url!r})"

    @property
    def url(self) -> str:
        """The server's URL, fit for a message (no credentials, no query)."""
        return safe_url(self.client.base_url)

    # -- one call, sync and async: the same request, the same reading, the same errors --------

    def generate(self, request: Request) -> Reply:
        with failures(self.url, self._window.failure):
            reply = drive(self._plan(request), functools.partial(self._once, request), retried())
        return self._heard(request, reply)

    async def agenerate(self, request: Request) -> Reply:
        if request.grammar and self._identity is None:
            await self.aidentify()  # where the grammar goes, asked over this loop's client
        with failures(self.url, self._window.failure):
            reply = await adrive(self._plan(request), functools.partial(self._aonce, request), retried())
        return self._heard(request, reply)

    # -- the reply as the server writes it: the same request streamed, the same plan, reading, errors --

    def stream_reply(self, request: Request) -> Iterator[ReplyDelta | Reply]:
        """The reply as the server writes it (streamed, whatever `stream` says, with `include_usage`
        so that the last chunk reports usage where the server can): what each chunk adds, as a
        `ReplyDelta` (the reasoning channel apart), then the Reply `generate` would have returned.
        The same plan after a failure, the same reading (it stops at a made-up observation), the
        same errors; a request asked again unstreamed gives its reply whole."""
        with failures(self.url, self._window.failure):
            plan = call_plan(functools.partial(self._streamed, request), self._stop_rejected)
            caught = retried()
            asked = next(plan)
            while True:
                try:
                    answer: Reply | Exception = yield from self._stream_once(request, asked)
                except caught as exc:
                    answer = exc
                try:
                    asked = plan.send(answer)
                except StopIteration as done:
                    reply: Reply = done.value
                    break
        yield self._heard(request, reply)

    async def astream_reply(self, request: Request) -> AsyncIterator[ReplyDelta | Reply]:
        """`stream_reply`, over the async client."""
        if request.grammar and self._identity is None:
            await self.aidentify()
        with failures(self.url, self._window.failure):
            plan = call_plan(functools.partial(self._streamed, request), self._stop_rejected)
            caught = retried()
            asked = next(plan)
            while True:
                reading = self._reading(request, asked)
                answer: Reply | Exception
                try:
                    if reading is None:  # asked again unstreamed: the reply whole
                        answer = await self._aonce(request, asked)
                    else:
                        async for fresh in self._transport.astream(self._path, asked, reading):
                            for delta in _deltas(*fresh):
                                yield delta
                        served = await self._tokens.aserved(asked, self._server)
                        answer = self._reply(reading, reading, asked, served)
                except caught as exc:
                    answer = exc
                try:
                    asked = plan.send(answer)
                except StopIteration as done:
                    reply: Reply = done.value
                    break
        yield self._heard(request, reply)

    def _stream_once(self, request: Request, arguments: dict[str, Any]) -> Generator[ReplyDelta, None, Reply]:
        reading = self._reading(request, arguments)
        if reading is None:  # asked again unstreamed: the reply whole
            return self._once(request, arguments)
        for fresh in self._transport.stream(self._path, arguments, reading):
            yield from _deltas(*fresh)
        return self._reply(reading, reading, arguments, self._tokens.served(arguments, self._server))

    def _streamed(self, request: Request) -> dict[str, Any]:
        return {**self._arguments(request), "stream": True, "stream_options": {"include_usage": True}}

    def _grammar_sent(self, request: Request) -> str | None:
        """The request's grammar as this server gets it: with a free <think> block first when the
        model thinks, unless the server starts the grammar after the thinking itself (SGLang says
        so when it has a reasoning parser). The engine's rules write that block (`Request.rules`)."""
        if not request.grammar or not self.think or request.rules is None or self.identity.reasoning_parser:
            return request.grammar
        return request.rules.thinking(request.grammar)

    def _heard(self, request: Request, reply: Reply) -> Reply:
        """The reply, after saying once (a warning) that the server does not apply the grammar,
        when this reply could not have been written under the one it was sent (as the engine's
        rules judge it: without them, nothing is judged)."""
        if (
            request.grammar
            and request.rules is not None
            and not self._grammar_ignored
            and self._server in wire.GRAMMAR_SERVERS
        ):
            where = f"{self.url} ({self._server})"
            said = request.rules.ignored(
                self._grammar_sent(request) or "", reply.text, cut=reply.finish_reason == "length", where=where
            )
            if said is not None:
                self._grammar_ignored = True
                log.warning("%s", said)
        return reply

    def _plan(self, request: Request) -> CallPlan:
        """What to send, and what to send again after a failure, free of I/O (both drivers run it)."""
        return call_plan(functools.partial(self._arguments, request), self._stop_rejected)

    def _once(self, request: Request, arguments: dict[str, Any]) -> Reply:
        reading = self._reading(request, arguments)
        answer = self._transport.send(self._path, arguments, reading)
        return self._reply(answer, reading, arguments, self._tokens.served(arguments, self._server))

    async def _aonce(self, request: Request, arguments: dict[str, Any]) -> Reply:
        reading = self._reading(request, arguments)
        answer = await self._transport.asend(self._path, arguments, reading)
        return self._reply(answer, reading, arguments, await self._tokens.aserved(arguments, self._server))

    def _reading(self, request: Request, arguments: dict[str, Any]) -> wire.StreamReading | None:
        """A streamed reply's reader (None: not streamed); it stops where the engine's rules say a
        made-up observation begins, and gathers the chunks' token fields when they were asked for."""
        if not arguments.get("stream"):
            return None
        return wire.StreamReading(
            chat=self.api == "chat",
            max_tokens=arguments.get("max_tokens"),
            tokens=self.token_ids,
            cut=request.rules.cut if request.rules is not None else None,
            stop=request.stop,
        )

    def _reply(
        self, answer: object, reading: wire.StreamReading | None, arguments: dict[str, Any], served: wire.Ids
    ) -> Reply:
        """The reply of a whole answer or of a stream read, with its token ids when they were asked
        for and the answer has them (`served`: the prompt's ids as the server tokenized it)."""
        if reading is not None:
            return self._tokens.reply(reading.reply(), reading.answer(), arguments, served)
        return self._tokens.reply(wire.read_answer(answer, chat=self.api == "chat"), answer, arguments, served)

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

    # -- the context window, asked once (or learned from a context-length error) --------------------

    @property
    def context_window(self) -> int | None:
        """The server's context window in tokens, or None when it cannot say. Asked once; never raises.

        A context-length error that names the window (most do) also sets it, when it was unknown."""
        return self._window.get()

    async def acontext_window(self) -> int | None:
        """`context_window`, asked over the async client: once, however many runs ask at the same time."""
        return await self._window.aget()


def _deltas(reasoning: str, text: str) -> Iterator[ReplyDelta]:
    """What one chunk added, as deltas: its reasoning, then its text."""
    if reasoning:
        yield ReplyDelta(reasoning, reasoning=True)
    if text:
        yield ReplyDelta(text)
