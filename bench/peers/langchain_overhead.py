"""LangChain's AgentExecutor (ReAct text agent) per-step overhead, with a canned LLM (run in its own venv).

    /tmp/peer/bin/python bench/peers/langchain_overhead.py

Prints "steps median_us_per_step" lines; bench/engine_overhead.py runs it and reads them.
"""

from __future__ import annotations

from langchain.agents import AgentExecutor, create_react_agent
from langchain_core.language_models.fake import FakeListLLM
from langchain_core.prompts import PromptTemplate
from langchain_core.tools import tool
from timing import report  # bench/peers/timing.py, beside this script

PROMPT = PromptTemplate.from_template(
    "Answer the question. Tools:\n{tools}\nUse: Thought/Action/Action Input/Observation, "
    "Action is one of [{tool_names}].\nQuestion: {input}\n{agent_scratchpad}"
)


@tool
def echo(text: str) -> str:
    """Return the input."""
    return text


def replies(steps: int) -> list[str]:
    return [f"Thought: step {i}.\nAction: echo\nAction Input: item {i}" for i in range(steps - 1)] + [
        "Thought: done.\nFinal Answer: 42"
    ]


def episode(steps: int) -> None:
    llm = FakeListLLM(responses=replies(steps))
    agent = create_react_agent(llm, [echo], PROMPT)
    executor = AgentExecutor(agent=agent, tools=[echo], max_iterations=steps + 1)
    result = executor.invoke({"input": "Find the answer."})
    assert result["output"] == "42", result


if __name__ == "__main__":
    report(episode)
