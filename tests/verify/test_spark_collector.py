"""The Spark JVMs' garbage collector (issue 44, item 2): the scratch child (verification, view
tests) runs the parallel collector, whose two threads halve the pauses of a view test run; the
review session keeps the serial one. A collector the user names in `spark.jvm_options` (or
`spark.live.jvm_options`) replaces ours: a JVM given two collectors refuses to start."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reconciler.datareview import catalogs
from reconciler.source.config import load_config
from reconciler.source.spark_settings import SparkSettings
from reconciler.spark.conf import collector
from reconciler.verify import session


def test_our_collector_unless_the_user_names_one() -> None:
    assert collector((), "-XX:+UseParallelGC") == ["-XX:+UseParallelGC"]
    assert collector(("-Xss4m", "-XX:+UseStringDeduplication"), "-XX:+UseParallelGC") == ["-XX:+UseParallelGC"]
    assert collector(("-XX:+UseSerialGC",), "-XX:+UseParallelGC") == []
    assert collector(["-Xss4m", "-XX:+UseG1GC"], "-XX:+UseSerialGC") == []


@pytest.mark.parametrize(("live", "expected"), [({}, ["-XX:+UseSerialGC"]),
                                                ({"jvm_options": ["-XX:+UseParallelGC", "-Xss4m"]},
                                                 ["-XX:+UseParallelGC"])], ids=["default", "the-user-s-collector"])
def test_the_review_session_names_one_collector(tmp_path: Path, live: dict[str, list[str]],
                                                 expected: list[str]) -> None:
    (tmp_path / "viewsync.yaml").write_text(
        "version: 1\nproject: p\ncatalogs: {h: {type: hms, uri: 'thrift://meta:9083'}}\n"
        f"spark: {{live: {json.dumps(live)}}}\n")
    config = load_config(tmp_path)
    conf = catalogs.session_conf(config, catalogs.readers(config), tmp_path)
    assert _collectors(conf["spark.driver.extraJavaOptions"].split()) == expected


def _collectors(jvm_args: list[str]) -> list[str]:
    return [a for a in jvm_args if a.startswith("-XX:+Use") and a.endswith("GC")]


@pytest.mark.slow
@pytest.mark.parametrize(("options", "expected"), [((), ["-XX:+UseParallelGC"]),
                                                   (("-XX:+UseSerialGC",), ["-XX:+UseSerialGC"])],
                         ids=["default", "the-user-s-collector"])
def test_the_child_jvm_runs_one_collector_and_answers(options: tuple[str, ...], expected: list[str]) -> None:
    child = session.start(SparkSettings(jvm_options=options, class_data_sharing=False))
    try:
        assert child.jvm_pid is not None
        assert _collectors(Path(f"/proc/{child.jvm_pid}/cmdline").read_bytes().decode().split("\0")) == expected
        got = child.call({"op": "tests", "queries": [{"id": "q", "sql": "SELECT 6 * 7 AS x"}]})
        assert got["answers"][0]["rows"] == [[42]]
    finally:
        child.close()
