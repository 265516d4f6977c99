"""OpenAIChat and OpenAICompletion: any OpenAI-compatible server through the official `openai` client.

Works with OpenAI itself, vLLM, llama.cpp's servers, Ollama and LM Studio (`base_url=...`). The
client retries timeouts, 429 and 5xx answers with backoff, honouring `Retry-After`, up to
`max_retries`; what still fails becomes `ModelError` with the URL tried and the server's words,
never the API key. A server that says the prompt does not fit its context window raises
`ContextLengthError`; an answer that is not a reply (no choices, an HTML page) raises ModelError.

Sync and async: `generate` goes through `openai.OpenAI`, `agenerate` through `openai.AsyncOpenAI`
(built on first use, one per event loop, from the sync client's settings, default headers and
query, organization and project included, unless `async_client=` is given). Both build the same
request and read the answer with the same code (`wire`), and both send it with the client's
low-level `post` (the body as built here, the answer as plain JSON), not
`chat.completions.create`, whose conversion of every argument against its typed parameters cost
about 1.7 ms a call.

At scale (thousands of async episodes against a server), `agenerate` to a plain `http://` server
takes the lean path (`http1`: a prepared body on a keep-alive connection from one pool per event
loop, shared by the backends in it), when this backend built its own client, no proxy is set in
the environment and the call is not streamed. Its first failure hands the request to the client,
which retries, waits and raises as ever (see `_alean`); the tries add up to the client's own.

A grammar (the protocol's, see `react_text.grammar.protocol`) is sent only when asked for: `grammar=True`
here, or `Prompting(grammar=True)` (`model_info.grammar_on`); naming the server never turns it on.
It goes where the server takes one: llama.cpp's `grammar`, vLLM's `structured_outputs:
{"grammar": ...}`, SGLang's `ebnf`; Ollama and OpenAI take none. What the server is comes from
`server=`, else from the server itself, asked once on first use (`identify`: llama.cpp's /props,
SGLang's /server_info, vLLM's /version, Ollama's /api/version, llama-cpp-python's /openapi.json);
`identity.said` says what was found and why, in the log and in a trace's run_start. A server that
says none of these takes no grammar; `grammar=True` with one that does not say means llama.cpp, as
it always has.

Stop sequences: sent as `stop`; when a server answers 400 naming the `stop` parameter (OpenAI's
reasoning models do), the call is retried without it and this backend never sends `stop` again:
the rejection belongs to the model behind it, not to one run, so later runs would only pay for
the same 400 again. The loop's client-side cut still applies. Streaming (`stream=True`) stops
reading as soon as a made-up observation begins in the content (reasoning is never cut).

The context window (`context_window`, `await acontext_window()`) is asked of the server once:
vLLM's `GET /v1/models` (`max_model_len`), then llama.cpp's `GET /props` (`n_ctx`); None when the
server cannot say (OpenAI itself is not asked). A context-length error that names the window
(most do) sets it when it was unknown: llama-cpp-python's server says it no other way.

Token ids (`token_ids=True`, for trajectories) are asked where each server gives them (`wire.token_fields`);
llama.cpp's server gives the sampled ids in its log-probs but not the prompt's, so it is asked how
it tokenized the prompt (its /tokenize, after /apply-template for chat) and the ids are exact. A
server said llama.cpp that cannot say (llama-cpp-python's) is asked once; `tokenizer=` serves then.

A streamed request that the server drops without a word (llama-cpp-python's server does, for a
prompt past its window) is asked once more unstreamed, to hear the error.
"""

from react_text.backends.openai_api.chat import OpenAIChat
from react_text.backends.openai_api.completion import OpenAICompletion

__all__ = [
    "OpenAIChat",
    "OpenAICompletion",
]
