"""Import time of `react_text` and of the CLI's `--help`, as whole processes (best of 7).

    python bench/import_time.py

Target: under 150 ms for `import react_text` (openai, tiktoken and llama_cpp load lazily).
"""

from __future__ import annotations

import subprocess
import sys
import time

COMMANDS = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "import react_text": [sys.executable, "-c", "import react_text"],
    "react-text --help": [sys.executable, "-m", "react_text.cli", "--help"],
    "import openai (for scale)": [sys.executable, "-c", "import openai"],
}


def best(command: list[str], repeat: int = 7) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True)
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> None:
    print(f"{'process':<28} {'ms':>8}")
    for name, command in COMMANDS.items():
        print(f"{name:<28} {1e3 * best(command):>8.1f}")
    lazy = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, react_text; print(sorted({'openai', 'tiktoken', 'llama_cpp'} & set(sys.modules)))",
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    print(f"heavy modules loaded by `import react_text`: {lazy}")


if __name__ == "__main__":
    main()
