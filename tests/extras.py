"""Importing what an optional extra brings: skipped, saying which extra, where it is absent, unless
REACT_TEXT_TORCH_REQUIRED is set (CI sets it and installs the extras), when its absence fails."""

from __future__ import annotations

import importlib
import os
from types import ModuleType

import pytest


def extra(module: str, install: str) -> ModuleType:
    """`module`, or a skip naming `install` (a failure where CI requires it)."""
    if os.environ.get("REACT_TEXT_TORCH_REQUIRED"):
        try:
            return importlib.import_module(module)
        except ImportError as exc:
            pytest.fail(f"{module} is required here (REACT_TEXT_TORCH_REQUIRED): pip install {install!r}: {exc}")
    return pytest.importorskip(module, reason=f"needs pip install {install!r}")
