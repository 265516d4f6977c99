"""Parsers beside react-text's own for `react-text parse --compare`: other frameworks' real parsers,
and the user's own (`--parser module:function`), each adapted to the corpus reading.

    lc-react    langchain-classic ReActSingleInputOutputParser (create_react_agent's); stop "\\nObservation"
    lc-mrkl     langchain-classic MRKLOutputParser (ZeroShotAgent's); stop "\\nObservation:", "\\n\\tObservation:"
    llamaindex  llama-index-core ReActOutputParser (ReActAgent's); no stop sequences
    smolagents  smolagents get_tool_call_from_text(text, "name", "arguments"): what ToolCallingAgent
                does with a reply that holds its call as text; stop "Observation:", "Calling tools:";
                a call to `final_answer` is the final answer, its "answer" argument (or the whole
                arguments, if a string) the answer
    crewai      crewai.agents.parser.parse (CrewAgentExecutor's); stop "\\nObservation:"

Each adapter imports its peer only when asked for (nothing in the core imports this module) and
hands it the reply as the peer's own agent would: cut at the stop sequences that agent sends the
server. What comes back becomes a reading: a peer's action is its tool and the input it hands the
tool (a string stripped of surrounding whitespace, or the value a peer decoded, compared with
what the reply wrote read as JSON or a Python literal: see `corpus`), its finish the final
answer; the exception the peer raises to refuse a reply (LangChain's OutputParserException,
crewAI's OutputParserError, LlamaIndex's and smolagents' ValueError) is an error reading. Any
other exception is a bug here and propagates. Peers get no tool names: none of them takes the
registry when it reads.

Not every peer's agent does with a refusal what an error reading means here: crewAI's executor
turns a reply its parser refuses into a final answer holding the whole reply (`format_answer`).
The scoreboard scores the parser.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import importlib.util
import inspect
import json
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any

from react_text.core.errors import ConfigError
from react_text.evaluation.corpus import Parser, Reading
from react_text.parser import PARSERS
from react_text.tools.importing import user_module

__all__ = [
    "PEERS",
    "Peer",
    "contenders",
    "user",
]

_Read = Callable[[str], Reading]


@dataclass(frozen=True, slots=True)
class Peer:
    name: str  # the scoreboard's column
    what: str  # what is scored
    distribution: str  # the package on PyPI (its version is shown)
    stop: tuple[str, ...]  # the stop sequences the peer's agent sends
    load: Callable[[], _Read]  # imports the peer (ImportError when it is not installed)

    @property
    def install(self) -> str:
        return f"pip install {self.distribution}"

    def parser(self) -> Parser:
        read = self.load()
        stop = self.stop

        def adapted(text: str, *, tools: Collection[str] = ()) -> Reading:
            return read(_cut(text, stop))

        return adapted


def _cut(text: str, stop: Sequence[str]) -> str:
    """The reply as a server that honours `stop` returns it: up to the first stop sequence."""
    ends = [at for at in (text.find(s) for s in stop) if at >= 0]
    return text[: min(ends)] if ends else text


def _action(tool: object, value: object) -> Reading:
    return {"kind": "action", "tool": str(tool).strip(), "input": value.strip() if isinstance(value, str) else value}


def _final(answer: object) -> Reading:
    text = answer if isinstance(answer, str) else json.dumps(answer, ensure_ascii=False, default=str)
    return {"kind": "final", "answer": text.strip()}


def _refused(exc: Exception) -> Reading:
    return {"kind": "error", "reason": f"{type(exc).__name__}: {str(exc)[:60]}"}


def _langchain(kind: str) -> _Read:
    from langchain_classic.agents.mrkl.output_parser import MRKLOutputParser
    from langchain_classic.agents.output_parsers import ReActSingleInputOutputParser
    from langchain_core.agents import AgentFinish
    from langchain_core.exceptions import OutputParserException

    parser = ReActSingleInputOutputParser() if kind == "react" else MRKLOutputParser()

    def read(text: str) -> Reading:
        try:
            got = parser.parse(text)
        except OutputParserException as exc:
            return _refused(exc)
        if isinstance(got, AgentFinish):
            return _final(got.return_values["output"])
        return _action(got.tool, got.tool_input)

    return read


def _llamaindex() -> _Read:
    from llama_index.core.agent.react.output_parser import ReActOutputParser
    from llama_index.core.agent.react.types import ActionReasoningStep, ResponseReasoningStep

    parser = ReActOutputParser()

    def read(text: str) -> Reading:
        if not text:  # ReActAgent asks again before parsing an empty reply
            return {"kind": "error", "reason": "empty"}
        try:
            got = parser.parse(text)
        except ValueError as exc:
            return _refused(exc)
        if isinstance(got, ActionReasoningStep):
            return _action(got.action, dict(got.action_input))  # the keyword arguments it calls the tool with
        if isinstance(got, ResponseReasoningStep):
            return _final(got.response)
        raise TypeError(f"ReActOutputParser gave {type(got).__name__}")

    return read


def _smolagents() -> _Read:
    from smolagents.models import get_tool_call_from_text

    def read(text: str) -> Reading:
        try:
            call = get_tool_call_from_text(text, "name", "arguments")
        except ValueError as exc:
            return _refused(exc)
        name, arguments = call.function.name, call.function.arguments
        if name == "final_answer":  # FinalAnswerTool(answer): called with **arguments, or with the string
            if isinstance(arguments, dict):
                if "answer" not in arguments:
                    return {"kind": "error", "reason": "final_answer without its answer argument"}
                return _final(arguments["answer"])
            return _final(arguments)
        return _action(name, "" if arguments is None else arguments)

    return read


def _crewai() -> _Read:
    from crewai.agents.parser import AgentFinish, OutputParserError, parse

    def read(text: str) -> Reading:
        try:
            got = parse(text)
        except OutputParserError as exc:
            return _refused(exc)
        if isinstance(got, AgentFinish):
            return _final(got.output)
        return _action(got.tool, _decoded(got.tool_input))

    return read


def _decoded(value: str) -> object:
    """crewAI's tool input: its tools take a JSON object, decoded from the (repaired) input string."""
    try:
        decoded = json.loads(value)
    except ValueError:
        return value
    return decoded if isinstance(decoded, dict) else value


PEERS = (
    Peer(
        "lc-react",
        "ReActSingleInputOutputParser",
        "langchain-classic",
        ("\nObservation",),
        lambda: _langchain("react"),
    ),
    Peer(
        "lc-mrkl",
        "MRKLOutputParser",
        "langchain-classic",
        ("\nObservation:", "\n\tObservation:"),
        lambda: _langchain("mrkl"),
    ),
    Peer("llamaindex", "ReActOutputParser", "llama-index-core", (), _llamaindex),
    Peer("smolagents", "get_tool_call_from_text", "smolagents", ("Observation:", "Calling tools:"), _smolagents),
    Peer("crewai", "crewai.agents.parser.parse", "crewai", ("\nObservation:",), _crewai),
)


def contenders(specs: Sequence[str] = (), *, with_peers: bool = True) -> tuple[dict[str, Parser], list[str]]:
    """Every parser to score, in the scoreboard's order (react-text's, the peers that import, the
    user's `module:function` specs), and notes saying what each peer is or how to install it."""
    parsers: dict[str, Parser] = dict(PARSERS)
    if with_peers:
        notes = ["peers (each reads the reply as its own agent gets it, cut at the stop sequences it sends):"]
    else:
        notes = [f"peers not scored (--no-peers): {', '.join(peer.name for peer in PEERS)}"]
    for peer in PEERS if with_peers else ():
        try:
            parsers[peer.name] = peer.parser()
        except ImportError:
            notes.append(f"  {peer.name:<11} not installed: {peer.install}")
            continue
        version = importlib.metadata.version(peer.distribution)
        notes.append(f"  {peer.name:<11} {peer.distribution} {version}, {peer.what}")
    for spec in specs:
        parsers[spec] = user(spec)
    return parsers, notes


def user(spec: str) -> Parser:
    """The user's parser `module:function` (a module on the path or a .py file; the function may be
    `Class.method`), called on each reply (with `tools=` when it takes that keyword). It may return
    a react-text `Parsed` value or a reading dict; raising is an error reading."""
    if spec in PARSERS:
        return PARSERS[spec]
    module_name, colon, attribute = spec.rpartition(":")
    if not (colon and module_name and attribute):
        raise ConfigError(f"--parser {spec}: give module:function (or one of {', '.join(sorted(PARSERS))})")
    found: object = _module(spec, module_name)
    for part in attribute.split("."):
        try:
            found = getattr(found, part)
        except AttributeError:
            raise ConfigError(f"--parser {spec}: {module_name} has no {attribute}") from None
    if not callable(found):
        raise ConfigError(f"--parser {spec}: {attribute} is a {type(found).__name__}, not a function")
    fn: Callable[..., Any] = found
    takes_tools = _takes_tools(fn)

    def read(text: str, *, tools: Collection[str] = ()) -> Any:
        try:
            return fn(text, tools=tuple(tools)) if takes_tools else fn(text)
        except Exception as exc:  # noqa: BLE001 - the user's parser refused the reply: what it raises is an error reading
            return _refused(exc)

    return read


def _takes_tools(fn: Callable[..., Any]) -> bool:
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):  # a builtin without a signature: call it with the text alone
        return False
    return any(p.name == "tools" or p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)


def _module(spec: str, name: str) -> object:
    return user_module(
        name,
        flag=f"--parser {spec}",
        label=f"--parser {spec}: {name}",
        missing=f"--parser {spec}: no module {name} here (a module on the path, or file.py:function)",
        prefix="react_text_parser_",
    )
