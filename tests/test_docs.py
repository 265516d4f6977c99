"""Every code block of the docs site (docs/**/*.md) and of README.md runs here, so an example that
drifts from the API fails a test; and the site builds with `mkdocs build --strict`.

A fenced ```python or ```bash block runs as it is written, unless an HTML comment on the line just
before it says what it needs:

    (nothing)                 python: executed (top-level `await` allowed) with the scripted model
                              bash: run by bash in a scratch folder where `react-text` is
                              `python -m react_text.cli` and bench/, tests/, notebooks/ are the repo's
    <!-- needs: openai -->    run the same way against a fake OpenAI-compatible server on 127.0.0.1
                              (tests/fake_openai.py): OPENAI_BASE_URL and OPENAI_API_KEY point at it,
                              and every http://127.0.0.1:PORT/v1 (or localhost, gpuN) URL in the block
                              is rewritten to it; the block must have sent it a request
    <!-- needs: local -->     run on the embedded model (slow: run the suite under the llama lock)
    <!-- needs: collector --> python run in a subprocess against an OTLP/HTTP collector on 127.0.0.1
    <!-- needs: X -->         anything else (a key, a GPU server, a network, the set-up script):
                              checked, not run: python is compiled and its imports resolved, bash
                              passes `bash -n`, and every `react-text ...` line is parsed by the
                              command line's own argument parser, so a renamed flag fails here too
    <!-- continue -->         python: run after the page's previous python block, in its namespace
    <!-- file: NAME -->       any block: not run, but written to NAME in the scratch folder of every
                              block of its page that runs (a server, a tools module, a task file)

The `react-text` lines of every bash block, run or not, are parsed by the CLI's argument parser.
"""

from __future__ import annotations

import ast
import asyncio
import importlib
import importlib.util
import inspect
import os
import re
import shlex
import shutil
import subprocess
import sys
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.fake_openai import FakeServer

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])
FENCE = re.compile(r"^```(\w+)[^\n]*\n(.*?)^```[ \t]*$", re.MULTILINE | re.DOTALL)
MARK = re.compile(r"<!--\s*(needs:\s*[\w-]+|file:\s*[\w./-]+|continue)\s*-->\s*\Z")
URL = re.compile(r"https?://(?:127\.0\.0\.1|localhost|gpu\d+):\d+/v1")
RUN = frozenset({"", "openai", "local", "collector"})


@dataclass(frozen=True, slots=True)
class Block:
    page: Path
    line: int  # of the block's first line of code, 1-based
    language: str
    code: str
    needs: str  # "" when it runs as it is
    continues: bool
    file: str = ""  # the name it is written to, for a file block

    @property
    def id(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    found = []
    for match in FENCE.finditer(text):
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        mark = MARK.search(before)
        word = mark.group(1) if mark else ""
        kind, _, value = word.partition(":")
        line = text.count("\n", 0, match.start(2)) + 1
        code = match.group(2)
        found.append(
            Block(
                page,
                line,
                match.group(1),
                code,
                value.strip() if kind == "needs" else "",
                word == "continue",
                value.strip() if kind == "file" else "",
            )
        )
    return found


BLOCKS = [block for page in PAGES for block in blocks(page)]
FILES = [b for b in BLOCKS if b.file]
PYTHON = [b for b in BLOCKS if b.language == "python" and not b.file]
BASH = [b for b in BLOCKS if b.language == "bash" and not b.file]


def scratch(block: Block, folder: Path) -> None:
    """The folder a block runs in: its page's files, and the repo's bench/, tests/, notebooks/."""
    for name in ("bench", "tests", "notebooks", "prompts"):
        (folder / name).symlink_to(ROOT / name)
    for each in FILES:
        if each.page == block.page:
            (folder / each.file).write_text(each.code, encoding="utf-8")


def marks(block: Block) -> list[pytest.MarkDecorator]:
    return [pytest.mark.slow] if block.needs == "local" else []


def params(chosen: list[Block]) -> list[object]:
    return [pytest.param(b, id=b.id, marks=marks(b)) for b in chosen]


# -- python ---------------------------------------------------------------------------------------


def compiled(block: Block) -> object:
    """The block compiled so that a traceback names the page and its line."""
    source = "\n" * (block.line - 1) + block.code
    return compile(source, str(block.page), "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)


def execute(block: Block, namespace: dict[str, object]) -> None:
    done = eval(compiled(block), namespace)  # exec, with top-level await allowed: a coroutine then
    if inspect.iscoroutine(done):
        asyncio.run(done)


def chain(block: Block) -> list[Block]:
    """The block, after the blocks it continues (each `<!-- continue -->` reaches one further back)."""
    page = [b for b in PYTHON if b.page == block.page]
    at = page.index(block)
    start = at
    while page[start].continues:
        if start == 0:
            raise AssertionError(f"{block.id}: <!-- continue --> on a page's first python block")
        start -= 1
    return page[start : at + 1]


def resolve_imports(block: Block) -> None:
    """Each import the block makes, of react-text or of an installed package, names what exists."""
    for node in ast.walk(ast.parse(block.code)):
        if isinstance(node, ast.Import):
            names = [(alias.name, None) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [(node.module, alias.name) for alias in node.names]
        else:
            continue
        for module, name in names:
            top = module.split(".")[0]
            if top != "react_text" and importlib.util.find_spec(top) is None:
                continue  # a third-party package this machine does not have: nothing to check against
            imported = importlib.import_module(module)
            if name is not None and not hasattr(imported, name):
                importlib.import_module(f"{module}.{name}")  # a submodule, else ModuleNotFoundError


@pytest.mark.parametrize("block", params(PYTHON))
def test_python_block(block: Block, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    scratch(block, tmp_path)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")  # `python` is this one
    if block.needs == "collector":
        run_against_a_collector(block)
        return
    if block.needs not in RUN:
        compiled(block)
        resolve_imports(block)
        return
    namespace: dict[str, object] = {"__name__": "__docs__"}
    if block.needs != "openai":
        for each in chain(block):
            execute(each, namespace)
        return
    with FakeServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-docs-fake-not-checked")
        for each in chain(block):
            execute(
                Block(each.page, each.line, "python", URL.sub(server.url, each.code), "", continues=False), namespace
            )
        assert server.requests, f"{block.id} never reached the server"


def run_against_a_collector(block: Block) -> None:
    """The block sets up OTLP/HTTP export; a scripted run then sends its spans to a collector here."""
    pytest.importorskip("opentelemetry.exporter.otlp.proto.http")
    received: list[tuple[str, bytes]] = []

    class Collector(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            received.append((self.path, self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            pass

    run = (
        "\nfrom react_text import Agent, ScriptedModel\n"
        "def add(a: float, b: float) -> float:\n    return a + b\n"
        'Agent(ScriptedModel(["ACTION: add[2, 3]", "FINAL: 5"]), tools=[add]).run("2 + 3?")\n'
        "trace.get_tracer_provider().shutdown()  # flush the batch\n"
    )
    server = ThreadingHTTPServer(("127.0.0.1", 0), Collector)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{server.server_address[1]}",
    }
    try:
        subprocess.run(
            [sys.executable, "-c", block.code + run], capture_output=True, text=True, env=env, timeout=60, check=True
        )
    finally:
        server.shutdown()
        server.server_close()
    assert [path for path, _ in received] == ["/v1/traces"]
    for name in (b"invoke_agent", b"chat scripted", b"execute_tool add", b"gen_ai.operation.name"):
        assert name in received[0][1]


# -- bash -----------------------------------------------------------------------------------------


OPERATORS = frozenset("|&;<>()")


def commands(code: str) -> list[list[str]]:
    """The arguments of each `react-text` command in a block (continuations joined, comments
    dropped, a command ending at a pipe, `;`, `&&` or a redirection)."""
    found = []
    for line in code.replace("\\\n", " ").splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        current: list[str] = []
        for word in [*lexer, ";"]:
            if word and set(word) <= OPERATORS:
                if current[:1] == ["react-text"]:
                    found.append(current[1:])
                current = []
            else:
                current.append(word)
    return found


def test_the_bash_blocks_are_found_and_split() -> None:
    code = (
        'react-text run --max-steps 3 \\\n  "What is 2 + 3?"   # a comment\n\nreact-text parse < reply.txt | jq .kind\n'
    )
    assert commands(code) == [["run", "--max-steps", "3", "What is 2 + 3?"], ["parse"]]
    assert len(BLOCKS) > 40 and {b.needs for b in BLOCKS} >= {"", "openai", "local", "setup"}


@pytest.mark.parametrize("block", params(BASH))
def test_bash_block(block: Block, tmp_path: Path) -> None:
    from react_text.cli import main as cli

    checked = subprocess.run(["bash", "-n"], input=block.code, capture_output=True, text=True, check=False)
    assert checked.returncode == 0, checked.stderr
    for args in commands(block.code):
        status: object = 0
        try:
            cli._arguments().parse_args(args)
        except SystemExit as exc:  # argparse's way of refusing (--help exits 0)
            status = exc.code
        assert status == 0, f"{block.id}: the command line refuses: react-text {shlex.join(args)}"
    if block.needs not in RUN:
        return
    scratch(block, tmp_path)
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "NO_COLOR": "1",
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
    }
    code = f'react-text() {{ {shlex.quote(sys.executable)} -m react_text.cli "$@"; }}\nset -eo pipefail\n{block.code}'
    if block.needs == "openai":
        with FakeServer() as server:
            env |= {"OPENAI_BASE_URL": server.url, "OPENAI_API_KEY": "sk-docs-fake-not-checked"}
            done = _bash(URL.sub(server.url, code), tmp_path, env)
            assert server.requests, f"{block.id} never reached the server"
    else:
        done = _bash(code, tmp_path, env)
    assert done.returncode == 0, f"{block.id} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
    assert "Traceback" not in done.stderr


def _bash(code: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=300, check=False
    )


# -- what the pages say of the code ---------------------------------------------------------------

NAMED_TEST = re.compile(r"`((?:attack/)?test_\w+\.py)?::(test_\w+)")  # tests/attack/ too


def test_every_test_a_page_names_exists() -> None:
    """The guarantees (and every other page) name the tests that attack each promise: each one is a
    test function in that file (`::test_x` after `test_file.py::...` in the same line names the same file)."""
    missing = []
    for page in PAGES:
        for line in page.read_text(encoding="utf-8").splitlines():
            file = None
            for match in NAMED_TEST.finditer(line):
                file = match.group(1) or file
                if file is None:
                    continue
                source = ROOT / "tests" / file
                if not source.is_file() or f"def {match.group(2)}(" not in source.read_text(encoding="utf-8"):
                    missing.append(f"{page.relative_to(ROOT)}: {file}::{match.group(2)}")
    assert not missing, "\n".join(missing)
    assert "test_promises_limits.py::test_budgets_hold_against_a_server_that_counts_differently" in (
        ROOT / "docs/guarantees.md"
    ).read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def board() -> str:
    """What `react-text parse --compare --no-peers` prints today (the peers' notes left off)."""
    done = subprocess.run(
        [sys.executable, "-m", "react_text.cli", "parse", "--compare", "--no-peers"],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=120,
        check=True,
    )
    return done.stdout.split("\npeers not scored", 1)[0].rstrip()


def test_the_scoreboard_on_the_page_is_what_parse_compare_prints(board: str) -> None:
    """docs/how-to/parsers.md shows `react-text parse --compare`'s board: it must be today's."""
    printed = board
    page = ROOT / "docs/how-to/parsers.md"
    shown = next(b.code for b in blocks(page) if b.language == "text" and "naive    strict  tolerant\n" in b.code)
    rerun = "paste the board of: react-text parse --compare --no-peers"
    assert [line.rstrip() for line in shown.rstrip().splitlines()] == [
        line.rstrip() for line in printed.splitlines()
    ], rerun
    total = re.search(r"all cases +\d+/(\d+)", printed)
    assert total is not None and f"holds {total.group(1)} replies" in page.read_text(encoding="utf-8")


def test_the_readme_quotes_the_scoreboard_as_parse_compare_prints_it(board: str) -> None:
    """Issue 33: the README gave the tutorials' parser 41.2% where `parse --compare` printed 42.0%.
    Its figures (the tolerant parser's right of all, the naive parser's accuracy) are the board's."""
    names = board.splitlines()[0].split()

    def row(label: str) -> dict[str, str]:
        found = re.search(rf"^{label} +(.+)$", board, re.MULTILINE)
        assert found is not None, f"the board has no {label!r} row"
        return dict(zip(names, found.group(1).split(), strict=True))

    right, share = row("all cases"), row("accuracy")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    quoted = re.search(r"(\d+/\d+) on the\s+corpus it was built on \(the tutorials' parser: ([\d.]+%)\)", readme)
    assert quoted is not None, "the README no longer quotes the scoreboard as this test reads it"
    assert (quoted.group(1), quoted.group(2)) == (right["tolerant"], share["naive"]), "quote parse --compare's board"


def test_the_loop_page_says_which_repeats_are_answered_from_the_first_call() -> None:
    """Issue 33: docs/concepts/loop.md said every exact repeat of a successful call is not run
    again; only a tool free of side effects (or idempotent) is answered from an earlier call."""
    page = (ROOT / "docs" / "concepts" / "loop.md").read_text(encoding="utf-8")
    bullet = page[page.index("- **Repeats.**") :].split("\n- ", 1)[0]
    assert "pure=True" in bullet and "idempotent=True" in bullet and "runs again" in bullet, bullet
    assert "test_promises_repeats.py::test_a_python_tool_runs_again_unless_marked_pure" in bullet, bullet


def test_troubleshooting_quotes_every_correction_as_the_prompts_say() -> None:
    """What the model is told, quoted on the troubleshooting page word for word from prompts/."""
    page = (ROOT / "docs/troubleshooting.md").read_text(encoding="utf-8")
    files = sorted(f for d in ("errors", "corrections", "history") for f in (ROOT / "prompts" / d).glob("*.txt"))
    assert len(files) > 20
    for file in files:
        for line in file.read_text(encoding="utf-8").splitlines():
            words = line.strip()
            if words and not re.fullmatch(r"\$\w+", words):
                assert words in page, f"{file.relative_to(ROOT)}: {words!r} is not quoted on docs/troubleshooting.md"


# -- the site -------------------------------------------------------------------------------------


def offline() -> list[str]:
    """`unshare -n` where this machine allows it (root, or user namespaces): the build then runs with
    no network at all, so a plugin that fetched anything would fail it. Elsewhere, nothing."""
    unshare = shutil.which("unshare")
    if unshare and subprocess.run([unshare, "-n", "true"], capture_output=True, check=False).returncode == 0:
        return [unshare, "-n"]
    return []


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The site, built with `mkdocs build --strict` (built once for the tests below)."""
    mkdocs = shutil.which("mkdocs", path=str(Path(sys.executable).parent)) or shutil.which("mkdocs")
    if mkdocs is None:
        pytest.skip('mkdocs is not installed: pip install -e ".[docs]"')
    into = tmp_path_factory.mktemp("docs") / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": str(ROOT)}
    built = subprocess.run(
        [*offline(), mkdocs, "build", "--strict", "--site-dir", str(into)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert built.returncode == 0, built.stderr
    assert "WARNING" not in built.stderr, built.stderr
    return into


def test_the_site_builds_strict_and_offline(site: Path) -> None:
    """A warning (a broken link or anchor, a docstring mkdocstrings cannot read, a page left out of
    the nav) fails the build. No network is needed (the build runs without one where the machine
    allows): nothing is fetched, no web font is loaded."""
    for page in ("index.html", "llms.txt", "llms-full.txt", "search/search_index.json", "reference/api/index.html"):
        assert (site / page).is_file(), page
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
        assert (site / "notebooks" / notebook.stem / "index.html").is_file(), f"{notebook.name} is not on the site"
    api = (site / "reference/api/index.html").read_text(encoding="utf-8")
    import react_text

    missing = [name for name in react_text.__all__ if f'id="react_text.{name}"' not in api]
    assert not missing, f"the API reference leaves out {missing}"
    full = (site / "llms-full.txt").read_text(encoding="utf-8")
    assert "context window" in full and "vLLM" in full
    assert "fonts.googleapis.com" not in (site / "index.html").read_text(encoding="utf-8")


def test_the_search_box_finds_what_a_reader_looks_for(site: Path) -> None:
    """Headless Chromium types "context window" and "vLLM" into the search box of the site served on
    127.0.0.1, and a result links to the page that answers each (scripts/docs_browser.py)."""
    if shutil.which("chromium") is None:
        pytest.skip("needs Debian's chromium: apt-get install chromium")
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts/docs_browser.py"), "--site", str(site)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "found 'context window'" in done.stdout and "found 'vLLM'" in done.stdout
