"""quoted.quoted_end skips the quotes that open no value in one search (issue 34: 100 KB of "```"
lines took a Python step a backtick): it finds what the step-by-step scan it replaced found."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from react_text.parser import quoted
from react_text.parser.quoted import UNREAD, _quote_end


def _stepwise(text: str, open_at: int, limit: int) -> int | str | None:
    """quoted_end as it was: every quote and bracket stopped at, one at a time."""
    opener = text[open_at]
    closer = "]" if opener == "[" else ")"
    depth = 1
    pos = open_at + 1
    while True:
        at = next((i for i in range(pos, limit) if text[i] in f"\"'`{opener}{closer}"), None)
        if at is None:
            return None
        char = text[at]
        if char == opener:
            depth += 1
            pos = at + 1
        elif char == closer:
            depth -= 1
            pos = at + 1
            if depth == 0:
                return pos
        else:
            before = at - 1
            while before > open_at and text[before] in " \t":
                before -= 1
            if text[before] not in "[({,=:":
                pos = at + 1
                continue
            end = _quote_end(text, at, limit)
            if end is None or end == UNREAD:
                return end
            pos = end


@given(
    opener=st.sampled_from("[("),
    body=st.lists(st.sampled_from([*"\"'`[](){},=: \t\n\\ax", "```\n", '"a"', "it's", "x='y'"]), max_size=30).map(
        "".join
    ),
    cut=st.integers(min_value=0, max_value=5),
)
@settings(max_examples=3000, deadline=None)
def test_the_search_finds_what_the_steps_found(opener: str, body: str, cut: int) -> None:
    text = "ACTION: f" + opener + body
    limit = max(10, len(text) - cut)
    assert quoted.quoted_end(text, 9, limit) == _stepwise(text, 9, limit)
