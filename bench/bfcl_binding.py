"""Binding against the Berkeley Function Calling Leaderboard's 1,747 ground-truth Python calls.

    python bench/bfcl_binding.py [--sample N] [--failures K] [--json FILE]

Every call in every form (a JSON object, keywords with Python literals, keywords with JSON
literals, positional), each as one Agent run against a real MCP server that echoes what it
received (tests/bfcl.py says how the calls are written and judged). Prints the table of exact
bindings per form and category, the ground truths that contradict their own schema, and the first
K calls of each form that did not bind exactly. The data comes from the bfcl-eval wheel
($REACT_TEXT_BFCL, else ~/.cache/react-text/bfcl, downloaded there when missing).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

import bfcl


def main() -> None:
    command = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    command.add_argument("--sample", type=int, help="a deterministic sample of N calls (the test's is 300)")
    command.add_argument("--failures", type=int, default=5, help="calls shown per form that did not bind exactly")
    command.add_argument("--json", type=Path, help="write every outcome to FILE, one JSON object a line")
    args = command.parse_args()
    source = bfcl.data_path() or bfcl.fetch()
    cases = bfcl.load(source)
    if args.sample:
        cases = bfcl.sample(cases, args.sample)
    started = time.perf_counter()
    outcomes = bfcl.run(cases)
    seconds = time.perf_counter() - started
    print(f"{len(cases)} calls from {source.name}, {len(outcomes)} runs in {seconds:.1f} s\n")
    print(bfcl.table(outcomes))
    broken = {o.case.id: o for o in outcomes if o.contradicts}
    if broken:
        print("\nGround truths that contradict their own schema (counted apart):")
        for case_id, o in broken.items():
            kinds = ", ".join(f"{x.form} {x.kind}" for x in outcomes if x.case.id == case_id)
            print(f"- {case_id} {o.case.tool}: {o.contradicts} ({kinds})")
    for form in bfcl.FORMS:
        missed = [o for o in outcomes if o.form == form and not o.exact and not o.contradicts]
        for o in missed[: args.failures]:
            print(f"\n[{form} {o.kind}] {o.case.id} {o.case.tool}[{o.text}]\n  -> {o.observation[:400]}")
    if args.json:
        with args.json.open("w", encoding="utf-8") as out:
            for o in outcomes:
                row = {"id": o.case.id, "form": o.form, "kind": o.kind, "text": o.text, "observation": o.observation}
                out.write(json.dumps({**row, "contradicts": o.contradicts}, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()
