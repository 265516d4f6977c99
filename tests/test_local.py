"""The embedded model, in-process (needs the `local` extra)."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("llama_cpp", reason='needs pip install "react-text[local]"')

from react_text import Agent
from react_text.backends.local import LocalModel
from react_text.toolbox import calculator

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def model() -> LocalModel:
    return LocalModel()


def agent(model: LocalModel, **options: object) -> Agent:
    return Agent(model, tools=[calculator], example="examples/calculator", max_steps=5, **options)  # type: ignore[arg-type]


@pytest.mark.parametrize(("task", "answer"), [("What is 17 * 23 + 5?", "396"), ("What is 1234 * 5678?", "7006652")])
def test_solves_arithmetic_with_the_calculator(model: LocalModel, task: str, answer: str) -> None:
    result = agent(model).run(task)
    assert (result.answer, result.stop_reason) == (answer, "final")
    assert result.tool_calls >= 1


def test_reports_usage_in_its_own_tokens(model: LocalModel) -> None:
    result = agent(model).run("What is 17 * 23 + 5?")
    last = result.steps[-1].usage  # render_last is the prompt of the last call
    assert last.prompt_tokens - model.count_tokens(model.render_last) in (0, 1)  # 1: a BOS token


def test_prefix_cache_evaluates_only_new_tokens(model: LocalModel) -> None:
    before = (model.stats.prompt_tokens, model.stats.evaluated_tokens)
    agent(model).run("What is 17 * 23 + 5?")
    sent = model.stats.prompt_tokens - before[0]
    evaluated = model.stats.evaluated_tokens - before[1]
    assert evaluated < sent / 2  # the second call reuses the first call's prompt


def test_grammar_keeps_replies_in_the_protocol(model: LocalModel) -> None:
    result = agent(model).run("Write a poem about the sea.")
    assert result.steps
    for step in result.steps:  # completion mode: each reply continues a prompt ending in THOUGHT:
        assert re.fullmatch(r" [^\n]+\n(ACTION: calculator\[[^\n]+\]|FINAL: [^\n]+)", step.reply), step.reply


def test_chat_template_mode(model: LocalModel) -> None:
    chat = LocalModel(api="chat")
    result = agent(chat).run("What is 17 * 23 + 5?")
    assert chat.render_last.startswith("<|im_start|>")  # SmolLM2's own ChatML template
    assert result.stop_reason in {"final", "max_steps"}
