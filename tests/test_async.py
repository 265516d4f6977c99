"""Async runs at scale, async tools, and tool time limits in both drivers."""

from __future__ import annotations

import asyncio
import signal
import threading
import time

import pytest
from conftest import Drive, make_agent

from react_text import Agent, Limits, Reply, Request, ScriptedModel, tool
from react_text.prompting import render


class Gate:
    """An async model whose first call of every episode waits until all `n` episodes have called:
    it can only finish if the episodes really run at once."""

    api = "chat"
    name = "gate"
    accepts_grammar = False

    def __init__(self, n: int) -> None:
        self.n = n
        self.waiting = 0
        self.open = asyncio.Event()

    def generate(self, request: Request) -> Reply:
        raise AssertionError("an async run must use agenerate")

    async def agenerate(self, request: Request) -> Reply:
        assert isinstance(request.prompt, tuple)
        if len(request.prompt) == 2:  # the first call of an episode
            self.waiting += 1
            if self.waiting == self.n:
                self.open.set()
            await self.open.wait()
            return Reply("THOUGHT: add\nACTION: add[20, 22]")
        return Reply(f"FINAL: {request.prompt[-1].content.removeprefix('OBSERVATION: ')}")


def add(a: int, b: int) -> int:
    """Add two whole numbers."""
    return a + b


def test_many_episodes_run_at_once_and_all_are_right() -> None:
    model = Gate(300)
    agent = Agent(model, tools=[add])

    async def main() -> list[str | None]:
        results = await asyncio.wait_for(asyncio.gather(*(agent.arun(f"task {i}") for i in range(300))), 60)
        return [r.answer for r in results]

    assert asyncio.run(main()) == ["42"] * 300


def test_a_hung_tool_does_not_block_other_episodes() -> None:
    release = threading.Event()
    finished: list[str] = []

    def hang(x: str) -> str:
        """Never returns in time."""
        release.wait(30)
        return "late"

    hung = Agent(ScriptedModel(["ACTION: hang[x]", "FINAL: gave up"]), tools=[hang], limits=Limits(tool_seconds=5))
    quick = Agent(ScriptedModel(["ACTION: add[1, 2]", "FINAL: 3"] * 5), tools=[add])

    async def main() -> None:
        async def one(agent: Agent, name: str) -> None:
            await agent.arun("t")
            finished.append(name)

        slow = asyncio.create_task(one(hung, "hung"))
        await asyncio.gather(
            *(one(Agent(ScriptedModel(["ACTION: add[1, 2]", "FINAL: 3"]), tools=[add]), f"q{i}") for i in range(5))
        )
        assert "hung" not in finished  # the others finished while the hung tool held its thread
        release.set()
        await slow

    asyncio.run(main())
    assert finished[-1] == "hung" and len(finished) == 6
    del quick


def test_async_tools_are_awaited_in_async_runs_and_run_in_sync_runs(drive: Drive) -> None:
    seen: list[str] = []

    async def fetch(url: str) -> str:
        """Fetch a page."""
        await asyncio.sleep(0)
        seen.append(url)
        return f"page {url}"

    result = drive(Agent(ScriptedModel(["ACTION: fetch[a]", "FINAL: ok"]), tools=[fetch]), "t")
    assert result.steps[0].observation == "page a"
    assert seen == ["a"]


def test_an_async_tool_that_overruns_is_cancelled(drive: Drive) -> None:
    cancelled: list[bool] = []

    async def slow(x: str) -> str:
        """Takes too long."""
        try:
            await asyncio.sleep(10)
        except asyncio.CancelledError:
            cancelled.append(True)
            raise
        return "late"

    agent = make_agent(ScriptedModel(["ACTION: slow[x]", "FINAL: gave up"]), [slow], tool_seconds=0.2)
    result = drive(agent, "t")
    assert result.steps[0].observation == render("corrections/tool_timeout", tool="slow", seconds=0.2)
    assert cancelled == [True]


def test_a_tool_that_swallows_exceptions_still_times_out(drive: Drive) -> None:
    def stubborn(x: str) -> str:
        """Catches everything."""
        deadline = time.monotonic() + 1.0
        while time.monotonic() < deadline:
            try:
                time.sleep(0.01)
            except Exception:  # noqa: BLE001 - the point of the test
                continue
        return "finished anyway"

    agent = make_agent(ScriptedModel(["ACTION: stubborn[x]", "FINAL: gave up"]), [stubborn], tool_seconds=0.2)
    result = drive(agent, "t")
    assert result.steps[0].observation == render("corrections/tool_timeout", tool="stubborn", seconds=0.2)


def test_a_tools_own_timeout_error_is_its_error_not_a_time_limit(drive: Drive) -> None:
    def flaky(x: str) -> str:
        """Times out on its own."""
        raise TimeoutError("the upstream server timed out")

    result = drive(Agent(ScriptedModel(["ACTION: flaky[x]", "FINAL: no"]), tools=[flaky]), "t")
    assert result.steps[0].observation == "The tool flaky failed with TimeoutError: the upstream server timed out"


def test_the_time_limit_leaves_the_programs_own_alarm_alone() -> None:
    rang: list[int] = []
    previous = signal.signal(signal.SIGALRM, lambda signum, frame: rang.append(signum))
    try:
        sleepy = tool(lambda x: time.sleep(0.5) or "slept", name="sleepy", timeout=0.1)
        result = Agent(ScriptedModel(["ACTION: sleepy[x]", "FINAL: ok"]), tools=[sleepy]).run("t")
        assert result.steps[0].observation == render("corrections/tool_timeout", tool="sleepy", seconds=0.1)
        assert signal.getsignal(signal.SIGALRM) is not None and rang == []
    finally:
        signal.signal(signal.SIGALRM, previous)


def test_the_time_limit_is_restored_after_a_run() -> None:
    before = signal.getsignal(signal.SIGALRM)
    Agent(ScriptedModel(["ACTION: add[1, 2]", "FINAL: 3"]), tools=[add]).run("t")
    assert signal.getsignal(signal.SIGALRM) == before
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)


def test_runs_on_other_threads_keep_their_time_limits() -> None:
    out: list[str | None] = []

    def work() -> None:
        slow = tool(lambda x: time.sleep(2) or "late", name="slow", timeout=0.1)
        result = Agent(ScriptedModel(["ACTION: slow[x]", "FINAL: gave up"]), tools=[slow]).run("t")
        out.append(result.steps[0].observation)

    thread = threading.Thread(target=work)
    thread.start()
    thread.join(10)
    assert out == [render("corrections/tool_timeout", tool="slow", seconds=0.1)]


def test_an_async_approver_is_awaited() -> None:
    asked: list[str] = []

    async def approve(t: object, action: object) -> bool:
        await asyncio.sleep(0)
        asked.append("yes")
        return True

    rm = tool(lambda path: f"removed {path}", name="rm", risky=True)
    agent = Agent(ScriptedModel(["ACTION: rm[a.txt]", "FINAL: done"]), tools=[rm], approve=approve)
    result = asyncio.run(agent.arun("t"))
    assert (asked, result.steps[0].observation) == (["yes"], "removed a.txt")
    with pytest.raises(TypeError, match="async approver needs an async run"):
        Agent(ScriptedModel(["ACTION: rm[a.txt]", "FINAL: done"]), tools=[rm], approve=approve).run("t")


def test_a_sync_only_model_works_in_an_async_run() -> None:
    class Plain:
        api = "chat"
        name = "plain"
        accepts_grammar = False

        def generate(self, request: Request) -> Reply:
            return Reply("FINAL: 7")

    assert asyncio.run(Agent(Plain()).arun("t")).answer == "7"
