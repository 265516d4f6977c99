"""What a server is, asked of the server itself. Pure: yields the URLs to GET, is sent what came back.

Each server says what it is at a path of its own (read from their sources):

    llama.cpp's server      GET /props            {"default_generation_settings": {...}, "total_slots": 1,
                                                   "model_path": ..., "build_info": "b5678-abcdef0", ...}
    SGLang                  GET /server_info      its server arguments, "internal_states": [...],
                            (older: /get_server_info)                   "version": "0.5.4", ...
    vLLM                    GET /version          {"version": "0.12.0"}, and GET /v1/models says
                                                  "owned_by": "vllm" (/version alone is too common a path)
    Ollama                  GET /api/version      {"version": "0.12.6"}
    llama-cpp-python        GET /openapi.json     {"info": {"title": "🦙 llama.cpp Python API", ...}}

They are asked in that order and the first that answers as its server does decides. OpenAI's own
API is not asked. A server that answers none of them is unknown: it gets no grammar. What was found
and why is the `Identity` (`said` is the reason, in words, for the log and the trace).
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from react_text.backends.wire import Server
from react_text.backends.wire.servers import at
from react_text.core.errors import safe_url

__all__ = ["FIELDS", "UNREACHABLE", "Identity", "Unreachable", "given", "plan"]
_OPENAI_HOSTS = ("api.openai.com",)
_LLAMA_CPP_PYTHON = "llama.cpp Python API"


class Unreachable:
    """Sent instead of an answer when the server could not be reached at all (nothing more is asked)."""


UNREACHABLE = Unreachable()


@dataclass(frozen=True, slots=True)
class Identity:
    """What a server is (None: it did not say), why we think so, and what else it said that matters."""

    server: Server | None
    said: str  # the reason, in words: which path answered what
    reached: bool = True  # False: the server could not be reached, so nothing was learned
    reasoning_parser: str | None = None  # SGLang says it: its grammar then starts after the thinking
    version: str | None = None  # vLLM's, from GET /version: which field its grammar goes in


def plan(base_url: str) -> Generator[str, object, Identity]:
    """Yields each URL to GET; is sent its JSON (None when the GET failed or was not JSON,
    UNREACHABLE when nothing answered); returns the Identity."""
    host = urlsplit(base_url).hostname or ""
    if host in _OPENAI_HOSTS:
        return Identity("openai", f"{host} is OpenAI's own API (not asked)")
    root = safe_url(at(base_url, "", root=True))  # as it is said: no user, password or query
    asked: list[str] = []

    def get(path: str) -> Generator[str, object, object]:
        asked.append(path)
        return (yield at(base_url, path, root=True))

    props = yield from get("/props")
    if props is UNREACHABLE:
        return _unreachable(root)
    if isinstance(_field(props, "default_generation_settings"), Mapping):
        build = _field(props, "build_info")
        version = f" (build {build})" if isinstance(build, str) and build else ""
        return Identity("llama.cpp", f"GET /props answered as llama.cpp's server does{version}")
    for path in ("/server_info", "/get_server_info"):
        info = yield from get(path)
        version = _field(info, "version")
        if isinstance(version, str) and isinstance(_field(info, "internal_states"), list):
            parser = _field(info, "reasoning_parser")
            parser = parser if isinstance(parser, str) and parser else None
            thinking = f", reasoning parser {parser}" if parser else ""
            return Identity("sglang", f"GET {path} answered as SGLang does (version {version}{thinking})", True, parser)
    said = yield from get("/version")
    version = _field(said, "version")
    if isinstance(version, str) and isinstance(said, Mapping) and set(said) == {"version"}:
        models = _field((yield from get("/v1/models")), "data")
        models = models if isinstance(models, list) else []
        owners = {_field(m, "owned_by") for m in models}
        if "vllm" in owners:
            return Identity(
                "vllm", f"GET /version answered {version} and /v1/models says owned_by vllm", version=version
            )
    said = yield from get("/api/version")
    version = _field(said, "version")
    if isinstance(version, str) and isinstance(said, Mapping) and set(said) == {"version"}:
        return Identity("ollama", f"GET /api/version answered as Ollama does (version {version})")
    schema = yield from get("/openapi.json")
    title = _field(_field(schema, "info"), "title")
    if isinstance(title, str) and _LLAMA_CPP_PYTHON in title:
        version = _field(_field(schema, "info"), "version")
        return Identity("llama.cpp", f"GET /openapi.json names llama-cpp-python's server (version {version})")
    return Identity(None, f"{root} did not say what it is (asked {', '.join(asked)})")


def given(base_url: str, server: Server) -> Generator[str, object, Identity]:
    """What a server named by the caller (`server=`) is: the name, and what the name alone does not
    decide. A vLLM takes its grammar in `guided_grammar` before 0.12 and `structured_outputs` since,
    so it is asked its version (GET /version, as detection asks it); every other name decides alone,
    and nothing is asked. A vLLM that does not say is taken to be recent, as an unknown version is."""
    named = f"server={server!r} was given"
    if server != "vllm":
        return Identity(server, named)
    said = yield at(base_url, "/version", root=True)
    version = _field(said, "version")
    if isinstance(version, str) and version:
        return Identity(server, f"{named} and GET /version answered {version}", version=version)
    reached = said is not UNREACHABLE
    return Identity(server, f"{named}; GET /version did not say its version (0.12 or later is assumed)", reached)


def _field(answer: object, name: str) -> Any:
    """A field of a JSON object; None when absent or when `answer` is no object."""
    return answer.get(name) if isinstance(answer, Mapping) else None


def _unreachable(root: str) -> Identity:
    return Identity(None, f"{root} could not be reached to ask what it is", reached=False)


# Where the grammar goes, said with the identity in the log and the trace.
FIELDS: dict[Server, str] = {
    "llama.cpp": "its `grammar` field (GBNF)",
    "vllm": "`structured_outputs.grammar` (EBNF, xgrammar)",
    "sglang": "its `ebnf` field (EBNF, xgrammar)",
    "ollama": "nowhere: Ollama takes no grammar (stop sequences and the guard hold the protocol)",
    "openai": "nowhere: OpenAI takes no grammar (stop sequences and the guard hold the protocol)",
}
