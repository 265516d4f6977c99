"""Limits that hold: the token plan, the forced final, cut replies, honest history, context windows."""

from __future__ import annotations

import dataclasses

import pytest
from conftest import Drive, add, lookup, make_agent

from react_text import (
    Action,
    Agent,
    ContextLengthError,
    Final,
    Limits,
    Message,
    Prompting,
    Reply,
    Request,
    ScriptedModel,
    Usage,
    tool,
)
from react_text.prompting import render

TASK = "What do a train ticket and one hotel night cost together?"


class OtherTokenizer:
    """A chat server whose tokenizer is not tiktoken: about `k` tokens a word, 5 a message.

    It enforces the reply allowance in its own tokens and reports usage in them, and it answers
    the forced-final request with a final answer. It has no `count_tokens`: the engine cannot know
    its counts, only estimate them and learn from its reports.
    """

    api = "chat"
    name = "other"
    accepts_grammar = False

    def __init__(self, replies: list[str], k: float) -> None:
        self.replies = replies
        self.k = k
        self.calls: list[Request] = []
        self.billed = 0

    def count(self, text: str) -> int:
        return int(len(text.split()) * self.k) + text.count("\n") + 1

    def generate(self, request: Request) -> Reply:
        self.calls.append(request)
        assert isinstance(request.prompt, tuple)
        last = request.prompt[-1].content
        asked = render("corrections/force_final", limit="").split("(")[0] in last
        text = "THOUGHT: at the limit\nFINAL: 42" if asked else self.replies[(len(self.calls) - 1) % len(self.replies)]
        words = text.split(" ")
        finish = "stop"
        while self.count(" ".join(words)) > request.max_tokens:
            words.pop()
            finish = "length"
        text = " ".join(words)
        usage = Usage(sum(self.count(m.content) + 5 for m in request.prompt), self.count(text))
        self.billed += usage.total_tokens
        return Reply(text, usage, finish)


@pytest.mark.parametrize("k", [0.5, 1.0, 1.5, 2.0])
@pytest.mark.parametrize("budget", [1500, 2250, 3000, 4500, 6000])
def test_budget_holds_against_a_server_that_counts_differently(drive: Drive, k: float, budget: int) -> None:
    replies = [
        f"THOUGHT: item {i} needs a look {'and more words ' * (i % 7)}\nACTION: lookup[train ticket]" for i in range(9)
    ]
    model = OtherTokenizer(replies, k)
    # one call again and again: the budget, not the brake on repeats (issue 33), is under test
    result = drive(make_agent(model, [lookup, add], tokens=budget, reply_tokens=120, steps=40, repeats=None), TASK)
    first = model.calls[0]
    first_bill = model.count("".join(m.content for m in first.prompt))  # type: ignore[union-attr]
    if first_bill < budget / 2:  # the first request alone left room: from the second on, nothing overshoots
        assert model.billed <= budget, (model.billed, budget, len(model.calls))
    assert result.usage.total_tokens == model.billed  # the server's own counts are what is billed
    assert result.stop_reason == "max_tokens"
    assert (result.forced, result.answer) == (True, "42")  # the forced call was made and answered


def test_forced_final_at_the_token_limit_is_made(drive: Drive) -> None:
    model = ScriptedModel([f"ACTION: lookup[item {i}]" for i in range(30)] + ["FINAL: 1000"])
    result = drive(make_agent(model, [lookup, add], tokens=1500, reply_tokens=100, steps=40), TASK)
    assert result.stop_reason == "max_tokens"
    assert result.steps[-1].forced
    last = model.calls[-1].prompt[-1]  # type: ignore[index]
    assert "You have reached the limit (the token budget of 1500)" in last.content
    assert result.usage.total_tokens <= 1500


def test_every_budget_warning_is_followed_by_a_call(drive: Drive) -> None:
    for budget in range(1200, 4000, 97):
        model = ScriptedModel(
            [f"THOUGHT: {'x ' * (budget % 50)}\nACTION: lookup[item {i}]" for i in range(40)] + ["FINAL: 1"]
        )
        result = drive(make_agent(model, [lookup], tokens=budget, reply_tokens=64, steps=40), TASK)
        for step in result.steps:
            if step.observation and "(Budget:" in step.observation:
                assert step.number < len(model.calls), (budget, step.number)


def test_an_action_cut_at_the_allowance_is_not_run(drive: Drive) -> None:
    written: list[str] = []
    write = tool(lambda path, content: written.append(content) or "ok", name="write", risky=True)
    cut = Reply("THOUGHT: saving\nACTION: write[notes.txt, the meeting moved to Thurs", None, "length")
    model = ScriptedModel([cut, "FINAL: not saved"])
    result = drive(make_agent(model, [write], approve=lambda t, a: True, reply_tokens=40), TASK)
    assert written == []
    assert result.steps[0].observation == render("corrections/reply_cut", tokens=40)
    assert result.answer == "not saved"


def test_an_action_whose_input_was_closed_runs_even_at_the_allowance(drive: Drive) -> None:
    model = ScriptedModel([Reply("ACTION: lookup[train ticket]", None, "length"), "FINAL: 89"])
    result = drive(make_agent(model, [lookup]), TASK)
    assert result.steps[0].observation == "89"


def test_a_final_answer_cut_at_the_allowance_is_asked_again(drive: Drive) -> None:
    model = ScriptedModel([Reply("THOUGHT: so\nFINAL: The total is 234 euros, made of", None, "length"), "FINAL: 234"])
    result = drive(make_agent(model, [lookup], reply_tokens=40), TASK)
    assert result.steps[0].observation == render("corrections/answer_cut", tokens=40)
    assert result.answer == "234"


def test_the_history_keeps_only_what_was_acted_on(drive: Drive) -> None:
    model = ScriptedModel(["THOUGHT: price\nACTION: lookup[train ticket]\nFINAL: 1000", "FINAL: 89"])
    result = drive(make_agent(model, [lookup]), TASK)
    second = model.calls[1].prompt
    assert isinstance(second, tuple)
    assert second[-2] == Message("assistant", "THOUGHT: price\nACTION: lookup[train ticket]")
    assert all("1000" not in m.content for m in second)
    parsed = result.steps[0].parsed
    assert isinstance(parsed, Action) and "FINAL: 1000" in parsed.discarded


def test_the_history_keeps_only_what_was_acted_on_in_a_transcript(drive: Drive) -> None:
    model = ScriptedModel([" price\nACTION: lookup[train ticket]\nFINAL: 1000", " done\nFINAL: 89"], api="completion")
    drive(make_agent(model, [lookup]), TASK)
    second = model.calls[1].prompt
    assert isinstance(second, str)
    assert "1000" not in second
    assert second.endswith("THOUGHT: price\nACTION: lookup[train ticket]\nOBSERVATION: 89\nTHOUGHT:")


@pytest.mark.parametrize(
    ("option", "value", "words"),
    [
        ("observation_tokens", 0, "Limits.observation_tokens must be at least 32, not 0"),
        ("format_errors", 0, "Limits.format_errors must be at least 1, not 0"),
        ("reply_tokens", 0, "Limits.reply_tokens must be at least 16, not 0"),
        ("steps", 0, "Limits.steps must be at least 1, not 0"),
        ("tokens", -5, "Limits.tokens must be at least 16, not -5"),
        ("context_tokens", 10, "Limits.context_tokens must be at least 256, not 10"),
        ("tool_seconds", 0, "Limits.tool_seconds must be a positive number of seconds or None, not 0"),
    ],
)
def test_bad_limits_are_refused_naming_the_option(option: str, value: object, words: str) -> None:
    with pytest.raises(ValueError, match=words.replace(".", r"\.")):
        Limits(**{option: value})


def test_a_limit_of_the_wrong_type_is_refused() -> None:
    with pytest.raises(TypeError, match=r"Limits\.steps must be a whole number, not '3'"):
        Limits(steps="3")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"limits must be a react_text\.Limits"):
        Agent(ScriptedModel([]), limits={"steps": 3})  # type: ignore[arg-type]


def test_the_agent_is_immutable_and_replace_keeps_its_tools() -> None:
    agent = Agent(ScriptedModel([]), tools=(f for f in [lookup, add]))
    with pytest.raises(dataclasses.FrozenInstanceError):
        agent.tools = ()  # type: ignore[misc]
    again = dataclasses.replace(agent, limits=Limits(steps=2))
    assert [t.name for t in again.tools] == ["lookup", "add"]
    assert again.with_limits(steps=3).limits.steps == 3
    assert dataclasses.replace(agent, tools=[lookup]).tools[0].name == "lookup"


def test_the_model_recommends_its_settings_and_both_paths_use_them() -> None:
    model = ScriptedModel([])
    model.recommended_prompting = Prompting(act_first=True)  # type: ignore[attr-defined]
    model.recommended_limits = Limits(reply_tokens=128)  # type: ignore[attr-defined]
    agent = Agent(model)
    assert (agent.prompting.act_first, agent.limits.reply_tokens) == (True, 128)
    assert Agent(model, limits=Limits()).limits.reply_tokens == 512  # given explicitly, taken as given


# --- context windows -------------------------------------------------------------------------------


class Windowed:
    """A completion server with a small context window, counting with the engine's own counter."""

    api = "completion"
    name = "gpt-4"  # counted exactly by tiktoken: the window is checked in the same units
    accepts_grammar = False

    def __init__(self, replies: list[str], window: int, *, says: bool, tells: bool = True) -> None:
        self.replies = replies
        self.window = window
        self.tells = tells  # the error names the window
        self.calls: list[Request] = []
        self.refused = 0
        if says:
            self.context_window = window

    def generate(self, request: Request) -> Reply:
        from react_text.tokens.meter import counter

        assert isinstance(request.prompt, str)
        prompt = counter("gpt-4")(request.prompt)
        if prompt + request.max_tokens > self.window:
            self.refused += 1
            window = self.window if self.tells else None
            raise ContextLengthError(f"this model's maximum context length is {self.window} tokens", window=window)
        self.calls.append(request)
        return Reply(self.replies[len(self.calls) - 1], Usage(prompt, 10))


def big(item: str) -> str:
    """A long result."""
    return f"{item}: " + "lorem ipsum dolor sit amet " * 60


def test_a_run_that_outgrows_the_window_completes_with_elided_steps(drive: Drive) -> None:
    replies = [f" step {i}\nACTION: big[item {i}]" for i in range(12)] + [" done\nFINAL: 42"]
    model = Windowed(replies, window=2000, says=True)
    result = drive(make_agent(model, [big], steps=20, reply_tokens=100, example=None), "Look at twelve items.")
    assert (result.stop_reason, result.answer, model.refused) == ("final", "42", 0)
    last = model.calls[-1].prompt
    assert isinstance(last, str)
    assert "Look at twelve items." in last and "Tools:" in last  # the instructions and the task stay
    assert "item 11: lorem" in last  # the latest observation stays whole
    assert "[elided to save room: what big[item 0] returned" in last
    assert result.steps[-1].elided and 1 in result.steps[-1].elided


def test_a_context_length_error_gets_one_elided_retry(drive: Drive) -> None:
    replies = [f" step {i}\nACTION: big[item {i}]" for i in range(12)] + [" done\nFINAL: 42"]
    model = Windowed(replies, window=2000, says=False)  # the server says nothing until it refuses
    result = drive(make_agent(model, [big], steps=20, reply_tokens=100, example=None), "Look at twelve items.")
    assert (result.stop_reason, result.answer) == ("final", "42")
    assert model.refused == 1  # once refused, the window is known: later requests fit
    assert any(step.elided for step in result.steps)


def test_a_server_that_never_says_its_window_still_gets_elided_retries(drive: Drive) -> None:
    replies = [f" step {i}\nACTION: big[item {i}]" for i in range(12)] + [" done\nFINAL: 42"]
    model = Windowed(replies, window=2000, says=False, tells=False)
    result = drive(make_agent(model, [big], steps=20, reply_tokens=100, example=None), "Look at twelve items.")
    assert (result.stop_reason, result.answer) == ("final", "42")
    assert model.refused >= 1


def test_a_second_context_length_error_ends_the_run_with_the_reason(drive: Drive) -> None:
    model = ScriptedModel([ContextLengthError("too long"), ContextLengthError("still too long")])
    result = drive(make_agent(model, [lookup]), TASK)
    assert result.stop_reason == "model_error"
    # nothing could be elided before the first step: the one retry asks for a smaller reply (issue 20)
    assert result.error == "still too long"
    assert len(model.calls) == 2 and model.calls[1].max_tokens < model.calls[0].max_tokens


# --- reasoning models ------------------------------------------------------------------------------

THINKING = "<think>\nI'll call lookup; the Observation: will tell me the price.\n</think>\nTHOUGHT: I need the price.\nACTION: lookup[train ticket]"


def test_observation_inside_thinking_is_not_cut(drive: Drive) -> None:
    model = ScriptedModel([THINKING, "FINAL: 89"])
    result = drive(make_agent(model, [lookup]), TASK)
    assert result.steps[0].observation == "89"
    assert "the Observation: will tell me" in result.steps[0].reasoning
    second = model.calls[1].prompt[-2]  # type: ignore[index]
    assert second == Message("assistant", "THOUGHT: I need the price.\nACTION: lookup[train ticket]")


def test_thinking_is_sent_back_when_asked(drive: Drive) -> None:
    model = ScriptedModel([THINKING, "FINAL: 89"])
    drive(make_agent(model, [lookup], reasoning="keep"), TASK)
    second = model.calls[1].prompt[-2]  # type: ignore[index]
    assert second.content.startswith("<think>\nI'll call lookup")


def test_reasoning_split_out_by_the_server_is_kept_and_never_parsed(drive: Drive) -> None:
    reply = Reply("THOUGHT: price\nACTION: lookup[train ticket]", reasoning="FINAL: 5 is what I would guess")
    model = ScriptedModel([reply, "FINAL: 89"])
    result = drive(make_agent(model, [lookup]), TASK)
    assert result.steps[0].reasoning == "FINAL: 5 is what I would guess"
    assert result.steps[0].observation == "89"
    assert all("guess" not in m.content for m in model.calls[1].prompt)  # type: ignore[union-attr]


def test_a_stop_inside_thinking_is_continued_on_a_completion_model(drive: Drive) -> None:
    cut_short = Reply(" <think>\nThe tool's", None, "stop")  # `stop` fired at "\nObservation" in the thinking
    rest = Reply(" answer comes later.\n</think>\nI need the price.\nACTION: lookup[train ticket]", None, "stop")
    model = ScriptedModel([cut_short, rest, " done\nFINAL: 89"], api="completion")
    result = drive(make_agent(model, [lookup]), TASK)
    assert result.steps[0].observation == "89"
    continued = model.calls[1]
    assert continued.prompt == model.calls[0].prompt + " <think>\nThe tool's"  # type: ignore[operator]
    assert continued.stop == ()
    assert model.calls[2].stop == ()  # not sent again in this run


def test_a_stop_inside_thinking_is_asked_again_without_stop_on_a_chat_model(drive: Drive) -> None:
    model = ScriptedModel([Reply("", None, "stop", reasoning="The tool's"), THINKING, "FINAL: 89"])
    result = drive(make_agent(model, [lookup]), TASK)
    assert result.steps[0].observation == "89"
    assert model.calls[0].stop and model.calls[1].stop == ()
    assert model.calls[1].prompt == model.calls[0].prompt


def test_final_after_made_up_observation_in_thinking_is_read(drive: Drive) -> None:
    model = ScriptedModel(["<think>Observation: none yet</think>\nTHOUGHT: easy\nFINAL: 4"])
    result = drive(make_agent(model, [lookup]), TASK)
    assert result.answer == "4"
    assert isinstance(result.steps[0].parsed, Final)


def _default_shown(value: object) -> str:
    if isinstance(value, str):
        return f'`"{value}"`'
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


@pytest.mark.parametrize("kind", [Limits, Prompting])
def test_the_limits_page_lists_every_field_with_its_default(kind: type[Limits] | type[Prompting]) -> None:
    """docs/concepts/limits.md has a row per field of Limits and of Prompting, with the default used."""
    from pathlib import Path

    page = (Path(__file__).resolve().parent.parent / "docs/concepts/limits.md").read_text(encoding="utf-8")
    for f in dataclasses.fields(kind):
        row = f"| `{f.name}` | {_default_shown(f.default)} |"
        assert row in page, f"limits.md lacks the row {row}"


def test_max_steps_says_the_step_limit_only_when_no_answer_came(drive: Drive) -> None:
    """troubleshooting.md's max_steps row: `the step limit of n` when no answer came; when the forced
    call answers, result.error is None, result.forced is True and result.answer is that answer."""
    forced = drive(make_agent(ScriptedModel(["ACTION: add[1, 2]", "FINAL: 3"]), [add], limits=Limits(steps=1)), "q")
    assert (forced.stop_reason, forced.error, forced.forced, forced.answer) == ("max_steps", None, True, "3")
    bare = make_agent(ScriptedModel(["ACTION: add[1, 2]"]), [add], limits=Limits(steps=1, force_final=False))
    stopped = drive(bare, "q")
    assert (stopped.stop_reason, stopped.error, stopped.answer) == ("max_steps", "the step limit of 1", None)
