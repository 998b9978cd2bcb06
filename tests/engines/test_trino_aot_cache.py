"""The test Trino's ahead-of-time cache (tests/helpers/trino.py, JDK 25+): the speed of view tests
on Trino (benchmarks/view_tests.py --engine trino) counts on it, and a bad cache must never stop a
server: a first start records one, a later start uses it, and one the JVM refuses is replaced."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from tests.helpers import trino as trino_server

pytestmark = pytest.mark.slow  # starts a JVM, Spark or a slow backend (pytest -m 'not slow' skips it)


def _java25() -> str:
    exe = trino_server.java()
    if exe is None or (trino_server._release(exe) or 0) < 25:
        pytest.skip("the ahead-of-time cache needs JDK 25 or later")
    return exe


def _start(work: Path, cache: Path) -> contextlib.AbstractContextManager[trino_server.Trino]:
    work.mkdir()
    return contextlib.contextmanager(trino_server.start)(work, None, None, cache)


def test_a_first_start_records_the_cache_a_later_one_uses_it_and_a_bad_one_is_replaced(tmp_path: Path) -> None:
    _java25()
    cache = tmp_path / "trino.aot"

    with _start(tmp_path / "record", cache) as server:
        assert server.rows("SELECT 1 + 1") == [[2]]
        assert not cache.exists(), "the cache is published only once the JVM has written it"
    assert cache.is_file() and cache.stat().st_size > 10_000_000
    assert list(tmp_path.glob("trino.aot*")) == [cache], "the recording file is renamed, not left beside it"

    with _start(tmp_path / "use", cache) as server:
        assert server.rows("SELECT 1 + 1") == [[2]]
        assert not trino_server._cache_refused(tmp_path / "use" / "trino.log")
    assert cache.is_file()

    cache.write_bytes(b"not a cache" * 1000)  # e.g. left by another JDK, or cut short
    with _start(tmp_path / "refused", cache) as server:
        assert server.rows("SELECT 1 + 1") == [[2]], "a refused cache does not stop the server"
        assert trino_server._cache_refused(tmp_path / "refused" / "trino.log")
        assert not cache.exists(), "a refused cache is removed, so the next start records a good one"
