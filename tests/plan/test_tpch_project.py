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


def test_no_test_declares_a_tolerance_and_no_trino_sql_divides_decimals_as_double() -> None:
    """Spark's decimal ratios and averages are generated with Spark's types (plan/spark_types.py), so
    every TPC-H test compares exactly: no tolerance, and no ratio written through DOUBLE."""
    views = yamlsrc.load((tpch.PROJECT / tpch.VIEW_FILE).read_text(encoding="utf-8"))["views"]
    assert tpch.TOLERANCE == {}
    assert [v["name"] for v in views if v["tests"][0]["expect"].get("tolerance") is not None] == []
    for view in views:
        trino = view["representations"][1]["sql"]
        assert "AS DOUBLE) /" not in trino, view["name"]
    by_name = {v["name"]: v["representations"][1]["sql"] for v in views}
    assert "CAST(AVG(CAST(l_quantity AS DECIMAL(19, 6))) AS DECIMAL(19, 6)) AS avg_qty" in by_name["q1"]
    assert 'SUM(l_quantity) AS "sum(l_quantity)"' in by_name["q18"]
