"""The Spark child's garbage collector (issue 44, item 2): the parallel collector by default, whose
two threads halve the pauses of a view test run; a collector the user names in
`spark.jvm_options` replaces it (a JVM given two collectors refuses to start)."""

from __future__ import annotations

from pathlib import Path

import pytest

from reconciler.source.spark_settings import SparkSettings
from reconciler.verify import session


def test_the_parallel_collector_unless_the_user_names_one() -> None:
    assert session.collector(()) == ["-XX:+UseParallelGC"]
    assert session.collector(("-Xss4m", "-XX:+UseStringDeduplication")) == ["-XX:+UseParallelGC"]
    assert session.collector(("-XX:+UseSerialGC",)) == []
    assert session.collector(("-Xss4m", "-XX:+UseG1GC")) == []


def _collectors(pid: int) -> list[str]:
    args = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
    return [a for a in args if a.startswith("-XX:+Use") and a.endswith("GC")]


@pytest.mark.slow
@pytest.mark.parametrize(("options", "expected"), [((), ["-XX:+UseParallelGC"]),
                                                   (("-XX:+UseSerialGC",), ["-XX:+UseSerialGC"])],
                         ids=["default", "the-user-s-collector"])
def test_the_child_jvm_runs_one_collector_and_answers(options: tuple[str, ...], expected: list[str]) -> None:
    child = session.start(SparkSettings(jvm_options=options, class_data_sharing=False))
    try:
        assert child.jvm_pid is not None
        assert _collectors(child.jvm_pid) == expected
        got = child.call({"op": "tests", "queries": [{"id": "q", "sql": "SELECT 6 * 7 AS x"}]})
        assert got["answers"][0]["rows"] == [[42]]
    finally:
        child.close()
