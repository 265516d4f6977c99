"""Write tests/data/readings.json: how the parser reads every reply of tests/readings.py (one-off per change).

    python tests/corpus/record_readings.py

Run on main's parser before a change that must leave every reading as it is (the fast paths of
issue 34); tests/test_readings.py then asserts the same readings. Each entry maps a key of the reply
and its tool names to a digest of the whole reading (every field, the error's message too).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from react_text.parser import parse
from tests.readings import FIXTURE, digest, key, replies


def main() -> None:
    readings = {key(text, tools): digest(parse(text, tools=tools)) for text, tools in replies()}
    FIXTURE.write_text(json.dumps(readings, indent=0, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{len(readings)} readings written to {FIXTURE}")


if __name__ == "__main__":
    main()
