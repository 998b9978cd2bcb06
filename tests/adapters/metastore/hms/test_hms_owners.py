"""Issue 16: a declared view owner is the HMS table owner (and Trino's definer), read back
without a perpetual diff, in every engine format viewsync writes."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
import yaml

from reconciler.adapters.metastore.hms import HiveMetastoreAdapter, connecting_user
from tests.helpers.cli import run_cli
from tests.helpers.owners import owner_roundtrip, schema_owner_roundtrip

pytestmark = pytest.mark.slow  # starts a JVM, Spark or a slow backend (pytest -m 'not slow' skips it)


@pytest.mark.parametrize(("write_format", "dialects", "security"), [
    ("spark", ["spark"], "definer"), ("hive", ["hive"], "definer"), ("trino", ["trino"], "definer"),
    ("trino", ["trino"], "invoker"), ("spark", ["spark", "trino"], "invoker")])
def test_owner_round_trips_on_hms(tmp_path: Path, metastore: Any, database: str, hms_client: Any,
                                  write_format: str, dialects: list[str], security: str) -> None:
    def stored(name: str) -> str | None:
        owner: str | None = hms_client.get_table(database, name).owner
        return owner

    # trino_owner: the user an owner-less Trino definer view runs as (else a plan error, issue 11).
    # Hive, Spark and Flink record the user who created a view as its owner, and so does viewsync
    # for a view in their formats that declares none (Trino's Hive view translation runs it as that).
    owner_roundtrip(tmp_path, "hive", {"type": "hms", "uri": metastore.uri, "engine_format": write_format,
                                       "trino_owner": "trino_svc"},
                    database, dialects, stored, security,
                    unnamed=None if write_format == "trino" else connecting_user())


def test_schema_owner_is_the_hms_database_owner(tmp_path: Path, metastore: Any, database: str,
                                                 hms_client: Any) -> None:
    def stored() -> str | None:
        owner: str | None = hms_client.get_database(database).ownerName
        return owner or None

    schema_owner_roundtrip(tmp_path, "hive", {"type": "hms", "uri": metastore.uri}, database, ["spark"], stored)


def _owned_repo(tmp_path: Path, metastore: Any, database: str, owner: str) -> Path:
    """One view in `database`, whose file declares the schema's owner; state in tmp_path/state.db."""
    repo = tmp_path / "repo"
    (repo / "views" / "hive").mkdir(parents=True, exist_ok=True)
    (repo / "viewsync.yaml").write_text(yaml.safe_dump({
        "version": 1, "project": "owners", "state": f"sqlite:///{tmp_path / 'state.db'}",
        "catalogs": {"hive": {"type": "hms", "uri": metastore.uri}}}))
    (repo / "views" / "hive" / f"{database}.yaml").write_text(yaml.safe_dump({
        "catalog": "hive", "schema": database, "owner": owner,
        "views": [{"name": "v", "columns": [{"name": "id", "type": "bigint"}],
                   "representations": [{"dialect": "spark", "sql": "SELECT 1 AS id"}]}]}, sort_keys=False))
    return repo


def test_schema_owner_is_written_by_the_run_under_its_lock(tmp_path: Path, metastore: Any, database: str,
                                                          hms_client: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 27.8: the owner write is an action of the apply's run: when HMS is called the run
    holds the apply lock and is still running, and the owner's audit row (pending) is the run's;
    afterwards it is applied, recorded before the run finished."""
    state_db = tmp_path / "state.db"
    repo = _owned_repo(tmp_path, metastore, database, "team-a")

    seen: list[dict[str, Any]] = []
    write = HiveMetastoreAdapter.write_schema_owner

    def observed(self: HiveMetastoreAdapter, schema: str, owner: str) -> None:
        with sqlite3.connect(state_db) as conn:  # what another process sees of the state store now
            lock = conn.execute("SELECT run_id FROM vs_locks WHERE name = 'apply:owners'").fetchall()
            runs = dict(conn.execute("SELECT run_id, outcome FROM vs_runs").fetchall())
            rows = conn.execute("SELECT run_id, outcome FROM vs_audit WHERE action = 'schema_owner'").fetchall()
        seen.append({"lock": lock, "runs": runs, "owner_rows": rows})
        write(self, schema, owner)

    monkeypatch.setattr(HiveMetastoreAdapter, "write_schema_owner", observed)
    res = run_cli(repo, "apply", "--auto-approve", "--allow-dirty")
    assert res.code == 0, res.text
    assert f"~ schema hive.{database} owner: 'team-a'" in res.out
    assert hms_client.get_database(database).ownerName == "team-a"

    (at_write,) = seen
    assert len(at_write["lock"]) == 1, f"the apply lock is not held when the owner is written: {at_write}"
    ((run_id,),) = at_write["lock"]
    assert at_write["runs"] == {run_id: "running"}
    assert at_write["owner_rows"] == [(run_id, "pending")]
    with sqlite3.connect(state_db) as conn:
        ((outcome, finished),) = conn.execute("SELECT outcome, finished_at FROM vs_runs").fetchall()
        ((row_run, row_outcome, at),) = conn.execute(
            "SELECT run_id, outcome, at FROM vs_audit WHERE action = 'schema_owner'").fetchall()
        assert conn.execute("SELECT count(*) FROM vs_locks").fetchone() == (0,)
    assert (outcome, row_run, row_outcome) == ("success", run_id, "applied")
    assert at <= finished


def test_a_schema_owner_not_written_fails_its_run(tmp_path: Path, metastore: Any, database: str,
                                                 hms_client: Any) -> None:
    """The owner changed in HMS between plan and apply: not overwritten, the apply exits 1, and
    the run that tried it is recorded failed (its owner row failed), announced as failed."""
    repo = _owned_repo(tmp_path, metastore, database, "team-a")
    assert run_cli(repo, "apply", "--auto-approve", "--allow-dirty").code == 0
    _owned_repo(tmp_path, metastore, database, "team-b")
    saved = tmp_path / "plan.json"
    assert run_cli(repo, "plan", "--out", str(saved)).code == 0
    db = hms_client.get_database(database)
    db.ownerName = "someone-else"
    hms_client.alter_database(database, db)

    res = run_cli(repo, "apply", str(saved), "--auto-approve", "--allow-dirty")
    assert res.code == 1, res.text
    assert "schema owners not all written: schema hive." + database + ": owner changed in the catalog" in res.err
    assert hms_client.get_database(database).ownerName == "someone-else"
    with sqlite3.connect(tmp_path / "state.db") as conn:
        last_run, outcome = conn.execute("SELECT run_id, outcome FROM vs_runs ORDER BY started_at DESC").fetchone()
        rows = conn.execute("SELECT run_id, outcome FROM vs_audit WHERE action = 'schema_owner' ORDER BY id").fetchall()
    assert outcome == "failed"
    assert rows[-1] == (last_run, "failed")
    events = json.loads(run_cli(repo, "events", "--format", "json", "--run", last_run).out)
    assert [e["event"]["data"]["outcome"] for e in events if e["type"] == "run.finished"] == ["failed"]
