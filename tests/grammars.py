"""Which strings a grammar admits, asked of the engines that will run it (not of our own reading).

    gbnf(grammar).accepts("THOUGHT: x\\nFINAL: 3")     llama.cpp's own grammar sampler
    ebnf(grammar).accepts(...)                         xgrammar's matcher (vLLM's and SGLang's engine)

GBNF: llama-cpp-python's `LlamaGrammar.from_string` only keeps the text; llama.cpp parses it when
a sampler is made from it (`llama_sampler_init_grammar`, NULL for a grammar it cannot parse). A
string is admitted when each of its tokens (in the embedded model's vocabulary, loaded alone) keeps
a finite logit through the sampler, and the end of text does too after the last.
"""

from __future__ import annotations

import ctypes
import functools
from dataclasses import dataclass
from typing import Any

import pytest
from extras import extra


class Refused(ValueError):
    """The engine could not parse the grammar."""


@functools.cache
def _vocab() -> tuple[Any, Any]:
    llama_cpp = pytest.importorskip("llama_cpp", reason='needs pip install "react-text[local]"')
    from react_text.backends.local import default_model_path

    llm = llama_cpp.Llama(model_path=str(default_model_path()), vocab_only=True, verbose=False)
    return llm, llama_cpp.llama_model_get_vocab(llm._model.model)


@dataclass(frozen=True)
class Gbnf:
    text: str

    def accepts(self, reply: str) -> bool:
        import llama_cpp

        llm, vocab = _vocab()
        sampler = llama_cpp.llama_sampler_init_grammar(vocab, self.text.encode(), b"root")
        if not sampler:
            raise Refused(f"llama.cpp cannot parse the grammar:\n{self.text}")
        try:
            end = llama_cpp.llama_vocab_eos(vocab)
            for token in [*llm.tokenize(reply.encode(), add_bos=False, special=False), end]:
                data = (llama_cpp.llama_token_data * 1)()
                data[0].id, data[0].logit, data[0].p = token, 0.0, 0.0
                candidates = llama_cpp.llama_token_data_array(data=data, size=1, selected=-1, sorted=False)
                llama_cpp.llama_sampler_apply(sampler, ctypes.byref(candidates))
                if data[0].logit == float("-inf"):
                    return False
                if token != end:
                    llama_cpp.llama_sampler_accept(sampler, token)
            return True
        finally:
            llama_cpp.llama_sampler_free(sampler)


def gbnf(text: str) -> Gbnf:
    """The grammar as llama.cpp reads it; raises Refused when llama.cpp cannot parse it."""
    grammar = Gbnf(text)
    grammar.accepts("")  # parses it
    return grammar


@dataclass(frozen=True)
class Ebnf:
    matcher_of: Any  # a function of no arguments: a fresh matcher

    def accepts(self, reply: str) -> bool:
        matcher = self.matcher_of()
        return bool(matcher.accept_string(reply)) and bool(matcher.is_terminated())


def ebnf(text: str) -> Ebnf:
    """The grammar as xgrammar (behind vLLM and SGLang) reads it: compiled with an empty vocabulary,
    so that it matches strings. Raises Refused when xgrammar cannot parse it."""
    xgr: Any = extra("xgrammar", "react-text[ebnf]")  # xgrammar needs torch
    try:
        compiled = xgr.GrammarCompiler(xgr.TokenizerInfo([]), cache_enabled=False).compile_grammar(text)
    except (RuntimeError, ValueError) as exc:
        raise Refused(f"xgrammar cannot parse the grammar: {exc}\n{text}") from exc
    return Ebnf(lambda: xgr.GrammarMatcher(compiled, terminate_without_stop_token=True))
