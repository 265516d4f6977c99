"""What a failed call comes to: every failure of the `openai` client, and of reading its answer, as
ModelError with the URL tried (without credentials) and the server's words, never the API key;
ContextLengthError when the server says the prompt did not fit."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

from react_text.backends import http1, wire
from react_text.core.errors import ModelError, scrub

__all__ = ["failures"]

Failure = Callable[..., Callable[[str], ModelError]]  # the server's words -> the error to raise with them


@contextlib.contextmanager
def failures(url: str, context_failure: Failure) -> Iterator[None]:
    """Turn every failure of a call to `url` (as shown: `safe_url`) into ModelError, or into what
    `context_failure` makes of the server's words (ContextLengthError when it did not fit)."""
    import openai

    try:
        yield
    except openai.APITimeoutError as exc:
        raise ModelError(scrub(f"{url} did not answer in time ({exc})")) from exc
    except openai.APIConnectionError as exc:
        cut = _cut(exc)
        if cut is not None:  # reached, and answering: not "could not reach"
            received, expected = cut
            said = f" after {received} of {expected} bytes" if received is not None else ""
            raise ModelError(
                scrub(f"the answer from {url} was cut short{said} (the connection closed before its end)")
            ) from exc
        raise ModelError(scrub(f"could not reach {url}: {exc}")) from exc
    except openai.APIStatusError as exc:
        words = wire.error_words(exc)
        failure = context_failure(words, exc.body)
        raise failure(scrub(f"{url} answered {exc.status_code}: {words}")) from exc
    except openai.APIError as exc:  # an error event inside a 200 stream
        failure = context_failure(exc.message, exc.body)
        raise failure(scrub(f"{url} sent an error: {exc.message}")) from exc
    except wire.Stalled as exc:
        raise ModelError(scrub(f"{url} did not answer in time ({exc})")) from exc
    except (openai.OpenAIError, ValueError, UnicodeDecodeError) as exc:  # wire.Malformed is a ValueError
        raise ModelError(scrub(f"bad answer from {url}: {exc}")) from exc


def _cut(exc: BaseException) -> tuple[int | None, int | None] | None:
    """How many of how many bytes came of an answer cut short (the server closed the connection
    before its end), from what `exc` was raised from: the lean path's Cut, or httpx's words; None
    when it was no such thing."""
    cause = exc.__cause__
    while cause is not None:
        if isinstance(cause, http1.Cut):
            return cause.received, cause.expected
        said = wire.cut_said(str(cause))
        if said is not None:
            return said
        cause = cause.__cause__ or cause.__context__
    return None
