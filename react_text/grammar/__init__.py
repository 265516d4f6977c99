"""Grammars of the protocol: the GBNF the engine writes (and its EBNF dialect), each tool's typed
input, and reading a grammar back."""

__all__: list[str] = []
