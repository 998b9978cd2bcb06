"""Creates sent ahead of their answers on one metastore connection (HiveMetastoreAdapter.send_create;
reconciler.apply.stream, "Sent ahead"), on the real metastore: a sequential apply keeps several in
flight, each answer is the right view's, a refusal fails that view alone and everything sent is
recorded as it came out, a lost connection fails what was in flight, and a re-run converges."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from reconciler.adapters.base import AdapterError, Marker, WriteContext
from reconciler.apply.run import apply_plan
from reconciler.apply.stream import SENT_AHEAD
from reconciler.core.gitinfo import GitInfo
from reconciler.core.model import MANAGED_BY, ViewId, ViewSpec
from reconciler.plan.planner import PlanOptions
from reconciler.state.store import StateStore
from reconciler.workspace import Workspace
from tests.helpers.hms import _plan_and_apply, _repo, _view

pytestmark = pytest.mark.slow  # starts a JVM, Spark or a slow backend (pytest -m 'not slow' skips it)

CTX = WriteContext(actor="tester")
SPEC = ViewSpec.model_validate({"columns": [{"name": "id", "type": "bigint"}],
                                "representations": [{"dialect": "spark", "sql": "SELECT 1 AS id"}]})


def _spy(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """Every create_table request ("sent", its table) and answer ("answered", "") any client of
    this process makes, in order; the real calls still run (create_table makes the same two)."""
    from hmsclient.genthrift.hive_metastore import ThriftHiveMetastore

    log: list[tuple[str, str]] = []
    lock = threading.Lock()
    client = ThriftHiveMetastore.Client
    send, receive = client.send_create_table, client.recv_create_table

    def spied_send(self: Any, tbl: Any) -> Any:
        with lock:
            log.append(("sent", tbl.tableName))
        return send(self, tbl)

    def spied_receive(self: Any) -> Any:
        with lock:
            log.append(("answered", ""))
        return receive(self)

    monkeypatch.setattr(client, "send_create_table", spied_send)
    monkeypatch.setattr(client, "recv_create_table", spied_receive)
    return log


def _peak(log: list[tuple[str, str]]) -> int:
    """The most creates sent and not yet answered at once."""
    peak = now = 0
    for kind, _ in log:
        now += 1 if kind == "sent" else -1
        peak = max(peak, now)
    return peak


def test_a_sequential_apply_keeps_creates_in_flight_on_one_connection(
        tmp_path: Path, metastore: Any, database: str, hms_client: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    log = _spy(monkeypatch)
    views = [_view(f"s_{i:02d}", f"SELECT {i} AS id") for i in range(30)]
    res, order = _plan_and_apply(_repo(tmp_path, metastore.uri, {database: views}), parallelism=1)
    assert res.ok and order == [f"s_{i:02d}:applied" for i in range(30)]
    assert [name for kind, name in log if kind == "sent"] == [f"s_{i:02d}" for i in range(30)]  # the plan's order
    assert 1 < _peak(log) <= SENT_AHEAD
    assert sorted(hms_client.get_all_tables(database)) == [f"s_{i:02d}" for i in range(30)]
    rows = StateStore(f"sqlite:///{tmp_path}/state.db").audit_rows(run_id=res.run_id)
    assert sorted((r["view_name"], r["outcome"]) for r in rows) == [(f"s_{i:02d}", "applied") for i in range(30)]
    for i in (0, 17, 29):  # each answer was its own view's: the view holds its own SQL
        assert hms_client.get_table(database, f"s_{i:02d}").viewOriginalText == f"SELECT {i} AS id"


def test_updates_and_drops_between_creates_sent_ahead_wait_for_their_answers(
        tmp_path: Path, metastore: Any, database: str, hms_client: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    first = [_view(f"m_{i:02d}", f"SELECT {i} AS id") for i in range(0, 20, 2)]
    repo = _repo(tmp_path, metastore.uri, {database: first})
    res, _ = _plan_and_apply(repo, parallelism=1)
    assert res.ok
    log = _spy(monkeypatch)
    # every other view changed, one dropped, and new ones between them: one wave of all three kinds
    second = [_view(f"m_{i:02d}", f"SELECT {i + (100 if i % 4 == 0 else 0)} AS id") for i in range(1, 20)]
    repo = _repo(tmp_path, metastore.uri, {database: second})
    ws = Workspace.open(repo, parallelism=1)
    try:
        plan, _ = ws.plan(PlanOptions(project="speed", prune=True, allow_mass_drop=True), ws.declarations())
        assert sorted({a.action for a in plan.actions}) == ["create", "drop", "update"]
        res = apply_plan(ws, plan, StateStore(ws.config.state_url), "tester", GitInfo())
    finally:
        ws.close()
    assert res.ok and not res.failed and len(res.applied) == len(plan.actions)
    assert _peak(log) > 1  # the creates were sent ahead
    assert sorted(hms_client.get_all_tables(database)) == [f"m_{i:02d}" for i in range(1, 20)]
    for i in (4, 8, 5):
        want = f"SELECT {i + (100 if i % 4 == 0 else 0)} AS id"
        assert hms_client.get_table(database, f"m_{i:02d}").viewOriginalText == want


def test_a_create_refused_in_flight_fails_alone_and_every_create_sent_is_recorded_as_it_came_out(
        tmp_path: Path, metastore: Any, database: str, hms_client: Any) -> None:
    from hmsclient.genthrift.hive_metastore.ttypes import FieldSchema, SerDeInfo, StorageDescriptor, Table

    names = [f"v_{i:02d}" for i in range(30)]
    repo = _repo(tmp_path, metastore.uri, {database: [_view(n, "SELECT 1 AS id") for n in names]})

    def take_a_name() -> None:  # a table appears after the plan: that create fails
        hms_client.create_table(Table(tableName="v_05", dbName=database, tableType="MANAGED_TABLE",
                                      sd=StorageDescriptor(cols=[FieldSchema("id", "bigint")], serdeInfo=SerDeInfo()),
                                      partitionKeys=[], parameters={}))

    res, _ = _plan_and_apply(repo, parallelism=1, between=take_a_name)
    assert [a.view.name for a, _ in res.failed] == ["v_05"]
    assert "was created since the plan" in res.failed[0][1]
    applied = sorted(a.view.name for a in res.applied)
    skipped = sorted(a.view.name for a in res.skipped)
    assert applied[:5] == names[:5] and sorted(applied + skipped + ["v_05"]) == names
    # sent before the refusal was known: at most SENT_AHEAD - 1 after it, none after that
    assert max(names.index(n) for n in applied) <= 5 + SENT_AHEAD - 1
    rows = StateStore(f"sqlite:///{tmp_path}/state.db").audit_rows(run_id=res.run_id)
    outcome = {r["view_name"]: r["outcome"] for r in rows}
    assert len(rows) == len(outcome) == 30  # one row per action, none left pending
    assert {n for n, o in outcome.items() if o == "applied"} == set(hms_client.get_all_tables(database)) - {"v_05"}

    hms_client.drop_table(database, "v_05", True)  # the name is free again: a re-run converges
    res, _ = _plan_and_apply(repo, parallelism=1)
    assert res.ok and sorted(a.view.name for a in res.applied) == sorted(skipped + ["v_05"])
    assert sorted(hms_client.get_all_tables(database)) == names


def test_each_answer_is_its_own_create_s_a_missing_database_included(
        make_adapter: Any, database: str, hms_client: Any) -> None:
    adapter = make_adapter()
    answers = [adapter.send_create(ViewId("hive", schema, name), SPEC, Marker("proj", SPEC.digest()), CTX)
               for schema, name in ((database, "first"), ("no_such_database", "lost"), (database, "third"))]
    answers[0]()
    with pytest.raises(AdapterError, match="database 'no_such_database' does not exist"):
        answers[1]()  # the check runs on a connection of its own: the third answer is still due
    answers[2]()
    assert sorted(hms_client.get_all_tables(database)) == ["first", "third"]
    assert adapter.connections_opened == 2  # the creates', then the check's
    adapter.send_create(ViewId("hive", database, "fourth"), SPEC, Marker("proj", SPEC.digest()), CTX)()
    assert adapter.connections_opened == 2  # both were given back to the pool
    adapter.close()


def test_a_connection_lost_with_creates_in_flight_reads_what_each_became_and_the_next_reconnects(
        make_adapter: Any, metastore: Any, database: str, hms_client: Any) -> None:
    """The answers never come: each create's outcome is read on another connection. The metastore
    carried all three out; one of them is gone again before its answer is taken (dropped by
    someone): that one failed, the others are applied, as the records then say."""
    from tests.helpers.tcp_relay import tcp_relay

    with tcp_relay(metastore.port) as relay:
        adapter = make_adapter(uri=f"thrift://127.0.0.1:{relay.port}")
        relay.answer_delay = 2.0  # the answers are still on their way when the connection is cut
        marker = Marker("proj", SPEC.digest())
        answers = [adapter.send_create(ViewId("hive", database, f"cut_{i}"), SPEC, marker, CTX) for i in range(3)]
        for _ in range(200):  # the metastore has carried the three out
            if len([t for t in hms_client.get_all_tables(database) if t.startswith("cut_")]) == 3:
                break
            time.sleep(0.02)
        relay.cut()
        relay.answer_delay = 0.0
        hms_client.drop_table(database, "cut_1", True)
        answers[0]()
        with pytest.raises(AdapterError, match=r"creating hive\.\w+\.cut_1 failed: lost the connection to 127"):
            answers[1]()
        answers[2]()
        assert hms_client.get_table(database, "cut_2").parameters[MANAGED_BY] == "proj"
        adapter.send_create(ViewId("hive", database, "after"), SPEC, marker, CTX)()
        assert relay.accepted == adapter.connections_opened == 2  # the reads' and the next create's
        assert sorted(hms_client.get_all_tables(database)) == ["after", "cut_0", "cut_2"]
        adapter.close()
