"""What OpenAI-compatible servers answer, read without trusting it. Pure: no I/O.

The `openai` client builds its response objects without validating them, so a 200 answer with no
choices, `choices: null`, an HTML page or a choice with no message arrives as whatever the server
sent (a string, a list, an object missing fields). Everything here reads those objects, or plain
JSON, field by field and raises `Malformed` (a ValueError the backends turn into ModelError) for
an answer that is not a reply, never IndexError, TypeError or AttributeError.

Reasoning that a server splits out of the reply comes as `reasoning_content` (vLLM's reasoning
parsers, llama.cpp's `--reasoning-format`, DeepSeek's API) or `reasoning` (OpenRouter, Ollama,
newer vLLM); it goes to `Reply.reasoning`, and the content alone is the reply's text.

One module for each thing read:

    replies     the reply in a whole answer or a stream (`read_answer`, `StreamReading`)
    usage       the token counts reported with it
    errors      what an error says (a prompt past the context window, a rejected `stop`, a
                connection dropped without a word, an answer cut short); the client's retry rule
    servers     what each server is called, where it takes a grammar, where it says its window
    tokens      token ids for trajectories: what each server is asked, its /tokenize, the ids read
    fields      a field of an answer, read without trusting it (shared by the others)

Everything is re-exported here: `wire.read_answer`, `wire.grammar_fields`, ...
"""

from __future__ import annotations

from react_text.backends.wire.errors import (
    cut_said,
    dropped,
    error_words,
    exceeds_context,
    first_backoff,
    names_stop,
    prompt_said,
    retried,
    retry_wait,
    window_said,
)
from react_text.backends.wire.replies import EmptyStream, Malformed, Stalled, StreamReading, read_answer
from react_text.backends.wire.servers import GRAMMAR_SERVERS, SERVERS, Server, WindowPlan, grammar_fields, window_plan
from react_text.backends.wire.tokens import Ids, prompt_plan, read_tokens, token_fields
from react_text.backends.wire.usage import read_usage

__all__ = [
    "GRAMMAR_SERVERS",
    "SERVERS",
    "EmptyStream",
    "Ids",
    "Malformed",
    "Server",
    "Stalled",
    "StreamReading",
    "WindowPlan",
    "cut_said",
    "dropped",
    "error_words",
    "exceeds_context",
    "first_backoff",
    "grammar_fields",
    "names_stop",
    "prompt_plan",
    "prompt_said",
    "read_answer",
    "read_tokens",
    "read_usage",
    "retried",
    "retry_wait",
    "token_fields",
    "window_plan",
    "window_said",
]
