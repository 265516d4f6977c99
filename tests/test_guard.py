from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from react_text.guard import STOP_SEQUENCES, cut, is_cut


def test_at_most_four_stop_sequences() -> None:
    assert 1 <= len(STOP_SEQUENCES) <= 4


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("ACTION: a[b]\nOBSERVATION: 5\nFINAL: 5", "ACTION: a[b]\n"),
        ("ACTION: a[b] Observation: 5", "ACTION: a[b] "),
        ("ACTION: a[b]\n**Observation 2:** 5", "ACTION: a[b]\n"),
        ("ACTION: a[b]\nobservation: 5", "ACTION: a[b]\n"),
        ("ACTION: a[b]\nObs", "ACTION: a[b]"),
        ("ACTION: a[b]\nOBSERV", "ACTION: a[b]"),
        ("ACTION: a[b]Obs", "ACTION: a[b]"),
        ("ACTION: a[b] Observ", "ACTION: a[b]"),
        ("THOUGHT: my observation is wrong\nACTION: a[b]", "THOUGHT: my observation is wrong\nACTION: a[b]"),
        ("FINAL: jobs", "FINAL: jobs"),
        ("no label here", "no label here"),
    ],
)
def test_cut(text: str, kept: str) -> None:
    result = cut(text)
    assert result.kept == kept
    assert result.kept + result.dropped == text


@given(st.text(alphabet="OBSERVATIONobservation: \n]*#x", max_size=200))
@settings(max_examples=500)
def test_cut_is_idempotent(text: str) -> None:
    once = cut(text).kept
    assert cut(once).kept == once
    assert cut(once).dropped == ""


@given(st.text())
def test_cut_never_raises_and_keeps_a_prefix(text: str) -> None:
    result = cut(text)
    assert text.startswith(result.kept)


def test_is_cut_from_an_offset() -> None:
    text = "THOUGHT: x\nACTION: a[b]\nOBSERVATION:"
    assert is_cut(text)
    assert is_cut(text, len(text) - 20)
    assert not is_cut("THOUGHT: x")
