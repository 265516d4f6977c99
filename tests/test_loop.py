"""Every rule of the loop, with the scripted model, under both drivers (sync and async)."""

from __future__ import annotations

import time
from typing import Any

import pytest
from conftest import Drive, make_agent

from react_text import Agent, Message, ModelError, Prompting, Reply, ScriptedModel, Usage, tool
from react_text.prompting import render
from react_text.tokens.meter import counter


@pytest.fixture
def run(drive: Drive) -> Any:
    def play(replies: list[object], tools: list[object], **options: Any) -> tuple[ScriptedModel, Any]:
        model = ScriptedModel(
            replies, api=options.pop("api", "chat"), accepts_grammar=options.pop("accepts_grammar", False)
        )
        agent = make_agent(model, tools, **options)
        return model, drive(agent, "What do a train ticket and one hotel night cost together?")

    return play


def test_two_lookups_and_an_add(run: Any, tools: list[object]) -> None:
    model, result = run(
        [
            "THOUGHT: price first\nACTION: lookup[train ticket]",
            "ACTION: lookup[hotel night]",
            "ACTION: add[89, 145]",
            "THOUGHT: done\nFINAL: 234",
        ],
        tools,
    )
    model.assert_all_used()
    assert (result.answer, result.stop_reason, result.tool_calls) == ("234", "final", 3)
    assert [s.observation for s in result.steps] == ["89", "145", "234.0", None]
    assert result.usage.total_tokens == result.usage.prompt_tokens + result.usage.completion_tokens
    assert result.steps[-1].total_usage == result.usage


def test_chat_observations_are_user_messages_and_prefix_stable(run: Any, tools: list[object]) -> None:
    model, _ = run(["ACTION: lookup[train ticket]", "FINAL: 89"], tools)
    first, second = (call.prompt for call in model.calls)
    assert isinstance(first, tuple) and isinstance(second, tuple)
    assert second[: len(first)] == first
    assert second[len(first) :] == (
        Message("assistant", "ACTION: lookup[train ticket]"),
        Message("user", "OBSERVATION: 89"),
    )


def test_instructions_in_the_first_user_message(run: Any, tools: list[object]) -> None:
    model, _ = run(["FINAL: 1"], tools, instructions_in="user")
    (only,) = model.calls[0].prompt  # type: ignore[misc]
    assert only.role == "user"
    assert "ACTION: tool_name[input]" in only.content and "QUESTION:" in only.content


def test_completion_transcript_grows_at_the_end(run: Any, tools: list[object]) -> None:
    model, result = run([" need price\nACTION: lookup[train ticket]", " got it\nFINAL: 89"], tools, api="completion")
    first, second = (call.prompt for call in model.calls)
    assert isinstance(first, str) and isinstance(second, str)
    assert first.endswith("\nTHOUGHT:")
    assert second.startswith(first)
    assert second[len(first) :] == " need price\nACTION: lookup[train ticket]\nOBSERVATION: 89\nTHOUGHT:"
    assert result.answer == "89"
    assert result.steps[0].parsed.thought == "need price"


def test_stop_sequences_are_sent(run: Any, tools: list[object]) -> None:
    model, _ = run(["FINAL: 1"], tools)
    assert any("OBSERVATION:" in stop for stop in model.calls[0].stop)


def test_made_up_observation_is_cut_and_the_real_one_fed_back(run: Any, tools: list[object]) -> None:
    model, result = run(["ACTION: lookup[train ticket]\nOBSERVATION: 12\nFINAL: 12", "FINAL: 89"], tools)
    assert result.steps[0].cut == "OBSERVATION: 12\nFINAL: 12"
    assert result.steps[0].observation == "89"
    assert result.answer == "89"
    assert model.calls[1].prompt[-2] == Message("assistant", "ACTION: lookup[train ticket]")  # type: ignore[index]


def test_action_then_made_up_final_runs_the_tool(run: Any, tools: list[object]) -> None:
    _, result = run(["ACTION: lookup[train ticket]\nFINAL: 1000", "FINAL: 89"], tools)
    assert result.steps[0].observation == "89"
    assert result.answer == "89"


def test_unknown_tool_lists_valid_tools_and_closest(run: Any, tools: list[object]) -> None:
    _, result = run(["ACTION: lookups[train ticket]", "FINAL: x"], tools)
    observation = result.steps[0].observation
    assert observation == render(
        "corrections/unknown_tool",
        tool="lookups",
        suggestion=render("corrections/unknown_tool_suggestion", closest="lookup"),
        tools="lookup, add",
    )


def test_tool_that_raises_becomes_an_observation(run: Any, tools: list[object]) -> None:
    _, result = run(["ACTION: lookup[spaceship]", "FINAL: unknown"], tools)
    assert result.steps[0].observation == "The tool lookup failed with KeyError: \"no price for 'spaceship'\""
    assert result.stop_reason == "final"


def test_a_tool_that_returns_none_is_refused_in_words(drive: Any) -> None:
    """docs/concepts/binder.md: "A tool that raises becomes an observation ...; one that returns bytes
    or another non-text value is refused in words". A tool that forgets its `return` gave the model
    the observation "None", as if that were the result (outside review, attack5)."""

    def save(note: str) -> str:
        """Save a note."""
        _ = note  # and forgets to return

    model = ScriptedModel(["ACTION: save[buy milk]", "FINAL: saved"])
    result = drive(Agent(model, tools=[save]), "Save: buy milk.")
    observation = result.steps[0].observation
    assert observation != "None"
    assert "save" in observation


def test_an_async_tool_that_returns_none_is_said_so_in_words(drive: Drive) -> None:
    async def save(note: str) -> None:
        """Save a note."""

    model = ScriptedModel(["ACTION: save[buy milk]\nACTION: save[eggs]", "FINAL: saved"])
    result = drive(Agent(model, tools=[save], prompting=Prompting(parallel=True)), "Save two notes.")
    said = render("corrections/tool_no_result", tool="save", kind="None")
    assert said == "The tool save ran and returned None: no result to show."
    assert "): None" not in result.steps[0].observation
    assert result.steps[0].observation.count(said) == 2


def test_repeated_action_is_not_run_again(run: Any) -> None:
    calls: list[str] = []

    def lookup(item: str) -> str:
        """Price."""
        calls.append(item)
        return "89"

    pure = tool(lookup, pure=True)  # without side effects: a repeat is answered from the first call
    _, result = run(["ACTION: lookup[train ticket]", "ACTION: lookup[ train ticket ]", "FINAL: 89"], [pure])
    assert calls == ["train ticket"]  # the same input once the parser has unwrapped it: not run again
    assert result.steps[1].observation == render(
        "corrections/repeated_action", tool="lookup", input="train ticket", step=1, result="89"
    )
    assert result.tool_calls == 1


def test_inputs_that_differ_only_in_case_or_indentation_are_not_repeats(run: Any) -> None:
    calls: list[str] = []

    def read(path: str) -> str:
        """A file's text."""
        calls.append(path)
        return f"text of {path}"

    code = "ACTION: read[```\nif x:\n    y()\n```]"
    other = "ACTION: read[```\nif x:\n  y()\n```]"
    script = ["ACTION: read[README]", "ACTION: read[readme]", code, other, "FINAL: ok"]
    _, result = run(script, [tool(read, pure=True)])  # pure: only a real repeat is answered from before
    assert calls == ["README", "readme", "if x:\n    y()", "if x:\n  y()"]
    assert result.steps[1].observation == "text of readme"


def test_errors_and_time_outs_are_not_remembered(run: Any) -> None:
    calls: list[str] = []

    def flaky(item: str) -> str:
        """Fails the first time."""
        calls.append(item)
        if len(calls) == 1:
            raise ConnectionError("try again")
        return "89"

    _, result = run(["ACTION: flaky[train]", "ACTION: flaky[train]", "FINAL: 89"], [tool(flaky, pure=True)])
    assert calls == ["train", "train"]
    assert result.steps[1].observation == "89"


def test_format_error_gets_a_corrective_observation(run: Any, tools: list[object]) -> None:
    _, result = run(["I think it is 234.", "FINAL: 234"], tools)
    assert result.steps[0].observation == render("corrections/format_error", problem=render("errors/no_directive"))
    assert result.answer == "234"


def test_consecutive_format_errors_end_the_run(run: Any, tools: list[object]) -> None:
    model, result = run(["prose", "more prose", "", "FINAL: never read"], tools, format_errors=3)
    assert result.stop_reason == "format_errors"
    assert len(result.steps) == 3 and model.unused == 1
    assert result.answer is None


def test_a_good_reply_resets_the_format_error_count(run: Any, tools: list[object]) -> None:
    _, result = run(
        ["prose", "prose", "ACTION: lookup[train ticket]", "prose", "prose", "FINAL: 89"],
        tools,
        format_errors=3,
    )
    assert result.stop_reason == "final"


def test_max_steps_forces_a_final_answer(run: Any, tools: list[object]) -> None:
    model, result = run(["ACTION: lookup[train ticket]", "ACTION: lookup[hotel night]", "FINAL: 234"], tools, steps=2)
    assert (result.stop_reason, result.answer, result.forced) == ("max_steps", "234", True)
    assert result.steps[-1].forced
    last = model.calls[-1].prompt[-1]  # type: ignore[index]
    # the request for a final answer joins the last observation: user and assistant turns alternate
    assert last.role == "user"
    assert last.content.endswith("\n\n" + render("corrections/force_final", limit="the step limit of 2"))
    assert last.content.startswith("OBSERVATION: 145")
    assert result.tool_calls == 2


def test_last_step_observation_warns_that_the_budget_is_nearly_spent(run: Any, tools: list[object]) -> None:
    _, result = run(["ACTION: lookup[train ticket]", "FINAL: 89"], tools, steps=2)
    assert result.steps[0].observation == render("corrections/budget_low", observation="89", left="1 step")


def test_no_forced_final_when_disabled(run: Any, tools: list[object]) -> None:
    model, result = run(["ACTION: lookup[train ticket]", "FINAL: x"], tools, steps=1, force_final=False)
    assert (result.stop_reason, result.answer, model.unused) == ("max_steps", None, 1)
    assert "step limit of 1" in (result.error or "")


def test_forced_call_without_a_final_answer(run: Any, tools: list[object]) -> None:
    _, result = run(["ACTION: lookup[train ticket]", "ACTION: add[1, 2]"], tools, steps=1)
    assert (result.stop_reason, result.answer, result.forced) == ("max_steps", None, False)
    assert "no final answer" in (result.error or "")


def test_token_budget_is_checked_before_sending(drive: Drive, tools: list[object]) -> None:
    model = ScriptedModel([f"ACTION: lookup[item {i}]" for i in range(20)])
    count = model.count_tokens
    agent = make_agent(model, tools, tokens=1500, reply_tokens=100, steps=20)
    result = drive(agent, "What does a train ticket cost?")
    assert result.stop_reason == "max_tokens"
    assert result.usage.total_tokens <= 1500
    spent = 0
    for call, step in zip(model.calls, result.steps, strict=True):
        prompt = sum(count(m.content) + 3 for m in call.prompt) + 3  # type: ignore[union-attr]
        assert spent + prompt + call.max_tokens <= 1500  # what could be billed stays inside the budget
        spent += step.usage.total_tokens
    assert len(model.calls) < 20


def test_budget_too_small_for_any_call(run: Any, tools: list[object]) -> None:
    model, result = run(["FINAL: 1"], tools, tokens=50)
    assert (result.stop_reason, len(model.calls), result.steps) == ("max_tokens", 0, ())
    assert "token budget of 50" in (result.error or "")


def test_server_usage_is_used_when_reported(run: Any, tools: list[object]) -> None:
    _, result = run([Reply("FINAL: 1", Usage(1000, 7))], tools)
    assert result.usage == Usage(1000, 7)


def test_model_error_ends_the_run_with_the_transcript(run: Any, tools: list[object]) -> None:
    _, result = run(["ACTION: lookup[train ticket]", ModelError("http://x answered 500: boom")], tools)
    assert result.stop_reason == "model_error"
    assert result.error == "http://x answered 500: boom"
    assert len(result.steps) == 1
    assert result.transcript[-1] == Message("user", "OBSERVATION: 89")  # type: ignore[index]


def test_risky_tool_declined_without_an_approver(run: Any) -> None:
    ran: list[str] = []

    def delete(path: str) -> str:
        """Delete a file."""
        ran.append(path)
        return "deleted"

    _, result = run(["ACTION: delete[/etc/passwd]", "FINAL: no"], [tool(delete, risky=True)])
    assert ran == []
    assert result.steps[0].observation == render("corrections/declined", tool="delete", input="/etc/passwd")


def test_risky_tool_runs_when_approved_and_the_approver_sees_the_call(run: Any) -> None:
    seen: list[tuple[str, str]] = []

    def approve(t, action):  # type: ignore[no-untyped-def]
        seen.append((t.name, action.input))
        return True

    delete = tool(lambda path: f"deleted {path}", name="delete", risky=True)
    _, result = run(["ACTION: delete[a.txt]", "FINAL: done"], [delete], approve=approve)
    assert seen == [("delete", "a.txt")]
    assert result.steps[0].observation == "deleted a.txt"


def test_approver_can_stop_the_run(run: Any) -> None:
    delete = tool(lambda path: "deleted", name="delete", risky=True)
    _, result = run(["ACTION: delete[a.txt]", "FINAL: x"], [delete], approve=lambda t, a: "stop")
    assert result.stop_reason == "declined"


def test_tool_time_limit(run: Any) -> None:
    slow = tool(lambda x: time.sleep(5) or "late", name="slow", timeout=0.1)
    _, result = run(["ACTION: slow[x]", "FINAL: gave up"], [slow])
    assert result.steps[0].observation == render("corrections/tool_timeout", tool="slow", seconds=0.1)


def test_long_observation_is_truncated_head_and_tail(run: Any) -> None:
    big = tool(lambda x: "HEAD " + "word " * 5000 + " TAIL", name="big")
    _, result = run(["ACTION: big[x]", "FINAL: ok"], [big], observation_tokens=100)
    observation = result.steps[0].observation or ""
    assert observation.startswith("HEAD") and observation.endswith("TAIL")
    assert "tokens cut from the middle" in observation
    assert counter("x")(observation) < 200


def test_iter_steps_yields_the_same_steps_as_run(tools: list[object]) -> None:
    replies = ["ACTION: lookup[train ticket]", "FINAL: 89"]
    run_ = Agent(ScriptedModel(replies), tools=tools).iter_steps("task")
    seen = list(run_)
    assert [s.number for s in seen] == [1, 2]
    assert run_.result.steps == tuple(seen)


def test_aiter_steps_yields_the_same_steps_as_iter_steps(tools: list[object]) -> None:
    import asyncio

    replies = ["ACTION: lookup[train ticket]", "junk", "ACTION: add[89, 145]", "FINAL: 234"]
    sync = Agent(ScriptedModel(replies), tools=tools).iter_steps("task")
    sync_steps = list(sync)

    async def collect() -> tuple[list[Any], Any]:
        arun = Agent(ScriptedModel(replies), tools=tools).aiter_steps("task")
        return [step async for step in arun], arun.result

    async_steps, result = asyncio.run(collect())
    same = [(s.number, s.reply, s.parsed, s.observation, s.usage) for s in sync_steps]
    assert [(s.number, s.reply, s.parsed, s.observation, s.usage) for s in async_steps] == same
    assert (result.answer, result.transcript) == (sync.result.answer, sync.result.transcript)


def test_result_before_the_end_is_an_error(tools: list[object]) -> None:
    run_ = Agent(ScriptedModel(["FINAL: 1"]), tools=tools).iter_steps("task")
    with pytest.raises(RuntimeError, match="not finished"):
        _ = run_.result


def test_script_exhausted_is_a_model_error(run: Any, tools: list[object]) -> None:
    _, result = run(["ACTION: lookup[train ticket]"], tools)
    assert result.stop_reason == "model_error"
    assert "script has 1 replies" in (result.error or "")


def test_two_tools_with_one_name_are_refused() -> None:
    with pytest.raises(ValueError, match="share a name"):
        Agent(ScriptedModel([]), tools=[tool(lambda a: a, name="x"), tool(lambda b: b, name="x")])


def test_grammar_requested_from_a_model_that_cannot_take_one() -> None:
    with pytest.raises(ValueError, match="does not take a grammar"):
        Agent(ScriptedModel([]), prompting=Prompting(grammar=True))


def test_grammar_is_sent_to_a_model_that_takes_one(run: Any, tools: list[object]) -> None:
    model, _ = run(["FINAL: 1"], tools, accepts_grammar=True)
    grammar = model.calls[0].grammar or ""
    # each tool by name, its input typed by its signature (grammar_inputs)
    assert 'action ::= "ACTION: " ("lookup" "[" in-0 "]" | "add" "[" in-1 "]")' in grammar


def test_the_parser_is_a_choice(drive: Drive, tools: list[object]) -> None:
    from react_text.parser import parse_naive

    replies = ["Action: lookup\nAction Input: train ticket", "**Final Answer:** 89"]
    naive = drive(make_agent(ScriptedModel(replies), tools, parser=parse_naive, steps=2, force_final=False), "t")
    tolerant = drive(Agent(ScriptedModel(replies), tools=tools), "t")
    assert (naive.stop_reason, naive.tool_calls) == ("max_steps", 0)
    assert (tolerant.answer, tolerant.tool_calls) == ("89", 1)


def test_observation_warns_when_the_token_budget_is_nearly_spent(drive: Drive, tools: list[object]) -> None:
    model = ScriptedModel([f"ACTION: lookup[item {i}]" for i in range(20)])
    result = drive(make_agent(model, tools, tokens=3000, reply_tokens=100, steps=20), "t")
    warned = [s.number for s in result.steps if s.observation and "(Budget: about" in s.observation]
    assert warned, [s.observation for s in result.steps]
    assert 1 not in warned
    # a warning is given only when another call follows it
    assert all(number < len(model.calls) for number in warned)


def test_act_first_sends_a_grammar_without_final_until_a_tool_ran(run: Any, tools: list[object]) -> None:
    model, _ = run(["ACTION: lookup[train ticket]", "FINAL: 89"], tools, accepts_grammar=True, act_first=True)
    first, second = (call.grammar or "" for call in model.calls)
    assert "directive ::= action\n" in first
    assert "directive ::= action | final\n" in second


def test_a_model_that_raises_stop_iteration_does_not_end_the_run_quietly(tools: list[object]) -> None:
    class Broken:
        api = "chat"
        name = "broken"
        accepts_grammar = False

        def generate(self, request: object) -> Reply:
            raise StopIteration  # a bug in a model class: next() on an exhausted iterator

    with pytest.raises(RuntimeError, match="StopIteration escaped from the model"):
        Agent(Broken(), tools=tools).run("task")
