"""plan, apply and drift start reading the catalogs before they load the declarations
(Workspace.prefetch). The read is the one the plan would make, made once; a guess that
turns out wrong is read again, never used; and a command that stops early does not wait
for a catalog that hangs."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from reconciler.plan.planner import PlanOptions
from reconciler.workspace import Workspace
from tests.helpers.cli import run_cli
from tests.helpers.hms import _repo, _view
from tests.helpers.misbehaving import misbehaving

pytestmark = pytest.mark.slow  # starts a JVM, Spark or a slow backend (pytest -m 'not slow' skips it)

PROJECT = "speed"  # the project _repo writes


def _plan(repo: Path, prefetch: bool) -> tuple[Any, int]:
    """The plan and the metastore calls it took."""
    ws = Workspace.open(repo)
    try:
        if prefetch:
            ws.prefetch()
        plan, _ = ws.plan(PlanOptions(project=PROJECT), ws.declarations())
        return plan, ws.catalog_calls()
    finally:
        ws.close()


def _foreign_view(hms_client: Any, db: str, name: str) -> None:
    from hmsclient.genthrift.hive_metastore.ttypes import FieldSchema, SerDeInfo, StorageDescriptor, Table

    hms_client.create_table(Table(  # a view another tool wrote
        tableName=name, dbName=db, tableType="VIRTUAL_VIEW", viewOriginalText="SELECT 3 AS id",
        viewExpandedText="SELECT 3 AS id", partitionKeys=[], parameters={},
        sd=StorageDescriptor(cols=[FieldSchema("id", "bigint")], serdeInfo=SerDeInfo())))


def test_a_prefetched_plan_is_the_same_plan_from_the_same_reads(tmp_path: Path, metastore: Any, database: str,
                                                                 hms_client: Any) -> None:
    _foreign_view(hms_client, database, "theirs")
    repo = _repo(tmp_path, metastore.uri, {database: [_view("a", "SELECT 1 AS id"), _view("b", "SELECT 1 AS id")]})
    assert run_cli(repo, "apply", "--auto-approve", "--allow-dirty").code == 0
    (repo / "views" / "hive" / f"{database}.yaml").write_text(yaml.safe_dump(
        {"catalog": "hive", "schema": database, "views": [_view("a", "SELECT 1 AS id"), _view("c", "SELECT 1 AS id")]}))
    plain, plain_calls = _plan(repo, prefetch=False)
    interval = sys.getswitchinterval()
    ahead, ahead_calls = _plan(repo, prefetch=True)
    assert sys.getswitchinterval() == interval  # shortened while the prefetch runs, then restored
    assert ahead.to_json() == plain.to_json()
    assert [(a.action, a.view.name) for a in ahead.actions] == [("create", "c")]
    assert [str(u.view) for u in ahead.unmanaged] == [f"hive.{database}.theirs"]
    assert ahead_calls == plain_calls  # read once: the plan took the prefetched snapshots


def test_a_prefetched_plan_opens_one_connection_per_read_in_flight(tmp_path: Path, metastore: Any, database: str,
                                                                    hms_client: Any) -> None:
    """The prefetch lists on one thread and reads on others; they share the adapter's
    connections (each costs the metastore ~14 ms of CPU to set up) instead of each thread
    opening its own, as they did (8 for a plan of one database)."""
    from reconciler.adapters.metastore.hms import CHUNK, READS_IN_FLIGHT

    names = [f"f{i:03d}" for i in range(CHUNK * READS_IN_FLIGHT + 1)]
    for name in names:
        _foreign_view(hms_client, database, name)
    ws = Workspace.open(_repo(tmp_path, metastore.uri, {database: [_view("a", "SELECT 1 AS id")]}))
    try:
        ws.prefetch()
        plan, _ = ws.plan(PlanOptions(project=PROJECT), ws.declarations())
        opened = ws.adapter("hive").connections_opened  # type: ignore[attr-defined]
    finally:
        ws.close()
    assert sorted(u.view.name for u in plan.unmanaged) == names
    assert 1 < opened <= READS_IN_FLIGHT


def test_a_view_file_without_views_declares_no_schema(tmp_path: Path, metastore: Any, database: str,
                                                      hms_client: Any) -> None:
    """The prefetch guesses the declared schemas from the file names; a file with no views
    declares none, so its database is read as undeclared (only our views), as without it."""
    _foreign_view(hms_client, database, "theirs")
    repo = _repo(tmp_path, metastore.uri, {database: []})
    plain, _ = _plan(repo, prefetch=False)
    ahead, _ = _plan(repo, prefetch=True)
    assert ahead.to_json() == plain.to_json()
    assert not ahead.unmanaged and not ahead.actions


def test_bad_declarations_do_not_wait_for_a_hung_catalog(tmp_path: Path) -> None:
    with misbehaving("hang") as port:
        repo = _repo(tmp_path, f"thrift://127.0.0.1:{port}", {})
        (repo / "viewsync.yaml").write_text((repo / "viewsync.yaml").read_text().replace(
            "write_format: spark", "write_format: spark\n    timeout: 60"))
        assert "    timeout: 60" in (repo / "viewsync.yaml").read_text()
        (repo / "views" / "hive" / "db.yaml").write_text("catalog: hive\nschema: db\nviews:\n  - name: [\n")
        for command in ("plan", "drift"):
            start = time.monotonic()
            res = subprocess.run([sys.executable, "-m", "reconciler.cli", "--repo", str(repo), command],
                                 capture_output=True, text=True, timeout=120)
            assert res.returncode == 1, res.stderr
            assert "views/hive/db.yaml:5:1: invalid YAML" in res.stderr, res.stderr
            assert time.monotonic() - start < 15  # not the catalog's 60 s
