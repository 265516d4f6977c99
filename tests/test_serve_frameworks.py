"""Real agent frameworks, written against native tool calling, run a multi-step tool task on the
endpoint: pydantic-ai, the OpenAI Agents SDK and LangChain's ChatOpenAI.bind_tools. The upstream is
scripted (the text protocol, as a model without tool calling writes it); each framework calls its
own tools with the arguments the binder read, sends the results back, and ends with the answer.

The frameworks are the `frameworks` extra (`pip install "react-text[frameworks]"`); a test skips,
naming the package, only when its framework is absent.
"""

from __future__ import annotations

import asyncio

import pytest
from serving_support import serving

from react_text import ScriptedModel
from react_text.serving import app

# The task: the weather in two cities, then a sum; three model calls (two tool rounds, one answer).
REPLIES = [
    "THOUGHT: I need both temperatures; neither depends on the other.\nACTION: temperature[Paris]\nACTION: temperature[city=Oslo]",
    "THOUGHT: Now the sum.\nACTION: add[18, 3]",
    "THOUGHT: The tool says 21.\nFINAL: Together 21 degrees.",
]
TEMPERATURES = {"Paris": 18, "Oslo": 3}


def temperature(city: str) -> int:
    """The temperature in a city, in degrees Celsius."""
    return TEMPERATURES[city]


def add(a: int, b: int) -> int:
    """Add two whole numbers."""
    return a + b


def check(model: ScriptedModel, ran: list[tuple[str, object]]) -> None:
    """The framework ran each tool with the arguments written, and sent each result back."""
    # the two temperatures were one reply's two calls: a framework may run them at once, in any order
    assert sorted(ran[:2]) == [("temperature", "Oslo"), ("temperature", "Paris")] and ran[2:] == [("add", (18, 3))]
    model.assert_all_used()
    second, third = model.calls[1].prompt, model.calls[2].prompt
    assert isinstance(second, tuple) and isinstance(third, tuple)
    assert (
        second[-1].content
        == 'OBSERVATION (temperature[{"city": "Paris"}]): 18\nOBSERVATION (temperature[{"city": "Oslo"}]): 3'
    )
    assert third[-1].content == "OBSERVATION: 21"


def test_pydantic_ai_runs_its_tools_through_the_endpoint() -> None:
    pydantic_ai = pytest.importorskip(
        "pydantic_ai", reason='needs pip install "react-text[frameworks]" (pydantic-ai-slim[openai])'
    )
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    model = ScriptedModel(REPLIES)
    ran: list[tuple[str, object]] = []
    agent = pydantic_ai.Agent(instructions="Answer with the tools.")

    @agent.tool_plain(name="temperature")
    def temperature_tool(city: str) -> int:
        """The temperature in a city, in degrees Celsius."""
        ran.append(("temperature", city))
        return temperature(city)

    @agent.tool_plain(name="add")
    def add_tool(a: int, b: int) -> int:
        """Add two whole numbers."""
        ran.append(("add", (a, b)))
        return add(a, b)

    async def run(url: str) -> object:
        import openai

        async with openai.AsyncOpenAI(base_url=url, api_key="-", max_retries=0) as client:
            chat = OpenAIChatModel("smollm2", provider=OpenAIProvider(openai_client=client))
            return (await agent.run("What are the temperatures in Paris and Oslo, added up?", model=chat)).output

    with serving(app(model)) as url:
        output = asyncio.run(run(url))
    assert output == "Together 21 degrees."
    check(model, ran)


def test_the_openai_agents_sdk_runs_its_tools_through_the_endpoint() -> None:
    agents = pytest.importorskip("agents", reason='needs pip install "react-text[frameworks]" (openai-agents)')
    import openai

    agents.set_tracing_disabled(True)  # no traces sent anywhere
    model = ScriptedModel(REPLIES)
    ran: list[tuple[str, object]] = []

    @agents.function_tool(name_override="temperature")
    def temperature_tool(city: str) -> int:
        """The temperature in a city, in degrees Celsius."""
        ran.append(("temperature", city))
        return temperature(city)

    @agents.function_tool(name_override="add")
    def add_tool(a: int, b: int) -> int:
        """Add two whole numbers."""
        ran.append(("add", (a, b)))
        return add(a, b)

    async def run(url: str) -> str:
        client = openai.AsyncOpenAI(base_url=url, api_key="-", max_retries=0)
        agent = agents.Agent(
            name="weather",
            instructions="Answer with the tools.",
            tools=[temperature_tool, add_tool],
            model=agents.OpenAIChatCompletionsModel(model="smollm2", openai_client=client),
        )
        result = await agents.Runner.run(agent, "What are the temperatures in Paris and Oslo, added up?")
        await client.close()
        return str(result.final_output)

    with serving(app(model)) as url:
        answer = asyncio.run(run(url))
    assert answer == "Together 21 degrees."
    check(model, ran)


def test_langchain_bind_tools_runs_its_tools_through_the_endpoint() -> None:
    pytest.importorskip("langchain_openai", reason='needs pip install "react-text[frameworks]" (langchain-openai)')
    from langchain_core.messages import HumanMessage, ToolMessage
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI

    ran: list[tuple[str, object]] = []

    @tool("temperature")
    def temperature_tool(city: str) -> int:
        """The temperature in a city, in degrees Celsius."""
        ran.append(("temperature", city))
        return temperature(city)

    @tool("add")
    def add_tool(a: int, b: int) -> int:
        """Add two whole numbers."""
        ran.append(("add", (a, b)))
        return add(a, b)

    tools = {"temperature": temperature_tool, "add": add_tool}
    model = ScriptedModel(REPLIES)
    with serving(app(model)) as url:
        chat = ChatOpenAI(model="smollm2", base_url=url, api_key="-", max_retries=0).bind_tools(list(tools.values()))
        messages: list[object] = [HumanMessage("What are the temperatures in Paris and Oslo, added up?")]
        for _ in range(5):
            reply = chat.invoke(messages)
            messages.append(reply)
            if not reply.tool_calls:
                break
            for call in reply.tool_calls:
                messages.append(ToolMessage(str(tools[call["name"]].invoke(call["args"])), tool_call_id=call["id"]))
    assert reply.content == "Together 21 degrees."
    check(model, ran)
