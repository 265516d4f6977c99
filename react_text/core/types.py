"""The values that flow through a run: what the parser reads, what a step records, what a run returns.

Every value is a frozen dataclass; change one with `dataclasses.replace`.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

__all__ = [
    "Action",
    "Actions",
    "Api",
    "AsyncModel",
    "Final",
    "Message",
    "Model",
    "Outcome",
    "OutcomeKind",
    "ParseError",
    "ParseErrorReason",
    "Parsed",
    "Parser",
    "Reading",
    "Reply",
    "Request",
    "Role",
    "Rules",
    "RunResult",
    "Segment",
    "SegmentReason",
    "Step",
    "StopReason",
    "Tokens",
    "Trajectory",
    "Turn",
    "Usage",
]

ParseErrorReason = Literal[
    "empty",  # nothing but whitespace (or only a <think> block)
    "no_directive",  # prose with no ACTION or FINAL
    "missing_input",  # an action with no [input]
    "empty_answer",  # FINAL: with nothing after it
    "bad_action",  # an ACTION that is not tool[input] (or a JSON blob with no tool name)
    "unread_arguments",  # a tool named, with arguments the parser cannot read (never called with fewer)
]

StopReason = Literal[
    "final",  # the model gave a FINAL answer
    "max_steps",  # the step budget ran out
    "max_tokens",  # the next request could have passed the token budget
    "format_errors",  # too many unreadable replies in a row
    "model_error",  # the model or the network failed; see RunResult.error
    "declined",  # the approver asked to stop the run
    "repeats",  # the model made one call more times in a row than Limits.repeats allows
    "awaiting_approval",  # the approver answered "later": the state is saved, a resume decides (durable/)
]

Role = Literal["system", "user", "assistant"]

SegmentReason = Literal[
    "start",  # the run's first call
    "elided",  # the history was elided for the context window: the prompt was rewritten
    "template",  # a chat template rendered the conversation anew (earlier turns changed)
    "rewritten",  # the prompt did not extend what the model was last given, for another reason
]


@dataclass(frozen=True, slots=True)
class Action:
    """A request to run `tool` on `input`, the input as written (after unwrapping fences and quotes)."""

    tool: str
    input: str
    thought: str = ""
    discarded: str = ""  # the reply's text after the directive, exactly as written; not acted on
    closed: bool = True  # False when the input had no definite end (no closing bracket, ran to the end)


@dataclass(frozen=True, slots=True)
class Final:
    """The model's final answer."""

    answer: str
    thought: str = ""
    discarded: str = ""  # the reply's text after the answer, exactly as written


@dataclass(frozen=True, slots=True)
class ParseError:
    """A reply that could not be read; `message` is fit to show the model."""

    reason: ParseErrorReason
    message: str
    thought: str = ""


Parsed = Action | Final | ParseError


@dataclass(frozen=True, slots=True)
class Actions:
    """Several actions read from one reply (with `Prompting(parallel=True)`), in the order written.

    They do not depend on each other and run at once. `thought` is the first action's; each action
    keeps the thought written just before it, and its `discarded` is empty: the reply's text after
    the last action read is `discarded` here.
    """

    actions: tuple[Action, ...]
    thought: str = ""
    discarded: str = ""

    @property
    def closed(self) -> bool:
        return all(a.closed for a in self.actions)


Reading = Parsed | Actions  # what one reply is read as when parallel actions are on


@dataclass(frozen=True, slots=True)
class Message:
    role: Role
    content: str


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts, named as the OpenAI API names them."""

    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
        )

    def as_dict(self) -> dict[str, int]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
        }


@dataclass(frozen=True, slots=True)
class Request:
    """One call to a model. `prompt` is chat messages, or a transcript string for completion models.

    `prefill`: the model's turn has already begun with this text, which `prompt` does not hold. A
    backend that takes a prefill (it says so with `accepts_prefill`, see `model_info`) puts it where
    the model writes next (the end of the transcript, or an assistant turn it opens and leaves
    open), and starts the reply's text with it: `Reply.text` is the whole turn. A grammar covers
    only what the model writes after it. The engine sends one only to a model that takes it.

    `rules`: what the engine knows of the protocol that a backend may need (`Rules`), so that the
    backends know none of it themselves; None from a caller that is not the engine.
    """

    prompt: tuple[Message, ...] | str
    stop: tuple[str, ...]
    max_tokens: int
    grammar: str | None = None  # GBNF, for backends that accept one
    seed: int | None = None  # the sampling seed for this run's calls (None: the model's own)
    prefill: str = ""
    rules: Rules | None = None


class Rules(Protocol):
    """The protocol as a backend may need it, handed over by the engine with each request
    (`Request.rules`): the engine decides, the backend sends. `react_text.core.rules.RULES` is the engine's."""

    def cut(self, text: str, since: int) -> bool:
        """Whether a made-up observation begins in `text` at or after `since`: a stream stops reading there."""
        ...

    def thinking(self, grammar: str) -> str:
        """`grammar` with a free <think> block allowed before the protocol (a model built with think=True)."""
        ...

    def ignored(self, grammar: str, text: str, *, cut: bool, where: str) -> str | None:
        """None when `text` could have been written under `grammar` (or it cannot be judged); else what
        to say, once, about the server `where` that took the grammar and did not apply it. `cut`: the
        reply stopped at its allowance, so only its beginning is known."""
        ...


@dataclass(frozen=True, slots=True)
class Tokens:
    """One call as token ids, from a backend that keeps them (`LocalModel`).

    `prompt` is every id the model was given, as it evaluated them; `ids` the ids it sampled whose
    text lies wholly inside `Reply.text`, with their log-probabilities (the model's own log-softmax,
    before temperature and grammar) and where each one's text ends in `Reply.text`. `sampled`
    counts every id sampled, those past the text too (a stop sequence, the end-of-text token).
    `exact` is False, with `reason`, when the ids were derived from text rather than sampled.
    """

    prompt: tuple[int, ...]
    ids: tuple[int, ...]
    logprobs: tuple[float, ...]
    ends: tuple[int, ...]
    sampled: int
    exact: bool = True
    reason: str = ""


@dataclass(frozen=True, slots=True)
class Reply:
    """What a model returned. `usage` is None when the backend does not report it.

    `reasoning` is what a server split out of the reply (`reasoning_content`, `reasoning`); a
    reasoning model's inline `<think>` block stays in `text`. Checked when made: a reply with no
    text is "" (a backend reading `"content": null` makes that, an empty reply the loop corrects),
    never None.
    """

    text: str
    usage: Usage | None = None
    finish_reason: str | None = None
    reasoning: str | None = None
    tokens: Tokens | None = None  # the call as token ids, when the backend keeps them

    def __post_init__(self) -> None:
        if not isinstance(self.text, str):
            raise TypeError(f'Reply.text must be text ("" for an empty reply), not {self.text!r:.80}')
        for name, kind in (("usage", Usage), ("finish_reason", str), ("reasoning", str), ("tokens", Tokens)):
            value = getattr(self, name)
            if value is not None and not isinstance(value, kind):
                raise TypeError(f"Reply.{name} must be {_A[name]} or None, not {value!r:.80}")


_A = {"usage": "a Usage", "finish_reason": "text", "reasoning": "text", "tokens": "a Tokens"}


OutcomeKind = Literal["ok", "error", "timeout"]


@dataclass(frozen=True, slots=True)
class Outcome:
    """What running a tool came to: its result as text, or what went wrong, in words for the model."""

    kind: OutcomeKind
    text: str
    error_type: str = ""  # the exception's class when kind is "error" (for telemetry's error.type)


@dataclass(frozen=True, slots=True)
class Step:
    """One model call and what came of it."""

    number: int  # 1-based
    reply: str  # the reply as received
    parsed: Reading  # read from the reply after the stop guard's cut (Actions only with parallel on)
    observation: str | None  # what was fed back; None after a final answer
    usage: Usage  # this call's tokens (the server's count when reported)
    total_usage: Usage  # tokens used so far in the run, this call included
    seconds: float  # wall time of the model call and the tool
    cut: str = ""  # text the stop guard removed (a made-up observation)
    forced: bool = False  # the call asked for a final answer at a limit
    reasoning: str = ""  # a reasoning model's thinking (split out by the server, or its <think> block)
    finish_reason: str | None = None  # as the server said: "stop", "length" (the reply hit its allowance)
    elided: tuple[int, ...] = ()  # steps whose observation or thought was elided from this call's prompt
    observations: tuple[str, ...] = ()  # after Actions: what each call came to, in the order written


@dataclass(frozen=True, slots=True)
class RunResult:
    answer: str | None
    stop_reason: StopReason
    steps: tuple[Step, ...]
    usage: Usage
    transcript: tuple[Message, ...] | str  # everything sent and received, as the model saw it
    forced: bool = False  # the answer came from the one last call made at a limit
    error: str | None = None  # why the run stopped, in words, when it did not end with a final answer
    tool_calls: int = field(default=0)
    trajectory: Trajectory | None = None  # the run as token ids, when the model gives them


@dataclass(frozen=True, slots=True)
class Turn:
    """One model call inside a segment: its sampled ids, then the ids the engine appended after them.

    `start` indexes the segment's ids. `dropped` counts sampled ids left out (cut by a stop sequence
    or the guard); `inside` is True when the guard's cut fell inside a token, whose text then
    reaches the model again as appended ids.
    """

    step: int
    start: int
    completion: int  # sampled ids kept, loss mask 1
    appended: int  # ids the engine appended after them (observation, correction, note), mask 0
    dropped: int = 0
    inside: bool = False
    finish_reason: str | None = None


@dataclass(frozen=True, slots=True)
class Segment:
    """An append-only token sequence: the prompt's ids, then each turn's sampled and appended ids.

    `mask` is 1 where the model sampled the id, 0 where it was given it; `logprobs` has one entry
    per id, 0.0 where the mask is 0 (as verl, TRL and SkyRL pad them).
    """

    reason: SegmentReason
    prompt: int  # the first `prompt` ids are the prompt the segment starts from
    ids: tuple[int, ...]
    mask: tuple[int, ...]
    logprobs: tuple[float, ...]
    turns: tuple[Turn, ...]


@dataclass(frozen=True, slots=True)
class Trajectory:
    """A run as the tokens the model saw and sampled: one segment unless a prompt was rewritten."""

    segments: tuple[Segment, ...]
    exact: bool = True  # every id was sampled or given to the model as it is here
    reason: str = ""  # why not exact

    @property
    def turns(self) -> int:
        return sum(len(s.turns) for s in self.segments)

    @property
    def extended(self) -> float:
        """The share of turns after the first that extended the sequence before them."""
        later = self.turns - 1
        return 1.0 if later <= 0 else (later - (len(self.segments) - 1)) / later


class Vocabulary(Protocol):
    """A model's tokenizer, for servers that name sampled tokens only by their text (`OpenAI*(tokenizer=...)`):
    `encode` a prompt as the model would, and the id of one token's text (None when it has none)."""

    def encode(self, text: str) -> tuple[int, ...]: ...

    def piece_id(self, piece: str) -> int | None: ...


class Parser(Protocol):
    """How replies are read: `parse` (the default) or another of `parser.PARSERS`."""

    def __call__(self, text: str, *, tools: Collection[str] = ()) -> Parsed: ...  # one directive per reading


Api = Literal["chat", "completion"]


class Model(Protocol):
    """What the loop needs of a model. Backends implement it structurally and inherit nothing.

    `api` says whether `generate` takes chat messages or a transcript string. `name` picks the
    tokenizer used to count tokens before a request is sent. `accepts_grammar` says whether a GBNF
    grammar in the request is honoured. What else a model may offer (an async call, its context
    window, a token counter, recommendations, ...) is declared in `model_info`, and read there once.
    """

    @property
    def api(self) -> Api: ...

    @property
    def name(self) -> str: ...

    @property
    def accepts_grammar(self) -> bool: ...

    def generate(self, request: Request) -> Reply:
        """One call. Raises errors.ModelError when the model or the network fails."""
        ...


@runtime_checkable
class AsyncModel(Model, Protocol):
    """A model that can also be awaited: an async run awaits `agenerate` (a sync-only model's
    `generate` runs on a worker thread instead)."""

    async def agenerate(self, request: Request) -> Reply:
        """One call, awaited. Raises errors.ModelError when the model or the network fails."""
        ...
