"""react-text eval: the scorer, the task file, and episodes at scale (concurrency, servers, resume)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from fake_openai import FakeServer

from react_text import ConfigError, ScriptedModel
from react_text.backends.openai_api import OpenAIChat
from react_text.evaluation import Task, correct, evaluate, finished, load, table

SUITE = Path(__file__).resolve().parent.parent / "bench" / "tasks" / "suite.jsonl"
TESTS = Path(__file__).resolve().parent


@pytest.mark.parametrize(
    ("answer", "expected", "ok"),
    [
        ("396", "396", True),
        ("The total is 1,234 euros.", "1234", True),
        ("14.7", "14.7", True),
        ("17 * 3 = 51", "51", True),  # the final number, the rest a working that comes to it
        ("(17 + 25) * 3 = 126", "126", True),
        ("234 (89 + 145)", "234", True),  # the first number, the working after it
        ("It is 89 + 145 = 234.", "234", True),
        ("17 * 3 = 51 and more 7", "51", False),  # another number after the answer
        ("10: 2: 2: 2: 2", "2", False),  # a degenerate answer that merely ends in the number
        ("10: 2: 2: 2: 2", "10", False),
        ("17 * 3 = 50", "50", False),  # a working that does not come to it
        ("51 apples and 3 pears", "51", False),
        ("12 or 13", "13", False),
        ("no idea", "12", False),
        (None, "12", False),
        ("Ines Okafor leads the tours.", "Ines Okafor", True),
        ("Nobody leads them.", "Ines Okafor", False),
    ],
)
def test_correct(answer: str | None, expected: str, ok: bool) -> None:
    assert correct(answer, expected) is ok


def test_the_suite_has_twenty_or_more_tasks_over_built_in_tools() -> None:
    tasks = load(SUITE)
    assert len(tasks) >= 20
    assert {name for t in tasks for name in t.tools} <= {"calculator", "search", "read"}


def test_evaluate_with_the_files_and_the_calculator() -> None:
    task = Task("t", "What do a train ticket and one hotel night cost together?", "234", ("search", "calculator"))
    model = ScriptedModel(
        ["ACTION: search[train ticket]", "ACTION: search[hotel night]", "ACTION: calculator[89 + 145]", "FINAL: 234"]
    )
    (outcome,) = evaluate([task], model, root=SUITE.parent / "docs")
    assert (outcome.ok, outcome.tool_calls, outcome.stop_reason) == (True, 3, "final")
    assert "prices.txt:3: train ticket: 89" in model.calls[1].prompt[-1].content  # type: ignore[union-attr]
    assert "1/1 right (100%)" in table([outcome])


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ('{"id": "a", "task": "x", "answer": "1"}\n{"id": "b"}\n', r"tasks\.jsonl:2: not a task \(missing 'task'\)"),
        ('{"id": "a", "task": "x", "answer": "1"}\nnot json\n', r"tasks\.jsonl:2: not a task"),
        ('{"id": "a", "task": "x", "answer": "1"}\n{"id": "a", "task": "y", "answer": "2"}\n', "used twice"),
    ],
)
def test_a_bad_task_file_names_the_line(tmp_path: Path, text: str, says: str) -> None:
    path = tmp_path / "tasks.jsonl"
    path.write_text(text)
    with pytest.raises(ConfigError, match=says):
        load(path)


def sums(count: int) -> list[Task]:
    return [Task(f"sum-{n:02d}", f"What is {n} + {n * 7}?", str(n * 8)) for n in range(count)]


def test_a_script_per_task_is_deterministic_whatever_the_concurrency() -> None:
    """Each task gets its own ScriptedModel, so its replies never depend on which episode asked first.
    (One ScriptedModel shared by 32 concurrent episodes answered 7 to 32 of 32 wrong.)"""
    tasks = sums(32)

    def script(task: Task) -> ScriptedModel:
        n = int(task.id.removeprefix("sum-"))
        return ScriptedModel([f"ACTION: calculator[{n} + {n * 7}]", f"FINAL: {n * 8}"])

    for concurrency in (1, 8, 32):
        outcomes = evaluate(tasks, script, root=TESTS, concurrency=concurrency)
        assert [o.id for o in outcomes] == [t.id for t in tasks]
        assert all(o.ok for o in outcomes), [o for o in outcomes if not o.ok]


def test_episodes_spread_over_servers_and_each_stays_on_one() -> None:
    tasks = sums(24)
    with FakeServer(delay=0.02) as one, FakeServer(delay=0.02) as two:
        models = [OpenAIChat("fake", base_url=server.url) for server in (one, two)]
        outcomes = evaluate(tasks, models, root=TESTS, concurrency=6)
        assert all(o.ok for o in outcomes)
        asked = {t.task.removeprefix("What is ").removesuffix("?") for t in tasks}
        ran_on_one = {q.removeprefix("What is ").removesuffix("?") for q in one.tasks()}
        ran_on_two = {q.removeprefix("What is ").removesuffix("?") for q in two.tasks()}
        assert ran_on_one | ran_on_two == asked
        assert not ran_on_one & ran_on_two  # every request of an episode went to one server
        assert len(ran_on_one) >= 6 and len(ran_on_two) >= 6  # spread, not piled on one
        assert {o.server for o in outcomes} == {one.url, two.url}
        assert sorted(one.episodes() + two.episodes()) == sorted(t.task for t in tasks)  # each started once


def write_tasks(path: Path, tasks: list[Task]) -> None:
    path.write_text("".join(json.dumps({"id": t.id, "task": t.task, "answer": t.answer}) + "\n" for t in tasks))


def eval_command(tasks: Path, url: str, out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "react_text.cli", "eval", str(tasks), "--model", "fake", "--base-url", url,
            "--out", str(out), "--concurrency", "2", *extra]  # fmt: skip


def test_an_interrupted_eval_resumes_without_redoing_tasks(tmp_path: Path) -> None:
    tasks = sums(12)
    task_file = tmp_path / "tasks.jsonl"
    write_tasks(task_file, tasks)
    out = tmp_path / "results.jsonl"
    with FakeServer(delay=0.15) as server:
        first = subprocess.Popen(
            eval_command(task_file, server.url, out), stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and (not out.exists() or len(out.read_text().splitlines()) < 4):
            time.sleep(0.05)
        first.send_signal(signal.SIGKILL)  # a crash: nothing gets to clean up
        first.communicate(timeout=30)
        done_first = [o.id for o in finished(out)]
        assert 4 <= len(done_first) < len(tasks), "killed too late to test a resume"
        started_before = len(server.episodes())

        second = subprocess.run(
            eval_command(task_file, server.url, out, "--resume"),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert second.returncode == 0, second.stderr
        assert f"{len(done_first)} of 12 tasks already done" in second.stderr
        started_again = server.episodes()[started_before:]
    by_id = {t.task: t.id for t in tasks}
    assert not {by_id[task] for task in started_again} & set(done_first)  # nothing finished ran again
    ids = [o.id for o in finished(out)]
    assert sorted(ids) == sorted(t.id for t in tasks)  # every task once in the results
    assert "12/12 right" in second.stdout


def test_eval_prints_a_line_a_task_when_piped(tmp_path: Path) -> None:
    tasks = sums(3)
    task_file = tmp_path / "tasks.jsonl"
    write_tasks(task_file, tasks)
    with FakeServer() as server:
        done = subprocess.run(
            eval_command(task_file, server.url, tmp_path / "out.jsonl"),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    lines = done.stderr.splitlines()
    assert len(lines) == 3 and all(line.startswith(("[1/3] ✓", "[2/3] ✓", "[3/3] ✓")) for line in lines), lines
    assert "\r" not in done.stderr and "\x1b" not in done.stderr


def test_eval_shows_a_live_bar_on_a_terminal(tmp_path: Path) -> None:
    import pty

    tasks = sums(3)
    task_file = tmp_path / "tasks.jsonl"
    write_tasks(task_file, tasks)
    with FakeServer() as server:
        command = eval_command(task_file, server.url, tmp_path / "out.jsonl")
        pid, fd = pty.fork()
        if pid == 0:
            os.execv(command[0], command)
        output = b""
        while True:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            output += chunk
        os.waitpid(pid, 0)
    text = output.decode()
    assert "\r" in text and "3/3" in text and "█" in text


def test_eval_script_folder_replays_per_task_traces(tmp_path: Path) -> None:
    """`eval --trace DIR` then `eval --script DIR`: each task replays its own trace, 8 at a time."""
    tasks = sums(10)
    task_file = tmp_path / "tasks.jsonl"
    write_tasks(task_file, tasks)
    traces = tmp_path / "traces"
    with FakeServer() as server:
        live = subprocess.run(
            eval_command(task_file, server.url, tmp_path / "live.jsonl", "--trace", str(traces), "--parser", "naive"),
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
    assert live.returncode == 0, live.stderr
    assert sorted(p.name for p in traces.iterdir()) == sorted(f"{t.id}.jsonl" for t in tasks)
    replayed = subprocess.run(
        [sys.executable, "-m", "react_text.cli", "eval", str(task_file), "--script", str(traces), "--concurrency", "8",
         "--out", str(tmp_path / "replayed.jsonl")],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert replayed.returncode == 0, replayed.stderr
    assert "10/10 right" in replayed.stdout
    live_answers = {o.id: (o.answer, o.steps, o.tokens) for o in finished(tmp_path / "live.jsonl")}
    assert {o.id: (o.answer, o.steps, o.tokens) for o in finished(tmp_path / "replayed.jsonl")} == live_answers
    assert json.loads((traces / "sum-00.jsonl").read_text().splitlines()[0])["parser"] == "naive"


@pytest.mark.slow
def test_eval_command_on_the_embedded_model(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps({"id": "c1", "task": "What is 17 * 23 + 5?", "answer": "396"}) + "\n")
    out = tmp_path / "results.jsonl"
    done = subprocess.run(
        [sys.executable, "-m", "react_text.cli", "eval", str(tasks), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1/1 right" in done.stdout
    assert json.loads(out.read_text())["ok"] is True


@pytest.mark.slow
def test_eval_spreads_over_two_llama_cpp_servers_each_episode_on_one(tmp_path: Path) -> None:
    """Two llama.cpp servers (one thread each, so both fit 2 cores), a recording proxy before each."""
    pytest.importorskip("llama_cpp.server", reason='needs pip install "react-text[server]"')
    from llama_server import LlamaServer, RecordingProxy

    tasks = [t for t in load(SUITE) if t.tools == ("calculator",)][:8]
    task_file = tmp_path / "tasks.jsonl"
    write_tasks(task_file, tasks)
    out = tmp_path / "results.jsonl"
    with (
        LlamaServer(threads=1) as a,
        LlamaServer(threads=1) as b,
        RecordingProxy(a.url) as one,
        RecordingProxy(b.url) as two,
    ):
        done = subprocess.run(
            [sys.executable, "-m", "react_text.cli", "eval", str(task_file), "--model", "smollm2", "--api", "chat",
             "--base-url", one.url, "--base-url", two.url, "--concurrency", "4", "--max-steps", "3",
             "--reply-tokens", "64", "--out", str(out)],
            capture_output=True, text=True, timeout=900, check=False,
        )  # fmt: skip
    assert "Traceback" not in done.stderr, done.stderr
    assert sorted(o.id for o in finished(out)) == sorted(t.id for t in tasks)
    on_one, on_two = one.tasks(), two.tasks()
    assert on_one and on_two, "every episode went to one server"
    assert not on_one & on_two, "an episode moved between servers"
    assert on_one | on_two == {t.task for t in tasks}
    assert {o.server for o in finished(out)} == {one.url, two.url}
