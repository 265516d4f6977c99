"""The parser, driven by a corpus of real and constructed replies (tests/data/replies.jsonl)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from react_text import Action, Agent, Final, ParseError, RunResult, ScriptedModel, Tool, parse, tool
from react_text.evaluation.corpus import Case, load, reading
from react_text.prompting import render

CORPUS = load(Path(__file__).parent / "data" / "replies.jsonl")


@pytest.mark.parametrize("case", CORPUS, ids=[c.id for c in CORPUS])
def test_corpus(case: Case) -> None:
    assert reading(parse(case.sent, tools=case.tools)) == case.expected, case.source


def test_corpus_holds_recorded_and_constructed_cases() -> None:
    sources = {c.category for c in CORPUS}
    assert any(s.startswith("recorded: ") for s in sources)
    assert len(CORPUS) >= 300
    assert len({c.id for c in CORPUS}) == len(CORPUS)
    assert {"reasoning", "tool names"} <= sources
    assert sum(c.id.startswith(("r2-", "rec2-")) for c in CORPUS) >= 40
    assert any(c.tools for c in CORPUS if c.category == "tool names")


def test_thought_is_kept() -> None:
    parsed = parse("THOUGHT: I need the price.\nACTION: lookup[train]")
    assert parsed == Action("lookup", "train", "I need the price.")


def test_discarded_rest_is_recorded() -> None:
    parsed = parse("ACTION: lookup[train]\nFINAL: 89")
    assert isinstance(parsed, Action)
    assert parsed.discarded == "\nFINAL: 89"


def test_error_message_comes_from_the_template() -> None:
    parsed = parse("just prose")
    assert isinstance(parsed, ParseError)
    assert parsed.message == render("errors/no_directive")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("THOUGHT: x\nACTION: lookup[train]", Action("lookup", "train", "x")),
        ("THOUGHT: x\nFINAL: 3", Final("3", "x")),
    ],
)
def test_strict_reads_the_canonical_form(text: str, expected: object) -> None:
    assert parse(text, strict=True) == expected


@pytest.mark.parametrize(
    "text",
    [
        "**Action:** lookup[train]",
        "Action: lookup\nAction Input: train",
        '{"action": "lookup", "action_input": "train"}',
        "action: lookup[train]",
        "ACTION: lookup[train] and more",
    ],
)
def test_strict_refuses_dialects(text: str) -> None:
    assert isinstance(parse(text, strict=True), ParseError)


@given(st.text())
@settings(max_examples=300)
def test_never_raises(text: str) -> None:
    assert isinstance(parse(text), Action | Final | ParseError)
    assert isinstance(parse(text, strict=True), Action | Final | ParseError)


@given(st.text(alphabet="[](){}`\"'\n :ACTIONFINALTHOUGHTObservation*#<>/think", max_size=300))
@settings(max_examples=500)
def test_never_raises_on_protocol_shaped_noise(text: str) -> None:
    assert isinstance(parse(text), Action | Final | ParseError)
    assert isinstance(parse(text, tools=("Search Tool", "answer", "加法", "")), Action | Final | ParseError)


@pytest.mark.parametrize(
    "text",
    [
        "ACTION: x" + "[" * 100_000,
        "Action:\n" * 12_500,
        " " * 100_000,
        "{" * 100_000,
        "[" * 100_000,
        "ACTION: f[" + "a" * 100_000,
        "<think>" * 14_000,
        "Obs" * 33_000,
        "```\n" * 25_000,
        "FINAL   " + " " * 100_000,
        "ACTION:" * 14_000,
        "Action:" * 14_000,
        "ACTION:\n" * 12_500,
        "THOUGHT: x" + " \n\t" * 33_000,
        "x[" * 50_000,
        "x[\n" * 33_000,
        "ACTION: x[" * 10_000,
        "ACTION: x[\n" * 9_000,
        "Thought: x\n" * 9_000,
        "Action: None\n" + "Thought: x\n" * 9_000,
        "<think>Observation: x</think>" * 3_400,
        "ACTION: a[Observation: x] " * 3_800,
        "FINAL: a Observation: b\n" * 4_000,
    ],
    ids=[
        "brackets",
        "labels",
        "spaces",
        "braces",
        "bare-brackets",
        "open-input",
        "think",
        "obs",
        "fences",
        "final-spaces",
        "ACTION-one-line",
        "Action-one-line",
        "ACTION-lines",
        "whitespace-mix",
        "x[-one-line",
        "x[-lines",
        "ACTION-x[-one-line",
        "ACTION-x[-lines",
        "thought-lines",
        "none-then-thoughts",
        "observations-in-thinking",
        "observations-in-inputs",
        "observations-in-answers",
    ],
)
def test_adversarial_100kb_replies_finish(text: str) -> None:
    # Not a timing assertion (bench/ measures speed): a generous bound that only a quadratic or
    # exponential regex would break, so the test cannot flake on a busy machine.
    started = time.process_time()
    parse(text)
    assert time.process_time() - started < 2.0


tool_names = st.from_regex(r"[A-Za-z_][A-Za-z0-9_.\-]{0,20}", fullmatch=True).filter(
    lambda name: name.casefold() not in {"finish", "final", "final_answer", "answer"}
)


@given(tool=tool_names, value=st.text(max_size=200))
@settings(max_examples=1000)
def test_round_trip(tool: str, value: str) -> None:
    from hypothesis import assume

    from react_text.parser import render_action
    from react_text.parser.guard import cut

    text = render_action(tool, value)
    assume(cut(text).dropped == "" and "<think>" not in value and "</think>" not in value)
    assert parse(text) == Action(tool, value)


@pytest.mark.parametrize(
    "value",
    ['"quoted"', "  padded  ", "two\nlines", "unbalanced ] bracket", "[open", "```fence```", "x\nFINAL: y", ""],
)
def test_round_trip_examples(value: str) -> None:
    from react_text.parser import render_action

    assert parse(render_action("tool", value)) == Action("tool", value)


# --- issue 12: the input as written -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "tool", "value"),
    [
        ('{"action": "search", "action_input": {"limit": 3}}', "search", '{"limit": 3}'),
        ('{"action": "search", "action_input": {"limit":3,  "q" : "x"}}', "search", '{"limit":3,  "q" : "x"}'),
        ('{"name": "write", "arguments": "{\\"path\\": \\"a.txt\\"}"}', "write", '{"path": "a.txt"}'),
        ('{"function": {"name": "f", "arguments": {"a": [1, 2]}}}', "f", '{"a": [1, 2]}'),
        ('{"tool": "t", "tool_input": [1, "two"]}', "t", '[1, "two"]'),
        ('{"action": "square", "action_input": 12}', "square", "12"),
        ('{"action": "flag", "action_input": true}', "flag", "true"),
        ('{"action": "now", "action_input": null}', "now", ""),
        ('{"action": "now"}', "now", ""),
        ('Action: weather\nAction Input: {"city": "Paris"}', "weather", '{"city": "Paris"}'),
        ("Action: add\nAction Input: {'a': 1, 'b': 2}", "add", "{'a': 1, 'b': 2}"),
        ('ACTION: weather[{"city": "Paris"}]', "weather", '{"city": "Paris"}'),
        ('ACTION: write["a.txt", "hello, world"]', "write", '"a.txt", "hello, world"'),
        ('ACTION: lookup["train ticket"]', "lookup", '"train ticket"'),  # quotes too: "a, b" is one value
    ],
)
def test_json_and_literal_inputs_are_kept_as_written(text: str, tool: str, value: str) -> None:
    parsed = parse(text)
    assert isinstance(parsed, Action)
    assert (parsed.tool, parsed.input) == (tool, value)


def test_a_final_answer_blob_gives_the_answer_not_its_json() -> None:
    text = '{"name": "final_answer", "arguments": {"answer": "Paris is sunny."}}'
    assert parse(text) == Final("Paris is sunny.")


# --- registered tool names --------------------------------------------------------------------------

NAMES = ("Wikipedia Research Tool", "Use Requests", "get-weather", "fs.read_file", "加法", "Search Tool", "add")


@pytest.mark.parametrize(
    ("text", "tool", "value"),
    [
        ("Action: Wikipedia Research Tool\nAction Input: Frank Herbert", "Wikipedia Research Tool", "Frank Herbert"),
        ("Action: use requests\nAction Input: https://example.com", "Use Requests", "https://example.com"),
        ("ACTION: Use Requests[https://example.com]", "Use Requests", "https://example.com"),
        ("ACTION: get-weather[Paris]", "get-weather", "Paris"),
        ("ACTION: fs.read_file[notes/todo.txt]", "fs.read_file", "notes/todo.txt"),
        ("ACTION: 加法[1, 2]", "加法", "1, 2"),
        ('Tool: Search Tool Input: "query"', "Search Tool", '"query"'),
        ("Action: add (add two numbers)\nAction Input: 2, 3", "add", "2, 3"),
        ("Action: 加法 (add two numbers)\nAction Input: 2, 3", "加法", "2, 3"),
        ("ACTION: I will use Wikipedia Research Tool[Dune]", "Wikipedia Research Tool", "Dune"),
        ('{"action": "USE REQUESTS", "action_input": "u"}', "Use Requests", "u"),
        ("**Action:** `get-weather`\n**Action Input:** Rome", "get-weather", "Rome"),
        ("ACTION: ADD[1, 2]", "add", "1, 2"),
    ],
)
def test_registered_names_are_read_where_a_name_is_expected(text: str, tool: str, value: str) -> None:
    parsed = parse(text, tools=NAMES)
    assert isinstance(parsed, Action), parsed
    assert (parsed.tool, parsed.input) == (tool, value)


PIECES = [
    "Action:", "Action Input:", "Tool:", "Tool Input:", "ACTION:", "FINAL:", "Final Answer:", "Thought:", "None",
    "Wikipedia Research Tool", "Use Requests", "get-weather", "加法", "Search Tool", "add", "answer", "[", "]", "(",
    ")", "{", "}", '"', "'", "```", "\n", " ", "Observation:", "<think>", "</think>", "x", "1, 2", '{"action": ',
]  # fmt: skip


@given(st.lists(st.sampled_from(PIECES), max_size=40).map("".join))
@settings(max_examples=1000)
def test_never_raises_with_registered_names(text: str) -> None:
    parsed = parse(text, tools=NAMES)
    assert isinstance(parsed, Action | Final | ParseError)
    if isinstance(parsed, Action | Final):
        assert text.endswith(parsed.discarded)


def test_a_registered_name_is_not_the_start_of_a_longer_one() -> None:
    assert parse("ACTION: address[x]", tools=("add",)) == Action("address", "x")
    assert parse("ACTION: search_news[x]", tools=("search", "search_news")) == Action("search_news", "x")


# --- names without the registered ones (the parser alone) ----------------------------------------


@pytest.mark.parametrize(
    ("text", "tool", "value"),
    [
        ("ACTION: 天气[北京]", "天气", "北京"),
        ("THOUGHT: 我需要查天气\nACTION: 天气[北京今天的天气]", "天气", "北京今天的天气"),
        ("思考：查一下\n行动：天气[上海]", "天气", "上海"),  # Chinese labels, full-width colons
        ("Action: 加法\nAction Input: 1, 2", "加法", "1, 2"),
        ("ACTION: погода[Москва]", "погода", "Москва"),
        ("ACTION: मौसम[दिल्ली]", "मौसम", "दिल्ली"),  # combining vowel signs are part of the name
        ("ACTION: I will use 天气[东京]", "天气", "东京"),  # a call later on the line
        ("ACTION: get-weather[Paris]", "get-weather", "Paris"),
        ("ACTION: _private.tool[x]", "_private.tool", "x"),
    ],
)
def test_without_tools_a_name_may_start_with_any_letter(text: str, tool: str, value: str) -> None:
    parsed = parse(text)
    assert isinstance(parsed, Action), parsed
    assert (parsed.tool, parsed.input) == (tool, value)


@pytest.mark.parametrize(
    ("text", "tool", "value"),
    [
        ("ACTION: web search[capital of Peru]", "web search", "capital of Peru"),
        ("**Action:** Wikipedia Research Tool[Dune]", "Wikipedia Research Tool", "Dune"),
        ("ACTION: Use Requests[https://example.com]", "Use Requests", "https://example.com"),  # an imperative
        ("ACTION: web search (capital of Peru)", "web search", "capital of Peru"),
        ("Action: Use Requests\nAction Input: https://example.com", "Use Requests", "https://example.com"),
        ('Action: "Search Tool"\nAction Input: cats', "Search Tool", "cats"),
        ("Action: ** Ask question to senior researcher\nAction Input: why", "Ask question to senior researcher", "why"),
        ("Action: web search (looks things up)\nAction Input: cats", "web search", "cats"),
        ("Action: Final Answer[42]", None, "42"),  # still the answer
        # Not a name: the last word is, as a call later on the line.
        ("ACTION: I will use search[capital of Peru]", "search", "capital of Peru"),  # a subject, a modal
        ("ACTION: Using the calculator[2 + 2]", "calculator", "2 + 2"),  # a gerund, an article
        ("ACTION: Let me check weather[Paris]", "weather", "Paris"),
        ("ACTION: one two three four five six[x]", "six", "x"),  # more than five words
        ("ACTION: web  search[x]", "search", "x"),  # two spaces
        ("ACTION: I will use web search[x]", "search", "x"),  # only the names can tell where it starts
    ],
)
def test_without_tools_a_name_of_words_is_read_when_nothing_else_is_before_its_input(
    text: str, tool: str | None, value: str
) -> None:
    parsed = parse(text)
    if tool is None:
        assert parsed == Final(value)
        return
    assert isinstance(parsed, Action), parsed
    assert (parsed.tool, parsed.input) == (tool, value)


def test_without_tools_prose_on_an_action_line_is_no_name() -> None:
    # Prose with no bracket, no input label: an error, as before (no sentence is taken for a name).
    assert parse("Action: I need to search the web\nAction Input: cats").reason == "bad_action"  # type: ignore[union-attr]
    assert parse("Action: No action needed\nFinal Answer: 42") == Final("42")
    assert parse("Action: I have the final answer\nFinal Answer: 42") == Final("42")
    # A name of words with nothing after it on its line names a tool but gives no input.
    assert parse("ACTION: web search").reason == "missing_input"  # type: ignore[union-attr]
    assert parse("ACTION: web search and more words than a name has").reason == "bad_action"  # type: ignore[union-attr]


def test_with_tools_an_unregistered_name_reads_as_before() -> None:
    # The registered names decide; a name of words or of other letters is the parser alone's reading.
    assert parse("ACTION: web search[x]", tools=("search",)) == Action("search", "x")
    assert parse("ACTION: 使用calculator[2 + 2]", tools=("calculator",)) == Action("calculator", "2 + 2")
    assert parse("ACTION: I will use web search[x]", tools=("web search",)) == Action("web search", "x")
    assert parse("ACTION: use requests[u]", tools=("Use Requests",)) == Action("Use Requests", "u")


@pytest.mark.parametrize("name", ["answer", "Finish", "final_answer", "final"])
def test_reserved_names_are_a_final_answer_only_when_not_registered(name: str) -> None:
    text = f"ACTION: {name}[refund window?]"
    assert parse(text) == Final("refund window?")
    assert parse(text, tools=("lookup",)) == Final("refund window?")
    assert parse(text, tools=(name, "lookup")) == Action(name, "refund window?")
    assert parse(text, tools=(name.upper(),)) == Action(name.upper(), "refund window?")
    blob = f'{{"action": "{name}", "action_input": "x"}}'
    assert parse(blob) == Final("x")
    assert parse(blob, tools=(name,)) == Action(name, "x")


def test_one_name_given_as_a_string_is_one_name() -> None:
    assert parse("ACTION: Use Requests[u]", tools="Use Requests") == Action("Use Requests", "u")


def test_every_parser_takes_the_registered_names() -> None:
    from react_text.parser import PARSERS

    for read in PARSERS.values():
        assert isinstance(read("ACTION: lookup[x]", tools=("lookup",)), Action)
    assert parse("ACTION: Use Requests[u]", strict=True, tools=NAMES) == Action("Use Requests", "u")
    assert isinstance(parse("ACTION: Use Requests[u]", strict=True), ParseError)


# --- dialects -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (  # LangChain structured chat: indented, the fence body keeps its indentation
            'Thought: look it up\n  Action:\n  ```json\n  {\n    "action": "search",\n    "action_input": "cats"\n'
            "  }\n  ```",
            Action("search", "cats", "look it up"),
        ),
        ('Thought: I should search.Action:SearchToolAction Input:{"q": "cats"}', Action("SearchTool", '{"q": "cats"}')),
        ("Thought: Let me add.Action:add\nAction Input:2, 3", Action("add", "2, 3", closed=False)),
        ("Thought: time\nAction: now\nAction Input:", Action("now", "", closed=False)),
        ("Thought: time\nAction: now\nAction Input: \n", Action("now", "")),
        ("Tool: now\nTool Input:\nThought: wait", Action("now", "")),
        ("Thought: done\nAction: None\nFinal Answer: 234", Final("234")),
        ("Action: none\nAction Input: none\nFinal Answer: 234", Final("234")),
        ("Thought: done\nAction: I have the final answer\nFinal Answer: 234", Final("234")),
        ("Action: N/A\nThought: no tool needed\nFinal Answer: Paris", Final("Paris")),
        ("Action: Final Answer\nAction Input: 234", Final("234")),
        ("Action: final_answer[234]", Final("234")),
        ("Action: lookup (find a price)\nAction Input: train\n", Action("lookup", "train")),
    ],
)
def test_dialects(text: str, expected: Action | Final) -> None:
    parsed = parse(text)
    assert isinstance(parsed, type(expected))
    if isinstance(expected, Action):
        assert isinstance(parsed, Action)
        assert (parsed.tool, parsed.input, parsed.closed) == (expected.tool, expected.input, expected.closed)
    else:
        assert isinstance(parsed, Final)
        assert parsed.answer == expected.answer


@pytest.mark.parametrize(
    "text",
    [
        "Action: lookup\nFinal Answer: 89",  # a tool with no input, then an answer: ambiguous
        "ACTION: fetch-https://example.com\nFINAL: I need the title.",
        "Answer:\n\nFINISH:\n\nFINISH:",  # an answer made of bare labels holds no answer
    ],
)
def test_unreadable_dialect_shapes_are_errors(text: str) -> None:
    assert isinstance(parse(text), ParseError)


def test_no_action_without_an_answer_after_it_is_read_as_written() -> None:
    # The loop then says there is no tool None, and lists the tools.
    assert parse("Action: None\nAction Input: x\n") == Action("None", "x", discarded="\n")
    assert parse("ACTION: NA[]") == Action("NA", "")


# --- closed: whether the input had a definite end ------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "closed"),
    [
        ("ACTION: lookup[train]", True),
        ("ACTION: python[```\nprint('a]')\n```]", True),
        ("ACTION: calculator[(17 + 25) * 3", False),
        ("ACTION: python[x = a[0]\nprint(x)", False),  # runs to the last "]" of its section: still open
        ("ACTION: python[print('Observation: done')", False),  # the guard cuts inside it
        ("ACTION: python[print('Observation: done')]", True),
        ("Action: lookup\nAction Input: train", False),  # ran to the end of the reply
        ("Action: lookup\nAction Input: train\n", True),
        ("Action: lookup\nAction Input: train\nObservation: 89", True),  # cut at a line start
        ('Action: lookup\nAction Input: {"item": "train"}', True),  # complete JSON
        ("Action: python\nAction Input: ```python\nprint(1)\n", False),  # a fence never closed
        ('{"action": "lookup", "action_input": "train"}', True),
    ],
)
def test_closed_says_whether_the_input_had_a_definite_end(text: str, closed: bool) -> None:
    parsed = parse(text)
    assert isinstance(parsed, Action), parsed
    assert parsed.closed is closed


def test_a_cut_inside_an_input_that_never_closes_is_not_closed() -> None:
    text = "THOUGHT: run it\nACTION: python[print('Observation: done')"
    from react_text.parser.guard import cut

    kept = cut(text).kept
    assert kept == "THOUGHT: run it\nACTION: python[print('"
    assert parse(kept) == Action("python", "print('", "run it", closed=False)


# --- discarded: the raw suffix ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "discarded"),
    [
        ("ACTION: lookup[train]  \n", "  \n"),
        ("ACTION: lookup[train] and then\nFINAL: 3", " and then\nFINAL: 3"),
        ("ACTION: lookup[train]\nObservation: 89\nFINAL: 89", "\nObservation: 89\nFINAL: 89"),
        ("<think>a</think>ACTION: lookup[train]<think>b</think> x", "<think>b</think> x"),
        ("FINAL: 2192\n\nThe answer is 2192.", "\n\nThe answer is 2192."),
        ("Final Answer: 178\n\nQUESTION: What else?", "\n\nQUESTION: What else?"),
        ("Action: lookup\nAction Input: train\n\nThought: wait", "\n\nThought: wait"),
        ('```json\n{"action": "lookup", "action_input": "x"}\n```\nthen', "\nthen"),
        ("reasoning</think>\nFINAL: 3\n", "\n"),
    ],
)
def test_discarded_is_the_exact_suffix_after_the_directive(text: str, discarded: str) -> None:
    parsed = parse(text)
    assert isinstance(parsed, Action | Final), parsed
    assert parsed.discarded == discarded


@given(st.text(alphabet="[](){}`\"'\n :ACTIONFINALThoughtObservation*#<>/think{}", max_size=200))
@settings(max_examples=500)
def test_discarded_is_always_a_suffix_of_the_reply(text: str) -> None:
    for strict in (False, True):
        parsed = parse(text, strict=strict)
        if isinstance(parsed, Action | Final):
            assert text.endswith(parsed.discarded)


# --- the canonical fast path reads exactly as the full reading -------------------------------------------

canonical_words = st.lists(
    st.sampled_from([*list("abcXYZ 019.,?!-+*_'\"()/éü加:[]`\t\xa0"), "Obs", "ACTION: ", "FINAL:", "```"]),
    max_size=12,
).map("".join)


@given(
    thought=canonical_words,
    tool=st.from_regex(r"[A-Za-z_][A-Za-z0-9_.\-]{0,12}", fullmatch=True),
    value=canonical_words,
    final=st.booleans(),
    lead=st.sampled_from(["", "\n", " ", "\n\n  "]),
    tail=st.sampled_from(["", "\n", " \n ", "\t"]),
)
@settings(max_examples=1000)
def test_the_fast_path_reads_as_the_full_reading(
    thought: str, tool: str, value: str, final: bool, lead: str, tail: str
) -> None:
    directive = f"FINAL: {value}" if final else f"ACTION: {tool}[{value}]"
    text = f"{lead}THOUGHT: {thought}\n{directive}{tail}"
    # An empty think block in front sends the same reply through the full reading.
    assert parse(text) == parse("<think></think>" + text)
    assert parse(text, tools=(tool, "other")) == parse("<think></think>" + text, tools=(tool, "other"))


def test_a_directive_after_many_sections_is_found() -> None:
    text = "Thought: step\n" * 200 + "Task: again\n" * 100 + "ACTION: lookup[train]"
    parsed = parse(text)
    assert isinstance(parsed, Action)
    assert (parsed.tool, parsed.input) == ("lookup", "train")
    assert parsed.thought == "\n".join(["step"] * 64)  # the thoughts kept are the first 64
    assert parse("Action: None\n" + "Thought: x\n" * 500 + "Final Answer: 3") == Final("3")


def test_a_canonical_reply_is_read_whole() -> None:
    assert parse("THOUGHT: I need the price.\nACTION: lookup[train]\n") == Action(
        "lookup", "train", "I need the price.", "\n"
    )
    assert parse("THOUGHT: done\nFINAL: 234 euros") == Final("234 euros", "done")


# --- through the Agent ---------------------------------------------------------------------------------


def _echo(name: str) -> Tool:
    def run(text: object) -> str:  # any value: a str parameter would refuse an object keyed by another name
        return f"{name} got {text!r}"

    return tool(run, name=name)


def _run(replies: list[str], names: tuple[str, ...]) -> RunResult:
    model = ScriptedModel(replies)
    result = Agent(model, tools=[_echo(n) for n in names]).run("Find out.")
    model.assert_all_used()
    return result


@pytest.mark.parametrize(
    ("reply", "observation"),
    [
        pytest.param(
            "Thought: look it up\nAction: Wikipedia Research Tool\nAction Input: Frank Herbert",
            "Wikipedia Research Tool got 'Frank Herbert'",
        ),
        pytest.param(
            "Action: Use Requests\nAction Input: https://example.com\n", "Use Requests got 'https://example.com'"
        ),
        pytest.param('Tool: Search Tool Input: "cats"', "Search Tool got 'cats'"),
        pytest.param("ACTION: 加法[1, 2]", "加法 got '1, 2'"),
        pytest.param("Action: add (add two numbers)\nAction Input: 2, 3\n", "add got '2, 3'"),
        pytest.param("ACTION: get-weather[Paris]", "get-weather got 'Paris'"),
        pytest.param("ACTION: fs.read_file[notes/todo.txt]", "fs.read_file got 'notes/todo.txt'"),
        pytest.param("ACTION: answer[refund window?]", "answer got 'refund window?'"),
    ],
)
def test_registered_names_run_their_tool(reply: str, observation: str) -> None:
    names = ("Wikipedia Research Tool", "Use Requests", "Search Tool", "加法", "add", "get-weather", "fs.read_file")
    result = _run([reply, "FINAL: done"], (*names, "answer"))
    assert result.steps[0].observation == observation
    assert result.answer == "done"


def test_answer_is_the_final_answer_when_no_tool_has_that_name() -> None:
    result = _run(["ACTION: answer[30 days]"], ("lookup",))
    assert (result.answer, result.tool_calls) == ("30 days", 0)


@pytest.mark.parametrize(
    ("reply", "observation"),
    [
        (
            'Thought: search\n  Action:\n  ```json\n  {\n    "action": "search",\n    "action_input": "cats"\n  }\n  ```',
            "search got 'cats'",
        ),
        ('Thought: I should search.Action:search\nAction Input:{"q": "cats"}', 'search got \'{"q": "cats"}\''),
        ("Thought: I need the time.\nAction: now\nAction Input:\n", "now got ''"),
        ('{"action": "search", "action_input": {"limit": 3}}', "search got '{\"limit\": 3}'"),
        ("Action: search\nAction Input: {'q': 'cats'}\n", "search got \"{'q': 'cats'}\""),
    ],
)
def test_dialects_run_their_tool_with_the_input_as_written(reply: str, observation: str) -> None:
    result = _run([reply, "FINAL: done"], ("search", "now"))
    assert result.steps[0].observation == observation


@pytest.mark.parametrize(
    "reply",
    [
        "Thought: I know it.\nAction: None\nFinal Answer: 234",
        "Thought: Done.\nAction: I have the final answer\nFinal Answer: 234",
    ],
)
def test_no_action_then_the_answer_ends_the_run(reply: str) -> None:
    result = _run([reply], ("search",))
    assert (result.answer, result.stop_reason, result.tool_calls) == ("234", "final", 0)


registered_names = st.from_regex(r"[A-Za-z加法工具][A-Za-z0-9_.\- 加法]{0,16}[A-Za-z0-9法]", fullmatch=True).filter(
    lambda name: "  " not in name
)


@given(tool=registered_names, value=st.text(max_size=100))
@settings(max_examples=500)
def test_round_trip_with_registered_names(tool: str, value: str) -> None:
    from hypothesis import assume

    from react_text.parser import render_action
    from react_text.parser.guard import cut

    text = render_action(tool, value)
    assume(cut(text).dropped == "" and "<think>" not in value and "</think>" not in value)
    assert parse(text, tools=(tool, "other tool")) == Action(tool, value)


def test_an_observation_inside_a_markup_call_is_still_cut_and_the_call_is_not_closed() -> None:
    # Refused on purpose (issue 34): the stop guard cuts a made-up observation wherever it is not
    # inside a labelled bracketed input; a markup call it cuts reads as not closed, so it is not run.
    read = parse("<function=run>\n<parameter=cmd>echo Observation: 1</parameter>\n</function>", tools=["run"])
    assert isinstance(read, Action)
    assert (read.tool, read.closed) == ("run", False)
    whole = parse("<function=run>\n<parameter=cmd>echo done</parameter>\n</function>", tools=["run"])
    assert whole == Action("run", '{"cmd": "echo done"}')


def test_a_call_in_a_labelled_thought_or_mid_sentence_is_no_call() -> None:
    quoted = 'Thought: calls look like <tool_call>{"name": "x", "arguments": {}}</tool_call> here.\nFINAL: 4'
    assert parse(quoted, tools=["x"]) == Final(
        "4", 'calls look like <tool_call>{"name": "x", "arguments": {}}</tool_call> here.'
    )
    assert isinstance(parse("I could Search[cats] now.", tools=["search"]), ParseError)
    assert isinstance(parse("Search[cats]"), ParseError)  # no label, no registered name: prose or a footnote
