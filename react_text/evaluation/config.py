"""What a run is made of, found from what a user types: the model, the tools, the choices.

    model = config.model("smollm2", base_url="http://127.0.0.1:8080/v1", grammar=True)
    tools = config.tools(root="./docs", modules=["./mytools.py"])
    agent = config.agent(model, tools, Choices(limits={"steps": 6}, parser="naive"))
    config.describe(agent, sources)        # the whole configuration, for a trace's run_start

The command line builds its agents here, and `react-text run --script TRACE` rebuilds one from
what a trace recorded (`Choices.recorded`), so a replay runs with the settings of the live run
unless flags override them. Whatever a user can get wrong here (a model file or tools module that
is not there, a tools module that does not import, a folder that is a file) raises ConfigError
with one line that says what to do; the command line prints it and exits 2.
"""

from __future__ import annotations

import dataclasses
import inspect
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from react_text import parser, prompting
from react_text.core.errors import ConfigError, ModelError, safe_url, set_up
from react_text.core.limits import Limits
from react_text.core.model_info import describe as describe_model
from react_text.core.model_info import grammar_on
from react_text.core.types import Api, Model
from react_text.prompting import Prompting
from react_text.tokens import meter as budget
from react_text.tools.importing import user_module
from react_text.tools.tool import Tool, as_tools, listing, tool

__all__ = [
    "Choices",
    "agent",
    "describe",
    "is_in_process",
    "model",
    "module_tools",
    "settle",
    "tools",
]


@dataclass(frozen=True, slots=True)
class Choices:
    """What was chosen for a run, by flags or by a trace; what is left out is the model's recommendation.

    `limits` and `prompting` hold fields of Limits and Prompting by name; `root`, `modules` and
    `mcp` (MCP servers: command lines or URLs) say where the tools come from (besides the built-in
    calculator and python_doc).
    """

    limits: Mapping[str, Any] = field(default_factory=dict)
    prompting: Mapping[str, Any] = field(default_factory=dict)
    parser: str | None = None
    root: str | None = None
    modules: tuple[str, ...] = ()
    mcp: tuple[str, ...] = ()

    def over(self, base: Choices) -> Choices:
        """These choices, and `base`'s where these make none (flags over a trace)."""
        return Choices(
            limits={**base.limits, **self.limits},
            prompting={**base.prompting, **self.prompting},
            parser=self.parser or base.parser,
            root=self.root if self.root is not None else base.root,
            modules=self.modules or base.modules,
            mcp=self.mcp or base.mcp,
        )

    @classmethod
    def recorded(cls, start: Mapping[str, Any]) -> Choices:
        """The choices a trace's `run_start` event recorded (see `describe`)."""
        sources = start.get("sources") or {}
        known_limits = {f.name for f in dataclasses.fields(Limits)}
        known_prompting = {f.name for f in dataclasses.fields(Prompting)}
        return cls(
            limits={k: v for k, v in (start.get("limits") or {}).items() if k in known_limits},
            prompting={k: v for k, v in (start.get("prompting") or {}).items() if k in known_prompting},
            parser=start.get("parser"),  # trace_schema took only a built-in's name or a module:function
            root=sources.get("root"),
            modules=tuple(sources.get("modules") or ()),
            mcp=tuple(sources.get("mcp") or ()),
        )


# --- models ---------------------------------------------------------------------------------------


def model(
    name: str | None = None,
    *,
    base_url: str | None = None,
    api: Api | None = None,
    stream: bool = False,
    grammar: bool | None = None,
    threads: int | None = None,
    server: str | None = None,
    temperature: float | None = None,
    think: bool = False,
    token_ids: bool = False,
) -> Model:
    """The model a name stands for: None for the embedded one, a `.gguf` path or a fetched model's
    name (`react-text fetch`) to run in-process, else a model on an OpenAI-compatible server at
    `base_url` (default: $OPENAI_BASE_URL, else OpenAI). `server` says what the server is
    ("llama.cpp", "vllm", "sglang", "ollama", "openai"): where the protocol grammar goes, when
    `grammar=True` sends one (off by default on a server; `grammar=True` alone means a llama.cpp
    server, or what the server says it is). `temperature`: None for the
    backend's default (0). `think`: under the grammar, a free <think> block may come before the
    protocol. `token_ids`: ask a server for the token ids it sampled, for trajectories (where it
    can give them: vLLM, llama.cpp; the in-process model always keeps them)."""
    from react_text.backends.download import MODELS, resolve

    if name in MODELS and not base_url:
        local = resolve(name)
        if local is None:
            raise ConfigError(f"{name} is not downloaded yet: react-text fetch {name}")
        name = str(local)
    if name is None or name.endswith(".gguf"):
        if base_url:
            raise ConfigError("--base-url needs --model NAME (the model's name on that server)")
        if name is not None and not Path(name).is_file():
            raise ConfigError(f"no model file at {name}")
        from react_text.backends.local import LocalModel

        try:
            with set_up():
                return LocalModel(
                    name, api=api or "completion", n_threads=threads, temperature=temperature or 0.0, think=think
                )
        except ModelError as exc:  # a missing extra or model file: set-up, not a failed call
            raise ConfigError(str(exc)) from exc
    from react_text.backends.openai_api import OpenAIChat, OpenAICompletion

    backend = OpenAICompletion if api == "completion" else OpenAIChat
    from react_text.backends import wire

    if server is not None and server not in wire.SERVERS:
        raise ConfigError(f"--server must be one of {', '.join(wire.SERVERS)}, not {server!r}")
    if grammar and server is not None and server not in wire.GRAMMAR_SERVERS:
        raise ConfigError(f"{server} takes no grammar: leave --grammar off (stop sequences and the guard still apply)")
    with set_up():  # a URL that is none (no http://), an empty name: one line, before any call
        return backend(
            name,
            base_url=base_url,  # None: $OPENAI_BASE_URL (checked and named as such), else OpenAI
            stream=stream,
            grammar=bool(grammar),
            server=server,
            temperature=0.0 if temperature is None else temperature,
            think=think,
            token_ids=token_ids,
        )


def is_in_process(chosen: Model) -> bool:
    """A model whose calls run one at a time in this process (llama.cpp), not on a server."""
    return describe_model(chosen).serial


# --- tools ----------------------------------------------------------------------------------------


def tools(*, root: str | None = None, modules: Iterable[str] = ()) -> list[Tool]:
    """The built-in calculator and python_doc; search and read under `root`; the public functions
    of each module in `modules` (a module name on the path, or a path to a .py file)."""
    from react_text.tools.toolbox import default_tools

    if root is not None:
        folder = Path(root)
        if not folder.exists():
            raise ConfigError(f"--root {root}: no such folder")
        if not folder.is_dir():
            raise ConfigError(f"--root {root}: not a folder (give the folder the file tools may read)")
    found: list[Tool] = default_tools(root)
    for spec in modules:
        found += module_tools(spec)
    with set_up(": rename one in your tools module"):  # two tools share a name
        return list(as_tools(found))


def module_tools(spec: str) -> list[Tool]:
    """The tools a module defines: its public functions (and `Tool` values), not its classes or
    what it imports."""
    module = _import(spec)
    found: list[Tool] = []
    for key, value in vars(module).items():
        if key.startswith("_"):
            continue
        fn = value.fn if isinstance(value, Tool) else value
        if not (inspect.isfunction(fn) and fn.__module__ == module.__name__):
            continue
        with set_up():
            try:
                found.append(value if isinstance(value, Tool) else tool(value))
            except (TypeError, ValueError) as exc:  # said with the function's name and module
                raise ValueError(f"{key} in the tools module {spec!r} cannot be a tool: {exc}") from exc
    if not found:
        raise ConfigError(f"the tools module {spec!r} defines no public functions to use as tools")
    return found


def _import(spec: str) -> ModuleType:
    return user_module(
        spec,
        flag=f"--tools {spec}",
        label=f"the tools module {spec!r}",
        missing=f"--tools {spec}: no such module here (give a module on the path, or a file: --tools ./{spec}.py)",
        prefix="react_text_tools_",
    )


# --- the agent ------------------------------------------------------------------------------------


def settle(chosen: Model, choices: Choices) -> tuple[Limits, Prompting]:
    """The Limits and Prompting of the choices, the rest as the model recommends (else the defaults)."""
    info = describe_model(chosen)
    limits = info.limits or Limits()
    prompt = info.prompting or Prompting()
    with set_up():  # a limit out of range, an example that names no template
        return dataclasses.replace(limits, **choices.limits), dataclasses.replace(prompt, **choices.prompting)


def agent(
    chosen: Model,
    tool_list: Sequence[Tool | Callable[..., object]],
    choices: Choices,
    *,
    approve: Any = None,
    count_tokens: budget.Counter | None = None,
) -> Any:
    """An Agent with the choices made, the rest as the model recommends (else the defaults)."""
    from react_text.core.agent import Agent

    read = parser_named(choices.parser)
    limits, prompt = settle(chosen, choices)
    with set_up():  # a grammar the model cannot take, two tools with one name
        return Agent(
            chosen,
            tools=tool_list,
            limits=limits,
            prompting=prompt,
            approve=approve,
            parser=read,
            count_tokens=count_tokens,
        )


def describe(
    run_agent: Any, *, root: str | None = None, modules: Iterable[str] = (), mcp: Iterable[str] = ()
) -> dict[str, Any]:
    """The whole configuration of an agent's runs, fit for a trace: never a key or a URL's credentials.

    `root`, `modules` and `mcp` say where the command line found the tools, so a replay can find
    them again (an MCP server's URL without credentials or query; its environment and headers,
    which may hold keys, are never recorded: a replay is given them again).
    """
    chosen = run_agent.model
    info = describe_model(chosen)
    counted_by = "model" if run_agent.count_tokens is None and info.count_tokens is not None else None
    example = run_agent.prompting.example
    description: dict[str, Any] = {
        "model": {
            "api": chosen.api,
            "name": chosen.name,
            "backend": type(chosen).__name__,
            "base_url": safe_url(info.url).rstrip("/") if info.url else None,
            "stream": info.stream,
            "accepts_grammar": chosen.accepts_grammar,
            "grammar": grammar_on(chosen, info, run_agent.prompting.grammar),  # whether this run used it
            "tokenizer": counted_by or budget.encoding_name(chosen.name),
            **_server(chosen),
        },
        "tools": [
            {
                "name": t.name,
                "form": t.form,
                "description": t.description,
                "risky": t.risky,
                "timeout": t.timeout,
                "pure": t.pure,
                "idempotent": t.idempotent,
            }
            for t in run_agent.tools
        ],
        "listing": listing(run_agent.tools),
        "parser": _parser_name(run_agent.parser),
        "limits": dataclasses.asdict(run_agent.limits),
        "prompting": dataclasses.asdict(run_agent.prompting),
        "example": (
            prompting.example_for(run_agent.tools, parallel=run_agent.prompting.parallel)
            if example == "auto"
            else example
        ),
    }
    modules, mcp = list(modules), list(mcp)
    if root is not None or modules or mcp:
        description["sources"] = {
            "root": str(Path(root).resolve()) if root is not None else None,
            "modules": [str(Path(m).resolve()) if m.endswith(".py") or os.sep in m else m for m in modules],
            "mcp": [safe_url(m) if m.startswith(("http://", "https://")) else m for m in mcp],
        }
    return description


def _server(chosen: object) -> dict[str, Any]:
    """What a server model's server is and why we think so (it said, or it was given), for the trace."""
    identity = getattr(chosen, "identity", None)
    server, said = getattr(identity, "server", None), getattr(identity, "said", None)
    return {"server": server, "server_said": said} if isinstance(said, str) else {}


def parser_named(name: str | None) -> Any:
    """The built-in parser `name` names (None: the tolerant one); ConfigError for any other name,
    such as a trace's own function (`module:function`), which only Python can hand an Agent."""
    name = name or "tolerant"
    if name in parser.PARSERS:
        return parser.PARSERS[name]
    choose = f"choose one of {', '.join(sorted(parser.PARSERS))}"
    if ":" in name:
        raise ConfigError(f"the parser {name!r} is a function of its own, which the command line cannot load: {choose}")
    raise ConfigError(f"no parser {name!r}; {choose}")


def _parser_name(read: object) -> str:
    """A built-in parser's name, or a function's `module:qualname` (as `trace_schema` takes it)."""
    for name, known in parser.PARSERS.items():
        if known is read:
            return name
    named = getattr(read, "__qualname__", type(read).__name__)
    return f"{getattr(read, '__module__', None) or type(read).__module__}:{named}"
