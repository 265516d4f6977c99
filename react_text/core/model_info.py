"""What a model may offer beyond the four members every model has, declared once and read once.

Every model is a `types.Model` (api, name, accepts_grammar, generate); one that can be awaited is
also a `types.AsyncModel` (agenerate). Anything more a model may offer is one of these members,
each optional, read by `describe` alone when an agent is made (the engine probes for nothing
else and matches no class names):

    member                     what it says                                       when absent
    agenerate(request)         an async call (types.AsyncModel)                   generate, on a thread
    stream_reply(request)      the reply as it is written: ReplyDelta..., Reply   generate, as one delta
    astream_reply(request)     the same, `async for` (AsyncStreamingModel)        stream_reply, on a thread
    context_window             its window in tokens (may ask the server, once)    unknown
    acontext_window()          the same, awaited                                  context_window
    count_tokens(text)         tokens in the model's own vocabulary                tiktoken by name
    recommended_limits         the Limits it runs best with                       Limits()
    recommended_prompting      the Prompting it runs best with                    Prompting()
    provider                   who serves it, as telemetry names it               the class's name
    url                        the server's URL, without credentials              none: no server
    in_process                 it runs in this process, not on a server           False
    grammar                    it was built to send the grammar (grammar=True)    False
    think                      under the grammar, a <think> block may come first  False
    serial                     its calls run one at a time (llama.cpp)            False
    stream                     it streams replies                                 False
    identity                   what its server is (`.server`: "llama.cpp", ...)   not said
    accepts_prefill            it continues a turn begun with `Request.prefill`   False

The backends declare theirs; a model of the user's own may declare any of them.

A model that streams (`StreamingModel`, `AsyncStreamingModel`) gives each piece of the reply as
it comes, a `ReplyDelta` (`reasoning=True`: the server's reasoning channel), and last the whole
`Reply`, the one `generate` would have returned: the run reads that Reply, and the deltas only show
it early (`Agent.stream`). A model without `stream_reply` is streamed as one delta (`whole`).

`grammar_on` is the one place that decides whether a run sends the protocol grammar; `no_grammar`
says, without asking a server, when a run certainly sends none.

A backend knows the core through types, errors and this module alone (tests/test_layout_backends.py):
so the values a recommendation is written in (`Limits`, `Prompting`), the smallest window a run can
use (`MIN_CONTEXT_TOKENS`) and the engine's own bundled tokenizer (`bundled_encoding`, for a stand-in
that counts as the engine does) are handed over here.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from concurrent.futures import Executor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable

from react_text.core.limits import MIN_CONTEXT_TOKENS, Limits
from react_text.core.types import Model, Reply, Request
from react_text.prompting import Prompting

if TYPE_CHECKING:
    import tiktoken

__all__ = [
    "MIN_CONTEXT_TOKENS",
    "AsyncStreamingModel",
    "Limits",
    "ModelInfo",
    "Prompting",
    "ReplyDelta",
    "StreamingModel",
    "bundled_encoding",
    "describe",
    "grammar_on",
    "no_grammar",
    "threaded",
    "whole",
]

Counter = Callable[[str], int]
_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class ReplyDelta:
    """A piece of a reply as the model writes it: text, or the server's reasoning channel (`reasoning`)."""

    text: str
    reasoning: bool = False


@runtime_checkable
class StreamingModel(Model, Protocol):
    """A model that gives its reply as it is written: `ReplyDelta`s, then the whole `Reply` (last,
    once): what `generate` would have returned, its text the text deltas joined as far as the model
    knows them (a backend that cuts a reply may say less in its deltas than its Reply holds, never more)."""

    def stream_reply(self, request: Request) -> Iterator[ReplyDelta | Reply]: ...


@runtime_checkable
class AsyncStreamingModel(Model, Protocol):
    """`StreamingModel`, for `async for`."""

    def astream_reply(self, request: Request) -> AsyncIterator[ReplyDelta | Reply]: ...


def whole(reply: Reply) -> Iterator[ReplyDelta | Reply]:
    """A reply given whole, as a stream: its reasoning and its text as one delta each, then the reply."""
    if reply.reasoning:
        yield ReplyDelta(reply.reasoning, reasoning=True)
    if reply.text:
        yield ReplyDelta(reply.text)
    yield reply


async def threaded(make: Callable[[], Iterator[_T]], worker: Executor | None = None) -> AsyncIterator[_T]:
    """The items of the iterator `make()` gives, made on `worker` (a thread; None: the loop's
    default), as they come; let go early, the iterator is closed at its next item."""
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[tuple[int, Any]] = asyncio.Queue()
    stop = threading.Event()

    def pump() -> None:
        put = queue.put_nowait
        try:
            items = make()
            try:
                for item in items:
                    if stop.is_set():
                        break
                    loop.call_soon_threadsafe(put, (0, item))
            finally:
                close = getattr(items, "close", None)
                if close is not None:
                    close()
        except BaseException as exc:  # noqa: BLE001 - raised where the items are read
            loop.call_soon_threadsafe(put, (1, exc))
            return
        loop.call_soon_threadsafe(put, (2, None))

    future = loop.run_in_executor(worker, pump)
    try:
        while True:
            kind, item = await queue.get()
            if kind == 1:
                raise item
            if kind == 2:
                break
            yield item
    finally:
        stop.set()
        await asyncio.shield(future)


@dataclass(frozen=True, slots=True)
class ModelInfo:
    """What a model offers, read once (see the module's table)."""

    provider: str
    url: str | None = None
    in_process: bool = False
    grammar: bool = False  # built to send the grammar (a server backend's grammar=True)
    think: bool = False  # built with think=True: under the grammar, a <think> block may come first
    serial: bool = False
    stream: bool = False
    prefill: bool = False  # it takes Request.prefill (accepts_prefill)
    asynchronous: bool = False  # it has agenerate
    streams: bool = False  # it has stream_reply
    astreams: bool = False  # it has astream_reply
    limits: Limits | None = None  # recommended
    prompting: Prompting | None = None  # recommended
    count_tokens: Counter | None = None
    window: Callable[[], int | None] | None = None  # looks its context window up (once, at most)
    awindow: Callable[[], Awaitable[int | None]] | None = None
    server: Callable[[], str | None] | None = None  # what its server is ("llama.cpp", ...; may ask it, once)


def describe(model: Model) -> ModelInfo:
    """The one reader of a model's optional members. `context_window` is only found here, not read
    (reading it may ask the server): `ModelInfo.window` reads it when a run needs it; so is
    `identity` (`ModelInfo.server`)."""
    provider = getattr(model, "provider", None)
    url = getattr(model, "url", None)
    limits = getattr(model, "recommended_limits", None)
    prompting = getattr(model, "recommended_prompting", None)
    count = getattr(model, "count_tokens", None)
    awindow = getattr(model, "acontext_window", None)
    windowed = inspect.getattr_static(model, "context_window", None) is not None
    identified = inspect.getattr_static(model, "identity", None) is not None
    return ModelInfo(
        provider=provider if isinstance(provider, str) else type(model).__name__.lower(),
        url=str(url) if url else None,
        in_process=getattr(model, "in_process", False) is True,
        grammar=getattr(model, "grammar", False) is True,
        think=getattr(model, "think", False) is True,
        serial=getattr(model, "serial", False) is True,
        stream=bool(getattr(model, "stream", False)),
        prefill=getattr(model, "accepts_prefill", False) is True,
        asynchronous=_awaitable(model),
        streams=callable(getattr(model, "stream_reply", None)),
        astreams=callable(getattr(model, "astream_reply", None)),
        limits=limits if isinstance(limits, Limits) else None,
        prompting=prompting if isinstance(prompting, Prompting) else None,
        count_tokens=count if callable(count) else None,
        window=functools.partial(_window, model) if windowed else None,
        awindow=awindow if callable(awindow) else None,
        server=functools.partial(_server, model) if identified else None,
    )


def _awaitable(model: object) -> bool:
    """`isinstance(model, AsyncModel)`, as a runtime protocol checks it (every member there, a
    method not None), without the protocol machinery's cost (it lists the members again at each check)."""
    members = ("api", "name", "accepts_grammar")
    return all(hasattr(model, m) for m in members) and all(
        getattr(model, m, None) is not None for m in ("generate", "agenerate")
    )


def _server(model: object) -> str | None:
    found = getattr(getattr(model, "identity", None), "server", None)
    return found if isinstance(found, str) else None


def _window(model: object) -> int | None:
    found = getattr(model, "context_window", None)
    return found if isinstance(found, int) and not isinstance(found, bool) else None


def grammar_on(model: Model, info: ModelInfo, asked: bool | None) -> bool:
    """Whether a run constrains decoding to the protocol grammar. `asked` is `Prompting.grammar`:
    True or False decides (an agent refuses True for a model that takes no grammar). None leaves it
    to the model: on for a model in this process that accepts one (the embedded model), on for a
    server backend built with grammar=True (where its server takes one), off for every other
    server. Naming the server (`server=`) or the server saying what it is only says where a grammar
    would go: a reasoning model forced to start with THOUGHT: would be harmed without a word."""
    if asked is not None:
        return asked
    return (info.in_process or info.grammar) and model.accepts_grammar


def no_grammar(info: ModelInfo, asked: bool | None) -> bool:
    """Whether a run certainly sends no grammar, known without asking the server what it is: asked
    False, or left to a model that sends none unless asked (a server backend without grammar=True).
    `grammar_on` is False then too."""
    return asked is False or (asked is None and not (info.in_process or info.grammar))


def bundled_encoding(name: str = "cl100k_base") -> tiktoken.Encoding:
    """The engine's own tiktoken encoding `name` (bundled, no network): what it counts with for a model
    that counts none of its own. A stand-in for a server (ScriptedModel) counts and cuts with it."""
    from react_text.tokens.meter import encoding

    return encoding(name)
