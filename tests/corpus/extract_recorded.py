"""Pull the verbatim replies out of shared/data/recorded-replies.md (one-off; kept for the record).

    python tests/corpus/extract_recorded.py ../shared/data/recorded-replies.md > /tmp/recorded.jsonl

Each distinct reply is printed once, as JSON, with its source (trial file, variant, step) and the
completion-mode flag; the expected readings were then labelled by hand into replies.jsonl.
"""

import json
import sys


def main(path: str) -> None:
    seen: set[str] = set()
    trial = variant = ""
    with open(path, encoding="utf-8") as handle:
        lines = handle.read().split("\n")
    i = 0
    step = ""
    while i < len(lines):
        line = lines[i]
        if line.startswith("## "):
            trial = line[3:].strip()
        elif line.startswith("### "):
            variant = line[4:].split(" -> ")[0].strip()
        elif line.startswith("- step "):
            step = line.split()[2]
        elif line == "```" and lines[i - 1].startswith("- step "):
            # the reply ends at the fence that the "fed back" line follows (replies may hold fences)
            j = i + 1
            while j < len(lines) and not (
                lines[j] == "```"
                and (j + 1 == len(lines) or not lines[j + 1].strip() or lines[j + 1].startswith("  fed back"))
            ):
                j += 1
            text = "\n".join(lines[i + 1 : j])
            i = j
            if text not in seen and "[INST]" not in text[:40]:
                seen.add(text)
                completion = "completion" in variant or "prefill" in variant
                print(json.dumps({"source": f"{trial} {variant} step {step}", "completion": completion, "text": text}))
        i += 1


if __name__ == "__main__":
    main(sys.argv[1])
