"""ScriptedModel: sync and async calls over one script, and a server tokenizer of its own."""

from __future__ import annotations

import asyncio

import pytest

from react_text import Agent, Message, ModelError, Reply, Request, ScriptedModel, Usage
from react_text.core.errors import ContextLengthError

STOP = ("OBSERVATION:",)


def request(*contents: str, max_tokens: int = 100) -> Request:
    return Request(tuple(Message("user", c) for c in contents), STOP, max_tokens)


def words(text: str) -> int:
    """A server tokenizer unlike cl100k_base: two tokens a word."""
    return 2 * len(text.split())


def test_generate_and_agenerate_share_the_script_and_the_calls() -> None:
    model = ScriptedModel(["one", "two", "three"])
    first = model.generate(request("a"))
    second = asyncio.run(model.agenerate(request("b")))
    third = model.generate(request("c"))
    assert [first.text, second.text, third.text] == ["one", "two", "three"]
    assert [call.prompt[0].content for call in model.calls] == ["a", "b", "c"]  # type: ignore[index,union-attr]
    model.assert_all_used()


def test_many_concurrent_tasks_each_get_one_reply() -> None:
    model = ScriptedModel([f"reply {i}" for i in range(200)])

    async def episodes() -> list[Reply]:
        return await asyncio.gather(*(model.agenerate(request(f"q{i}")) for i in range(200)))

    replies = asyncio.run(episodes())
    assert sorted(r.text for r in replies) == sorted(f"reply {i}" for i in range(200))
    assert len(model.calls) == 200 and model.unused == 0


def test_past_the_end_of_the_script_is_a_model_error_sync_and_async() -> None:
    model = ScriptedModel(["only"])
    model.generate(request("a"))
    with pytest.raises(ModelError, match="the script has 1 replies; call 2"):
        asyncio.run(model.agenerate(request("b")))


def test_without_a_tokenizer_usage_is_unreported_and_the_allowance_is_cl100k() -> None:
    model = ScriptedModel(["word " * 50])
    reply = model.generate(request("q", max_tokens=10))
    assert reply.usage is None
    assert (model.count_tokens(reply.text), reply.finish_reason) == (10, "length")


def test_a_tokenizer_reports_usage_as_the_server_counts_it() -> None:
    model = ScriptedModel(["THOUGHT: done\nFINAL: 42"], tokenizer=words, message_overhead=4)
    reply = model.generate(request("What is six times seven?", "Be brief."))
    # prompt: (5 words * 2 + 4) + (2 words * 2 + 4); completion: 4 words * 2
    assert reply.usage == Usage(22, 8)
    assert reply.finish_reason is None


def test_a_tokenizer_counts_a_completion_transcript_whole() -> None:
    model = ScriptedModel([" done\nFINAL: 42"], api="completion", tokenizer=words)
    reply = model.generate(Request("QUESTION: six times seven?\nTHOUGHT:", STOP, 50))
    assert reply.usage == Usage(2 * 5, 2 * 3)


def test_a_tokenizer_sets_the_allowance_and_a_longer_reply_is_cut() -> None:
    text = "THOUGHT: " + " ".join(f"w{i}" for i in range(40))
    model = ScriptedModel([text], tokenizer=words)
    reply = model.generate(request("q", max_tokens=21))
    assert reply.finish_reason == "length"
    assert text.startswith(reply.text) and words(reply.text) <= 21
    assert words(text[: len(reply.text) + 3]) > 21  # the longest start that fits: nothing more fits
    assert reply.usage is not None and reply.usage.completion_tokens == words(reply.text)
    assert model.count_tokens("a b c") == 3  # the engine's count stays cl100k_base


def test_a_reply_with_its_own_usage_keeps_it() -> None:
    model = ScriptedModel([Reply("FINAL: 1", Usage(1000, 7))], tokenizer=words)
    assert model.generate(request("q")).usage == Usage(1000, 7)


def test_the_agent_bills_what_the_servers_tokenizer_counts() -> None:
    """The engine estimates with cl100k_base; the bill is what the scripted server counted."""
    model = ScriptedModel(["ACTION: add[2, 3]", "THOUGHT: done\nFINAL: 5"], tokenizer=words)

    def add(a: float, b: float) -> float:
        """Add two numbers."""
        return a + b

    result = Agent(model, tools=[add]).run("What is 2 + 3?")
    assert (result.answer, result.stop_reason) == ("5", "final")
    for step, sent in zip(result.steps, model.calls, strict=True):
        assert isinstance(sent.prompt, tuple)
        assert step.usage.prompt_tokens == sum(words(m.content) + 4 for m in sent.prompt)
        assert step.usage.completion_tokens == words(step.reply)


def test_a_context_window_refuses_a_request_that_does_not_fit_without_using_a_reply() -> None:
    model = ScriptedModel(["short answer"], tokenizer=words, context_window=100)
    with pytest.raises(ContextLengthError, match="maximum context length is 100 tokens"):
        model.generate(request("word " * 40, max_tokens=30))  # 80 + 4 + 30 > 100
    assert model.generate(request("word " * 10, max_tokens=30)).text == "short answer"  # 24 + 30 fits
    assert len(model.calls) == 2 and model.unused == 0
    assert asyncio.run(model.acontext_window()) == 100


def test_an_agent_over_a_scripted_window_ends_as_a_model_error_saying_why() -> None:
    def lookup(item: str) -> str:
        """Return the price of one item, in euros, from the price list of the shop round the corner."""
        return "1"

    model = ScriptedModel(["FINAL: 1"], context_window=256)
    # the instructions and this task (about 280 tokens) pass the window before any reply
    result = Agent(model, tools=[lookup]).run("What does one item cost, and the next? " * 8)
    assert result.stop_reason == "model_error"
    # the engine knows the window (the model says it): the request that cannot fit is never sent
    assert "does not fit the context window of 256 tokens" in (result.error or "")
    assert model.calls == []


def test_a_scripted_window_refuses_a_request_that_does_not_fit() -> None:
    model = ScriptedModel(["FINAL: 1"], context_window=256)
    request = Request((Message("user", "word " * 300),), (), 16)
    with pytest.raises(ContextLengthError, match="maximum context length is 256 tokens") as refused:
        model.generate(request)
    assert refused.value.window == 256
