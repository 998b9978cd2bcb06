"""Preview environments on a real Hive Metastore, read back by Spark (issue 31's acceptance).

Here rather than in tests/preview/: Spark's Hive session is one per process and bound to
this directory's metastore fixture."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.helpers.cli import run_cli
from tests.helpers.preview import chain_repo, change

pytestmark = pytest.mark.slow


def _metastore(client: Any, skip: str) -> dict[str, Any]:
    """Every database and table of the metastore, but the preview database `skip`."""
    out: dict[str, Any] = {}
    for db in client.get_all_databases():
        if db == skip:
            continue
        out[db] = dict(client.get_database(db).parameters or {})
        for name in client.get_all_tables(db):
            t = client.get_table(db, name)
            out[f"{db}.{name}"] = (t.tableType, t.viewOriginalText, t.viewExpandedText, sorted(t.parameters.items()))
    return out


def test_preview_on_hms_reads_the_branch_in_spark_and_leaves_live_alone(
        tmp_path: Path, metastore: Any, spark: Any, hms_client: Any, database: str) -> None:
    spark.sql(f"CREATE TABLE {database}.orders (id BIGINT, amount BIGINT) USING parquet")
    spark.sql(f"INSERT INTO {database}.orders VALUES (1, 50), (2, 150), (3, 500)")
    config = {"version": 1, "project": "p", "state": f"sqlite:///{tmp_path}/state.db",
              "catalogs": {"hive": {"type": "hms", "uri": metastore.uri, "engine_format": "spark"}}}
    repo = chain_repo(tmp_path / "repo", config, "hive", database, "orders")  # `orders` unqualified
    assert run_cli(repo, "apply", "--auto-approve").code == 0
    assert [tuple(r) for r in spark.sql(f"SELECT n, total FROM {database}.c").collect()] == [(3, 1400)]
    preview = f"{database}__pr1"
    before = _metastore(hms_client, preview)

    change(repo, "hive", database, "orders")  # a: amount > 100
    res = run_cli(repo, "preview", "up", "--env", "pr1", "--base", "main", "-f", "markdown")
    assert res.code == 0, res.text
    for name in "abc":
        assert f"| `hive.{database}.{name}` | `hive.{preview}.{name}` |" in res.out
    assert f"{preview}.d" not in res.out
    # Spark reads c from the preview: rows of the branch's a, through the copies of b and c
    assert [tuple(r) for r in spark.sql(f"SELECT n, total FROM {preview}.c").collect()] == [(2, 1300)]
    assert [tuple(r) for r in spark.sql(f"SELECT n, total FROM {database}.c").collect()] == [(3, 1400)]
    params = hms_client.get_table(preview, "a").parameters
    assert params["viewsync.preview"] == "pr1" and params["viewsync.managed-by"] == "p"
    assert "viewsync.preview.expires" in params and "viewsync.preview.commit" in params
    assert hms_client.get_database(preview).parameters.get("viewsync.preview") == "pr1"
    assert _metastore(hms_client, preview) == before  # nothing outside the preview database changed

    again = run_cli(repo, "preview", "up", "--env", "pr1", "--base", "main")
    assert again.code == 0 and "nothing to change" in again.out

    down = run_cli(repo, "preview", "down", "--env", "pr1")
    assert down.code == 0, down.text
    assert preview not in hms_client.get_all_databases()
    assert _metastore(hms_client, "") == before  # no trace


@pytest.mark.parametrize("fmt", ["trino", "hive", "flink"])
def test_preview_in_every_engine_format(tmp_path: Path, metastore: Any, hms_client: Any, database: str,
                                        fmt: str) -> None:
    from reconciler.adapters.metastore.hms import HiveMetastoreAdapter

    config = {"version": 1, "project": "p", "state": f"sqlite:///{tmp_path}/state.db",
              "catalogs": {"hive": {"type": "hms", "uri": metastore.uri, "engine_format": fmt,
                                    "trino_owner": "analyst"}}}
    repo = chain_repo(tmp_path / "repo", config, "hive", database, "orders", dialects=(fmt,))
    applied = run_cli(repo, "apply", "--auto-approve")
    assert applied.code == 0, applied.text
    preview = f"{database}__pr3"
    before = _metastore(hms_client, preview)
    change(repo, "hive", database, "orders", dialects=(fmt,))
    res = run_cli(repo, "preview", "up", "--env", "pr3", "--base", "main")
    assert res.code == 0, res.text
    adapter = HiveMetastoreAdapter("hive", {"uri": metastore.uri, "engine_format": fmt})
    try:
        views = adapter.fetch(preview).views
    finally:
        adapter.close()
    assert sorted(views) == ["a", "b", "c"] and all(v.format == fmt and v.marks["viewsync.preview"] == "pr3"
                                                   for v in views.values())
    assert f"FROM {database}.orders" in (views["a"].spec.sql_for(fmt) or "")
    assert f"FROM {preview}.a" in (views["b"].spec.sql_for(fmt) or "")
    assert _metastore(hms_client, preview) == before
    assert run_cli(repo, "preview", "up", "--env", "pr3", "--base", "main").out.endswith("nothing to change.\n")
    assert run_cli(repo, "preview", "down", "--env", "pr3").code == 0
    assert _metastore(hms_client, "") == before


KILL_AFTER_CREATE = """
import os, signal, sys
from reconciler.adapters.metastore import hms
created = hms.HiveMetastoreAdapter.create_schema
def create_then_die(self, schema, properties):
    created(self, schema, properties)
    os.kill(os.getpid(), signal.SIGKILL)  # killed between creating the namespace and anything after
hms.HiveMetastoreAdapter.create_schema = create_then_die
sys.argv = ["viewsync", "--repo", sys.argv[1], "preview", "up", "--env", "pr9", "--base", "main"]
from reconciler.cli import main
main()
"""


def test_a_preview_killed_right_after_creating_its_namespace_is_removed_by_down(
        tmp_path: Path, metastore: Any, hms_client: Any, database: str) -> None:
    """`up` records the namespace it is about to create before creating it (issue 38, item 6), so a
    kill right after the create leaves a record, and `down` removes the namespace."""
    import signal
    import subprocess
    import sys

    config = {"version": 1, "project": "p", "state": f"sqlite:///{tmp_path}/state.db",
              "catalogs": {"hive": {"type": "hms", "uri": metastore.uri, "engine_format": "spark"}}}
    repo = chain_repo(tmp_path / "repo", config, "hive", database, "orders")
    assert run_cli(repo, "apply", "--auto-approve").code == 0
    change(repo, "hive", database, "orders")
    preview = f"{database}__pr9"
    killed = subprocess.run([sys.executable, "-c", KILL_AFTER_CREATE, str(repo)], capture_output=True, text=True,
                            timeout=300)
    assert killed.returncode == -signal.SIGKILL, killed.stdout + killed.stderr
    assert preview in hms_client.get_all_databases()  # created, then the process died

    listed = run_cli(repo, "preview", "list")
    assert "pr9" in listed.out, listed.text
    down = run_cli(repo, "preview", "down", "--env", "pr9")
    assert down.code == 0, down.text
    assert preview not in hms_client.get_all_databases()
