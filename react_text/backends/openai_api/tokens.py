"""A call as token ids (`token_ids=True`, for trajectories): read from the answer where the server
gives them (`wire.token_fields`); llama.cpp's server gives the sampled ids but not the prompt's, so
it is asked how it tokenized the prompt (its /tokenize, after /apply-template for chat), once more
each call, until it fails to say (llama-cpp-python's server, also "llama.cpp", cannot)."""

from __future__ import annotations

import dataclasses
import logging
from typing import Any

from react_text.backends import wire
from react_text.backends.openai_api.drive import adrive, drive
from react_text.backends.openai_api.lean import body
from react_text.backends.openai_api.transport import Transport
from react_text.core.types import Reply, Vocabulary

__all__ = ["TokenIds"]

log = logging.getLogger(__name__)


class TokenIds:
    """The token ids of one backend's calls, asked for with `token_ids=True` (else replies go as they are)."""

    def __init__(
        self, asked: bool, tokenizer: Vocabulary | None, transport: Transport, *, chat: bool, who: str
    ) -> None:
        self.asked = asked
        self.tokenizer = tokenizer
        self._transport = transport
        self._chat = chat
        self._who = who
        self._tokenizes = True  # False once the server has not said how it tokenized a prompt

    def reply(self, reply: Reply, answer: object, arguments: dict[str, Any], served: wire.Ids = None) -> Reply:
        """The reply with its token ids, when they were asked for and `answer` (a whole answer, or
        a stream's token fields gathered as one) has them (`served`: the prompt's ids as the server
        tokenized it)."""
        if not self.asked:
            return reply
        prompt = arguments.get("prompt")
        known = None
        if served is None and self.tokenizer is not None and isinstance(prompt, str):
            known = self.tokenizer.encode(prompt)
        tokens = wire.read_tokens(answer, reply.text, prompt=known, vocabulary=self.tokenizer, served=served)
        if tokens is None:
            log.debug("%s: the answer gave no token ids for its reply", self._who)
        return dataclasses.replace(reply, tokens=tokens)

    # -- the prompt's ids as llama.cpp's server tokenized it: its /tokenize ------------------------

    def _asks_prompt(self, server: wire.Server | None) -> bool:
        """Whether to ask the server how it tokenized the prompt: llama.cpp's server, token ids
        asked for, and it has not failed to say (llama-cpp-python's server, also "llama.cpp", has
        no /tokenize: asked once, then not again)."""
        return self.asked and self._tokenizes and server == "llama.cpp"

    def served(self, arguments: dict[str, Any], server: wire.Server | None) -> wire.Ids:
        if not self._asks_prompt(server):
            return None
        plan = wire.prompt_plan(str(self._transport.client.base_url), body(arguments), chat=self._chat)
        return self._tokenized(drive(plan, self._transport.post))

    async def aserved(self, arguments: dict[str, Any], server: wire.Server | None) -> wire.Ids:
        if not self._asks_prompt(server):
            return None
        plan = wire.prompt_plan(str(self._transport.client.base_url), body(arguments), chat=self._chat)
        return self._tokenized(await adrive(plan, self._transport.apost))

    def _tokenized(self, ids: wire.Ids) -> wire.Ids:
        if ids is None:
            self._tokenizes = False
            log.info("%s: the server did not say how it tokenized the prompt; not asked again", self._who)
        return ids
