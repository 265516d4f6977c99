"""Model backends, one small module each, all implementing `react_text.core.types.Model` structurally:
`openai_api` (any OpenAI-compatible server), `local` (llama.cpp in-process), `scripted` (for tests
and teaching). `wire` reads what OpenAI-compatible servers answer, without trusting it."""

__all__: list[str] = []
