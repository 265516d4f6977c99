"""Tools: plain functions, listed from their signature and docstring, run so that nothing escapes.

    def lookup(item: str) -> str:
        \"\"\"Return the price of one item.\"\"\"

    tools = [lookup, tool(delete_file, risky=True, timeout=5), tool(square, pure=True), Tool("now", "The time.", now)]

A Tool takes its parameters from `inspect.signature(fn)` (a synthesized `__signature__` too), once,
when it is made; a function whose parameters cannot be read is refused then, not at the first call.
How an input text becomes arguments is `binding.bind`; the tool list shows what it accepts
(`search[query, limit=5]`, `add[a: float, b: float]`). Whatever a tool does, `call` returns text for
the model: its result, or what went wrong (an input it cannot take, an exception, a time limit, a
result that is not text, None: no result). Cutting a long result to its allowance is the token
account's (`tokens.truncation`).
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import re
import typing
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from react_text import prompting
from react_text.tools import binding

__all__ = [
    "Tool",
    "as_text",
    "as_tools",
    "listing",
    "tool",
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
    coroutine: bool = dataclasses.field(init=False, repr=False, compare=False)  # fn is `async def`: awaited

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
        object.__setattr__(self, "coroutine", inspect.iscoroutinefunction(self.fn))

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
