"""The endpoint driven by the real `openai` client (sync, async, streaming) over HTTP, against
scripted upstreams: tool calls out, tool results back in, the final answer, and what a request may
ask (tool_choice, parallel_tool_calls, max_tokens, seed, temperature, stop)."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

import openai
import pytest
from serving_support import ADD, WEATHER, SlowModel, function, serving

from react_text import Message, Reply, ScriptedModel, Usage
from react_text.serving import app


def client(url: str) -> Any:
    return openai.OpenAI(base_url=url, api_key="-", max_retries=0)


def ask(model: ScriptedModel, **request: Any) -> tuple[Any, Any]:
    """One request through the sync client: the completion and the response's headers."""
    with serving(app(model)) as url, client(url) as sync:  # closed: an open socket left is a warning
        raw = sync.chat.completions.with_raw_response.create(model="m", **request)
    return raw.parse(), raw.headers


def test_a_tool_call_goes_out_and_its_result_comes_back_as_an_observation() -> None:
    model = ScriptedModel(
        ["THOUGHT: weather first\nACTION: get_weather[Paris]", "THOUGHT: known\nFINAL: 18 C in Paris"]
    )
    messages: list[Any] = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Weather in Paris?"}]
    with serving(app(model)) as url:
        first = client(url).chat.completions.create(model="m", messages=messages, tools=[WEATHER])
        (call,) = first.choices[0].message.tool_calls
        assert first.choices[0].finish_reason == "tool_calls"
        assert (call.type, call.function.name, json.loads(call.function.arguments)) == (
            "function",
            "get_weather",
            {"city": "Paris"},
        )
        assert first.choices[0].message.content is None
        messages += [first.choices[0].message.model_dump(exclude_none=True)]
        messages += [{"role": "tool", "tool_call_id": call.id, "content": "18 C, sunny"}]
        second = client(url).chat.completions.create(model="m", messages=messages, tools=[WEATHER])
    assert (second.choices[0].message.content, second.choices[0].finish_reason) == ("18 C in Paris", "stop")
    assert second.choices[0].message.tool_calls is None
    assert second.usage is not None and second.usage.total_tokens > second.usage.prompt_tokens > 0
    system, question, acted, observed = model.calls[1].prompt
    assert system.role == "system" and "get_weather[city]: The weather in a city." in system.content
    assert system.content.endswith("Be brief.")
    assert question == Message("user", "QUESTION: Weather in Paris?")
    assert acted == Message("assistant", 'ACTION: get_weather[{"city": "Paris"}]')
    assert observed == Message("user", "OBSERVATION: 18 C, sunny")
    model.assert_all_used()


def test_a_completion_upstream_gets_one_transcript_that_ends_with_the_cue() -> None:
    model = ScriptedModel([" I add.\nACTION: add[2, 3]"], api="completion")
    messages = [
        {"role": "user", "content": "2 + 3 and 4 + 4?"},
        {
            "role": "assistant",
            "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "add", "arguments": '{"a": 4, "b": 4}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "a", "content": "8"},
    ]
    made, _headers = ask(model, messages=messages, tools=[ADD], parallel_tool_calls=False)
    (call,) = made.choices[0].message.tool_calls
    assert json.loads(call.function.arguments) == {"a": 2, "b": 3}
    prompt = model.calls[0].prompt
    assert isinstance(prompt, str)
    assert prompt.endswith('QUESTION: 2 + 3 and 4 + 4?\nACTION: add[{"a": 4, "b": 4}]\nOBSERVATION: 8\nTHOUGHT:')


def test_parallel_actions_are_several_tool_calls_with_their_own_ids() -> None:
    reply = "THOUGHT: both at once\nACTION: get_weather[Paris]\nACTION: get_weather[city=Oslo]"
    made, _headers = ask(
        ScriptedModel([reply]), messages=[{"role": "user", "content": "Paris and Oslo?"}], tools=[WEATHER]
    )
    calls = made.choices[0].message.tool_calls
    assert [json.loads(c.function.arguments) for c in calls] == [{"city": "Paris"}, {"city": "Oslo"}]
    assert len({c.id for c in calls}) == 2


def test_without_parallel_tool_calls_a_reply_of_several_actions_is_asked_again_for_one() -> None:
    several = "THOUGHT: both at once\nACTION: get_weather[Paris]\nACTION: get_weather[city=Oslo]"
    model = ScriptedModel([several, "THOUGHT: Paris first\nACTION: get_weather[Oslo]"])
    one, headers = ask(
        model, messages=[{"role": "user", "content": "Paris and Oslo?"}], tools=[WEATHER], parallel_tool_calls=False
    )
    assert [json.loads(c.function.arguments) for c in one.choices[0].message.tool_calls] == [{"city": "Oslo"}]
    assert headers["x-react-text-tries"] == "2"
    assert "one ACTION per reply" in model.calls[0].prompt[0].content  # told before, by the instruction block
    told = model.calls[1].prompt[-1].content
    assert told.startswith("OBSERVATION: Parallel tool calls are off") and "one ACTION" in told, told
    model.assert_all_used()


def test_without_parallel_tool_calls_several_actions_every_time_are_content_with_why() -> None:
    several = "ACTION: get_weather[Paris]\nACTION: get_weather[Oslo]"
    made, headers = ask(
        ScriptedModel([several] * 3),
        messages=[{"role": "user", "content": "?"}],
        tools=[WEATHER],
        parallel_tool_calls=False,
    )
    assert made.choices[0].message.tool_calls is None and made.choices[0].message.content == several
    assert headers["x-react-text-unread"] == "several_actions"


def test_the_results_of_several_calls_are_labelled_observations_in_the_calls_order() -> None:
    model = ScriptedModel(["FINAL: Paris is warmer"])
    calls = [
        {"id": "p", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}},
        {"id": "o", "type": "function", "function": {"name": "get_weather", "arguments": '{"city": "Oslo"}'}},
    ]
    messages = [
        {"role": "user", "content": "Which is warmer?"},
        {"role": "assistant", "content": "Both.", "tool_calls": calls},
        {"role": "tool", "tool_call_id": "o", "content": "3 C"},  # answered out of order
        {"role": "tool", "tool_call_id": "p", "content": "18 C"},
    ]
    made, _headers = ask(model, messages=messages, tools=[WEATHER])
    assert made.choices[0].message.content == "Paris is warmer"
    *_, acted, observed = model.calls[0].prompt
    assert (
        acted.content == 'THOUGHT: Both.\nACTION: get_weather[{"city": "Paris"}]\nACTION: get_weather[{"city": "Oslo"}]'
    )
    assert observed.content == (
        'OBSERVATION (get_weather[{"city": "Paris"}]): 18 C\nOBSERVATION (get_weather[{"city": "Oslo"}]): 3 C'
    )


def test_inputs_are_typed_by_the_schema_and_a_refused_one_is_asked_again() -> None:
    model = ScriptedModel(["ACTION: add[two, 3]", 'ACTION: add["2", 3]'])
    made, headers = ask(model, messages=[{"role": "user", "content": "2 + 3?"}], tools=[ADD])
    assert json.loads(made.choices[0].message.tool_calls[0].function.arguments) == {"a": 2, "b": 3}
    assert headers["x-react-text-tries"] == "2"
    correction = model.calls[1].prompt[-1].content
    assert correction.startswith("OBSERVATION: The tool add was not run: a takes a whole number")


def test_an_unreadable_reply_is_asked_again_then_returned_as_content_with_why() -> None:
    model = ScriptedModel(["I think it is sunny.", "Sunny, I said.", "Sunny!"])
    made, headers = ask(model, messages=[{"role": "user", "content": "Weather?"}], tools=[WEATHER])
    choice = made.choices[0]
    assert (choice.message.content, choice.finish_reason, choice.message.tool_calls) == ("Sunny!", "stop", None)
    assert headers["x-react-text-unread"] == "no_directive"
    assert made.react_text == {
        "tries": 3,
        "usage": "counted",
        "unread": "no_directive",
        "detail": made.react_text["detail"],
    }
    assert "no ACTION or FINAL" in made.react_text["detail"]
    assert len(model.calls) == 3 and model.calls[2].prompt[-2] == Message("assistant", "Sunny, I said.")


def test_a_made_up_observation_is_cut_and_never_reaches_the_client() -> None:
    reply = "THOUGHT: x\nACTION: get_weather[Paris]\nOBSERVATION: 25 C\nTHOUGHT: so\nFINAL: 25 C"
    made, _headers = ask(ScriptedModel([reply]), messages=[{"role": "user", "content": "?"}], tools=[WEATHER])
    assert made.choices[0].finish_reason == "tool_calls"
    assert "25 C" not in made.model_dump_json()


def test_a_final_answer_cut_at_the_allowance_is_finish_reason_length() -> None:
    model = ScriptedModel([Reply("THOUGHT: long\nFINAL: one two three", Usage(50, 7), "length")])
    made, headers = ask(model, messages=[{"role": "user", "content": "Count."}], tools=[WEATHER], max_tokens=40)
    assert (made.choices[0].message.content, made.choices[0].finish_reason) == ("one two three", "length")
    assert made.usage.prompt_tokens == 50 and headers["x-react-text-usage"] == "upstream"
    assert model.calls[0].max_tokens == 40


def test_thinking_is_passed_through_as_reasoning_content_and_never_parsed() -> None:
    text = "<think>maybe ACTION: get_weather[Rome]</think>THOUGHT: no tool needed\nFINAL: hello"
    model = ScriptedModel([Reply(text, reasoning="the server's own split")])
    made, _headers = ask(model, messages=[{"role": "user", "content": "Hi"}], tools=[WEATHER])
    message = made.choices[0].message
    assert (message.content, message.tool_calls) == ("hello", None)
    assert message.reasoning_content == "the server's own split\nmaybe ACTION: get_weather[Rome]"


@pytest.mark.parametrize(
    ("choice", "directive", "tools"),
    [
        ("none", "final", ""),
        ("required", 'action ("\\n" action){0,3}', '"get_weather" "[" in-0 "]" | "add" "[" in-1 "]")'),
        ({"type": "function", "function": {"name": "add"}}, 'action ("\\n" action){0,3}', '"add" "[" in-0 "]")'),
        ("auto", 'action ("\\n" action){0,3} | final', '"get_weather" "[" in-0 "]" | "add" "[" in-1 "]")'),
    ],
)
def test_tool_choice_is_held_by_the_grammar_where_the_upstream_takes_one(
    choice: Any, directive: str, tools: str
) -> None:
    reply = "THOUGHT: x\nFINAL: ok" if choice == "none" else "THOUGHT: x\nACTION: add[1, 2]"
    model = ScriptedModel([reply], accepts_grammar=True)
    ask(model, messages=[{"role": "user", "content": "?"}], tools=[WEATHER, ADD], tool_choice=choice)
    grammar = model.calls[0].grammar or ""
    assert f"\ndirective ::= {directive}\n" in grammar, grammar
    actions = [line for line in grammar.splitlines() if line.startswith("action ::= ")]
    assert (actions[0] if actions else "").endswith(tools), grammar


def test_tool_choice_without_a_grammar_is_said_and_a_reply_against_it_is_asked_again() -> None:
    model = ScriptedModel(["THOUGHT: easy\nFINAL: 3", "THOUGHT: fine\nACTION: add[1, 2]"])
    made, _ = ask(model, messages=[{"role": "user", "content": "1 + 2?"}], tools=[WEATHER, ADD], tool_choice="required")
    assert made.choices[0].message.tool_calls[0].function.name == "add"
    assert model.calls[0].grammar is None
    assert (
        model.calls[0]
        .prompt[0]
        .content.endswith("For this reply, call a tool: write THOUGHT: and then ACTION: tool_name[input].")
    )
    named = ScriptedModel(["ACTION: get_weather[Oslo]", "ACTION: add[1, 2]"])
    made, _ = ask(
        named,
        messages=[{"role": "user", "content": "?"}],
        tools=[WEATHER, ADD],
        tool_choice={"type": "function", "function": {"name": "add"}},
    )
    assert made.choices[0].message.tool_calls[0].function.name == "add"
    assert "Call the tool add in this reply, not get_weather" in named.calls[1].prompt[-1].content
    refused = ScriptedModel(["ACTION: add[1, 2]", "FINAL: 3"])
    made, _headers = ask(refused, messages=[{"role": "user", "content": "1 + 2?"}], tools=[ADD], tool_choice="none")
    assert (made.choices[0].message.content, made.choices[0].message.tool_calls) == ("3", None)


@dataclass
class Tempered:
    """An upstream with a temperature of its own, as LocalModel and the OpenAI backends have."""

    temperature: float = 0.0
    api: str = "chat"
    name: str = "tempered"
    accepts_grammar: bool = False
    seen: tuple[float, ...] = ()

    def generate(self, request: Any) -> Reply:
        Tempered.seen += (self.temperature,)
        return Reply("FINAL: ok")


def test_max_tokens_seed_temperature_and_stop_are_passed_on() -> None:
    model = ScriptedModel(["FINAL: alpha beta STOP gamma"])
    made, _headers = ask(model, messages=[{"role": "user", "content": "?"}], max_tokens=33, seed=7, stop=["STOP"])
    assert made.choices[0].message.content == "alpha beta "
    sent = model.calls[0]
    assert (sent.max_tokens, sent.seed) == (33, 7) and "STOP" in sent.stop  # no tools: the reply is all answer
    with_tools = ScriptedModel(["FINAL: a STOP b"])
    ask(with_tools, messages=[{"role": "user", "content": "?"}], tools=[WEATHER], stop="STOP")
    assert "STOP" not in with_tools.calls[0].stop  # it would cut an action's input: applied to the answer here
    upstream = Tempered()
    with serving(app(upstream)) as url, client(url) as made:  # closed: an open socket left is a warning
        made.chat.completions.create(model="m", messages=[{"role": "user", "content": "?"}], temperature=0.7)
        made.chat.completions.create(model="m", messages=[{"role": "user", "content": "?"}])
    assert Tempered.seen == (0.7, 0.0) and upstream.temperature == 0.0


def test_streaming_sends_content_deltas_and_usage_last() -> None:
    model = ScriptedModel(["THOUGHT: known\nFINAL: It is eighteen degrees and sunny in Paris today."])
    with serving(app(model)) as url:
        stream = client(url).chat.completions.create(
            model="m",
            messages=[{"role": "user", "content": "?"}],
            tools=[WEATHER],
            stream=True,
            stream_options={"include_usage": True},
        )
        chunks = list(stream)
    texts = [c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content]
    assert len(texts) > 1 and "".join(texts) == "It is eighteen degrees and sunny in Paris today."
    assert [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason] == ["stop"]
    assert chunks[-1].choices == [] and chunks[-1].usage.total_tokens > 0
    assert all(c.usage is None for c in chunks[:-1])


def test_streaming_tool_calls_arrive_as_index_id_name_then_argument_fragments() -> None:
    reply = 'ACTION: get_weather[{"city": "Saint-Remy-de-Provence, Bouches-du-Rhone"}]\nACTION: add[1, 2]\nOBSERVATION: made up'
    with serving(app(ScriptedModel([reply]))) as url:
        chunks = list(
            client(url).chat.completions.create(
                model="m", messages=[{"role": "user", "content": "?"}], tools=[WEATHER, ADD], stream=True
            )
        )
    calls: dict[int, dict[str, str]] = {}
    for chunk in chunks:
        for delta in chunk.choices[0].delta.tool_calls or ():
            if delta.id is not None:
                assert delta.index not in calls and delta.function.name
                calls[delta.index] = {"id": delta.id, "name": delta.function.name, "arguments": ""}
            calls[delta.index]["arguments"] += delta.function.arguments or ""
    assert [(c["name"], json.loads(c["arguments"])) for c in calls.values()] == [
        ("get_weather", {"city": "Saint-Remy-de-Provence, Bouches-du-Rhone"}),
        ("add", {"a": 1, "b": 2}),
    ]
    assert sum(1 for c in chunks for d in c.choices[0].delta.tool_calls or () if d.function.arguments) > 3
    assert chunks[-1].choices[0].finish_reason == "tool_calls"
    assert not any("made up" in c.model_dump_json() for c in chunks)


def test_many_requests_at_once_are_served_at_once_by_the_async_client() -> None:
    upstream = SlowModel(seconds=0.3)

    async def all_at_once(url: str) -> list[str]:
        async with openai.AsyncOpenAI(base_url=url, api_key="-", max_retries=0) as aclient:
            made = await asyncio.gather(
                *(
                    aclient.chat.completions.create(
                        model="m", messages=[{"role": "user", "content": f"n{i}"}], tools=[ADD]
                    )
                    for i in range(16)
                )
            )
        return [m.choices[0].message.content or "" for m in made]

    with serving(app(upstream)) as url:
        answers = asyncio.run(all_at_once(url))
    assert answers == [f"n{i}" for i in range(16)]
    assert upstream.most >= 8  # sixteen slow calls overlapped: async from the socket to the upstream


def test_models_lists_the_upstream() -> None:
    with serving(app(ScriptedModel([], name="smollm2"))) as url:
        listed = client(url).models.list()
    assert [m.id for m in listed.data] == ["smollm2"]


def test_a_tool_named_in_tool_calls_json_schema_names_come_back_as_written() -> None:
    spec = function("search", {"from": {"type": "string"}, "max-results": {"type": "integer"}}, ("from",))
    made, _headers = ask(
        ScriptedModel(["ACTION: search[from_=Oslo, max_results=3]"]),
        messages=[{"role": "user", "content": "?"}],
        tools=[spec],
    )
    assert json.loads(made.choices[0].message.tool_calls[0].function.arguments) == {"from": "Oslo", "max-results": 3}
