"""The command line's set-up errors say the line docs/troubleshooting.md lists: one line, exit 2."""

from __future__ import annotations

import importlib.util
import shlex
import sys
from pathlib import Path

import pytest
from cli_support import cli, cli_folder, set_up_error


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return cli_folder(tmp_path)


def test_a_folder_given_as_a_script_is_named_a_folder(folder: Path) -> None:
    assert set_up_error(cli("run", "--script", "d", "q", cwd=folder)) == "react-text: d is a folder, not a trace"


@pytest.mark.parametrize("text", ["", "\n", "  \n\n\t\n"])
def test_a_script_file_of_nothing_but_blanks_holds_no_replies(folder: Path, text: str) -> None:
    (folder / "blank.txt").write_text(text)
    assert set_up_error(cli("run", "--script", "blank.txt", "q", cwd=folder)) == (
        "react-text: blank.txt holds no replies to play"
    )


def test_no_script_for_a_task_says_the_names_it_looked_for(folder: Path) -> None:
    assert set_up_error(cli("eval", "t.jsonl", "--script", "d", cwd=folder)) == (
        "react-text: no script for the task 'q' in d (looked for q.jsonl and q.txt)"
    )


def test_a_script_path_too_long_to_look_up_is_a_set_up_error(folder: Path) -> None:
    line = set_up_error(cli("eval", "t.jsonl", "--script", "x" * 300, cwd=folder))
    assert line.startswith("react-text: ") and "x" * 300 in line


def test_an_unknown_task_tool_is_refused_naming_every_built_in_one(folder: Path) -> None:
    (folder / "tx.jsonl").write_text('{"id": "q", "task": "q", "answer": "2", "tools": ["shell"]}\n')
    assert set_up_error(cli("eval", "tx.jsonl", "--script", "s.txt", cwd=folder)) == (
        "react-text: unknown tools in the task file: shell (have calculator, python_doc, search, read)"
    )


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (
            ("eval", "t.jsonl", "--script", "s.txt", "--concurrency", "0"),
            "react-text eval: error: argument --concurrency: must be a positive whole number, not 0"
            " (see react-text eval --help)",
        ),
        ((), "react-text: error: the following arguments are required: COMMAND (see react-text --help)"),
        (
            ("run", "--api", "json", "q"),
            "react-text run: error: argument --api: invalid choice: 'json' (choose from 'chat', 'completion')"
            " (see react-text run --help)",
        ),
    ],
)
def test_a_bad_flag_is_one_line_not_the_usage_block(folder: Path, args: tuple[str, ...], line: str) -> None:
    assert set_up_error(cli(*args, cwd=folder)) == line


SERVER = ("--model", "m", "--base-url", "http://127.0.0.1:9/v1")
ADD_GRAMMAR = (
    "react-text: --think lets the model think in a <think> block before the protocol, under the grammar, "
    "and a server is sent the grammar only with --grammar: add --grammar (or leave --think out)"
)
NO_GRAMMAR = "react-text: --think works under the grammar, which --no-grammar turns off: leave one of them out"
SCRIPTED = "react-text: --think does nothing with --script (its replies are played as they are): leave it out"


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (("run", *SERVER, "--think", "q"), ADD_GRAMMAR),
        (("eval", "t.jsonl", *SERVER, "--think"), ADD_GRAMMAR),
        (("run", "--no-grammar", "--think", "q"), NO_GRAMMAR),  # the in-process model, not loaded to say so
        (("run", *SERVER, "--no-grammar", "--think", "q"), NO_GRAMMAR),
        (("run", "--script", "s.txt", "--think", "q"), SCRIPTED),
        (("eval", "t.jsonl", "--script", "s.txt", "--think"), SCRIPTED),
    ],
    ids=["run-server", "eval-server", "run-no-grammar", "run-server-no-grammar", "run-script", "eval-script"],
)
def test_think_where_no_grammar_is_sent_is_refused_saying_what_to_add(
    folder: Path, args: tuple[str, ...], line: str
) -> None:
    """--think only changes the grammar (a free <think> block may come first): where a run sends
    none it would do nothing, so it is refused at once, before any model is asked or loaded."""
    assert set_up_error(cli(*args, cwd=folder)) == line


THREADS_SERVER = "react-text: --threads sets the in-process model's threads, and a server runs its own: leave it out"
THREADS_SCRIPT = "react-text: --threads sets the in-process model's threads, and --script plays replies: leave it out"
ACTIONS = (
    "react-text: --max-actions caps the actions of one reply that run, which only --parallel runs: "
    "add --parallel (or leave --max-actions out)"
)


@pytest.mark.parametrize(
    ("args", "line"),
    [
        (("run", *SERVER, "--threads", "2", "q"), THREADS_SERVER),
        (("eval", "t.jsonl", *SERVER, "--threads", "2"), THREADS_SERVER),
        (("run", "--script", "s.txt", "--threads", "2", "q"), THREADS_SCRIPT),
        (("run", *SERVER, "--max-actions", "2", "q"), ACTIONS),
        (("run", "--max-actions", "2", "q"), ACTIONS),  # the in-process model, not loaded to say so
        (("run", "--script", "s.txt", "--max-actions", "2", "q"), ACTIONS),
        (("eval", "t.jsonl", "--script", "s.txt", "--max-actions", "2"), ACTIONS),
    ],
    ids=[
        "run-server",
        "eval-server",
        "run-script",
        "max-actions-server",
        "max-actions-local",
        "max-actions-script",
        "eval-max-actions",
    ],
)
def test_a_flag_that_would_do_nothing_is_refused_saying_why(folder: Path, args: tuple[str, ...], line: str) -> None:
    """Found by an outside review (attack5): --threads on a server, or --max-actions without
    --parallel, were taken and did nothing. Each is one line, exit 2, before anything runs."""
    assert set_up_error(cli(*args, cwd=folder)) == line


def test_max_actions_is_taken_where_the_trace_runs_in_parallel(folder: Path) -> None:
    """--max-actions with a trace recorded under --parallel is not refused: the trace's settings
    make the replay parallel."""
    script = folder / "two.txt"
    script.write_text("ACTION: calculator[1 + 1]\nACTION: calculator[2 + 2]\n---\nFINAL: 2 and 4\n")
    first = cli("run", "--script", "two.txt", "--parallel", "--trace", "p.jsonl", "Add.", cwd=folder)
    assert first.returncode == 0, first.stderr
    again = cli("run", "--script", "p.jsonl", "--max-actions", "1", cwd=folder)
    assert "max-actions" not in again.stderr, again.stderr
    assert again.returncode in (0, 1), again.stderr


def test_parse_a_reply_line_whose_text_is_not_text_is_one_line(tmp_path: Path) -> None:
    """docs/troubleshooting.md: "*file*:*n*: not a reply line ({"text": ...})" for `parse FILE.jsonl`
    given the wrong file; docs/reference/cli.md: never a traceback. `{"text": 5}` or
    `{"text": null}` gives a traceback ending in `TypeError: argument of type 'int' is not
    iterable`."""
    (tmp_path / "replies.jsonl").write_text('{"text": 5}\n')
    done = cli("parse", "replies.jsonl", cwd=tmp_path)
    set_up_error(done)
    assert "replies.jsonl:1" in done.stderr


@pytest.mark.parametrize(
    "line", ['{"text": null}', '{"text": ["FINAL: 2"]}', '{"text": {"a": 1}}', "[[[[" * 30 + "]]]]" * 30, '"FINAL: 2"']
)
def test_parse_any_reply_line_that_is_not_one_is_one_line_naming_it(tmp_path: Path, line: str) -> None:
    (tmp_path / "replies.jsonl").write_text('{"text": "FINAL: 1"}\n' + line + "\n")
    said = set_up_error(cli("parse", "replies.jsonl", cwd=tmp_path))
    assert "replies.jsonl:2: not a reply line" in said


def test_an_mcp_server_that_prints_to_stdout_is_one_line(tmp_path: Path) -> None:
    """docs/guarantees.md: "a set-up mistake on the command line (two MCP tools with one name too) is
    one line and exit 2"; docs/troubleshooting.md tells the user to check "that it speaks MCP over
    stdio (nothing else on stdout)". A server command that prints a banner first
    (`python -c 'print("hello")'`) puts the SDK's pydantic traceback ("Failed to parse JSONRPC
    message from server / Traceback ...") on stderr above the one-line error."""
    set_up_error(cli("mcp", "list", "python -c 'print(\"hello\")'", cwd=tmp_path, timeout=60))


def test_an_mcp_server_that_prints_a_banner_and_then_speaks_mcp_works_with_nothing_on_stderr(tmp_path: Path) -> None:
    """The SDK skips a line of stdout that is not MCP (and logs it, with a traceback): the command
    line keeps that log off stderr, and the server's tools work."""
    counter = Path(__file__).resolve().parent / "mcp_servers" / "counter.py"
    banner = f"{shlex.quote(sys.executable)} -c \"print('welcome'); import runpy; runpy.run_path({str(counter)!r}, run_name='__main__')\""
    (tmp_path / "s.txt").write_text("ACTION: bump[]\n---\nFINAL: 1\n")
    listed = cli("mcp", "list", banner, cwd=tmp_path, timeout=60)
    assert listed.returncode == 0 and "bump[]" in listed.stdout and listed.stderr == "", listed.stderr
    ran = cli("run", "--script", "s.txt", "--mcp", banner, "Bump.", cwd=tmp_path, timeout=60)
    assert ran.returncode == 0 and "OBSERVATION: 1" in ran.stdout and ran.stderr == "", ran.stderr


@pytest.mark.slow
def test_a_model_file_that_is_not_gguf_is_one_line(tmp_path: Path) -> None:
    """docs/reference/cli.md: "Set-up mistakes are one line on stderr and exit status 2, never a
    traceback: a missing or unreadable file (a task file, a trace, a script, a model)". A `.gguf`
    that is not one (a cut download, a Git LFS pointer, an HTML error page) gives llama.cpp's log
    and a traceback ending in `ValueError: Failed to load model from file: fake.gguf`, exit 1.
    (Slow: llama.cpp is asked to open the file; run under flock /tmp/react-text-llama.lock.)"""
    (tmp_path / "fake.gguf").write_text("version https://git-lfs.github.com/spec/v1\n")
    done = cli("run", "--model", "./fake.gguf", "What is 2 + 2?", cwd=tmp_path)
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 2
    assert "fake.gguf" in done.stderr.strip().splitlines()[-1]


@pytest.mark.slow
def test_a_gguf_file_cut_short_is_one_line_naming_it(tmp_path: Path) -> None:
    """The sibling the magic bytes do not catch: a real GGUF file's first megabyte (a download cut
    short) is refused by llama.cpp, and that is one line naming the file too, not a traceback."""
    if importlib.util.find_spec("llama_cpp") is None:  # not imported here: llama.cpp runs in the command
        pytest.skip('needs pip install "react-text[local]"')
    from react_text.backends.local import default_model_path

    with default_model_path().open("rb") as whole:
        (tmp_path / "cut.gguf").write_bytes(whole.read(1_000_000))
    line = set_up_error(cli("run", "--model", "./cut.gguf", "What is 2 + 2?", cwd=tmp_path))
    assert line.startswith("react-text: llama.cpp could not load cut.gguf"), line
