"""What the speed work must not change: parallel apply keeps dependency order, stops on the
first failure and audits every action exactly; the filterable marker finds our views in
undeclared databases; a no-op plan parses no SQL."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from reconciler.core import sql as vsql
from reconciler.core.model import MANAGED_BY, MANAGED_BY_FILTERABLE
from reconciler.plan.planner import PlanOptions
from reconciler.state.store import StateStore
from reconciler.workspace import Workspace
from tests.helpers.cli import modules_loaded
from tests.helpers.hms import _plan_and_apply, _repo, _view

pytestmark = pytest.mark.slow  # starts a JVM, Spark or a slow backend (pytest -m 'not slow' skips it)


def test_parallel_apply_keeps_dependency_order(tmp_path: Path, metastore: Any, database: str,
                                               hms_client: Any) -> None:
    views = [_view(f"base_{i:02d}", f"SELECT {i} AS id") for i in range(12)]
    views += [_view("mid", f"SELECT id FROM {database}.base_03"), _view("top", "SELECT id FROM mid")]
    res, order = _plan_and_apply(_repo(tmp_path, metastore.uri, {database: views}))
    assert res.ok and len(res.applied) == 14 and not res.skipped
    assert order.index("base_03:applied") < order.index("mid:applied") < order.index("top:applied")
    assert set(hms_client.get_all_tables(database)) == {v["name"] for v in views}


def test_failure_in_a_wave_stops_the_run_and_the_audit_is_exact(tmp_path: Path, metastore: Any, database: str,
                                                                 hms_client: Any) -> None:
    from hmsclient.genthrift.hive_metastore.ttypes import FieldSchema, SerDeInfo, StorageDescriptor, Table

    views = [_view(f"v_{i:02d}", f"SELECT {i} AS id") for i in range(10)]
    views += [_view("reader", f"SELECT id FROM {database}.v_05")]
    repo = _repo(tmp_path, metastore.uri, {database: views})

    def take_a_name() -> None:  # a table appears after the plan: that create fails
        hms_client.create_table(Table(tableName="v_05", dbName=database, tableType="MANAGED_TABLE",
                                      sd=StorageDescriptor(cols=[FieldSchema("id", "bigint")], serdeInfo=SerDeInfo()),
                                      partitionKeys=[], parameters={}))

    res, _ = _plan_and_apply(repo, between=take_a_name)
    assert not res.ok
    assert [a.view.name for a, _ in res.failed] == ["v_05"]
    assert "reader" in [a.view.name for a in res.skipped]  # the next wave never starts
    assert len(res.applied) + len(res.failed) + len(res.skipped) == 11
    rows = StateStore(f"sqlite:///{tmp_path}/state.db").audit_rows(run_id=res.run_id)
    outcome = {r["view_name"]: r["outcome"] for r in rows}
    assert len(rows) == 11 and len(outcome) == 11  # one row per action, none left pending
    live = set(hms_client.get_all_tables(database)) - {"v_05"}
    assert {n for n, o in outcome.items() if o == "applied"} == live
    assert outcome["v_05"] == "failed" and outcome["reader"] == "skipped"


def test_sequential_apply_with_parallelism_one(tmp_path: Path, metastore: Any, database: str) -> None:
    views = [_view(f"s_{i}", f"SELECT {i} AS id") for i in range(4)]
    res, order = _plan_and_apply(_repo(tmp_path, metastore.uri, {database: views}), parallelism=1)
    assert res.ok and order == [f"s_{i}:applied" for i in range(4)]


def test_parallelism_bounds_the_reads_each_catalog_has_in_flight(tmp_path: Path, metastore: Any,
                                                                 database: str) -> None:
    repo = _repo(tmp_path, metastore.uri, {database: [_view("p", "SELECT 1 AS id")]})
    for parallelism in (1, 3):
        ws = Workspace.open(repo, parallelism=parallelism)
        try:
            assert ws.adapter("hive").concurrency == parallelism
        finally:
            ws.close()


def test_undeclared_database_is_read_through_the_marker_filter(tmp_path: Path, metastore: Any, database: str,
                                                               hms_client: Any) -> None:
    from hmsclient.genthrift.hive_metastore.ttypes import (
        Database,
        FieldSchema,
        SerDeInfo,
        StorageDescriptor,
        Table,
    )

    other = database + "_x"
    hms_client.create_database(Database(name=other, locationUri=f"file://{metastore.dir}/warehouse/{other}.db",
                                        parameters={}))
    try:
        repo = _repo(tmp_path, metastore.uri, {database: [_view("kept", "SELECT 1 AS id")],
                                               other: [_view("ours", "SELECT 2 AS id")]})
        assert _plan_and_apply(repo)[0].ok
        stored = hms_client.get_table(other, "ours").parameters
        assert stored[MANAGED_BY] == stored[MANAGED_BY_FILTERABLE] == "speed"
        hms_client.create_table(Table(  # a view another tool wrote, in a database we no longer declare
            tableName="foreign_view", dbName=other, tableType="VIRTUAL_VIEW", viewOriginalText="SELECT 3 AS id",
            viewExpandedText="SELECT 3 AS id", partitionKeys=[], parameters={},
            sd=StorageDescriptor(cols=[FieldSchema("id", "bigint")], serdeInfo=SerDeInfo())))
        _repo(tmp_path, metastore.uri, {database: [_view("kept", "SELECT 1 AS id")]})  # `other` no longer declared

        ws = Workspace.open(repo)
        try:
            adapter = ws.adapter("hive")
            before = adapter.calls
            snap = adapter.fetch_owned(other, "speed")
            assert set(snap.views) == {"ours"} and adapter.calls - before == 2  # filter + one bulk read
            before = adapter.calls
            assert not adapter.fetch_owned(other, "another-project").views and adapter.calls - before == 1
            plan, _ = ws.plan(PlanOptions(project="speed", prune=True, allow_mass_drop=True), ws.declarations())
        finally:
            ws.close()
        assert [(a.action, a.view.name) for a in plan.actions] == [("drop", "ours")]
    finally:
        hms_client.drop_database(other, True, True)


def test_views_marked_only_with_the_dotted_key_stay_ours(tmp_path: Path, metastore: Any, database: str,
                                                         hms_client: Any) -> None:
    repo = _repo(tmp_path, metastore.uri, {database: [_view("old", "SELECT 1 AS id")]})
    assert _plan_and_apply(repo)[0].ok
    table = hms_client.get_table(database, "old")
    del table.parameters[MANAGED_BY_FILTERABLE]  # as an earlier release wrote it
    hms_client.alter_table(database, "old", table)
    ws = Workspace.open(repo)
    try:
        plan, _ = ws.plan(PlanOptions(project="speed"), ws.declarations())
    finally:
        ws.close()
    assert not plan.errors and not plan.actions and plan.unchanged == 1


def test_no_op_plan_parses_no_sql(tmp_path: Path, metastore: Any, database: str,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    import sqlglot

    views = [_view("a", "SELECT 1 AS id"), _view("b", f"SELECT id FROM {database}.a")]
    repo = _repo(tmp_path, metastore.uri, {database: views})
    assert _plan_and_apply(repo)[0].ok
    vsql._facts.cache_clear()

    def no_parsing(*_a: Any, **_k: Any) -> None:
        raise AssertionError("a no-op plan parsed SQL")

    monkeypatch.setattr(sqlglot, "parse_one", no_parsing)
    ws = Workspace.open(repo)
    try:
        plan, _ = ws.plan(PlanOptions(project="speed"), ws.declarations())
    finally:
        ws.close()
    assert not plan.errors and not plan.actions and plan.unchanged == 2


def test_a_plan_on_a_metastore_loads_no_sqlalchemy_gitpython_or_sqlglot(tmp_path: Path, metastore: Any,
                                                                         database: str) -> None:
    repo = _repo(tmp_path, metastore.uri, {database: [_view("a", "SELECT 1 AS id")]})
    assert _plan_and_apply(repo)[0].ok
    heavy = ["sqlalchemy", "git", "sqlglot", "rich"]
    assert modules_loaded(None, "--help", modules=heavy) == ([], 0)
    assert modules_loaded(repo, "plan", "--detailed-exitcode", modules=heavy) == ([], 0)
