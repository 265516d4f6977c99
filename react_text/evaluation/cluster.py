"""Episodes on a Ray cluster: `evaluation.aevaluate`, with the episodes run by Ray workers.

    servers = [functools.partial(OpenAIChat, "m", base_url=url) for url in urls]
    async for outcome in cluster.aevaluate(tasks, servers, root=docs, address="auto", concurrency=256):
        ...

This is no scheduler: Ray places the workers, and the driver (this process) hands out episodes as
`aevaluate` does, at most `concurrency` at once. Each worker is a Ray actor running many episodes
at once on its own event loop (so the lean HTTP path's pool serves them all). What goes to a worker
must travel by pickle, so models are given as recipes: one zero-argument callable per server (each
worker builds each model once, as it starts), or a function that gives each task its model, as for
`aevaluate`. The sticky-server rule holds: an episode starts on the server with the fewest episodes
in flight and runs wholly on one worker, against that server.

How each episode runs is the same `evaluation.Options` value `evaluation.aevaluate` takes (or its
fields as keywords), GRPO groups too: `n=` episodes a task, sample k sent seed `seed + k`, and
`done=` outcomes whose (id, sample) episodes are not run again. Outcomes come back as each
episode ends, in the order they end, and trace files (`traces=`) and trajectory lines
(`trajectories=`, with `reward=`) are written here, by the driver, so `--resume`, `--trace` and
`--trajectories` read and write the driver's files. A
worker that dies (killed, out of memory, its node lost) costs only the episodes it was running:
each is started again from the beginning, on the same server, by another worker or the same one
restarted, up to `retries` times; a worker's other episodes and every other worker go on. An
exception from inside an episode is not retried: it is the same on any worker.

Needs the `ray` extra (`pip install 'react-text[ray]'`). With `address=None` a Ray cluster already
joined in this process is used, else a local one is started (and shut down at the end);
"auto" or "ray://host:10001" joins a running cluster, whose workers need react-text installed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import tempfile
import uuid
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from react_text.core.errors import ConfigError
from react_text.core.types import Model
from react_text.evaluation.episodes import ModelFor, Options, _Sample, model_for, run_sample
from react_text.evaluation.results import TaskResult
from react_text.evaluation.tasks import Task

__all__ = ["WORKER_NAME", "Recipe", "aevaluate"]

log = logging.getLogger(__name__)

Recipe = Callable[[], Model]
WORKER_NAME = "react-text-worker"  # each worker's Ray actor name: this, the run's id, its number


class _Worker:
    """One Ray actor: builds each server's model once, runs the episodes it is sent."""

    def __init__(self, servers: Sequence[Recipe] | ModelFor, options: Options) -> None:
        self._servers = servers
        # built now, so a recipe that fails says so before any episode, and episodes start at once
        self._models: dict[int, Model] = {} if callable(servers) else {n: make() for n, make in enumerate(servers)}
        self._options = options  # its traces and trajectories are the driver's files: written there

    def pid(self) -> int:
        import os

        return os.getpid()

    async def run(self, sample: _Sample, server: int | None) -> tuple[TaskResult, str | None, dict[str, Any] | None]:
        """One episode: its outcome, its trace file's text (when traced), its trajectory line
        (when asked for)."""
        model = model_for(self._servers, sample) if server is None else self._models[server]  # type: ignore[arg-type]
        if self._options.traces is None:
            outcome, _, line = await run_sample(sample, model, self._options, None)
            return outcome, None, line
        with tempfile.TemporaryDirectory(prefix="react-text-trace-") as folder:
            outcome, _, line = await run_sample(sample, model, self._options, Path(folder))
            return outcome, (Path(folder) / sample.trace_name).read_text(encoding="utf-8"), line


def _ray() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise ConfigError("episodes on Ray need the ray extra: pip install 'react-text[ray]'") from exc
    return ray


async def aevaluate(
    tasks: Iterable[Task],
    servers: Sequence[Recipe] | ModelFor,
    options: Options | None = None,
    *,
    address: str | None = None,
    workers: int | None = None,
    concurrency: int = 64,
    retries: int = 2,
    done: Iterable[TaskResult] = (),
    **keywords: Any,
) -> AsyncIterator[TaskResult]:
    """Run every task on Ray workers, at most `concurrency` at once; yield each outcome as it ends.

    `servers`: one recipe (a zero-argument callable that builds the model) per server, or a
    function giving each task its model. `workers`: how many Ray actors (default: one per CPU of
    the cluster). `retries`: how many times an episode whose worker died is started again.
    `options` (or its fields as keywords: `root=`, `n=`, `seed=`, `trajectories=`, ...) and `done`
    as `evaluation.aevaluate`: n episodes a task, sample k sent seed + k, (id, sample) pairs done
    not run again.
    """
    if concurrency < 1:
        raise ValueError(f"concurrency must be at least 1, not {concurrency}")
    if retries < 0:
        raise ValueError(f"retries must be 0 or more, not {retries}")
    settings = Options.given(options, keywords)
    recipes: Sequence[Recipe] = servers if not callable(servers) else ()
    if not callable(servers) and not recipes:
        raise ValueError("servers: give at least one recipe")
    samples = settings.samples(tasks, done)
    ray = _ray()
    started_here = not ray.is_initialized()
    if started_here:
        ray.init(address=address, logging_level=logging.WARNING, log_to_driver=False)
    try:
        cpus = int(ray.cluster_resources().get("CPU", 0))
        count = workers or max(1, cpus)
        if count > cpus:  # a worker takes a CPU: more than the cluster has would wait for ever
            raise ConfigError(f"{count} Ray workers need {count} CPUs; the cluster has {cpus}")
        actor = ray.remote(num_cpus=1, max_restarts=-1, max_task_retries=0, max_concurrency=max(concurrency, 1))
        run = uuid.uuid4().hex[:8]
        pool = [actor(_Worker).options(name=f"{WORKER_NAME}-{run}-{n}").remote(servers, settings) for n in range(count)]
        try:
            await asyncio.gather(*(worker.pid.remote() for worker in pool))  # every worker up, its models built
            async for outcome in _run(ray, pool, samples, len(recipes), concurrency, retries, settings):
                yield outcome
        finally:
            for worker in pool:
                with contextlib.suppress(Exception):  # a worker already gone
                    ray.kill(worker, no_restart=True)
    finally:
        if started_here:
            ray.shutdown()


async def _run(
    ray: Any,
    pool: list[Any],
    samples: list[_Sample],
    servers: int,
    concurrency: int,
    retries: int,
    options: Options,
) -> AsyncIterator[TaskResult]:
    lost = (ray.exceptions.RayActorError, ray.exceptions.WorkerCrashedError, ray.exceptions.ObjectLostError)
    on_server = [0] * servers
    on_worker = [0] * len(pool)
    gate = asyncio.Semaphore(concurrency)

    async def episode(sample: _Sample) -> TaskResult:
        async with gate:
            server = min(range(servers), key=on_server.__getitem__) if servers else None
            if server is not None:
                on_server[server] += 1
            try:
                outcome, trace, line = await sticky(sample, server)
            finally:
                if server is not None:
                    on_server[server] -= 1
            if options.traces is not None and trace is not None:
                (options.traces / sample.trace_name).write_text(trace, encoding="utf-8")
            if options.trajectories is not None and line is not None:
                with open(options.trajectories, "a", encoding="utf-8") as out:
                    out.write(json.dumps(line) + "\n")
            return outcome

    down: dict[int, asyncio.Task[None]] = {}  # workers lost, each until it answers again (Ray restarts it)

    async def back(which: int) -> None:
        while True:
            try:
                await pool[which].pid.remote()
                break
            except lost:
                await asyncio.sleep(0.5)
        del down[which]

    async def sticky(sample: _Sample, server: int | None) -> tuple[TaskResult, str | None, dict[str, Any] | None]:
        """The episode on the least busy worker that is up, started again when its worker dies."""
        tries = 0
        while True:
            up = [n for n in range(len(pool)) if n not in down]
            if not up:  # every worker restarting: wait for one
                await asyncio.wait(list(down.values()), return_when=asyncio.FIRST_COMPLETED)
                continue
            which = min(up, key=on_worker.__getitem__)
            on_worker[which] += 1
            try:
                return await pool[which].run.remote(sample, server)  # type: ignore[no-any-return]
            except lost as exc:
                tries += 1
                if tries > retries:
                    raise
                log.warning(
                    "task %s#%d lost its worker (%s); starting it again", sample.task.id, sample.k, type(exc).__name__
                )
                if which not in down:
                    down[which] = asyncio.ensure_future(back(which))
            finally:
                on_worker[which] -= 1

    pending = [asyncio.ensure_future(episode(sample)) for sample in samples]
    try:
        for next_done in asyncio.as_completed(pending):
            yield await next_done
    finally:
        for running in [*pending, *down.values()]:
            running.cancel()
        await asyncio.gather(*pending, *down.values(), return_exceptions=True)
