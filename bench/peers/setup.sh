#!/usr/bin/env bash
# The peers' real parsers in a venv of their own, then the robustness scoreboard with them
# (react_text.peers adapts each; the README's "Parser robustness, compared" shows the result).
#
#   bash bench/peers/setup.sh [VENV [PARSE-ARGS...]]    default VENV: /work/venvs/peers
#   bash bench/peers/setup.sh /work/venvs/peers --corpus mine.jsonl --parser mine:read
#
# The versions are pinned to what installs together here (crewAI pulls in far more than the
# others: the `peers` extra leaves it out). Re-running only checks the pins and prints the board.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
venv=${1:-/work/venvs/peers}
shift || true
here=$PWD
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -m pip install -q --disable-pip-version-check \
    langchain-core==1.8.3 langchain-classic==1.0.8 \
    llama-index-core==0.14.25 \
    smolagents==1.26.0 \
    crewai==1.15.30 \
    -e "$root" 2> >(grep -v "^WARNING: Location" >&2)
"$venv/bin/python" -m pip check --disable-pip-version-check
# the board only (each parser's misreads follow it: `react-text parse --compare` shows them)
cd "$here" && "$venv/bin/python" -m react_text.cli parse --compare "$@" | sed '/ misreads [0-9]*:$/,$d'
