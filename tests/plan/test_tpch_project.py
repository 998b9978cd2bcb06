"""The TPC-H views project (tests/data/tpch/project/, issue 41) is what tests/helpers/tpch.py
writes: Apache Spark's SQL unchanged, the trino SQL as `viewsync generate` writes it today, the
fixture tables and the expected rows of tests/data/tpch/expected.yaml. A change to any of them,
or to generation, shows here first; every query's test expects rows."""

from __future__ import annotations

from pathlib import Path

from reconciler.source import yamlsrc
from tests.helpers import tpch


def _files(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text(encoding="utf-8") for p in sorted(root.rglob("*")) if p.is_file()}


def test_the_checked_in_project_is_what_the_builder_writes(tmp_path: Path) -> None:
    tpch.write(tmp_path / "project")
    assert _files(tmp_path / "project") == _files(tpch.PROJECT)


def test_every_query_is_a_view_with_generated_trino_sql_and_a_test_expecting_rows() -> None:
    views = yamlsrc.load((tpch.PROJECT / tpch.VIEW_FILE).read_text(encoding="utf-8"))["views"]
    assert [v["name"] for v in views] == tpch.QUERIES
    for view in views:
        spark, trino = view["representations"]
        assert spark["sql"].strip("\n") == tpch.query(view["name"]).strip("\n")  # verbatim, but blank edges
        assert trino["dialect"] == "trino" and trino["generated"]["from"] == "spark"
        [test] = view["tests"]
        assert test["expect"]["rows"], view["name"]
        assert sorted(test["given"]) == sorted(tpch.reads(view["name"]))


def test_only_the_ratios_trino_computes_as_double_have_a_tolerance() -> None:
    """A tolerance is declared only where the generated trino SQL divides as DOUBLE while Spark's
    result is a DECIMAL (the reason is in tpch.TOLERANCE and the data README), never elsewhere."""
    views = yamlsrc.load((tpch.PROJECT / tpch.VIEW_FILE).read_text(encoding="utf-8"))["views"]
    tolerant = {v["name"] for v in views if v["tests"][0]["expect"].get("tolerance") is not None}
    assert tolerant == set(tpch.TOLERANCE)
    for view in views:
        if view["name"] in tolerant:
            assert "AS DOUBLE) /" in view["representations"][1]["sql"], view["name"]
