"""An Iceberg REST catalog read by the review's Spark: Spark 3.5 with Iceberg's runtime
(`spark.live.python` names its venv, `spark.live.catalogs.<name>.jars` the runtime jars), as
the Iceberg tests build it; and the one line said when the runtime is not configured."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.adapters.iceberg.conftest import iceberg_server, namespace
from tests.adapters.iceberg.spark35 import BuildError, Spark35, build
from tests.helpers.cli import run_cli
from tests.helpers.iceberg import IcebergServer
from tests.helpers.repos import write_repo
from tests.helpers.servers import backend_unavailable

pytestmark = pytest.mark.slow  # builds and starts Spark 3.5 twice
__all__ = ["iceberg_server", "namespace"]  # the fixtures, imported so pytest finds them
CATALOG = "lake"
COLUMNS = [{"name": "id", "type": "bigint"}, {"name": "name", "type": "string"}]


@pytest.fixture(scope="module")
def spark35(iceberg_server: IcebergServer, tmp_path_factory: pytest.TempPathFactory
            ) -> Iterator[tuple[Spark35, Path, list[Path]]]:
    try:
        python, jars = build()
        session = Spark35(python, jars, iceberg_server.uri, CATALOG, tmp_path_factory.mktemp("spark35"))
    except BuildError as exc:
        backend_unavailable(f"Spark 3.5 + Iceberg SparkCatalog: {exc}")
    try:
        yield session, python, jars
    finally:
        session.close()


def repo_for(tmp_path: Path, server: IcebergServer, ns: str, views: list[dict[str, Any]],
             live: dict[str, Any]) -> Path:
    return write_repo(tmp_path / "repo", {
        "version": 1, "project": "review", "state": f"sqlite:///{tmp_path}/state.db",
        "catalogs": {CATALOG: {"type": "iceberg-rest", "uri": server.uri}}, "spark": {"live": live}},
        {f"views/{CATALOG}/{ns}.yaml": {"catalog": CATALOG, "schema": ns, "views": views}})


def people_view(sql: str, **extra: Any) -> dict[str, Any]:
    return {"name": "people_v", "columns": COLUMNS, "representations": [{"dialect": "spark", "sql": sql}], **extra}


def test_iceberg_tables_are_checked_and_diffed_by_spark_with_the_iceberg_runtime(
        tmp_path: Path, iceberg_server: IcebergServer, namespace: str,
        spark35: tuple[Spark35, Path, list[Path]]) -> None:
    session, python, jars = spark35
    session.rows(f"CREATE TABLE {CATALOG}.{namespace}.people (id BIGINT, name STRING) USING iceberg")
    session.rows(f"INSERT INTO {CATALOG}.{namespace}.people VALUES (1, 'ann'), (2, 'bob'), (2, 'bo'), (3, NULL)")
    live = {"master": "local[1]", "python": str(python), "catalogs": {CATALOG: {"jars": [str(j) for j in jars]}}}
    checks = [{"not_null": ["name"]}, {"unique": ["id"]}, {"row_count": {"min": 1}}]
    repo = repo_for(tmp_path, iceberg_server, namespace, [people_view("SELECT id, name FROM people",
                                                                      checks=checks)], live)

    res = run_cli(repo, "check", "--format", "json")
    assert res.code == 1, res.text
    [v] = json.loads(res.out)["views"]
    assert v["status"] == "ok" and v["rows"] == 4, v
    assert [(c["kind"], c["status"], c["failing"]) for c in v["checks"]] == [
        ("not_null", "fail", 1), ("unique", "fail", 2), ("row_count", "pass", 0)]
    assert json.loads(res.out)["spark"]["version"].startswith("3.5")

    assert run_cli(repo, "apply", "--auto-approve").code == 0
    repo_for(tmp_path, iceberg_server, namespace, [people_view("SELECT id, name FROM people WHERE name IS NOT NULL",
                                                               checks=checks)], live)
    diff = run_cli(repo, "diff", "--format", "json")
    assert diff.code == 0, diff.text
    [d] = json.loads(diff.out)["views"]
    assert (d["rows_before"], d["rows_after"], d["counts"]["removed"]) == (4, 3, 1)
    assert d["samples"][0]["before"] == {"id": 3, "name": None}


def test_without_the_iceberg_runtime_one_line_says_what_to_add(tmp_path: Path, iceberg_server: IcebergServer,
                                                                namespace: str) -> None:
    repo = repo_for(tmp_path, iceberg_server, namespace,
                    [people_view("SELECT id, name FROM people", checks=[{"not_null": ["id"]}])], {"master": "local[1]"})
    res = run_cli(repo, "check")
    assert res.code == 1, res.text  # nothing could run: skipped, said once; a gate that did not check fails
    line = next(ln for ln in res.out.splitlines() if "people_v" in ln)
    assert "SKIPPED" in line and "Iceberg's Spark runtime is not configured" in line
    assert "spark.live.catalogs.lake.jars" in line and "iceberg-spark-runtime-3.5_2.12" in line
