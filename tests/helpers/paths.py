"""Where things are: the repository root and its tests/ directory, and the tests' own cache."""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"


def tests_cache_dir() -> Path:
    """What the tests build once and keep outside the clone (a Spark 3.5 venv, an unpacked Trino):
    VIEWSYNC_TEST_CACHE, else $XDG_CACHE_HOME/viewsync-tests (default ~/.cache/viewsync-tests)."""
    if os.environ.get("VIEWSYNC_TEST_CACHE"):
        return Path(os.environ["VIEWSYNC_TEST_CACHE"])
    return Path(os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")) / "viewsync-tests"
