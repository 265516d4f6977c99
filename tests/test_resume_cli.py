"""`react-text run --state FILE [--ask-later]` and `react-text resume FILE [--approve | --deny REASON |
--edit INPUT]`, each in a fresh interpreter: a run paused at a risky call, decided in another
process, comes to what approving it on the spot comes to; its exit status and output are run's.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from cli_support import cli, set_up_error

TOOLS = '''
from react_text import tool


@tool(risky=True)
def wire(amount: int) -> str:
    """Send money (risky: asked first)."""
    with open("effects.txt", "a") as f:
        f.write(f"wire:{amount}\\n")
    return f"sent {amount}"


@tool(pure=True)
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b
'''
REPLIES = "THOUGHT: pay\nACTION: wire[40]\n---\nTHOUGHT: sum\nACTION: add[1, 2]\n---\nFINAL: done\n"
FLAGS = ("--script", "replies.txt", "--tools", "./tools.py")


def untimed(output: str) -> str:
    return re.sub(r" · \d+\.\d\ds", "", output)


def folder(tmp_path: Path) -> Path:
    (tmp_path / "tools.py").write_text(TOOLS)
    (tmp_path / "replies.txt").write_text(REPLIES)
    return tmp_path


def effects(where: Path) -> list[str]:
    path = where / "effects.txt"
    return path.read_text().splitlines() if path.exists() else []


def test_ask_later_pauses_with_exit_3_and_resume_approve_is_approving_on_the_spot(tmp_path: Path) -> None:
    here = folder(tmp_path)
    inline = cli("run", *FLAGS, "--yes", "Pay 40", cwd=here)
    assert inline.returncode == 0, inline.stderr
    (here / "effects.txt").unlink()
    paused = cli("run", *FLAGS, "--state", "run.json", "--ask-later", "Pay 40", cwd=here)
    assert paused.returncode == 3, paused.stderr
    assert paused.stdout.splitlines()[-1].startswith("paused at wire[40]: decide with react-text resume run.json")
    assert "awaiting_approval" in paused.stdout and effects(here) == []
    state = json.loads((here / "run.json").read_text())
    assert state["snapshot"]["status"] == "awaiting_approval"
    assert state["snapshot"]["pending"] == [{"tool": "wire", "input": "40", "why": "approval"}]
    resumed = cli("resume", "run.json", *FLAGS, "--approve", cwd=here)
    assert resumed.returncode == 0, resumed.stderr
    assert untimed(resumed.stdout) == untimed(inline.stdout)  # the same steps, the same end
    assert effects(here) == ["wire:40"]
    done = json.loads((here / "run.json").read_text())
    assert done["snapshot"]["status"] == "done" and done["snapshot"]["result"]["answer"] == "done"


def test_resume_deny_tells_the_model_the_reason_and_edit_runs_another_input(tmp_path: Path) -> None:
    here = folder(tmp_path)
    assert cli("run", *FLAGS, "--state", "a.json", "--ask-later", "Pay 40", cwd=here).returncode == 3
    denied = cli("resume", "a.json", *FLAGS, "--deny", "over the monthly limit", "--json", cwd=here)
    assert denied.returncode == 0, denied.stderr
    result = json.loads(denied.stdout)
    assert "over the monthly limit" in result["steps"][0]["observation"] and effects(here) == []
    assert cli("run", *FLAGS, "--state", "b.json", "--ask-later", "Pay 40", cwd=here).returncode == 3
    edited = cli("resume", "b.json", *FLAGS, "--edit", "30", cwd=here)
    assert edited.returncode == 0 and "OBSERVATION: sent 30" in edited.stdout
    assert effects(here) == ["wire:30"]


def test_ask_later_on_resume_pauses_again_at_the_next_risky_call(tmp_path: Path) -> None:
    here = folder(tmp_path)
    (here / "replies.txt").write_text("ACTION: wire[1]\n---\nACTION: wire[2]\n---\nFINAL: paid\n")
    assert cli("run", *FLAGS, "--state", "r.json", "--ask-later", "Pay twice", cwd=here).returncode == 3
    again = cli("resume", "r.json", *FLAGS, "--approve", "--ask-later", cwd=here)
    assert again.returncode == 3 and "paused at wire[2]" in again.stdout
    last = cli("resume", "r.json", *FLAGS, "--approve", cwd=here)
    assert last.returncode == 0 and last.stdout.splitlines()[-1] == "paid"
    assert effects(here) == ["wire:1", "wire:2"]


def test_a_damaged_state_file_is_refused_in_one_line(tmp_path: Path) -> None:
    here = folder(tmp_path)
    (here / "bad.json").write_text('{"format": "react-text/run-state", "version": 2, "run_id": ')
    assert "bad.json is damaged" in set_up_error(cli("resume", "bad.json", *FLAGS, cwd=here))
    (here / "trace.json").write_text('{"event": "run_start"}')
    assert "not a react-text run state" in set_up_error(cli("resume", "trace.json", *FLAGS, cwd=here))
    assert "no run state at" in set_up_error(cli("resume", "none.json", *FLAGS, cwd=here))


def test_what_the_flags_cannot_mean_is_refused_in_one_line(tmp_path: Path) -> None:
    here = folder(tmp_path)
    assert "give --state FILE" in set_up_error(cli("run", *FLAGS, "--ask-later", "Pay 40", cwd=here))
    said = set_up_error(cli("run", *FLAGS, "--state", "s.json", "--ask-later", "--yes", "Pay 40", cwd=here))
    assert "leave one out" in said
    assert cli("run", *FLAGS, "--state", "s.json", "--yes", "Pay 40", cwd=here).returncode == 0
    assert "waits on no approval" in set_up_error(cli("resume", "s.json", *FLAGS, "--approve", cwd=here))
    other = set_up_error(cli("resume", "s.json", "--script", "replies.txt", cwd=here))  # no --tools
    assert "other settings" in other and "tools" in other


def test_a_finished_run_resumed_prints_its_end_again(tmp_path: Path) -> None:
    here = folder(tmp_path)
    first = cli("run", *FLAGS, "--state", "s.json", "--yes", "Pay 40", cwd=here)
    again = cli("resume", "s.json", *FLAGS, "--yes", cwd=here)
    assert again.returncode == first.returncode == 0
    assert again.stdout.splitlines()[-2:] == first.stdout.splitlines()[-2:]  # no step runs again
    assert effects(here) == ["wire:40"]


def test_eval_state_is_refused_where_it_cannot_keep_its_promise(tmp_path: Path) -> None:
    here = folder(tmp_path)
    (here / "t.jsonl").write_text('{"id": "q", "task": "q", "answer": "2"}\n')
    said = set_up_error(cli("eval", "t.jsonl", "--script", "replies.txt", "--state", "runs.db", cwd=here))
    assert "--state" in said and "--script" in said
