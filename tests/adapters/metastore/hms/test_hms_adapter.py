"""HiveMetastoreAdapter against a real Hive Metastore (no Spark needed here)."""

from __future__ import annotations

from typing import Any

import pytest

from reconciler.adapters.base import AdapterError, ConflictError, Marker, WriteContext
from reconciler.adapters.metastore.formats import WRITE_FORMATS
from reconciler.adapters.metastore.hms import HiveMetastoreAdapter
from reconciler.core.model import ViewId, ViewSpec

pytestmark = pytest.mark.slow  # starts a JVM, Spark or a slow backend (pytest -m 'not slow' skips it)

CTX = WriteContext(actor="tester")


def spec_of(**kw: Any) -> ViewSpec:
    base: dict[str, Any] = {
        "comment": "Customer totals",
        "columns": [{"name": "Customer_Id", "type": "bigint", "comment": "Customer identifier"},
                    {"name": "total_amount", "type": "decimal(18,2)"},
                    {"name": "seen_at", "type": "timestamp_ltz"}],
        "representations": [
            {"dialect": d, "sql": f"SELECT customer_id AS Customer_Id, SUM(amount) AS total_amount, "
                                  f"max(ts) AS seen_at FROM orders GROUP BY customer_id -- {d}"}
            for d in ("spark", "trino", "hive", "flink")],
        "security": "invoker",
        "owner": "data-team",
        "properties": {"tier": "gold"},
    }
    base.update(kw)
    return ViewSpec.model_validate(base)


def marker_for(adapter: HiveMetastoreAdapter, view: ViewId, spec: ViewSpec) -> Marker:
    return Marker("proj", adapter.storable(view, spec).digest())


@pytest.mark.parametrize("fmt", WRITE_FORMATS)
def test_apply_then_fetch_has_no_perpetual_diff(make_adapter: Any, database: str, fmt: str) -> None:
    adapter = make_adapter(fmt)
    view = ViewId("hive", database, "cust")
    spec = spec_of()
    assert adapter.check(view, spec) == []
    want = adapter.storable(view, spec)
    adapter.create(view, want, marker_for(adapter, view, spec), CTX)

    snap = adapter.fetch(database)
    live = snap.views["cust"]
    assert live.format == fmt
    assert live.managed_by == "proj"
    assert live.spec_digest == want.digest()
    assert live.spec.digest() == want.digest(), (live.spec.canonical(), want.canonical())
    assert not any(k.startswith("viewsync.") for k in live.spec.properties)

    # Update: new SQL for every dialect, fewer properties.
    changed = spec_of(representations=[{"dialect": d, "sql": f"SELECT 1 AS Customer_Id, 2 AS total_amount, "
                                                              f"now() AS seen_at -- {d} v2"}
                                       for d in ("spark", "trino", "hive", "flink")],
                      properties={}, security="definer")
    want2 = adapter.storable(view, changed)
    adapter.update(live, want2, marker_for(adapter, view, changed), CTX)
    live2 = adapter.fetch(database).views["cust"]
    assert live2.format == fmt
    assert live2.spec.digest() == want2.digest(), (live2.spec.canonical(), want2.canonical())
    assert live2.fingerprint != live.fingerprint

    adapter.drop(live2, CTX)
    assert "cust" not in adapter.fetch(database).views


def test_fetch_is_bulk_and_lists_tables(adapter: HiveMetastoreAdapter, database: str, hms_client: Any) -> None:
    from hmsclient.genthrift.hive_metastore.ttypes import FieldSchema, SerDeInfo, StorageDescriptor, Table

    hms_client.create_table(Table(tableName="orders", dbName=database, tableType="MANAGED_TABLE",
                                  sd=StorageDescriptor(cols=[FieldSchema("id", "bigint")], serdeInfo=SerDeInfo()),
                                  partitionKeys=[], parameters={}))
    for i in range(5):
        view = ViewId("hive", database, f"v{i}")
        spec = spec_of()
        adapter.create(view, adapter.storable(view, spec), marker_for(adapter, view, spec), CTX)
    before = adapter.calls
    snap = adapter.fetch(database)
    assert adapter.calls - before == 2  # list names + one get_table_objects_by_name
    assert sorted(snap.views) == [f"v{i}" for i in range(5)]
    assert snap.tables == {"orders"}


def test_a_metastore_without_get_tables_by_type_is_listed_with_get_table_meta(
        adapter: HiveMetastoreAdapter, database: str, hms_client: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """Metastores before Hive 2.3 answer get_tables_by_type with "Invalid method name": the
    listing falls back to get_table_meta, once, and the snapshot is the same."""
    from hmsclient import hmsclient
    from hmsclient.genthrift.hive_metastore.ttypes import FieldSchema, SerDeInfo, StorageDescriptor, Table
    from thrift.Thrift import TApplicationException

    hms_client.create_table(Table(tableName="orders", dbName=database, tableType="EXTERNAL_TABLE",
                                  sd=StorageDescriptor(cols=[FieldSchema("id", "bigint")], serdeInfo=SerDeInfo()),
                                  partitionKeys=[], parameters={}))
    for name in ("b", "a"):
        view = ViewId("hive", database, name)
        adapter.create(view, adapter.storable(view, spec_of()), marker_for(adapter, view, spec_of()), CTX)
    new = adapter.fetch(database)
    asked: list[str] = []

    def old_server(self: Any, db: str, pattern: str, table_type: str) -> Any:
        asked.append(db)  # what a Hive 2.1 metastore answers: the method is not in its service
        raise TApplicationException(TApplicationException.UNKNOWN_METHOD, "Invalid method name: 'get_tables_by_type'")

    monkeypatch.setattr(hmsclient.HMSClient, "get_tables_by_type", old_server)
    old = adapter.fetch(database)
    again = adapter.fetch(database)
    assert asked == [database]  # asked once: the adapter remembers the metastore's version
    for snap in (new, old, again):
        assert list(snap.views) == ["a", "b"] and snap.tables == {"orders"}
    assert old.views["a"].spec == new.views["a"].spec


def test_missing_database(adapter: HiveMetastoreAdapter) -> None:
    snap = adapter.fetch("no_such_db")
    assert not snap.exists
    view = ViewId("hive", "no_such_db", "v")
    spec = spec_of()
    with pytest.raises(AdapterError, match="database 'no_such_db' does not exist"):
        adapter.create(view, spec, marker_for(adapter, view, spec), CTX)


def test_check_errors_name_catalog_and_dialect(adapter: HiveMetastoreAdapter) -> None:
    view = ViewId("hive", "sales", "v")
    errors = adapter.check(view, spec_of(representations=[{"dialect": "trino", "sql": "SELECT 1"}]))
    assert [code for code, _ in errors] == ["dialect_not_storable"]
    assert "'hive'" in errors[0][1] and "'spark'" in errors[0][1] and "hive.sales.v" in errors[0][1]
    assert adapter.check(ViewId("hive", "sales", "MyView"), spec_of())[0][0] == "name_not_storable"
    too_long = spec_of(representations=[{"dialect": "spark", "sql": "SELECT 1 AS a --" + "x" * 33000}])
    assert [c for c, _ in adapter.check(view, too_long)] == ["value_too_long"]


def test_long_values_are_stored_in_parts(adapter: HiveMetastoreAdapter, database: str) -> None:
    # Derby's VARCHAR(4000) parameter values: long schemas, comments and properties must be split.
    cols = [{"name": f"Col_{i}", "type": "string", "comment": "c" * 300} for i in range(60)]
    spec = spec_of(columns=cols, comment="long " * 2000, properties={"notes": "n" * 12000},
                   representations=[{"dialect": "spark", "sql": "SELECT * FROM wide"},
                                    {"dialect": "trino", "sql": "SELECT * FROM wide -- " + "t" * 20000}])
    view = ViewId("hive", database, "wide_v")
    want = adapter.storable(view, spec)
    adapter.create(view, want, marker_for(adapter, view, spec), CTX)
    assert adapter.fetch(database).views["wide_v"].spec.digest() == want.digest()


def test_conflict_when_view_changed_since_read(adapter: HiveMetastoreAdapter, database: str,
                                               hms_client: Any) -> None:
    view = ViewId("hive", database, "c")
    spec = spec_of()
    adapter.create(view, adapter.storable(view, spec), marker_for(adapter, view, spec), CTX)
    live = adapter.fetch(database).views["c"]
    table = hms_client.get_table(database, "c")
    table.parameters["touched"] = "yes"
    hms_client.alter_table(database, "c", table)
    with pytest.raises(ConflictError):
        adapter.update(live, adapter.storable(view, spec), marker_for(adapter, view, spec), CTX)
    with pytest.raises(ConflictError):
        adapter.drop(live, CTX)
    with pytest.raises(ConflictError, match="created since the plan"):
        adapter.create(view, adapter.storable(view, spec), marker_for(adapter, view, spec), CTX)
    # Dropping a view that is already gone converges silently.
    fresh = adapter.fetch(database).views["c"]
    adapter.drop(fresh, CTX)
    adapter.drop(fresh, CTX)
    assert "c" not in adapter.fetch(database).views


def test_unreachable_metastore_is_a_clear_error() -> None:
    import socket

    # Keep the port bound (not listening) for the whole test: connects are refused, and no
    # other process can take the port in between.
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        adapter = HiveMetastoreAdapter("hive", {"uri": f"thrift://127.0.0.1:{port}", "timeout": 2})
        with pytest.raises(AdapterError, match="cannot reach the Hive Metastore") as err:
            adapter.fetch("sales")
    assert str(err.value) == (f"catalog 'hive': cannot reach the Hive Metastore at 127.0.0.1:{port} "
                              "(connection refused)")
    with pytest.raises(AdapterError, match="write_format"):
        HiveMetastoreAdapter("hive", {"uri": "thrift://h:1", "write_format": "presto"})
    with pytest.raises(AdapterError, match="thrift://"):
        HiveMetastoreAdapter("hive", {"uri": "http://h:1"})


def test_unreachable_metastore_prints_no_thrift_traceback(capfd: pytest.CaptureFixture[str]) -> None:
    """thrift's TSocket logs connection failures itself (a traceback at INFO); with logging
    configured verbosely by the application, that must not reach stderr past our message."""
    import logging
    import socket
    import sys

    root = logging.getLogger()
    handler = logging.StreamHandler(sys.stderr)
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
            adapter = HiveMetastoreAdapter("hive", {"uri": f"thrift://127.0.0.1:{port}", "timeout": 2})
            with pytest.raises(AdapterError, match="cannot reach the Hive Metastore"):
                adapter.fetch("sales")
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)
    err = capfd.readouterr().err
    assert "Traceback" not in err
    assert "Could not connect" not in err


def test_parallel_fetches_of_different_schemas(adapter: HiveMetastoreAdapter, hms_client: Any,
                                               metastore: Any) -> None:
    from concurrent.futures import ThreadPoolExecutor

    from hmsclient.genthrift.hive_metastore.ttypes import Database

    names = [f"par_{i}" for i in range(4)]
    for db in names:
        hms_client.create_database(Database(name=db, locationUri=f"file://{metastore.dir}/warehouse/{db}.db",
                                            parameters={}))
        for j in range(3):
            view = ViewId("hive", db, f"v{j}")
            spec = spec_of(comment=f"{db}/{j}")
            adapter.create(view, adapter.storable(view, spec), marker_for(adapter, view, spec), CTX)
    try:
        with ThreadPoolExecutor(4) as pool:
            snaps = list(pool.map(adapter.fetch, names * 3))
        for db, snap in zip(names * 3, snaps, strict=True):
            assert snap.schema == db
            assert sorted(snap.views) == ["v0", "v1", "v2"]
            assert {v.spec.comment for v in snap.views.values()} == {f"{db}/{j}" for j in range(3)}
        assert set(names) <= set(adapter.list_schemas())
    finally:
        for db in names:
            hms_client.drop_database(db, True, True)


def test_update_keeps_engine_format_and_foreign_parameters(make_adapter: Any, database: str,
                                                           hms_client: Any) -> None:
    hive_adapter = make_adapter("hive")
    view = ViewId("hive", database, "kept")
    spec = spec_of()
    hive_adapter.create(view, hive_adapter.storable(view, spec), marker_for(hive_adapter, view, spec), CTX)
    table = hms_client.get_table(database, "kept")
    table.parameters["trino_version"] = "476"  # engine bookkeeping someone else wrote
    hms_client.alter_table(database, "kept", table)

    spark_adapter = make_adapter("spark")
    live = spark_adapter.fetch(database).views["kept"]
    changed = spec_of(comment="new comment")
    want = spark_adapter.storable(view, changed)
    spark_adapter.update(live, want, marker_for(spark_adapter, view, changed), CTX)
    after = spark_adapter.fetch(database).views["kept"]
    assert after.format == "hive"  # the spec still has hive SQL: the engine format is kept
    assert after.handle.table.parameters["trino_version"] == "476"
    assert after.spec.digest() == want.digest()

    # Without a hive representation the view is rewritten in the catalog's write_format.
    spark_only = spec_of(representations=[{"dialect": "spark", "sql": "SELECT 1 AS Customer_Id, 2 AS "
                                                                      "total_amount, now() AS seen_at"}])
    want = spark_adapter.storable(view, spark_only)
    spark_adapter.update(after, want, marker_for(spark_adapter, view, spark_only), CTX)
    final = spark_adapter.fetch(database).views["kept"]
    assert final.format == "spark"
    assert final.spec.digest() == want.digest()


def test_fetch_reads_many_views_in_chunks(adapter: HiveMetastoreAdapter, database: str) -> None:
    from reconciler.adapters.metastore.hms import CHUNK

    spec = spec_of()
    count = CHUNK * 2 + 7
    for i in range(count):
        view = ViewId("hive", database, f"m{i:03d}")
        adapter.create(view, adapter.storable(view, spec), marker_for(adapter, view, spec), CTX)
    before = adapter.calls
    snap = adapter.fetch(database)
    assert len(snap.views) == count
    assert adapter.calls - before == 1 + 3  # one listing, three chunks



@pytest.mark.parametrize("concurrency", [1, 4])
def test_bulk_reads_overlap_up_to_the_adapters_concurrency(adapter: HiveMetastoreAdapter, database: str,
                                                            hms_client: Any, concurrency: int,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """Chunks are read on up to `concurrency` connections at once (--parallelism 1: one at a
    time) and every view arrives, whatever order the reads finish in."""
    import threading

    from reconciler.adapters.metastore.hms import CHUNK

    names = [f"r{i:03d}" for i in range(CHUNK * 4 + 3)]
    for name in names:
        _foreign_view(hms_client, "spark", database, name, spec_of())
    adapter.concurrency = concurrency
    active, peak, lock = [0], [0], threading.Lock()
    read = adapter._read_tables

    def counted(schema: str, chunk: list[str]) -> list[Any]:
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        try:
            return read(schema, chunk)
        finally:
            with lock:
                active[0] -= 1

    monkeypatch.setattr(adapter, "_read_tables", counted)
    before = adapter.calls
    snap = adapter.fetch(database)
    assert sorted(snap.views) == names
    assert all(live.spec.digest() == snap.views[names[0]].spec.digest() for live in snap.views.values())
    assert adapter.calls - before == 1 + 5  # one listing, five chunks
    assert peak[0] == 1 if concurrency == 1 else 1 < peak[0] <= concurrency
    assert adapter.connections_opened == peak[0]  # the listing's connection serves a read too


def test_connections_the_metastore_dropped_are_reopened(make_adapter: Any, metastore: Any, database: str) -> None:
    """The connections kept between calls all die when the metastore restarts (or a load
    balancer times them out): the next read reconnects once, on a new connection, rather than
    retrying on another of the dead ones."""
    import threading

    from tests.helpers.tcp_relay import tcp_relay

    with tcp_relay(metastore.port) as relay:
        adapter = make_adapter(uri=f"thrift://127.0.0.1:{relay.port}")
        together = threading.Barrier(3)

        def at_once() -> None:
            adapter._call("listing databases", lambda c: (together.wait(timeout=10), c.get_all_databases()))

        threads = [threading.Thread(target=at_once) for _ in range(3)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert adapter.connections_opened == relay.accepted == 3
        relay.cut()
        assert database in adapter.list_schemas()
        assert adapter.connections_opened == relay.accepted == 4


def test_a_slow_answer_does_not_shorten_the_next_calls_timeout(make_adapter: Any, metastore: Any) -> None:
    """A call answered near its deadline leaves its connection's socket with a short timeout;
    the next call on that connection still has its whole timeout (it timed out after the
    leftover, about 0.45 s here, though its own 2 s were far from spent)."""
    from tests.helpers.tcp_relay import tcp_relay

    with tcp_relay(metastore.port) as relay:
        adapter = make_adapter(uri=f"thrift://127.0.0.1:{relay.port}", timeout=2)
        adapter.list_schemas()  # connected
        relay.answer_delay, relay.split_answers = 1.5, True
        adapter.list_schemas()  # answered after 1.5 s of its 2
        relay.answer_delay, relay.split_answers = 0.8, False
        assert "default" in adapter.list_schemas()
        assert adapter.connections_opened == relay.accepted == 1


def _foreign_view(hms_client: Any, fmt: str, database: str, name: str, spec: ViewSpec) -> None:
    """A view written by an engine (no viewsync marker), in that engine's own format."""
    from reconciler.adapters.metastore import formats
    from reconciler.adapters.metastore.hms import to_thrift

    hms_client.create_table(to_thrift(formats.write_view(fmt, database, name, spec.resolved(
        ViewId("hive", database, name)), {})))


def test_adopting_a_trino_view_in_a_spark_catalog_keeps_it_trino(make_adapter: Any, database: str,
                                                                hms_client: Any) -> None:
    view = ViewId("hive", database, "from_trino")
    trino_sql = {"dialect": "trino", "sql": "SELECT 1 AS Customer_Id, 2 AS total_amount, now() AS seen_at"}
    _foreign_view(hms_client, "trino", database, "from_trino", spec_of(representations=[trino_sql]))

    adapter = make_adapter("spark")
    live = adapter.fetch(database).views["from_trino"]
    assert live.format == "trino" and live.managed_by is None
    # what `viewsync import` declares for it: trino SQL only
    declared = spec_of(representations=[trino_sql], comment="adopted")
    assert adapter.check(view, declared, live) == []  # the update keeps it a Trino view
    # a create (no live view) would be written in the catalog's spark format: no spark SQL
    assert [c for c, _ in adapter.check(view, declared)] == ["dialect_not_storable"]

    want = adapter.storable(view, declared)
    adapter.update(live, want, marker_for(adapter, view, declared), CTX)
    after = adapter.fetch(database).views["from_trino"]
    assert after.format == "trino"
    assert after.managed_by == "proj"
    assert after.spec.digest() == want.digest()
    assert after.handle.table.parameters["presto_view"] == "true"
    assert adapter.check(view, declared, after) == []  # and the next plan agrees


def test_check_rejects_spec_with_neither_live_nor_catalog_dialect(make_adapter: Any, database: str,
                                                                    hms_client: Any) -> None:
    view = ViewId("hive", database, "t_only")
    _foreign_view(hms_client, "trino", database, "t_only", spec_of(representations=[
        {"dialect": "trino", "sql": "SELECT 1 AS Customer_Id, 2 AS total_amount, now() AS seen_at"}]))
    adapter = make_adapter("spark")
    live = adapter.fetch(database).views["t_only"]
    flink_only = spec_of(representations=[{"dialect": "flink", "sql": "SELECT 1"}])
    errors = adapter.check(view, flink_only, live)
    assert [c for c, _ in errors] == ["dialect_not_storable"]
    assert "'spark'" in errors[0][1]
