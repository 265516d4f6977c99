"""The options of OpenAIChat and OpenAICompletion, each refused when the backend is made, naming it
(not at the first call, as "could not reach" or an error of the client's)."""

from __future__ import annotations

import os
import urllib.parse

from react_text.core.errors import safe_url, scrub

__all__ = ["ENGINE_FIELDS", "check_client", "check_options", "check_url"]

# What the engine writes in every request itself, and what to use instead: in `extra_body` each
# would replace it (the body is the arguments updated with extra_body), so the planned allowance,
# the prompt, the stop sequences or the run's seed would be lost without a word.
ENGINE_FIELDS = {
    "model": "it is the backend's first argument",
    "messages": "the run writes the prompt",
    "prompt": "the run writes the prompt",
    "max_tokens": "the engine plans each call's allowance (set Limits(reply_tokens=...))",
    "max_completion_tokens": "the engine plans each call's allowance (set Limits(reply_tokens=...))",
    "stop": "the engine sends the protocol's stop sequences (send_stop=False sends none)",
    "stream": "give stream=True",
    "stream_options": "give stream=True",
    "temperature": "give temperature=...",
    "seed": "a run sends its own (agent.run(task, seed=...))",
    "n": "a run reads one reply a call; more would be billed and never read",
}


def check_options(
    model: object,
    *,
    base_url: object,
    api_key: object,
    timeout: object,
    max_retries: object,
    extra_body: object,
    flags: dict[str, object],
) -> None:
    """The options of OpenAIChat and OpenAICompletion, each refused when the backend is made, naming it
    (not at the first call, as "could not reach" or an error of the client's)."""
    if not isinstance(model, str):
        raise TypeError(f"model must be the model's name on the server, as text, not {model!r}")
    if not model.strip():
        raise ValueError("model is empty: give the model's name on the server")
    if base_url is not None:
        check_url("base_url", base_url)
    elif os.environ.get("OPENAI_BASE_URL"):  # where the client goes without base_url
        check_url("OPENAI_BASE_URL", os.environ["OPENAI_BASE_URL"])
    if api_key is not None and not isinstance(api_key, str):
        raise TypeError(f"api_key must be text or None, not {type(api_key).__name__}")  # never the value: a secret
    if timeout is not None:
        if isinstance(timeout, bool) or not isinstance(timeout, int | float):
            raise TypeError(f"timeout must be a number of seconds or None, not {timeout!r}")
        if not (0 < timeout < float("inf")):
            raise ValueError(f"timeout must be a positive number of seconds or None, not {timeout!r}")
    if isinstance(max_retries, bool) or not isinstance(max_retries, int):
        raise TypeError(f"max_retries must be a whole number, not {max_retries!r}")
    if max_retries < 0:
        raise ValueError(f"max_retries must be 0 or more, not {max_retries}")
    for option, value in flags.items():
        if not isinstance(value, bool):
            raise TypeError(f"{option} must be True or False, not {value!r}")
    if extra_body is not None:
        if not isinstance(extra_body, dict):
            raise TypeError(
                f"extra_body must be a dict of fields to add to every request, not {type(extra_body).__name__}"
            )
        for key in extra_body:
            if not isinstance(key, str):
                raise TypeError(f"extra_body's fields are named by text, not {key!r}")
            if key in ENGINE_FIELDS:
                raise ValueError(f"extra_body may not set {key!r}: {ENGINE_FIELDS[key]}")


def check_url(option: str, url: object) -> None:
    if not isinstance(url, str):
        raise TypeError(f"{option} must be the server's URL, as text, not {url!r}")
    parts = urllib.parse.urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        shown = scrub(safe_url(url))
        hint = f"http://{shown}" if "://" not in url and url.strip() else "http://127.0.0.1:8000/v1"
        raise ValueError(f"{option} must be an http:// or https:// URL, not {shown!r} (say {hint})")


# What a backend calls on a client it is given (`client=`): the URL it names in messages and asks
# look-ups of, each request's `post`, a look-up's `with_options(...).get`; and, to build its async
# client for each event loop when none is given (`async_client=`), the sync client's settings.
_CALLED = ("base_url", "post", "get", "with_options")
_COPIED = ("api_key", "timeout", "max_retries")


def check_client(backend: str, client: object, async_client: object) -> None:
    """Refuse, naming it, what a given client lacks of what the backend calls (at construction: not
    an AttributeError at the first call, nor one that a property swallows, so that the model seems to
    lack `accepts_grammar`)."""
    needed = _CALLED + (_COPIED if async_client is None else ())
    missing = [name for name in needed if not _has(client, name)]
    if missing:
        lacks = ", ".join(missing)
        also = "" if async_client is not None else f" (and {', '.join(_COPIED)}, to build an async client)"
        raise TypeError(
            f"{backend}'s client has no {lacks}: it calls the client's {', '.join(_CALLED)}{also}; "
            f"give an openai.OpenAI, or an object with those, not {type(client).__name__}"
        )


def _has(client: object, name: str) -> bool:
    """Whether `client` has the attribute (a property that raises anything but AttributeError raises it here)."""
    try:
        getattr(client, name)
    except AttributeError:
        return False
    return True
