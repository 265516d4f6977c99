"""First read: how the unchanged parsers score on a corpus they were not built from.

    python bench/first_read.py                                   # tests/data/unseen.jsonl
    python bench/first_read.py CORPUS.jsonl --json OUT.json --parser-commit main --labels-commit REV

Loads a corpus (react_text.evaluation.corpus format), scores the naive, strict and tolerant parsers with
react_text.evaluation.corpus.score, and prints accuracy per category and overall, then every reply the
tolerant parser misreads (what it read, what was expected). With --json it writes
{"parser_commit", "labels_commit", "scores": {parser: {"overall", "by_category"}}, "misreads"}.
--parser-commit names the revision whose parser is measured: the script refuses to run when the
react_text/ being imported differs from it, so a first read is never taken on a changed parser.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from react_text.evaluation.corpus import Score, load, score  # noqa: E402
from react_text.parser import PARSERS  # noqa: E402

ORDER = ("naive", "strict", "tolerant")


def git(*args: str) -> str:
    return subprocess.run(["git", "-C", str(ROOT), *args], check=True, capture_output=True, text=True).stdout.strip()


def cell(right: int, total: int) -> dict[str, float | int]:
    return {"right": right, "total": total, "accuracy": round(right / total, 4) if total else 0.0}


def table(boards: list[Score]) -> str:
    categories = sorted({c for b in boards for c in b.by_category})
    lines = [f"{'':<28}" + "".join(f"{b.parser:>14}" for b in boards)]
    for category in [*categories, "all"]:
        cells = []
        for b in boards:
            right, total = (b.right, b.total) if category == "all" else b.by_category[category]
            cells.append(f"{right:>5}/{total:<3} {100 * right / total:>4.0f}%")
        lines.append(f"{category:<28}" + "".join(cells))
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("corpus", nargs="?", default=str(ROOT / "tests/data/unseen.jsonl"))
    ap.add_argument("--json", help="write the scores here")
    ap.add_argument("--parser-commit", default="HEAD", help="the revision whose react_text/ is measured")
    ap.add_argument(
        "--labels-commit", help="the commit that added the labels (default: last commit of the corpus file)"
    )
    args = ap.parse_args()

    parser_commit = git("rev-parse", args.parser_commit)
    if git("diff", parser_commit, "--", "react_text"):
        sys.exit(f"react_text/ differs from {parser_commit}: a first read needs the parser as it is there")
    labels_commit = (
        git("rev-parse", args.labels_commit)
        if args.labels_commit
        else git("log", "-1", "--format=%H", "--", args.corpus)
    )

    cases = load(args.corpus)
    boards = score(cases, {name: PARSERS[name] for name in ORDER})
    print(f"{args.corpus}: {len(cases)} replies; parser {parser_commit[:12]}, labels {labels_commit[:12]}\n")
    print(table(boards))
    tolerant = boards[ORDER.index("tolerant")]
    print(f"\ntolerant misreads {len(tolerant.wrong)}:")
    for case, got in tolerant.wrong:
        print(f"  {case.id:<26} read {json.dumps(got, ensure_ascii=False)[:110]}")
        print(f"  {'':<26} want {json.dumps(dict(case.expected), ensure_ascii=False)[:110]}")

    if args.json:
        out = {
            "command": "python " + " ".join([Path(sys.argv[0]).resolve().relative_to(ROOT).as_posix(), *sys.argv[1:]]),
            "corpus": str(Path(args.corpus).resolve().relative_to(ROOT)),
            "parser_commit": parser_commit,
            "labels_commit": labels_commit,
            "scores": {
                b.parser: {
                    "overall": cell(b.right, b.total),
                    "by_category": {c: cell(*rt) for c, rt in sorted(b.by_category.items())},
                }
                for b in boards
            },
            "misreads": [{"id": case.id, "read": got, "expected": dict(case.expected)} for case, got in tolerant.wrong],
        }
        Path(args.json).write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
