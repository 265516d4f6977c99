"""Issue 20, "tried as a new user would": Agent checks its arguments when made and says what it
expected; OpenAIChat against OpenAI with no key says so at once; one script per run is easy, and a
script shared by runs at once is warned about."""

from __future__ import annotations

import asyncio
import warnings

import pytest

from react_text import Agent, ConfigError, OpenAIChat, ScriptedModel


def lookup(item: str) -> str:
    """Return the price of one item."""
    return "12"


def test_a_model_name_is_refused_with_the_way_to_make_a_model() -> None:
    """Issue 20: Agent("gpt-4o-mini") failed with AttributeError: 'str' object has no attribute 'name'."""
    with pytest.raises(TypeError, match=r"model object") as refused:
        Agent("gpt-4o-mini")  # type: ignore[arg-type]
    assert 'OpenAIChat("gpt-4o-mini")' in str(refused.value)


def test_a_tool_name_is_refused_saying_what_a_tool_is() -> None:
    """Issue 20: tools=["lookup"] gave a confusing name error."""
    with pytest.raises(TypeError, match=r"function or a Tool") as refused:
        Agent(ScriptedModel([]), tools=["lookup"])  # type: ignore[list-item]
    assert "'lookup'" in str(refused.value)


def test_openai_without_a_key_says_so_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 20: it sent the key "not-needed" and failed later with a 401."""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        OpenAIChat("gpt-4o-mini")
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        OpenAIChat("gpt-4o-mini", base_url="https://api.openai.com/v1")
    OpenAIChat("smollm2", base_url="http://127.0.0.1:8080/v1")  # a local server needs none
    OpenAIChat("gpt-4o-mini", api_key="sk-test")


SCRIPT = ["THOUGHT: look.\nACTION: lookup[a]", "THOUGHT: look.\nACTION: lookup[b]", "THOUGHT: done.\nFINAL: 12"]


def test_a_script_per_run_serves_each_of_many_concurrent_runs_in_full() -> None:
    """Issue 20: one ScriptedModel shared by concurrent runs handed its replies out across them."""
    model = ScriptedModel.per_run(SCRIPT)
    agent = Agent(model, tools=[lookup])

    async def main() -> list[object]:
        results = await asyncio.gather(*(agent.arun(f"task {i % 3}") for i in range(20)))
        return [(r.stop_reason, r.answer, r.tool_calls) for r in results]

    assert asyncio.run(main()) == [("final", "12", 2)] * 20
    assert agent.run("task 0").answer == "12"  # and runs one after another


def test_one_script_consumed_by_runs_at_once_is_warned_about() -> None:
    model = ScriptedModel(SCRIPT * 2)
    agent = Agent(model, tools=[lookup])

    async def main() -> None:
        await asyncio.gather(agent.arun("task A"), agent.arun("task B"))

    with pytest.warns(RuntimeWarning, match="per_run"):
        asyncio.run(main())


def test_one_script_used_by_runs_one_after_another_is_not_warned_about() -> None:
    model = ScriptedModel(SCRIPT * 2)
    agent = Agent(model, tools=[lookup])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert agent.run("task A").answer == agent.run("task B").answer == "12"


def test_the_local_model_leaves_a_core_free_by_default() -> None:
    """Issue 20: LocalModel gave llama.cpp every core; under load a step went from 1.3 s to 29-88 s."""
    import os

    from react_text.backends.local import default_threads

    assert default_threads() == max(1, len(os.sched_getaffinity(0)) - 1)


def test_the_command_line_takes_threads() -> None:
    from react_text.cli.main import _arguments

    assert _arguments().parse_args(["run", "--threads", "3", "q"]).threads == 3
