"""plan --spark on a real Iceberg REST catalog: the source table's columns come from load_table, a
view declared without columns is planned with Spark's, applied, and read back with no diff."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from pyiceberg.schema import Schema
from pyiceberg.types import DecimalType, LongType, NestedField, StringType

from tests.helpers.cli import run_cli
from tests.helpers.iceberg import IcebergServer

pytestmark = pytest.mark.slow  # starts a JVM, Spark or a slow backend (pytest -m 'not slow' skips it)


def test_inferred_columns_apply_and_read_back(tmp_path: Path, iceberg_server: IcebergServer, namespace: str,
                                              spark_verifier: None) -> None:
    iceberg_server.client_catalog().create_table((namespace, "orders"), Schema(
        NestedField(1, "id", LongType()), NestedField(2, "amount", DecimalType(18, 2)),
        NestedField(3, "name", StringType())))
    repo = tmp_path / "repo"
    (repo / "views" / "lake").mkdir(parents=True)
    (repo / "viewsync.yaml").write_text(yaml.safe_dump({
        "version": 1, "project": "t", "state": f"sqlite:///{tmp_path}/state.db",
        "catalogs": {"lake": {"type": "iceberg-rest", "uri": iceberg_server.uri}}}))
    (repo / "views" / "lake" / f"{namespace}.yaml").write_text(yaml.safe_dump({
        "catalog": "lake", "schema": namespace, "views": [{
            "name": "totals", "representations": [
                {"dialect": "spark", "sql": "SELECT id, SUM(amount) AS total, max(name) AS last_name "
                                            "FROM orders GROUP BY id"}]}]}))

    plain = run_cli(repo, "plan")
    assert plain.code == 1 and "columns_required" in plain.out, plain.text
    plan = run_cli(repo, "plan", "--spark", "--format", "json")
    assert plan.code == 0, plan.text
    desired = json.loads(plan.out)["actions"][0]["desired"]
    assert [(c["name"], c["type"]) for c in desired["columns"]] == [
        ("id", "bigint"), ("total", "decimal(28,2)"), ("last_name", "string")]
    applied = run_cli(repo, "apply", "--spark", "--auto-approve")
    assert applied.code == 0, applied.text
    again = run_cli(repo, "plan", "--spark", "--detailed-exitcode")
    assert again.code == 0 and "No changes" in again.out, again.text
