"""viewsync reads the views a real Trino writes, in both catalogs (Hive Metastore and Iceberg REST):
`SECURITY DEFINER` and `INVOKER`, `COMMENT`, `ALTER VIEW ... SET AUTHORIZATION` and `CREATE OR
REPLACE`. `import` declares each exactly (the plan after it adopts and changes nothing), viewsync
then adopts and updates them and Trino still reads them, and a replace done in Trino is drift that an
apply writes back (on the metastore Trino's replace drops viewsync's marker: the state tells it is ours)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.helpers.cli import run_cli
from tests.helpers.iceberg import IcebergServer
from tests.helpers.repos import write_repo
from tests.helpers.trino import Trino

pytestmark = pytest.mark.slow  # a metastore, an Iceberg REST server and Trino


def trino_writes_views(trino: Trino, catalog: str, schema: str) -> None:
    q = f"{catalog}.{schema}"
    table_format = "WITH (format = 'PARQUET')" if catalog == "hive" else ""
    trino.rows(f"CREATE TABLE {q}.orders (id BIGINT, amount DECIMAL(18,2), status VARCHAR) {table_format}")
    trino.rows(f"INSERT INTO {q}.orders VALUES (1, 10.00, 'paid'), (2, 20.50, 'void'), (3, 7.25, 'paid')")
    trino.rows(f"CREATE VIEW {q}.paid_v COMMENT 'paid orders' SECURITY DEFINER AS "
               f"SELECT id, amount FROM {q}.orders WHERE status = 'paid'")
    trino.rows(f"CREATE VIEW {q}.all_v SECURITY INVOKER AS SELECT id, status FROM {q}.orders")
    if catalog == "hive":  # Trino: "setViewPrincipal is not supported for Iceberg REST catalog"
        trino.rows(f"ALTER VIEW {q}.paid_v SET AUTHORIZATION alice")
    trino.rows(f"CREATE VIEW {q}.total_v AS SELECT 1 AS x")
    trino.rows(f"CREATE OR REPLACE VIEW {q}.total_v AS SELECT sum(amount) AS total FROM {q}.orders")


def config(catalog: str, metastore_uri: str, iceberg_uri: str, tmp_path: Path) -> dict[str, Any]:
    kinds = {"hive": {"type": "hms", "uri": metastore_uri, "engine_format": "trino", "trino_catalog": "hive"},
             "lake": {"type": "iceberg-rest", "uri": iceberg_uri}}
    return {"version": 1, "project": "engines", "state": f"sqlite:///{tmp_path}/state.db",
            "catalogs": {catalog: kinds[catalog]}}


@pytest.fixture(params=["hive", "lake"])
def where(request: pytest.FixtureRequest, trino: Trino, database: str, namespace: str) -> tuple[str, str]:
    """(Trino's catalog, the schema) where Trino writes its views; viewsync names the catalog alike."""
    catalog = str(request.param)
    schema = database if catalog == "hive" else namespace  # lake: Trino's name of the Iceberg catalog
    trino_writes_views(trino, catalog, schema)
    return catalog, schema


def test_viewsync_imports_adopts_and_updates_what_trino_writes(
        tmp_path: Path, metastore: Any, hms_client: Any, iceberg_server: IcebergServer, trino: Trino,
        where: tuple[str, str]) -> None:
    catalog, schema = where
    repo = write_repo(tmp_path / "repo", config(catalog, metastore.uri, iceberg_server.uri, tmp_path), {})
    res = run_cli(repo, "import", "--catalog", catalog, "--schema", schema)
    assert res.code == 0 and "Imported 3 view(s)" in res.out, res.text
    declared = yaml.safe_load((repo / "views" / catalog / f"{schema}.yaml").read_text())
    by_name = {v["name"]: v for v in declared["views"]}
    assert by_name["paid_v"]["comment"] == "paid orders"
    assert by_name["paid_v"].get("security", "definer") == "definer", by_name  # definer: the default
    assert by_name["all_v"].get("security") == "invoker", by_name
    if catalog == "hive":
        assert by_name["paid_v"].get("owner") == "alice", by_name
    assert "sum(amount)" in json.dumps(by_name["total_v"]["representations"])  # the replaced definition

    plan = json.loads(run_cli(repo, "plan", "--adopt", "--format", "json").out)
    assert plan["errors"] == [], plan["errors"]
    assert sorted((a["action"], a["view"]["name"]) for a in plan["actions"]) == [
        ("adopt", "all_v"), ("adopt", "paid_v"), ("adopt", "total_v")]
    assert all(a["changes"] == [] for a in plan["actions"]), plan["actions"]
    assert run_cli(repo, "apply", "--auto-approve", "--adopt").code == 0
    assert run_cli(repo, "plan", "--detailed-exitcode").code == 0
    q = f"{catalog}.{schema}"
    assert trino.rows(f"SELECT id FROM {q}.paid_v ORDER BY id") == [[1], [3]]  # Trino reads the adopted view

    views = repo / "views" / catalog / f"{schema}.yaml"
    views.write_text(views.read_text().replace("status = 'paid'", "status <> 'paid'"))
    updated = run_cli(repo, "apply", "--auto-approve", "--allow-dirty")
    assert updated.code == 0 and "1 applied" in updated.out, updated.text
    assert trino.rows(f"SELECT id FROM {q}.paid_v ORDER BY id") == [[2]]  # Trino reads viewsync's update
    assert "SECURITY DEFINER" in trino.rows(f"SHOW CREATE VIEW {q}.paid_v")[0][0]

    trino.rows(f"CREATE OR REPLACE VIEW {q}.all_v SECURITY INVOKER AS SELECT id, 'x' AS status FROM {q}.orders")
    # On the metastore Trino's replace writes a new table without viewsync's ownership marker; the
    # state shows viewsync applied the view, so it is still viewsync's: drift, not an unmanaged view.
    mine = f"{catalog}.{schema}.*"  # other tests' views share the catalogs
    drift = run_cli(repo, "drift", "--select", mine, "--format", "json")
    assert drift.code == 2, drift.text
    assert [(i["kind"], i["view"]["name"]) for i in json.loads(drift.out)["items"]] == [
        ("changed_out_of_band", "all_v")], drift.out
    back = run_cli(repo, "apply", "--auto-approve", "--allow-dirty")  # no --adopt
    assert back.code == 0 and "1 applied" in back.out, back.text
    assert trino.rows(f"SELECT DISTINCT status FROM {q}.all_v ORDER BY status") == [["paid"], ["void"]]
    assert run_cli(repo, "plan", "--detailed-exitcode").code == 0
    assert run_cli(repo, "drift", "--select", mine).code == 0
    if catalog == "hive":  # the marker is back in the table's parameters
        assert hms_client.get_table(schema, "all_v").parameters.get("viewsync.managed-by") == "engines"
