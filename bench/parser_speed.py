"""Parser speed: replies a second on the corpus mix, and the worst case on adversarial input.

    python bench/parser_speed.py

The mix is every reply of tests/data/replies.jsonl, parsed by each parser. The adversarial inputs
are long runs of `[`, of `Action:` lines, of whitespace, of `{`, of unclosed fences, at 1 KB to
1 MB; the growth exponent is the slope of log(time) against log(size) (1.0 is linear). Target:
linear, under 10 ms at 100 KB.
"""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from react_text.corpus import load
from react_text.parser import PARSERS, parse

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "data" / "replies.jsonl"
SHAPES = {
    "[[[[": lambda n: "ACTION: x" + "[" * n,
    "Action: lines": lambda n: "Action:\n" * (n // 8),
    "whitespace": lambda n: "ACTION: f" + " " * n,
    "{{{{": lambda n: "{" * n,
    "```": lambda n: "ACTION: f[" + "```\n" * (n // 4),
    "Obs runs": lambda n: "Obs " * (n // 4),
}
SIZES = [1_000, 10_000, 100_000, 1_000_000]


def best_of(fn, repeat: int = 5) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> None:
    texts = [case.sent for case in load(CORPUS)]
    print(f"{'parser':<10} {'replies/s':>12}   (corpus mix, {len(texts)} replies)")
    for name, fn in PARSERS.items():
        took = best_of(lambda fn=fn: [fn(t) for t in texts])
        print(f"{name:<10} {len(texts) / took:>12,.0f}")
    print()
    print(f"{'shape':<14}" + "".join(f"{s // 1000:>8} KB" for s in SIZES) + f"{'exponent':>10}")
    for shape, make in SHAPES.items():
        texts = [make(size) for size in SIZES]
        times = [best_of(lambda text=text: parse(text), repeat=3) for text in texts]
        slope = (math.log(times[-1]) - math.log(times[0])) / (math.log(SIZES[-1]) - math.log(SIZES[0]))
        print(f"{shape:<14}" + "".join(f"{1e3 * t:>8.2f}ms" for t in times) + f"{slope:>10.2f}")


if __name__ == "__main__":
    main()
