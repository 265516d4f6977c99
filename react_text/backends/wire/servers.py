"""What each server is called, where each takes a grammar, and where each says its context window.
Pure: no I/O (`window_plan` yields the URLs to GET and is sent their answers)."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any, Literal, get_args
from urllib.parse import urlsplit, urlunsplit

import regex

from react_text.backends.wire.fields import field, window

__all__ = ["GRAMMAR_SERVERS", "SERVERS", "Server", "WindowPlan", "at", "grammar_fields", "window_plan"]

_SILENT_HOSTS = ("api.openai.com",)  # servers known not to say their context window


Server = Literal["llama.cpp", "vllm", "sglang", "ollama", "openai"]
SERVERS: tuple[Server, ...] = get_args(Server)
# Where each server takes a grammar in the request body (one grammar text serves them all: llama.cpp
# reads it as GBNF, xgrammar, behind vLLM and SGLang, reads the same text as its EBNF):
#   llama.cpp     "grammar": GBNF (llama.cpp's server and llama-cpp-python's)
#   vllm          "structured_outputs": {"grammar": EBNF} (0.12 and later; `guided_grammar` is gone)
#   sglang        "ebnf": EBNF
#   ollama        none: it has no grammar field; stop sequences and the guard hold the protocol
#   openai        none
GRAMMAR_SERVERS: tuple[Server, ...] = ("llama.cpp", "vllm", "sglang")


def grammar_fields(server: Server, grammar: str, version: str | None = None) -> dict[str, Any]:
    """The request-body fields that carry `grammar` to `server` (of `version`, when it said one);
    {} for a server that takes none. vLLM reads `structured_outputs.grammar` from 0.12 on and
    `guided_grammar` before (its OpenAI protocol's field since 0.4); a vLLM whose version is not
    known is taken to be recent."""
    if server == "llama.cpp":
        return {"grammar": grammar}
    if server == "vllm":
        if _release(version) < (0, 12):
            return {"guided_grammar": grammar}
        return {"structured_outputs": {"grammar": grammar}}
    if server == "sglang":
        return {"ebnf": grammar}
    return {}


_RELEASE = regex.compile(r"\d{1,9}+(?:\.\d{1,9}+)*+")  # 9 digits a part: an int, never a huge one


def _release(version: str | None) -> tuple[int, ...]:
    """The leading release numbers of a version ("0.9.2" -> (0, 9, 2), "0.11.0rc1" -> (0, 11, 0));
    (999,) when there are none (unknown: the newest)."""
    numbers = _RELEASE.match((version or "").strip())
    return tuple(int(n) for n in numbers.group().split(".")) if numbers else (999,)


WindowPlan = Generator[str, object, int | None]  # yields URLs to GET, is sent each answer


def window_plan(base_url: str, name: str) -> WindowPlan:
    """Where to ask for the context window: yields each URL to GET, is sent its JSON (None when
    the GET failed), returns the window or None. OpenAI itself does not say, so is not asked."""
    if urlsplit(base_url).hostname in _SILENT_HOSTS:
        return None
    window = _window_from_models((yield at(base_url, "/models")), name)
    if window is None:
        window = _window_from_props((yield at(base_url, "/props", root=True)))
    return window


def at(base_url: str, path: str, *, root: bool = False) -> str:
    """The URL of `path` under `base_url` (under its root, the base without a final /v1, when `root`),
    joined before the query: what the user and the query say stays in the request, to be sent, and
    never in words (`errors.safe_url` says a URL)."""
    parts = urlsplit(base_url)
    base = parts.path.rstrip("/")
    return urlunsplit(
        (parts.scheme, parts.netloc, (base.removesuffix("/v1") if root else base) + path, parts.query, "")
    )


def _window_from_models(listing: object, name: str) -> int | None:
    """vLLM's (and SGLang's) `GET /v1/models`: `max_model_len` of the served model."""
    models = field(listing, "data")
    if not isinstance(models, list):
        return None
    entries = [m for m in models if field(m, "id") == name] or (models if len(models) == 1 else [])
    return window(field(entries[0], "max_model_len")) if entries else None


def _window_from_props(props: object) -> int | None:
    """llama.cpp's server `GET {root}/props`: `default_generation_settings.n_ctx` (per slot), else a
    top-level `n_ctx` (newer servers)."""
    settings = field(props, "default_generation_settings")
    return window(field(settings, "n_ctx")) or window(field(props, "n_ctx"))
