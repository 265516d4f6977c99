"""Fetch a stronger GGUF model where a network exists: `react-text fetch qwen2.5-0.5b`.

Nothing in react-text downloads at run time; this is the one command that does, when asked.
Files go to ~/.cache/react-text/models (or $REACT_TEXT_MODELS), are written to a `.part` file
and renamed only when complete (and, when a SHA-256 is known, only when it matches), so an
interrupted download never leaves a file that looks whole.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import urllib.request
from collections.abc import Callable
from pathlib import Path

from react_text.core.errors import ConfigError

__all__ = [
    "MODELS",
    "DownloadError",
    "fetch",
    "fetch_model",
    "resolve",
]

# Official GGUF builds from the model authors' own repositories.
MODELS = {
    "qwen2.5-0.5b": "https://huggingface.co/Qwen/Qwen2.5-0.5B-Instruct-GGUF/resolve/main/qwen2.5-0.5b-instruct-q4_k_m.gguf",
    "qwen2.5-1.5b": "https://huggingface.co/Qwen/Qwen2.5-1.5B-Instruct-GGUF/resolve/main/qwen2.5-1.5b-instruct-q4_k_m.gguf",
}
_CHUNK = 1 << 20


DownloadError = ConfigError  # a model file could not be fetched, or did not match its hash


def _models_dir() -> Path:
    return Path(os.environ.get("REACT_TEXT_MODELS", Path.home() / ".cache" / "react-text" / "models"))


def resolve(name_or_path: str) -> Path | None:
    """The local file for a known model name that was fetched before, else None."""
    if name_or_path in MODELS:
        path = _models_dir() / MODELS[name_or_path].rsplit("/", 1)[1]
        return path if path.is_file() else None
    return None


def fetch(
    url: str,
    dest: Path,
    *,
    sha256: str | None = None,
    progress: Callable[[int, int | None], None] | None = None,
    timeout: float = 60.0,
) -> Path:
    """Download `url` to `dest` (atomically); returns `dest`. Any urllib URL works, file:// too."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_name(dest.name + ".part")
    digest = hashlib.sha256()
    done = 0
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response, part.open("wb") as out:
            length = response.headers.get("content-length")
            total = int(length) if length else None
            while chunk := response.read(_CHUNK):
                out.write(chunk)
                digest.update(chunk)
                done += len(chunk)
                if progress:
                    progress(done, total)
    except OSError as exc:
        part.unlink(missing_ok=True)
        raise DownloadError(f"could not fetch {url}: {exc}") from exc
    if sha256 and digest.hexdigest() != sha256:
        part.unlink(missing_ok=True)
        raise DownloadError(f"{url} does not match its SHA-256 ({digest.hexdigest()} != {sha256})")
    shutil.move(part, dest)
    return dest


def fetch_model(name: str, progress: Callable[[int, int | None], None] | None = None) -> Path:
    if name not in MODELS:
        raise DownloadError(f"unknown model {name!r}; known: {', '.join(MODELS)}")
    url = MODELS[name]
    return fetch(url, _models_dir() / url.rsplit("/", 1)[1], progress=progress)
