"""attack6: traces and replays where they meet credentials, --n and approval (the command line, in process).

`react-text run` drives a run with the sync driver, `react-text eval` with the async one, so each
promise about traces is tried through both where both take the flags.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from _attack6_fake import serving

from react_text.cli.main import main


def _trace_lines(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.mark.parametrize("command", ["run", "eval"])
def test_a_trace_holds_no_credentials_of_the_server_url(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # docs/how-to/traces.md:33 (run_start: "server URL (without credentials or query)") and :41
    # ("server URLs are shown without credentials or query")
    (tmp_path / "tasks.jsonl").write_text('{"id": "a", "task": "What is 2 + 2?", "answer": "4"}\n')
    with serving(["THOUGHT: easy.\nFINAL: 4"]) as fake:
        url = fake.url.replace("http://", "http://alice:pa55word@")
        if command == "run":
            trace = tmp_path / "run.jsonl"
            code = main(["run", "--base-url", url, "--model", "m", "--trace", str(trace), "What is 2 + 2?"])
        else:
            trace = tmp_path / "traces" / "a.jsonl"
            tasks, out = str(tmp_path / "tasks.jsonl"), str(tmp_path / "out.jsonl")
            code = main(
                ["eval", tasks, "--base-url", url, "--model", "m", "--trace", str(tmp_path / "traces"), "--out", out]
            )
    printed = capsys.readouterr()
    assert code == 0, printed.err
    assert _trace_lines(trace)[-1]["answer"] == "4"
    assert "pa55word" not in printed.out + printed.err
    assert "pa55word" not in trace.read_text(encoding="utf-8")


def test_the_traces_of_a_group_replay_through_eval_script(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # docs/how-to/async-and-eval.md:57-58 (--trace traces/, then --script traces/: "replay them, each
    # task its own script") and :83 (DIR/ID.jsonl "written by eval --trace DIR"); --n is eval's own flag
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text('{"id": "a", "task": "What is 2 + 2?", "answer": "4"}\n')
    live, again, traces = tmp_path / "live.jsonl", tmp_path / "again.jsonl", tmp_path / "traces"
    with serving(["THOUGHT: easy.\nFINAL: 4", "THOUGHT: hmm.\nFINAL: 5"]) as fake:
        group = ["--n", "2", "--temperature", "0.5", "--concurrency", "1", "--trace", str(traces), "--out", str(live)]
        code = main(["eval", str(tasks), "--base-url", fake.url, "--model", "m", *group])
    assert code == 1, capsys.readouterr().err  # one of the two is wrong
    assert len(list(traces.iterdir())) == 2  # one trace an episode
    code = main(["eval", str(tasks), "--script", str(traces), "--n", "2", "--out", str(again)])
    printed = capsys.readouterr()
    assert code == 1, printed.err
    answers = sorted((line["sample"], line["answer"]) for line in map(json.loads, live.read_text().splitlines()))
    replayed = sorted((line["sample"], line["answer"]) for line in map(json.loads, again.read_text().splitlines()))
    assert replayed == answers == [(0, "4"), (1, "5")]


RISKY_TOOLS = '''
from react_text import tool


@tool(risky=True)
def zap(name: str) -> str:
    """Zap a thing."""
    return f"zapped {name}"
'''


def test_a_run_approved_with_yes_replays_to_the_same_steps(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # docs/guarantees.md:39 and docs/how-to/traces.md:44-46: a trace replays through run --script to
    # the same steps and answer, "no flag repeated"
    (tmp_path / "risky_tools.py").write_text(RISKY_TOOLS)
    (tmp_path / "replies.txt").write_text("ACTION: zap[old]\n---\nFINAL: zapped\n")
    trace = tmp_path / "run.jsonl"
    tools, script = str(tmp_path / "risky_tools.py"), str(tmp_path / "replies.txt")
    assert main(["run", "--tools", tools, "--yes", "--script", script, "--trace", str(trace), "Zap the old one."]) == 0
    live = capsys.readouterr().out
    assert "OBSERVATION: zapped old" in live
    assert main(["run", "--script", str(trace)]) == 0
    again = capsys.readouterr().out
    live_steps = [e["observation"] for e in _trace_lines(trace) if e["event"] == "step"]
    assert live_steps[0] == "zapped old"
    assert "OBSERVATION: zapped old" in again, again
