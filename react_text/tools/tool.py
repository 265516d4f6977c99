"""Tools: plain functions, listed from their signature and docstring, run so that nothing escapes.

    def lookup(item: str) -> str:
        \"\"\"Return the price of one item.\"\"\"

    tools = [lookup, tool(delete_file, risky=True, timeout=5), tool(square, pure=True), Tool("now", "The time.", now)]

A Tool takes its parameters from `inspect.signature(fn)` (a synthesized `__signature__` too), once,
when it is made; a function whose parameters cannot be read is refused then, not at the first call.
How an input text becomes arguments is `binding.bind`; the tool list shows what it accepts
(`search[query, limit=5]`, `add[a: float, b: float]`). Whatever a tool does, `call` returns text for
the model: its result, or what went wrong (an input it cannot take, an exception, a time limit, a
result that is not text, None: no result). `truncate` cuts a long result to its allowance, exactly.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import math
import re
import typing
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from react_text import prompting
from react_text.tools import binding

__all__ = [
    "Tool",
    "as_text",
    "as_tools",
    "listing",
    "tool",
    "truncate",
    "truncate_each",
]

# A name the protocol can carry: `name[input]` on one line. Spaces inside and any script are
# fine (the parser matches registered names); brackets and parentheses open and close the input.
_BAD_NAME = re.compile(r"^\s|\s$|[\[\]()\x00-\x1f\x7f]")


@dataclass(frozen=True, slots=True)
class Tool:
    """A function the model may call: `Tool(name, description, fn)`, or `tool(fn)` to take both from it."""

    name: str
    description: str
    fn: Callable[..., object] = dataclasses.field(repr=False)  # may be `async def`
    risky: bool = False  # has side effects: runs only when approved
    timeout: float | None = None  # seconds; None waits for ever
    pure: bool = False  # free of side effects: a repeated call is answered from the first, not run again
    idempotent: bool = False  # a repeat has no further effect: answered from the first while nothing else ran
    shape: binding.Shape = dataclasses.field(init=False, repr=False, compare=False)  # what fn takes

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name or _BAD_NAME.search(self.name):
            raise ValueError(
                f"a tool name is one line of text, without space around it, brackets or parentheses, not {self.name!r}"
            )
        if not isinstance(self.description, str):
            raise TypeError(f"the description of tool {self.name} must be text, not {self.description!r}")
        if not callable(self.fn):
            raise TypeError(f"the fn of tool {self.name} must be callable, not {self.fn!r}")
        if not isinstance(self.risky, bool):
            raise TypeError(f"risky must be True or False, not {self.risky!r}")
        if not isinstance(self.pure, bool):
            raise TypeError(f"pure must be True or False, not {self.pure!r}")
        if not isinstance(self.idempotent, bool):
            raise TypeError(f"idempotent must be True or False, not {self.idempotent!r}")
        if self.pure and self.idempotent:
            raise ValueError(
                f"tool {self.name} is given pure=True (no side effects) and idempotent=True (side effects "
                "that a repeat adds nothing to): give the one that is true of it"
            )
        if self.timeout is not None and not (
            isinstance(self.timeout, int | float) and not isinstance(self.timeout, bool) and self.timeout > 0
        ):
            raise ValueError(f"timeout must be a positive number of seconds or None, not {self.timeout!r}")
        object.__setattr__(self, "shape", binding.shape(self.fn))

    @property
    def params(self) -> tuple[str, ...]:
        """The names of the named parameters, in order."""
        return tuple(p.name for p in self.shape.parameters)

    @property
    def form(self) -> str:
        """How the model writes a call: `lookup[item]`, `search[query, limit=5]`, `add[a: float, b: float]`."""
        return self.shape.form(self.name)


def tool(
    fn: Callable[..., object] | None = None,
    *,
    name: str | None = None,
    description: str | None = None,
    risky: bool = False,
    timeout: float | None = None,
    pure: bool = False,
    idempotent: bool = False,
) -> typing.Any:
    """Make a Tool from a function; usable as `tool(fn, ...)` or as a decorator `@tool(risky=True)`.

    The name is the function's and the description the first paragraph of its docstring, unless given.
    `pure=True` says the function has no side effects (the same input, the same result), so a call
    the model repeats is answered from the first one, until a tool that is not pure runs (it may
    change what this one reads); any other tool runs again. `idempotent=True` says it has side
    effects that a repeat of the same call adds nothing to (`set_x[5]`, `reset[]`): a repeat is
    answered from the last call while no other tool with side effects has run since, and it counts
    as one itself (a pure tool's earlier result no longer stands after it).
    """

    def build(f: Callable[..., object]) -> Tool:
        if not callable(f):
            raise TypeError(f"tool takes a function (tool(fn, ...), or @tool(...) above one), not {f!r:.60}")
        doc = inspect.getdoc(f) or ""
        return Tool(
            name=str(getattr(f, "__name__", "")) if name is None else name,  # name="" is refused, not ignored
            description=doc.split("\n\n")[0].replace("\n", " ").strip() if description is None else description,
            fn=f,
            risky=risky,
            timeout=timeout,
            pure=pure,
            idempotent=idempotent,
        )

    return build if fn is None else build(fn)


def as_tools(items: Iterable[Tool | Callable[..., object]]) -> tuple[Tool, ...]:
    if isinstance(items, str | bytes) or not isinstance(items, Iterable):
        raise TypeError(f"tools must be a list of functions or Tools, not {type(items).__name__}: {items!r}")
    listed = list(items)
    for item in listed:
        if not (isinstance(item, Tool) or callable(item)):
            raise TypeError(
                f"a tool is a function or a Tool, not {type(item).__name__} {item!r}: pass the function "
                "itself (tools=[lookup]), or tool(fn, name=...) for another name"
            )
    made = tuple(item if isinstance(item, Tool) else tool(item) for item in listed)
    names = [t.name for t in made]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"two tools share a name: {', '.join(duplicates)}")
    return made


def listing(tools: Iterable[Tool]) -> str:
    """The tool list for the instruction block, one line a tool."""
    return "\n".join(f"- {t.form}: {t.description}" if t.description else f"- {t.form}" for t in tools)


def as_text(name: str, value: object) -> str:
    """A tool's result as text: converted when that is meaningful, refused clearly when not."""
    if isinstance(value, str):
        return value
    if value is None:  # most often a forgotten `return`: "None" would read as if it were the result
        return prompting.render("corrections/tool_no_result", tool=name, kind="None")
    if isinstance(value, bool | int | float):
        return str(value)
    if isinstance(value, dict | list | tuple):
        return json.dumps(value, ensure_ascii=False, default=str)
    if isinstance(value, bytes | bytearray | memoryview):
        kind = f"{type(value).__name__} ({len(value)} bytes)"
        return prompting.render("corrections/tool_bad_result", tool=name, kind=kind)
    if type(value).__str__ is object.__str__:
        return prompting.render("corrections/tool_bad_result", tool=name, kind=type(value).__name__)
    return str(value)


def truncate_each(texts: Sequence[str], allowance: int, count: Callable[[str], int]) -> tuple[str, ...]:
    """The texts cut to `allowance` tokens in all, as `truncate` cuts one: the shortest kept whole
    while an even share of what is left holds them, the others cut to that share each."""
    costs = [count(t) for t in texts]
    shares = [0] * len(texts)
    left, waiting = allowance, len(texts)
    for i in sorted(range(len(texts)), key=costs.__getitem__):
        shares[i] = min(costs[i], max(left // waiting, 1))
        left, waiting = left - shares[i], waiting - 1
    return tuple(t if shares[i] >= costs[i] else truncate(t, shares[i], count) for i, t in enumerate(texts))


# Truncation counts pieces of about the allowance's size, never a huge result whole, and no piece
# over _MAX_PIECE characters (tiktoken fails on a run of about a million spaces followed by text).
_PROBE_CHARS_PER_TOKEN = 16
_MAX_PIECE = 262_144
_EXACT_CHARS = 200_000  # a cut part up to this long is counted whole; a longer one from samples
_SAMPLED_CHARS = 131_072  # of a longer cut part, in evenly spaced samples (many small ones: less variance)
_SAMPLE_TOKENS = 32  # but each large enough to hold this many tokens: a counter may round each count up
_WIDEST_NOTE = "about 99999999999"  # the note's room is reserved for the widest figure


def truncate(text: str, allowance: int, count: Callable[[str], int]) -> str:
    """At most `allowance` tokens of `text` by `count`: all of it, or its head and tail with a note between.

    The note says how many tokens were cut: counted, or for a cut of over 200,000 characters
    estimated from evenly spaced samples ("about N"). The kept text, note included, is counted and
    shortened until it fits. An allowance too small for the note keeps the head alone. A result
    over 262,144 characters is always cut (counting it whole would cost more than it is worth).
    """
    if allowance <= 0:
        return ""
    if _fits(text, allowance, count):
        return text
    keep = allowance - count(f"\n{_note(_WIDEST_NOTE)}\n")
    while keep >= 2:
        head = _longest(text, (keep + 1) // 2, count, from_end=False)
        rest = text[head:]
        tail = _longest(rest, keep // 2, count, from_end=True)
        omitted = _measure(rest[: len(rest) - tail], count)
        kept = f"{text[:head]}\n{_note(omitted)}\n{rest[len(rest) - tail :]}"
        over = count(kept) - allowance
        if over <= 0:
            return kept
        keep -= over  # the pieces joined count differently from the pieces apart: shrink and count again
    return text[: _longest(text, allowance, count, from_end=False)]


def _note(omitted: str) -> str:
    return prompting.render("corrections/truncated", omitted=omitted)


def _fits(text: str, allowance: int, count: Callable[[str], int]) -> bool:
    probe = min(allowance * _PROBE_CHARS_PER_TOKEN, _MAX_PIECE)
    if len(text) > probe and count(text[:probe]) > allowance:
        return False
    return len(text) <= _MAX_PIECE and count(text) <= allowance


def _longest(text: str, tokens: int, count: Callable[[str], int], *, from_end: bool) -> int:
    """The length of the longest head (or tail) of `text` that `count` puts at `tokens` or fewer.

    Searched by interpolation on the token density, falling back to halving: a dozen counts of
    pieces about `tokens` long, whatever the length of `text`; never longer than _MAX_PIECE.
    """

    def size(n: int) -> int:
        return count(text[len(text) - n :] if from_end else text[:n]) if n else 0

    if tokens <= 0:
        return 0
    low, low_count = 0, 0  # size(low) <= tokens < size(high)
    longest = min(len(text), _MAX_PIECE)
    high = min(longest, 4 * tokens)
    high_count = size(high)
    while high_count <= tokens:  # gallop until past the allowance
        if high == longest:
            return high
        low, low_count = high, high_count
        high = min(longest, 2 * high)
        high_count = size(high)
    halve = False
    while high - low > 1:
        if halve or high_count == low_count:
            middle = (low + high) // 2
        else:  # where a straight line between the two counts meets `tokens`
            middle = low + (high - low) * (tokens - low_count) // (high_count - low_count)
            middle = min(max(middle, low + 1), high - 1)
        before = high - low
        middle_count = size(middle)
        if middle_count <= tokens:
            low, low_count = middle, middle_count
        else:
            high, high_count = middle, middle_count
        halve = not halve and (high - low) * 2 > before  # a poor guess: halve next time
    return low


def _measure(cut: str, count: Callable[[str], int]) -> str:
    """The tokens in the cut part, as the note says them: counted, or estimated from samples.

    A first pass of 64 samples of 128 characters sizes the samples of the second, so that each
    holds about 32 tokens (128 characters of dense text; more of sparse text such as runs of spaces).
    """
    if len(cut) <= _EXACT_CHARS:
        return str(count(cut))
    chars, tokens = _sample(cut, count, 64, 128)
    size = 128 * min(64, max(1, math.ceil(_SAMPLE_TOKENS * chars / 128 / max(tokens, 1))))
    chars, tokens = _sample(cut, count, _SAMPLED_CHARS // size, size)
    return f"about {round(tokens * len(cut) / chars)}"


def _sample(text: str, count: Callable[[str], int], samples: int, size: int) -> tuple[int, int]:
    """The characters and tokens of `samples` evenly spaced pieces of `text`, `size` characters each."""
    stride = len(text) / samples
    chars = tokens = 0
    for i in range(samples):
        start = int(i * stride + (stride - size) / 2)
        piece = text[start : start + size]
        chars += len(piece)
        tokens += count(piece)
    return chars, tokens
