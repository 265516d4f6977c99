"""What OpenTelemetry costs the engine per step: without it, with the API and no SDK, with the SDK.

    python bench/telemetry_overhead.py

The engine of bench/engine_overhead.py (a canned model, an echo tool, so only the engine is timed)
in three set-ups, each in a process of its own: opentelemetry not importable at all (hidden from
the import system); opentelemetry-api installed but no SDK configured (what a library's user gets
by default: no-op spans); the SDK with a SimpleSpanProcessor into an InMemorySpanExporter (every
span built, ended and exported, in the calling thread). Median CPU microseconds per step over
N=20 episodes, for the sync and the async driver. A benchmark, not a test: nothing asserts a time.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RUNS = 20
MODES = ("none", "api", "sdk")
HIDE = """
import sys
class Hide:
    def find_spec(self, name, path=None, target=None):
        if name.split('.')[0] == 'opentelemetry':
            raise ModuleNotFoundError(name)
sys.meta_path.insert(0, Hide())
"""


def measure(mode: str) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from engine_overhead import agent

    spans = None
    if mode == "sdk":
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

        spans = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(spans))
        trace.set_tracer_provider(provider)

    def sync(steps: int) -> None:
        assert agent(steps).run("Find the answer.").stop_reason == "final"

    def in_a_loop(steps: int) -> None:
        assert asyncio.run(agent(steps).arun("Find the answer.")).stop_reason == "final"

    for driver, episode in (("sync", sync), ("async", in_a_loop)):
        for steps in (20, 100):
            episode(steps)  # warm up
            per_step = []
            for _ in range(RUNS):
                if spans is not None:
                    spans.clear()
                started = time.process_time()
                episode(steps)
                per_step.append((time.process_time() - started) / steps * 1e6)
            exported = len(spans.get_finished_spans()) if spans is not None else 0
            print(f"{mode} {driver} {steps} {statistics.median(per_step):.1f} {exported}")
    loaded = "opentelemetry" in sys.modules
    print(f"{mode} loaded {loaded}")


def main() -> None:
    rows: dict[tuple[str, str, int], tuple[float, int]] = {}
    loaded: dict[str, str] = {}
    hidden = Path(tempfile.mkdtemp())
    (hidden / "sitecustomize.py").write_text(HIDE)  # hides opentelemetry from the "none" process
    for mode in MODES:
        env = dict(os.environ)
        if mode == "none":
            env["PYTHONPATH"] = os.pathsep.join(p for p in (str(hidden), env.get("PYTHONPATH", "")) if p)
        command = [sys.executable, __file__, mode]
        out = subprocess.run(command, capture_output=True, text=True, check=True, env=env).stdout
        for line in out.splitlines():
            parts = line.split()
            if parts[1] == "loaded":
                loaded[mode] = parts[2]
                continue
            rows[(parts[0], parts[1], int(parts[2]))] = (float(parts[3]), int(parts[4]))
    names = {
        "none": "without opentelemetry",
        "api": "opentelemetry-api, no SDK",
        "sdk": "SDK, in-memory exporter",
    }
    print(f"{'set-up':<28} {'driver':<6} {'µs/step at 20':>14} {'at 100':>8} {'spans a 100-step run':>21}")
    for mode in MODES:
        for driver in ("sync", "async"):
            (at20, _), (at100, spans) = rows[(mode, driver, 20)], rows[(mode, driver, 100)]
            print(f"{names[mode]:<28} {driver:<6} {at20:>14.1f} {at100:>8.1f} {spans:>21}")
    print(f"opentelemetry imported: {', '.join(f'{names[m]}: {loaded[m]}' for m in MODES)}")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] in MODES:
        measure(sys.argv[1])
    else:
        main()
