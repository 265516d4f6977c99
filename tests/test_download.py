"""The fetch code, run for real against local files (file:// URLs): no network in tests."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from react_text.backends.download import DownloadError, fetch, resolve


def source(tmp_path: Path, size: int = 3 * (1 << 20) + 17) -> tuple[str, bytes]:
    data = bytes(range(256)) * (size // 256) + b"x" * (size % 256)
    path = tmp_path / "model.gguf"
    path.write_bytes(data)
    return path.as_uri(), data


def test_fetch_writes_the_whole_file_and_reports_progress(tmp_path: Path) -> None:
    url, data = source(tmp_path)
    seen: list[int] = []
    dest = fetch(
        url, tmp_path / "out" / "m.gguf", sha256=hashlib.sha256(data).hexdigest(), progress=lambda d, t: seen.append(d)
    )
    assert dest.read_bytes() == data
    assert seen[-1] == len(data)
    assert len(seen) == 4  # 1 MiB chunks
    assert not (tmp_path / "out" / "m.gguf.part").exists()


def test_a_hash_mismatch_leaves_nothing_behind(tmp_path: Path) -> None:
    url, _ = source(tmp_path)
    with pytest.raises(DownloadError, match="does not match its SHA-256"):
        fetch(url, tmp_path / "out" / "m.gguf", sha256="0" * 64)
    assert list((tmp_path / "out").iterdir()) == []


def test_an_unreachable_url_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(DownloadError, match="could not fetch"):
        fetch((tmp_path / "missing.gguf").as_uri(), tmp_path / "m.gguf")


def test_resolve_finds_a_fetched_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("REACT_TEXT_MODELS", str(tmp_path))
    assert resolve("qwen2.5-0.5b") is None
    (tmp_path / "qwen2.5-0.5b-instruct-q4_k_m.gguf").write_bytes(b"GGUF")
    assert resolve("qwen2.5-0.5b") == tmp_path / "qwen2.5-0.5b-instruct-q4_k_m.gguf"
