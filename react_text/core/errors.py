"""The exceptions react-text raises. What a model gets wrong is never one of them: a malformed reply,
an unknown tool or a tool that raises becomes an observation, and a run that hits a limit returns a
RunResult with its `stop_reason`.

    ReactTextError             base of everything below
    ├── ModelError             the model or the network failed (backends raise it; Agent.run
    │   │                      turns it into stop_reason "model_error")
    │   └── ContextLengthError the request did not fit the model's context window (the run
    │                          elides old steps and retries once)
    └── ConfigError            the set-up is wrong: a missing extra or file, a tools module that
                               does not import, a bundled BPE file that fails its hash check
                               (the CLI prints it in one line and exits 2)

Programmer errors (two tools with one name, a bad argument) raise ValueError or TypeError from
the Python API; where a user's words set a run up (the command line), `set_up` is the one map
that turns them into ConfigError. Three other names are ConfigError itself, not classes of their
own: `TokenizerError` (its 0.1 name), `react_text.backends.local.MissingExtra` (an optional
package or the embedded model is not installed) and `react_text.backends.download.DownloadError` (a model
file could not be fetched or did not match its hash). tests/test_surface.py checks that this tree
is exactly the classes.

One class stands outside the tree, as a programmer error: `EventError`, a RuntimeError, raised
when a driver sends an episode an event its last command did not ask for (commands.py holds the
contract). It is a bug in the driver, not a failure of a run, and the episode is unchanged by it.
"""

from __future__ import annotations

import contextlib
import os
import urllib.parse
from collections.abc import Iterator

import regex

__all__ = [
    "ConfigError",
    "ContextLengthError",
    "EventError",
    "ModelError",
    "ReactTextError",
    "TokenizerError",
    "safe_url",
    "scrub",
    "set_up",
]

_SECRET = regex.compile(r"\b(?:sk|pk|rk)-[A-Za-z0-9_\-]{8,}|(?i:bearer\s+)[A-Za-z0-9._\-]{8,}")


class ReactTextError(Exception):
    """Base class of react-text's exceptions."""


class ModelError(ReactTextError):
    """A model call failed: the server answered with an error, or could not be reached."""


class ContextLengthError(ModelError):
    """The prompt and the reply allowance did not fit the model's context window.

    `window` is the window in tokens when the server said it (OpenAI and vLLM say "maximum context
    length is N tokens"; llama.cpp's server sends `n_ctx`), else None. `prompt_tokens` is the
    server's count of the prompt when it said it ("372 in the messages"), else None: with it the
    retry's allowance is planned in the server's own units.
    """

    def __init__(self, message: str, *, window: int | None = None, prompt_tokens: int | None = None) -> None:
        super().__init__(message)
        self.window = window
        self.prompt_tokens = prompt_tokens


class ConfigError(ReactTextError):
    """Something in the set-up is wrong or missing; the message says what to do."""


TokenizerError = ConfigError


class EventError(RuntimeError):
    """An episode was sent an event its last command did not ask for (a Ran after a Send, a second
    start, anything after Done); the message says what was expected and what came. Nothing in the
    episode changed: as h11's LocalProtocolError, it is the caller's bug, raised before any state moves."""


@contextlib.contextmanager
def set_up(hint: str = "") -> Iterator[None]:
    """The one map from set-up mistakes to ConfigError, at the boundary where a user's words make a
    run (the command line wraps in it whatever builds the model, the tools, MCP sessions, the
    agent): a ValueError or TypeError raised there is a mistake in what was asked for, not a bug
    to show as a traceback. `hint` is added to its message (what to do about it)."""
    try:
        yield
    except (ValueError, TypeError) as exc:
        raise ConfigError(f"{exc}{hint}") from exc


def scrub(text: str) -> str:
    """Remove API keys (sk-..., the OPENAI_API_KEY value) and bearer tokens from `text`."""
    key = os.environ.get("OPENAI_API_KEY")
    if key and len(key) >= 8:
        text = text.replace(key, "[secret]")
    return _SECRET.sub("[secret]", text)


def safe_url(url: object) -> str:
    """A URL fit for a message: no user, password, query or fragment."""
    parts = urllib.parse.urlsplit(str(url))
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urllib.parse.urlunsplit((parts.scheme, host, parts.path, "", ""))
