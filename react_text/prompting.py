"""How the protocol is put to the model: the text templates in `prompts/`, rendered (the instruction block,
tool list and transcript), and `Prompting`, the one frozen value that says how, validated when it is made.

    Agent(model, tools, prompting=Prompting(example=None, act_first=True))

Templates are `string.Template` files: `$name` placeholders, `$$` for a literal dollar.
`substitute` fails loudly on a missing variable. In a wheel the templates live in
`react_text/prompts/`; in a source checkout, in `prompts/` at the top of the repository.
"""

from __future__ import annotations

import functools
import string
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Literal, Protocol

from react_text.core.protocol import observation_label
from react_text.core.types import Message

__all__ = [
    "Exemplified",
    "InstructionsIn",
    "Prompting",
    "Reasoning",
    "example_for",
    "example_name",
    "first_messages",
    "generic_example",
    "instructions",
    "known_variables",
    "observation_message",
    "observations_message",
    "render",
    "template_names",
    "transcript_start",
]

InstructionsIn = Literal["system", "user"]


def _root() -> Path:
    packaged = resources.files("react_text") / "prompts"
    if packaged.is_dir():
        return Path(str(packaged))
    return Path(__file__).resolve().parent.parent / "prompts"


@functools.cache
def _template(name: str) -> string.Template:
    """The template `prompts/<name>.txt` (name may hold a subfolder: `corrections/unknown_tool`)."""
    path = _root() / f"{name}.txt"
    return string.Template(path.read_text(encoding="utf-8").rstrip("\n"))


def render(name: str, **values: object) -> str:
    return _template(name).substitute({k: str(v) for k, v in values.items()})


def template_names() -> list[str]:
    root = _root()
    return sorted(str(p.relative_to(root).with_suffix("")) for p in root.rglob("*.txt"))


@functools.lru_cache(maxsize=64)
def instructions(tool_listing: str, *, example: str | None = None, parallel: int | None = None) -> str:
    """The instruction block: the protocol, the tools, and a worked example (a template name or
    the example's own text, told apart by `example_name`; None for zero-shot; the generic one is
    made from the tools, by `generic_example`, not named here). `parallel`: the most actions a
    reply may hold, when several independent ones may be written at once (None: one). Rendered
    once for the same tools and example in a process (each agent asks it)."""
    if example is not None:
        name = example_name(example)
        if name == "generic":
            raise ValueError("the generic example is made from the tools: give generic_example(tools)")
        example = render(f"examples/{name}") if name is not None else example
    rules = render("rules/one") if parallel is None else render("rules/parallel", most=parallel)
    return render("instructions", tools=tool_listing, example=example or "", rules=rules).rstrip()


def _example_names() -> list[str]:
    """The worked examples in prompts/examples, by name ("calculator", "files", "generic", "parallel", "search")."""
    return sorted(p.stem for p in (_root() / "examples").glob("*.txt"))


def example_name(example: str) -> str | None:
    """The template an example names, or None when it is the example's own text.

    A value with no whitespace in it is a name ("calculator", or "examples/calculator"); anything
    with a space or a newline is text. A name that is not a file in prompts/examples raises
    ValueError (a misspelling is never sent to a model as if it were an example).
    """
    if any(c.isspace() for c in example):
        return None
    name = example.removeprefix("examples/")
    names = _example_names()
    if name not in names:
        raise ValueError(
            f"Prompting.example {example!r} names no worked example: give one of {', '.join(names)} "
            "(files in prompts/examples), 'auto', None, or the example's own text (anything with a space or a newline)"
        )
    return name


class _Parameter(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def required(self) -> bool: ...


class _Shape(Protocol):
    @property
    def parameters(self) -> Sequence[_Parameter]: ...


class Exemplified(Protocol):
    """What a worked example reads of a tool (`Tool` is one): its name and its parameters. A
    protocol, so that the prompts need nothing of the tools, which render prompts."""

    @property
    def name(self) -> str: ...
    @property
    def shape(self) -> _Shape: ...


def example_for(tools: Sequence[Exemplified], *, parallel: bool = False) -> str | None:
    """The worked example that fits the tools in play: the files example when the file tools and
    the calculator are there, the calculator's when only built-in arithmetic and docs are, the
    search example when only the file tools (and docs) are, else one
    made from the user's own first tool (`generic_example`), so an example never names a tool the
    user lacks nor carries numbers a small model copies into its answer; with parallel actions, the
    one that shows two independent calls in one reply. None: no tools.

    A template name, or the example's own text."""
    if parallel:
        return "examples/parallel"
    names = {t.name for t in tools}
    if {"search", "calculator"} <= names:
        return "examples/files"
    if "calculator" in names and names <= {"calculator", "python_doc"}:
        return "examples/calculator"
    if {"search", "read"} <= names <= {"search", "read", "python_doc"}:
        return "examples/search"
    return generic_example(tools)


def generic_example(tools: Sequence[Exemplified]) -> str | None:
    """The generic worked example made from the first tool: its name and its required parameters
    (its first one, if none is required), with no numbers to copy. None: no tools."""
    if not tools:
        return None
    first = tools[0]
    shape = first.shape
    params = [p.name for p in shape.parameters if p.required] or [p.name for p in shape.parameters[:1]]
    return render("examples/generic", tool=first.name, call=f"{first.name}[{', '.join(params)}]")


def first_messages(
    instruction_block: str, task: str, *, instructions_in: InstructionsIn = "system"
) -> tuple[Message, ...]:
    """The opening chat messages. Everything after them is appended, so the prefix never changes."""
    question = render("task", task=task)
    if instructions_in == "system":
        return (Message("system", instruction_block), Message("user", question))
    return (Message("user", f"{instruction_block}\n\n{question}"),)


def transcript_start(instruction_block: str, task: str) -> str:
    """The opening of a completion-mode transcript; the model continues after the thought cue
    (`protocol.THOUGHT_CUE`), which the history puts at the end of every request."""
    return render("transcript", instructions=instruction_block, task=render("task", task=task)) + "\n"


def observation_message(observation: str) -> str:
    """An observation as fed back: labelled, with every line after the first indented.

    The indent is what keeps a tool result from forging a turn: no line of it starts at the left
    margin, where the protocol's labels (THOUGHT:, ACTION:, FINAL:, OBSERVATION:) live. This
    matters most where text is concatenated (completion transcripts, the local model's
    continued assistant turn).
    """
    return f"{observation_label()} {_indented(observation)}"


def observations_message(calls: Iterable[tuple[str, str]]) -> str:
    """The observations of several calls made in one reply, one per call in the order written, each
    labelled with the call it answers: `OBSERVATION (weather[Athens]): 24 C`. As in
    `observation_message`, every line of a result after its first is indented."""
    return "\n".join(f"{observation_label(call)} {_indented(text)}" for call, text in calls)


def _indented(text: str) -> str:
    """`text` without line breaks around it, every line after its first indented two spaces."""
    return text.strip("\n").replace("\n", "\n  ")


def known_variables(names: Iterable[str]) -> Mapping[str, set[str]]:
    """The placeholders each template uses (for the tests that keep templates and code in step)."""
    found: dict[str, set[str]] = {}
    for name in names:
        tpl = _template(name)
        found[name] = {
            m.group("named") or m.group("braced")
            for m in tpl.pattern.finditer(tpl.template)
            if m.group("named") or m.group("braced")
        }
    return found


Reasoning = Literal["drop", "keep"]


@dataclass(frozen=True, slots=True)
class Prompting:
    """How the protocol is put to the model.

    `example` is the worked example in the instructions: "auto" (chosen from the tools), None (zero
    shot), a template name, or the example's own text. A value with no whitespace is a name and
    must be a file in prompts/examples ("calculator", "files", "search", "generic"; "examples/calculator"
    too), else it is refused here; a value with a space or a newline is the example's text, as is.
    """

    example: str | None = "auto"  # "auto", None, a template name (no whitespace), or the example's text
    instructions_in: InstructionsIn = "system"  # or "user", for models that follow the system message poorly
    grammar: bool | None = None  # constrain decoding to the protocol; None: when the model accepts one
    act_first: bool = False  # under a grammar, the first reply must be an ACTION (small models answer unaided)
    reasoning: Reasoning = "drop"  # send a reasoning model's thinking back in later turns ("keep") or not
    parallel: bool = False  # the model may write several independent ACTION lines in one reply; they run at once

    def __post_init__(self) -> None:
        if self.instructions_in not in ("system", "user"):
            raise ValueError(f"Prompting.instructions_in must be 'system' or 'user', not {self.instructions_in!r}")
        if self.reasoning not in ("drop", "keep"):
            raise ValueError(f"Prompting.reasoning must be 'drop' or 'keep', not {self.reasoning!r}")
        for name in ("act_first", "parallel"):
            if not isinstance(getattr(self, name), bool):
                raise TypeError(f"Prompting.{name} must be True or False, not {getattr(self, name)!r}")
        if self.grammar is not None and not isinstance(self.grammar, bool):
            raise TypeError(f"Prompting.grammar must be True, False or None, not {self.grammar!r}")
        if self.example is not None and self.example != "auto":
            if not isinstance(self.example, str):
                raise TypeError(
                    f"Prompting.example must be 'auto', None, a template name or text, not {self.example!r}"
                )
            if not self.example.strip():
                raise ValueError("Prompting.example is empty: give None for no worked example")
            example_name(self.example)  # a name that is no file is refused now, not at run time
