"""Episodes on Ray (react_text.evaluation.cluster), on a local Ray cluster the tests start: the same outcomes
as one process, each episode wholly on one server, and a worker killed mid-run costs only the
episodes it was running, which start again. Slow: a Ray cluster takes seconds to start."""

from __future__ import annotations

import asyncio
import functools
import json
import os
import signal
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from fake_openai import FakeServer, question

from react_text import OpenAIChat, evaluation
from react_text.cli.main import main
from react_text.evaluation.scripts import trace_name

ray = pytest.importorskip("ray")
from react_text.evaluation import cluster  # noqa: E402

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    try:
        yield
    finally:
        ray.shutdown()


def tasks(n: int) -> list[evaluation.Task]:
    return [evaluation.Task(f"t{i}", f"What is {i} + {i * 7}?", str(i * 8)) for i in range(n)]


def recipes(*servers: FakeServer) -> list[Any]:
    return [functools.partial(OpenAIChat, "fake", base_url=s.url, api_key="x", max_retries=0) for s in servers]


def comparable(outcomes: list[evaluation.TaskResult]) -> list[evaluation.TaskResult]:
    return sorted((replace(o, seconds=0.0, server=None) for o in outcomes), key=lambda o: (o.id, o.sample))


async def collect(run: Any) -> list[evaluation.TaskResult]:
    return [outcome async for outcome in run]


def test_the_same_outcomes_as_one_process_each_episode_on_one_server(local_ray: None, tmp_path: Path) -> None:
    with FakeServer() as a, FakeServer() as b:
        lines_here, lines_there = tmp_path / "here.lines", tmp_path / "there.lines"
        here = evaluation.evaluate(tasks(12), recipes(a)[0](), root=tmp_path, concurrency=4, trajectories=lines_here)
        a.requests.clear()
        run = cluster.aevaluate(
            tasks(12), recipes(a, b), root=tmp_path, workers=2, concurrency=6, traces=tmp_path, trajectories=lines_there
        )
        there = asyncio.run(collect(run))
        assert comparable(there) == comparable(here)
        assert all(o.ok for o in there)
        assert a.tasks().isdisjoint(b.tasks()) and len(a.tasks() | b.tasks()) == 12  # sticky: one server each
        assert a.tasks() and b.tasks()  # and spread over both
        assert sorted(a.episodes() + b.episodes()) == sorted(t.task for t in tasks(12))  # each started once
        assert {o.server for o in there} == {a.url.rstrip("/"), b.url.rstrip("/")}
    assert sorted(p.name for p in tmp_path.glob("*.jsonl")) == sorted(f"t{i}.jsonl" for i in range(12))
    by_id = [
        sorted(lines.read_text().splitlines(), key=lambda line: json.loads(line)["id"])
        for lines in (lines_here, lines_there)
    ]
    assert by_id[0] == by_id[1] and len(by_id[1]) == 12  # the same trajectory lines, written by the driver


def test_a_killed_worker_costs_only_its_episodes_which_start_again(local_ray: None, tmp_path: Path) -> None:
    work = tasks(24)
    with FakeServer(delay=0.5) as server:

        async def kill_one_worker_mid_run() -> list[evaluation.TaskResult]:
            running = asyncio.ensure_future(
                collect(cluster.aevaluate(work, recipes(server), root=tmp_path, workers=2, concurrency=8))
            )
            while len(server.episodes()) < 8:  # both workers busy with 4 episodes each
                await asyncio.sleep(0.05)
            named = [
                a for a in ray.util.list_named_actors(all_namespaces=True) if a["name"].startswith(cluster.WORKER_NAME)
            ]
            victim = ray.get_actor(named[0]["name"], namespace=named[0]["namespace"])
            os.kill(await victim.pid.remote(), signal.SIGKILL)
            return await running

        outcomes = asyncio.run(kill_one_worker_mid_run())
        started = Counter(server.episodes())
    assert sorted(o.id for o in outcomes) == sorted(t.id for t in work)  # each task once
    assert all(o.ok for o in outcomes)
    again = [task for task, times in started.items() if times > 1]
    assert 1 <= len(again) <= 4  # the episodes the killed worker was running, no others
    assert all(started[t.task] in (1, 2) for t in work)


def test_eval_ray_resumes_running_only_the_tasks_not_done(
    local_ray: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    work = tasks(12)
    task_file = tmp_path / "tasks.jsonl"
    task_file.write_text("".join(json.dumps({"id": t.id, "task": t.task, "answer": t.answer}) + "\n" for t in work))
    out = tmp_path / "results.jsonl"
    with FakeServer() as server:
        first = evaluation.evaluate(work[:5], OpenAIChat("fake", base_url=server.url, api_key="x"), root=tmp_path)
        out.write_text("".join(evaluation.as_json(o) + "\n" for o in first))
        before = len(server.episodes())
        argv = ["eval", str(task_file), "--model", "fake", "--base-url", server.url, "--out", str(out)]
        assert main([*argv, "--resume", "--ray", "--workers", "2"]) == 0
        started_again = server.episodes()[before:]
    assert sorted(started_again) == sorted(t.task for t in work[5:])  # only the tasks not done
    assert sorted(o.id for o in evaluation.finished(out)) == sorted(t.id for t in work)
    assert "12/12 right" in capsys.readouterr().out


def seeds_by_task(*servers: FakeServer) -> Counter[tuple[str, int]]:
    """(task, seed) of every first request: which episodes started, and with which seed."""
    started: Counter[tuple[str, int]] = Counter()
    for server in servers:
        for body in server.bodies:
            if len(body["messages"]) == 2:
                started[(question(body["messages"]), body["seed"])] += 1
    return started


def test_groups_on_ray_are_the_single_process_groups(local_ray: None, tmp_path: Path) -> None:
    """n episodes a task, sample k sent seed S + k on every call, the same outcomes, trajectory
    lines and trace files as one process."""
    work = tasks(6)
    here, there = tmp_path / "here", tmp_path / "there"
    here.mkdir(), there.mkdir()
    with FakeServer() as a, FakeServer() as b:
        options = evaluation.Options(root=tmp_path, n=2, seed=3, traces=here, trajectories=here / "groups.lines")
        one = evaluation.evaluate(work, recipes(a)[0](), options, concurrency=4)
        single = seeds_by_task(a)
        seeds = {body["seed"] for body in a.bodies}
        a.bodies.clear()
        many = replace(options, traces=there, trajectories=there / "groups.lines")
        run = cluster.aevaluate(work, recipes(a, b), many, workers=2, concurrency=6)
        ray_outcomes = asyncio.run(collect(run))
        on_ray = seeds_by_task(a, b)
    assert seeds == {3, 4}
    assert single == on_ray == Counter({(t.task, 3 + k): 1 for t in work for k in range(2)})  # each episode once
    assert comparable(ray_outcomes) == comparable(one)
    assert sorted((o.id, o.sample, o.seed) for o in ray_outcomes) == [(t.id, k, 3 + k) for t in work for k in (0, 1)]
    assert all(o.ok for o in ray_outcomes)
    names = sorted(p.name for p in here.glob("*.jsonl"))
    assert names == sorted(p.name for p in there.glob("*.jsonl"))
    assert names == sorted(trace_name(f"t{i}#{k}") for i in range(6) for k in (0, 1))  # a trace per episode
    lines = [
        sorted((json.loads(line) for line in (folder / "groups.lines").read_text().splitlines()), key=group_order)
        for folder in (here, there)
    ]
    assert lines[0] == lines[1] and len(lines[1]) == 12
    assert [(line["id"], line["sample"], line["seed"]) for line in lines[1][:2]] == [("t0", 0, 3), ("t0", 1, 4)]


def test_eval_ray_n_resumes_by_task_and_sample_as_one_process_does(
    local_ray: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    work = tasks(4)
    task_file = tmp_path / "tasks.jsonl"
    task_file.write_text("".join(json.dumps({"id": t.id, "task": t.task, "answer": t.answer}) + "\n" for t in work))
    alone, spread = tmp_path / "alone.jsonl", tmp_path / "spread.jsonl"
    with FakeServer() as server:
        argv = ["eval", str(task_file), "--model", "fake", "--base-url", server.url, "--n", "2", "--seed", "7"]
        assert main([*argv, "--out", str(alone)]) == 0
        rows = [json.loads(line) for line in alone.read_text().splitlines()]
        spread.write_text("".join(json.dumps(r) + "\n" for r in rows if r["sample"] == 0 or r["id"] == "t0"))
        server.bodies.clear()
        assert main([*argv, "--out", str(spread), "--resume", "--ray", "--workers", "2"]) == 0
        again = seeds_by_task(server)
    assert again == Counter({(t.task, 8): 1 for t in work[1:]})  # only the samples not done, with their seeds
    mine = sorted((json.loads(line) for line in spread.read_text().splitlines()), key=group_order)
    assert [{**r, "seconds": 0.0} for r in mine] == [{**r, "seconds": 0.0} for r in sorted(rows, key=group_order)]
    assert "8/8 right" in capsys.readouterr().out


def group_order(line: dict[str, Any]) -> tuple[str, int]:
    return line["id"], line["sample"]
