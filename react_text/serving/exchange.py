"""One request's exchange with the upstream model, free of I/O (sans-IO, as the episode is): what to
send, and what the replies came to.

    planned = plan(chat, upstream)            # a Plan, or Invalid (a 400)
    talk = exchange(planned, call_id)
    request = next(talk)                      # a Request for the upstream
    request = talk.send(reply)                # ... asked again while the reply cannot be read
    StopIteration.value                       # the Outcome: the answer, usage, tries

A reply that cannot be read is asked again with the loop's correction, up to
`Limits.format_errors` tries in all; the last one's text is then the answer's content, with why.
Usage adds up every try: the upstream's counts, or the engine's own when it reports none.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import dataclass

from react_text.core import protocol
from react_text.core.types import Reply, Request, Usage
from react_text.grammar.protocol import protocol_grammar
from react_text.tokens.meter import MESSAGE_OVERHEAD, Counter

from . import transcript
from .replies import Answer, How, read
from .requests import ChatRequest, Invalid
from .upstream import Upstream

__all__ = ["Outcome", "Plan", "exchange", "plan"]


@dataclass(frozen=True, slots=True)
class Plan:
    """All one request sends and how its replies are read."""

    prompt: transcript.Prompt
    how: How
    stop: tuple[str, ...]
    allowance: int
    grammar: str | None
    seed: int | None
    prefill: str
    tries: int
    count: Counter


@dataclass(frozen=True, slots=True)
class Outcome:
    answer: Answer
    usage: Usage
    counted: bool  # some of `usage` was counted here: the upstream reported none
    tries: int


def plan(chat: ChatRequest, upstream: Upstream) -> Plan | Invalid:
    """What to send for `chat`, or why it cannot be sent (a tool result that answers no call, a
    prompt and reply allowance past the context window)."""
    limits, style = upstream.limits, upstream.prompting
    most = limits.actions if chat.parallel else 1
    block = transcript.instruction_block(chat, example=style.example, most=most)
    prompt = transcript.prompt(chat, block, api_chat=upstream.api_chat, instructions_in=style.instructions_in)
    if isinstance(prompt, Invalid):
        return prompt
    allowance = chat.max_tokens or limits.reply_tokens
    window = limits.context_tokens or upstream.window
    if window is not None and (needed := prompt_tokens(prompt, upstream.count) + allowance) > window:
        return Invalid(
            "messages",
            f"this model's context window is {window} tokens; the messages and the reply allowance "
            f"({allowance}) need about {needed}",
            "context_length_exceeded",
        )
    names = tuple(f.name for f in chat.functions)
    how = How(chat.functions, upstream.api_chat, chat.choice, chat.named, most > 1, most, chat.stop, allowance)
    stop = protocol.STOP_SEQUENCES + (protocol.PARALLEL_STOP if most > 1 else ())
    if chat.choice == "none" or not names:
        stop = tuple(dict.fromkeys(stop + chat.stop))  # all the reply can be is an answer: the client's stops too
    prefill = protocol.THOUGHT_CUE if upstream.api_chat and upstream.prefill else ""
    return Plan(
        prompt,
        how,
        stop,
        allowance,
        _grammar(chat, upstream, most),
        chat.seed,
        prefill,
        limits.format_errors,
        upstream.count,
    )


def _grammar(chat: ChatRequest, upstream: Upstream, most: int) -> str | None:
    """The protocol grammar for this request's tool_choice, when the upstream takes one."""
    if not upstream.grammar:
        return None
    cued = not upstream.api_chat or upstream.prefill
    tools = [f.tool for f in chat.functions if chat.choice != "named" or f.name == chat.named]
    if chat.choice == "none" or not tools:
        return protocol_grammar((), after_cue=cued)
    return protocol_grammar(tools, after_cue=cued, final=chat.choice == "auto", actions=most)


def exchange(planned: Plan, call_id: Callable[[int], str]) -> Generator[Request, Reply, Outcome]:
    """Ask, read, and ask again with the correction while the reply cannot be read."""
    prompt = planned.prompt
    usage, counted, tries = Usage(), False, 0
    while True:
        request = Request(prompt, planned.stop, planned.allowance, planned.grammar, planned.seed, planned.prefill)
        reply = yield request
        tries += 1
        if reply.usage is None:
            counted = True
            usage += Usage(prompt_tokens(prompt, planned.count), planned.count(reply.text))
        else:
            usage += reply.usage
        answer = read(reply, planned.how, call_id)
        if answer.unread is None or answer.correction is None or tries >= planned.tries:
            return Outcome(answer, usage, counted, tries)
        prompt = transcript.continued(prompt, answer.read, answer.correction, api_chat=planned.how.api_chat)


def prompt_tokens(prompt: transcript.Prompt, count: Counter) -> int:
    """The prompt's tokens as the engine counts them (each chat message with its framing)."""
    if isinstance(prompt, str):
        return count(prompt)
    return sum(count(m.content) + MESSAGE_OVERHEAD for m in prompt)
