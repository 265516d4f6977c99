"""ScriptedModel: a model that returns given replies in order, for tests and teaching."""

from __future__ import annotations

import asyncio
import threading
import warnings
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar

from react_text.core.errors import ContextLengthError, ModelError
from react_text.core.model_info import ReplyDelta, bundled_encoding
from react_text.core.types import Api, Message, Reply, Request, Usage

__all__ = [
    "PerRun",
    "Prompt",
    "ScriptedModel",
]

Prompt = tuple[Message, ...] | str
_TIPS = 256  # conversations remembered


def _extends(prompt: Prompt, tip: Prompt, again: bool) -> bool:
    """Whether `prompt` continues the conversation whose last request was `tip` (the forced-final
    note may have joined the tip's last message, and a transcript's last line, the cue the model
    continued, may have been written again); `again`: or asks it again, unchanged."""
    if prompt == tip:
        return again
    if isinstance(prompt, str) and isinstance(tip, str):
        line = tip.rfind("\n")
        return prompt.startswith(tip[: line + 1] if line != -1 else tip)
    if isinstance(prompt, str) or isinstance(tip, str):
        return False
    return len(prompt) > len(tip) and prompt[: len(tip) - 1] == tip[:-1]


def _extended(tips: list[Prompt], prompt: Prompt, again: bool = True) -> int | None:
    """The conversation (an index in `tips`) that `prompt` continues: the longest; None: a new one."""
    found = [i for i, tip in enumerate(tips) if _extends(prompt, tip, again)]
    return max(found, key=lambda i: (len(tips[i]), -i)) if found else None


@dataclass
class ScriptedModel:
    """Returns `replies` one per call, in order; records every request in `calls`.

    A reply may be a string, a `Reply` (to report usage or a finish reason), or an exception,
    which is raised from that call (a `ModelError` plays a server failure). Calling past the end
    of the script raises ModelError, so a run that asks for more than was scripted ends with
    stop_reason "model_error" and says why. `generate` and `agenerate` share the script and
    `calls`; both are safe when many episodes (threads or tasks) call one model at once.

    Like a server, it never returns more than the reply allowance: a longer reply is cut and its
    finish_reason is "length". `tokenizer` plays the server's own tokenizer (any `str -> int`):
    with it, the allowance is counted with it, and replies report usage in it (the prompt as sent,
    each chat message costing `message_overhead` more; the completion as returned), so a test can
    play a server that counts differently from the engine's estimate. Without it, the allowance is
    counted in cl100k_base and usage is left unreported. A `Reply` with its own usage keeps it.

    `context_window` plays a server's window: it is reported as the model's, and a request whose
    prompt and allowance do not fit raises ContextLengthError without using a scripted reply.

    `accepts_prefill=True` plays a model that continues a turn already begun (as `LocalModel`
    does): each scripted reply is what it writes after the request's prefill, and the reply's text
    is the prefill and then the scripted reply.

    `stream_reply` (and `astream_reply`) plays a streaming server: the reply `generate` gives, in
    deltas cut as `chunks` says: None, one delta; a number, pieces of that many characters; a
    function of the text, the pieces it gives (they must join to the text). A Reply's reasoning
    comes first, cut the same way, as reasoning deltas.
    """

    replies: Iterable[str | Reply | BaseException]
    api: Api = "chat"
    name: str = "scripted"
    accepts_grammar: bool = False
    tokenizer: Callable[[str], int] | None = None
    message_overhead: int = 4  # the server's tokens around each chat message (counted with `tokenizer`)
    context_window: int | None = None
    accepts_prefill: bool = False
    chunks: int | Callable[[str], Iterable[str]] | None = None  # how stream_reply cuts a reply
    provider: ClassVar[str] = "react_text.scripted"  # what model_info reads
    in_process: ClassVar[bool] = True
    calls: list[Request] = field(default_factory=list, init=False)

    def __post_init__(self) -> None:
        self._script = _script(self.replies)
        _check(self)
        self._served = 0
        self._lock = threading.Lock()
        self._tips: list[Prompt] = []  # the latest request of each conversation seen (to notice sharing)
        self._warned = False

    @classmethod
    def per_run(cls, replies: Iterable[str | Reply | BaseException], **options: Any) -> PerRun:
        """A model that gives every run a script of its own: `replies` from the start, whatever other
        runs (threads or tasks) use the same agent at the same time. See `PerRun`."""
        return PerRun(_script(replies), options)

    def generate(self, request: Request) -> Reply:
        if self.api == "chat" and isinstance(request.prompt, str):
            raise TypeError("a chat ScriptedModel was sent a transcript string")
        if self.api == "completion" and not isinstance(request.prompt, str):
            raise TypeError("a completion ScriptedModel was sent chat messages")
        counted = self.tokenizer is not None or self.context_window is not None
        prompt = self._prompt_tokens(request) if counted else 0  # counted only when it is used
        if self.context_window is not None and prompt + request.max_tokens > self.context_window:
            with self._lock:
                self.calls.append(request)
            raise ContextLengthError(
                f"This model's maximum context length is {self.context_window} tokens. However, you requested "
                f"{prompt + request.max_tokens} tokens ({prompt} in the messages, "
                f"{request.max_tokens} in the completion).",
                window=self.context_window,
                prompt_tokens=prompt,
            )
        with self._lock:  # one call takes one reply, whatever the threads
            self._notice(request.prompt)
            self.calls.append(request)
            if self._served >= len(self._script):
                raise ModelError(f"the script has {len(self._script)} replies; call {len(self.calls)}")
            item = self._script[self._served]
            self._served += 1
        if isinstance(item, BaseException):
            raise item
        reply = item if isinstance(item, Reply) else Reply(item)
        text = self._within(reply.text, request.max_tokens)
        usage = reply.usage
        if usage is None and self.tokenizer is not None:
            usage = Usage(prompt, self.tokenizer(text))
        finish = "length" if text != reply.text else reply.finish_reason
        if self.accepts_prefill:
            text = f"{request.prefill}{text}"
        return replace(reply, text=text, usage=usage, finish_reason=finish)

    async def agenerate(self, request: Request) -> Reply:
        """`generate`, for async runs; it lets other tasks run first, as a server call would."""
        await asyncio.sleep(0)
        return self.generate(request)

    def stream_reply(self, request: Request) -> Iterator[ReplyDelta | Reply]:
        """`generate`'s reply, in deltas cut as `chunks` says, then the reply."""
        reply = self.generate(request)
        yield from _deltas(reply, self.chunks)
        yield reply

    async def astream_reply(self, request: Request) -> AsyncIterator[ReplyDelta | Reply]:
        """`stream_reply`, for `async for`: it lets other tasks run before each delta."""
        await asyncio.sleep(0)
        reply = self.generate(request)
        for piece in _deltas(reply, self.chunks):
            await asyncio.sleep(0)
            yield piece
        yield reply

    async def acontext_window(self) -> int | None:
        return self.context_window

    def count_tokens(self, text: str) -> int:
        """The engine's count for this model: cl100k_base, exactly (whatever `tokenizer` is)."""
        return len(bundled_encoding("cl100k_base").encode(text, disallowed_special=()))

    def _notice(self, prompt: Prompt) -> None:
        """Warn (once) when requests of two conversations interleave: one script shared by runs at once."""
        index = _extended(self._tips, prompt)
        if index is None:
            self._tips = [*self._tips[-(_TIPS - 1) :], prompt]
            return
        latest = len(self._tips) - 1
        if index != latest and _extends(prompt, self._tips[latest], True):
            index = latest  # two runs one after the other with the same conversation: no interleaving
        if index != latest and not self._warned:
            self._warned = True
            warnings.warn(
                "one ScriptedModel is answering several runs at once: its replies go out in call order "
                "across them; give each run its own script with ScriptedModel.per_run(replies)",
                RuntimeWarning,
                stacklevel=4,
            )
        self._tips[index] = prompt

    @property
    def unused(self) -> int:
        """How many scripted replies were never asked for."""
        return max(0, len(self._script) - self._served)

    def assert_all_used(self) -> None:
        """Fail when the run ended before every scripted reply was used."""
        if self.unused:
            raise AssertionError(f"{self.unused} of {len(self._script)} scripted replies unused")

    def _prompt_tokens(self, request: Request) -> int:
        """The prompt as the server counts it."""
        count = self.tokenizer or self.count_tokens
        if isinstance(request.prompt, str):
            return count(request.prompt)
        return sum(count(m.content) + self.message_overhead for m in request.prompt)

    def _within(self, text: str, allowance: int) -> str:
        """The longest start of `text` that fits the allowance, counted as the server counts."""
        if self.tokenizer is None:
            enc = bundled_encoding("cl100k_base")
            tokens = enc.encode(text, disallowed_special=())
            return text if len(tokens) <= allowance else enc.decode(tokens[:allowance])
        count = self.tokenizer
        if count(text) <= allowance:
            return text
        low, high = 0, len(text)  # count(text[:low]) fits, count(text[:high]) does not
        while high - low > 1:
            middle = (low + high) // 2
            low, high = (middle, high) if count(text[:middle]) <= allowance else (low, middle)
        return text[:low]


def _script(replies: object) -> list[str | Reply | BaseException]:
    """The replies as a list, checked: a string alone would be played one character a call."""
    if isinstance(replies, str | bytes) or not isinstance(replies, Iterable):
        hint = f" (ScriptedModel([{replies!r:.40}]))" if isinstance(replies, str) else ""
        raise TypeError(
            f"ScriptedModel takes its replies as a list, one per call{hint}, "
            f"not {type(replies).__name__} {replies!r:.40}"
        )
    script = list(replies)
    for number, item in enumerate(script, 1):
        if not isinstance(item, str | Reply | BaseException):
            raise TypeError(
                f"ScriptedModel's replies are texts, Replies or exceptions (ModelError(...)); reply {number} "
                f"is {type(item).__name__} {item!r:.40}"
            )
    return script


def _deltas(reply: Reply, chunks: int | Callable[[str], Iterable[str]] | None) -> list[ReplyDelta]:
    """A reply's reasoning and text as deltas, cut as `chunks` says."""
    out: list[ReplyDelta] = []
    for text, reasoning in ((reply.reasoning or "", True), (reply.text, False)):
        if chunks is None:
            pieces = [text] if text else []
        elif isinstance(chunks, int):
            pieces = [text[i : i + chunks] for i in range(0, len(text), chunks)]
        else:
            pieces = list(chunks(text))
            if "".join(pieces) != text or not all(isinstance(p, str) for p in pieces):
                raise ValueError(f"ScriptedModel.chunks gave pieces that are not the reply's text: {pieces!r:.80}")
        out += [ReplyDelta(p, reasoning) for p in pieces if p]
    return out


def _check(model: ScriptedModel) -> None:
    """The options of a ScriptedModel, each refused when made, naming it."""
    if model.api not in ("chat", "completion"):
        raise ValueError(f"ScriptedModel.api must be 'chat' or 'completion', not {model.api!r}")
    if not isinstance(model.name, str):
        raise TypeError(f"ScriptedModel.name must be text, not {model.name!r}")
    for option in ("accepts_grammar", "accepts_prefill"):
        if not isinstance(getattr(model, option), bool):
            raise TypeError(f"ScriptedModel.{option} must be True or False, not {getattr(model, option)!r}")
    if model.tokenizer is not None and not callable(model.tokenizer):
        raise TypeError(
            f"ScriptedModel.tokenizer must be a function from text to tokens or None, not {model.tokenizer!r}"
        )
    _at_least("message_overhead", model.message_overhead, 0)
    chunks = model.chunks
    if isinstance(chunks, bool) or not (chunks is None or callable(chunks) or (isinstance(chunks, int) and chunks > 0)):
        raise TypeError(
            f"ScriptedModel.chunks must be a number of characters (1 or more), a function or None, not {chunks!r}"
        )
    if model.context_window is not None:
        _at_least("context_window", model.context_window, 1)


def _at_least(option: str, value: object, least: int) -> None:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"ScriptedModel.{option} must be a whole number of tokens, not {value!r}")
    if value < least:
        raise ValueError(f"ScriptedModel.{option} must be at least {least}, not {value}")


class PerRun:
    """A script per run: each run (told apart by its conversation, which only grows) is answered
    by a ScriptedModel of its own, made from `replies` when the run's first request comes. Runs of
    one agent may go on at once, in threads or tasks. `calls` holds every request; `scripts`, each
    run's model. A run whose history was elided reads as a new conversation (it starts the script
    again): give such a test a window its steps fit in, or a ScriptedModel of its own."""

    provider: ClassVar[str] = ScriptedModel.provider
    in_process: ClassVar[bool] = True

    def __init__(self, replies: list[str | Reply | BaseException], options: dict[str, Any]) -> None:
        self._replies = replies
        self._options = options
        # what every run's model shares (its name, window, counting) is this one's: asked of it
        self._like = ScriptedModel(replies, **options)
        self.api, self.name, self.accepts_grammar = self._like.api, self._like.name, self._like.accepts_grammar
        self.context_window = self._like.context_window
        self.accepts_prefill = self._like.accepts_prefill
        self.scripts: list[ScriptedModel] = []
        self._tips: list[Prompt] = []
        self._lock = threading.Lock()

    def generate(self, request: Request) -> Reply:
        return self._script(request.prompt).generate(request)

    async def agenerate(self, request: Request) -> Reply:
        return await self._script(request.prompt).agenerate(request)

    def stream_reply(self, request: Request) -> Iterator[ReplyDelta | Reply]:
        return self._script(request.prompt).stream_reply(request)

    def astream_reply(self, request: Request) -> AsyncIterator[ReplyDelta | Reply]:
        return self._script(request.prompt).astream_reply(request)

    async def acontext_window(self) -> int | None:
        return await self._like.acontext_window()

    def count_tokens(self, text: str) -> int:
        return self._like.count_tokens(text)

    @property
    def calls(self) -> list[Request]:
        return [call for script in self.scripts for call in script.calls]

    def assert_all_used(self) -> None:
        for script in self.scripts:
            script.assert_all_used()

    def _script(self, prompt: Prompt) -> ScriptedModel:
        with self._lock:
            index = _extended(self._tips, prompt, again=False)  # an unchanged first request is another run's
            if index is None:
                self.scripts.append(ScriptedModel(self._replies, **self._options))
                self._tips.append(prompt)
                index = len(self._tips) - 1
            self._tips[index] = prompt
            return self.scripts[index]
