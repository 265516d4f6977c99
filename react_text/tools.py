"""Tools: plain functions, listed from their signature and docstring, run so that nothing escapes.

    def lookup(item: str) -> str:
        \"\"\"Return the price of one item.\"\"\"

    tools = [lookup, tool(delete_file, risky=True, timeout=5)]

A one-parameter tool gets the whole input text. A tool with several parameters gets them from a
JSON array or object, or from the input split at commas, converted to the annotated
int/float/bool types. Whatever a tool does, `call` returns text for the model: its result, or what
went wrong (exception, time limit, a result that is not text).
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import queue
import threading
import typing
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from . import prompting


@dataclass(frozen=True, slots=True)
class Tool:
    name: str
    description: str
    params: tuple[str, ...]
    fn: Callable[..., object] = dataclasses.field(repr=False)
    risky: bool = False  # has side effects: runs only when approved
    timeout: float | None = None  # seconds; None waits for ever
    types: tuple[type, ...] = dataclasses.field(default=(), repr=False)

    @property
    def form(self) -> str:
        """How the model writes a call: `lookup[item]`, `add[a, b]`."""
        return f"{self.name}[{', '.join(self.params)}]"


def tool(
    fn: Callable[..., object] | None = None,
    *,
    name: str | None = None,
    risky: bool = False,
    timeout: float | None = None,
) -> typing.Any:
    """Make a Tool from a function; usable as `tool(fn, ...)` or as a decorator `@tool(risky=True)`."""

    def build(f: Callable[..., object]) -> Tool:
        try:
            signature = inspect.signature(f)
        except (ValueError, TypeError) as exc:
            raise TypeError(f"cannot read the parameters of {f!r}: wrap it in a plain function") from exc
        hints = typing.get_type_hints(f)
        params = tuple(
            p.name for p in signature.parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        )
        doc = inspect.getdoc(f) or ""
        return Tool(
            name=name or f.__name__,
            description=doc.split("\n\n")[0].replace("\n", " ").strip(),
            params=params or ("input",),
            fn=f,
            risky=risky,
            timeout=timeout,
            types=tuple(hints.get(p, str) for p in params),
        )

    return build if fn is None else build(fn)


def as_tools(items: Iterable[Tool | Callable[..., object]]) -> tuple[Tool, ...]:
    made = tuple(item if isinstance(item, Tool) else tool(item) for item in items)
    names = [t.name for t in made]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"two tools share a name: {', '.join(duplicates)}")
    return made


def listing(tools: Iterable[Tool]) -> str:
    """The tool list for the instruction block, one line a tool."""
    return "\n".join(f"- {t.form}: {t.description}" if t.description else f"- {t.form}" for t in tools)


def arguments(t: Tool, text: str) -> list[object]:
    """The positional arguments for a call to `t` with input `text`."""
    if len(t.params) <= 1:
        return [_convert(text, t.types[0] if t.types else str)]
    raw: list[object]
    try:
        decoded = json.loads(text)
    except ValueError:
        decoded = None
    if isinstance(decoded, list):
        raw = decoded
    elif isinstance(decoded, dict):
        raw = [decoded[p] for p in t.params if p in decoded]
    else:
        raw = [part.strip() for part in text.split(",", len(t.params) - 1)]
    if len(raw) != len(t.params):
        raise ValueError(f"{t.form} takes {len(t.params)} inputs, got {len(raw)}")
    return [_convert(v, typ) for v, typ in zip(raw, t.types, strict=True)]


def _convert(value: object, typ: type) -> object:
    if typ is bool and isinstance(value, str):
        return value.strip().casefold() in {"true", "yes", "1"}
    if typ in (int, float) and isinstance(value, str | int | float) and not isinstance(value, bool):
        return typ(value.strip() if isinstance(value, str) else value)
    if typ is str and not isinstance(value, str):
        return json.dumps(value) if isinstance(value, dict | list) else str(value)
    return value


def call(t: Tool, text: str) -> str:
    """Run the tool and return the observation text. Never raises."""

    def target() -> object:
        return t.fn(*arguments(t, text))

    # The tool boundary: whatever a user's tool raises becomes an observation.
    try:
        value = target() if t.timeout is None else _worker().run(target, t.timeout)
    except _TimedOut:
        return prompting.render("corrections/tool_timeout", tool=t.name, seconds=t.timeout)
    except Exception as exc:  # noqa: BLE001
        return prompting.render("corrections/tool_error", tool=t.name, error_type=type(exc).__name__, error=exc)
    return as_text(t.name, value)


class _TimedOut(Exception):
    pass


class _Worker:
    """One daemon thread that runs tool calls with a time limit, reused from call to call.

    Starting a thread a call costs more than the rest of a step; handing work to a waiting one
    costs a few microseconds. A call that overruns is abandoned with its thread (daemon, so it
    cannot keep the process alive) and the next call gets a new worker.
    """

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[tuple[Callable[[], object], queue.SimpleQueue[tuple[bool, object]]]] = (
            queue.SimpleQueue()
        )
        self.busy = False
        threading.Thread(target=self._serve, name="react-text-tools", daemon=True).start()

    def _serve(self) -> None:
        while True:
            job, answer = self._jobs.get()
            try:
                answer.put((True, job()))
            except Exception as exc:  # noqa: BLE001 - carried back to the caller, who decides
                answer.put((False, exc))

    def run(self, job: Callable[[], object], timeout: float) -> object:
        answer: queue.SimpleQueue[tuple[bool, object]] = queue.SimpleQueue()
        self.busy = True
        self._jobs.put((job, answer))
        try:
            ok, value = answer.get(timeout=timeout)
        except queue.Empty:
            raise _TimedOut from None  # self.busy stays True: this worker is abandoned
        self.busy = False
        if not ok:
            assert isinstance(value, BaseException)
            raise value
        return value


_workers = threading.local()


def _worker() -> _Worker:
    """This thread's tool worker; a new one if the last was abandoned to a hung tool."""
    worker: _Worker | None = getattr(_workers, "current", None)
    if worker is None or worker.busy:
        worker = _workers.current = _Worker()
    return worker


def as_text(name: str, value: object) -> str:
    """A tool's result as text: converted when that is meaningful, refused clearly when not."""
    if isinstance(value, str):
        return value
    if isinstance(value, bool | int | float) or value is None:
        return str(value)
    if isinstance(value, dict | list | tuple):
        return json.dumps(value, ensure_ascii=False, default=str)
    if isinstance(value, bytes | bytearray | memoryview):
        kind = f"{type(value).__name__} ({len(value)} bytes)"
        return prompting.render("corrections/tool_bad_result", tool=name, kind=kind)
    if type(value).__str__ is object.__str__:
        return prompting.render("corrections/tool_bad_result", tool=name, kind=type(value).__name__)
    return str(value)


def truncate(text: str, allowance: int, count: Callable[[str], int]) -> str:
    """Keep about `allowance` tokens of `text`, half from the head and half from the tail.

    The cut is said in the text. Text over 16 characters a token is measured on a sample, so a
    huge result costs no more to count than the allowance is worth.
    """
    if len(text) <= allowance:  # a token is at least one character
        return text
    sample = allowance * 16
    total = count(text) if len(text) <= sample else len(text) * count(text[:sample]) // sample
    if total <= allowance:
        return text
    chars = max(1, len(text) * allowance // (2 * total))
    head, tail = text[:chars], text[-chars:]
    omitted = max(total - count(head) - count(tail), 1)
    note = prompting.render("corrections/truncated", omitted=f"about {omitted}")
    return f"{head}\n{note}\n{tail}"
