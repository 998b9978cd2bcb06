"""IcebergRestAdapter against a real Iceberg REST catalog (Iceberg's CatalogHandlers)."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
import requests
from pyiceberg.schema import Schema
from pyiceberg.types import LongType, NestedField

from reconciler.adapters import open_adapter
from reconciler.adapters.base import AdapterError, ConflictError, Marker, WriteContext
from reconciler.adapters.iceberg import IcebergRestAdapter
from reconciler.core.model import LiveView, ViewId, ViewSpec
from tests.helpers.iceberg import PAGE_SIZE, IcebergServer

pytestmark = pytest.mark.slow  # starts a JVM, Spark or a slow backend (pytest -m 'not slow' skips it)

PROJECT = "t"


def make_spec(**over: Any) -> ViewSpec:
    data: dict[str, Any] = {
        "comment": "Aggregated customer data",
        "columns": [{"name": "customer_id", "type": "bigint", "comment": "Customer identifier"},
                    {"name": "total_amount", "type": "decimal(18,2)"},
                    {"name": "segment", "type": "varchar(10)"}],
        "representations": [
            {"dialect": "spark", "sql": "SELECT customer_id, SUM(amount) AS total_amount, segment\n"
                                        "FROM orders GROUP BY customer_id, segment\n"},
            {"dialect": "trino", "sql": "SELECT customer_id, SUM(amount) AS total_amount, segment "
                                        "FROM orders GROUP BY customer_id, segment"},
        ],
        "owner": "data-team",
        "properties": {"tier": "gold"},
    }
    data.update(over)
    return ViewSpec.model_validate(data)


@pytest.fixture
def adapter(iceberg_server: IcebergServer) -> Any:
    a = open_adapter("lake", {"type": "iceberg-rest", "uri": iceberg_server.uri})
    assert isinstance(a, IcebergRestAdapter)
    yield a
    a.close()


def write(adapter: IcebergRestAdapter, view: ViewId, spec: ViewSpec, live: LiveView | None = None,
          commit: str = "c0ffee") -> ViewSpec:
    """create/update like apply does: storable spec, marker with its digest."""
    stored = adapter.storable(view, spec)
    marker = Marker(PROJECT, stored.digest())
    ctx = WriteContext(actor="tester", git_commit=commit)
    if live is None:
        adapter.create(view, stored, marker, ctx)
    else:
        adapter.update(live, stored, marker, ctx)
    return stored


def fetch_view(adapter: IcebergRestAdapter, view: ViewId) -> LiveView:
    snap = adapter.fetch(view.schema)
    assert snap.exists and not snap.warnings
    return snap.views[view.name]


def assert_converged(adapter: IcebergRestAdapter, view: ViewId, desired: ViewSpec) -> LiveView:
    """After a write, the read-back spec is exactly storable(desired): a second plan is empty."""
    live = fetch_view(adapter, view)
    stored = adapter.storable(view, desired)
    assert live.spec.canonical() == stored.canonical()
    assert live.spec.digest() == stored.digest()
    assert live.managed_by == PROJECT and live.spec_digest == stored.digest()
    assert live.format == "iceberg" and live.writable
    return live


def raw_metadata(server: IcebergServer, view: ViewId) -> dict[str, Any]:
    r = requests.get(f"{server.uri}/v1/namespaces/{view.schema}/views/{view.name}", timeout=5)
    r.raise_for_status()
    return dict(r.json()["metadata"])


def other_client_commit(server: IcebergServer, view: ViewId, updates: list[dict[str, Any]]) -> None:
    """Another client commits to the view over raw HTTP (CommitViewRequest)."""
    uuid = raw_metadata(server, view)["view-uuid"]
    body = {"requirements": [{"type": "assert-view-uuid", "uuid": uuid}], "updates": updates}
    r = requests.post(f"{server.uri}/v1/namespaces/{view.schema}/views/{view.name}", data=json.dumps(body),
                      headers={"Content-Type": "application/json"}, timeout=5)
    assert r.status_code == 200, r.text


def test_full_lifecycle(adapter: IcebergRestAdapter, iceberg_server: IcebergServer, namespace: str) -> None:
    view = ViewId("lake", namespace, "customer_summary")
    desired = make_spec()
    assert adapter.check(view, desired) == []

    # create, two dialects
    assert not adapter.view_exists(view)
    write(adapter, view, desired)
    assert adapter.view_exists(view)
    live = assert_converged(adapter, view, desired)
    assert live.spec.default_namespace == [namespace]  # resolved to the view's own schema
    assert live.spec.columns[2].type == "string"  # Iceberg has no varchar(n)
    assert live.native_version == "1"

    # change the SQL: a new native version, history shows both
    desired = make_spec(representations=[{"dialect": "spark", "sql": "SELECT 1 AS customer_id"},
                                         {"dialect": "trino", "sql": "SELECT 1 AS customer_id"}])
    write(adapter, view, desired, live, commit="beef01")
    live2 = assert_converged(adapter, view, desired)
    assert live2.native_version == "2" and live2.fingerprint != live.fingerprint
    history = adapter.native_history(view)
    assert [h.version for h in history] == ["1", "2"]
    assert history[0].dialects == ("spark", "trino")
    assert history[1].summary["engine-name"] == "viewsync"
    assert history[1].summary["viewsync.git-commit"] == "beef01"
    assert history[1].summary["engine-version"]
    assert history[1].timestamp_ms and history[0].timestamp_ms

    # add a third dialect
    desired = ViewSpec.model_validate(desired.model_dump() | {"representations": [
        *(r.model_dump() for r in desired.representations), {"dialect": "hive", "sql": "SELECT 1 AS customer_id"}]})
    write(adapter, view, desired, live2)
    live3 = assert_converged(adapter, view, desired)
    assert live3.native_version == "3" and sorted(live3.spec.dialects()) == ["hive", "spark", "trino"]

    # remove one dialect: a reviewed Git change, so the commit allows it explicitly
    desired = ViewSpec.model_validate(
        desired.model_dump() | {"representations": [r.model_dump() for r in desired.representations
                                                    if r.dialect != "trino"]})
    write(adapter, view, desired, live3)
    live4 = assert_converged(adapter, view, desired)
    assert live4.native_version == "4" and sorted(live4.spec.dialects()) == ["hive", "spark"]
    assert raw_metadata(iceberg_server, view)["properties"]["replace.drop-dialect.allowed"] == "true"
    assert "replace.drop-dialect.allowed" not in live4.spec.properties

    # change properties, comment, owner, security: properties only, no new native version
    desired = ViewSpec.model_validate(desired.model_dump() | {
        "properties": {"tier": "silver", "domain": "sales"}, "comment": "Now with a new comment",
        "owner": None, "security": "invoker"})
    write(adapter, view, desired, live4)
    live5 = assert_converged(adapter, view, desired)
    assert live5.native_version == "4" and live5.fingerprint != live4.fingerprint
    props = raw_metadata(iceberg_server, view)["properties"]
    assert "owner" not in props and props["security"] == "invoker" and props["tier"] == "silver"

    # drop
    adapter.drop(live5, WriteContext())
    snap = adapter.fetch(namespace)
    assert snap.exists and snap.views == {}
    assert adapter.native_history(view) == [] and not adapter.view_exists(view)
    adapter.drop(live5, WriteContext())  # idempotent: already gone is fine


def test_nested_types_and_comments_round_trip(adapter: IcebergRestAdapter, namespace: str) -> None:
    view = ViewId("lake", namespace, "nested")
    desired = make_spec(columns=[
        {"name": "Id", "type": "tinyint", "comment": "mixed-case name, widened type"},
        {"name": "tags", "type": "array<char(2)>"},
        {"name": "attrs", "type": "map<string,struct<a:int,b:timestamp_ltz>>", "comment": ""},
        {"name": "at", "type": "timestamp"}, {"name": "d", "type": "date"}, {"name": "raw", "type": "binary"},
    ], default_catalog="lake", default_namespace=["sales", "eu"])
    write(adapter, view, desired)
    live = assert_converged(adapter, view, desired)
    assert [c.type for c in live.spec.columns][:3] == [
        "int", "array<string>", "map<string,struct<a:int,b:timestamp_ltz>>"]
    assert live.spec.default_catalog == "lake" and live.spec.default_namespace == ["sales", "eu"]


def test_listing_pages_through_every_view(adapter: IcebergRestAdapter, iceberg_server: IcebergServer,
                                          namespace: str) -> None:
    names = [f"v{i:02d}" for i in range(PAGE_SIZE * 2 + 2)]
    for name in names:
        write(adapter, ViewId("lake", namespace, name), make_spec())
    # the server really pages: one page holds PAGE_SIZE views
    first = requests.get(f"{iceberg_server.uri}/v1/namespaces/{namespace}/views", timeout=5).json()
    assert len(first["identifiers"]) == PAGE_SIZE and first["next-page-token"]

    before = adapter.calls
    snap = adapter.fetch(namespace)
    assert sorted(snap.views) == names
    # round trips: 3 pages of views + 1 page of tables + one load per view
    assert adapter.calls - before == 3 + 1 + len(names)

    # raw pyiceberg properties pass through: a smaller client page size means more pages
    small = open_adapter("lake", {"type": "iceberg-rest", "uri": iceberg_server.uri,
                                  "properties": {"rest-page-size": "2"}})
    before = small.calls
    assert sorted(small.fetch(namespace).views) == names
    assert small.calls - before == 1 + 4 + 1 + len(names)  # + /v1/config


def test_commit_by_another_client_changes_fingerprint_and_409_retry_keeps_both(
        adapter: IcebergRestAdapter, iceberg_server: IcebergServer, namespace: str) -> None:
    view = ViewId("lake", namespace, "contended")
    write(adapter, view, make_spec())
    planned = fetch_view(adapter, view)

    other_client_commit(iceberg_server, view, [{"action": "set-properties", "updates": {"reviewed": "yes"}}])
    assert fetch_view(adapter, view).fingerprint != planned.fingerprint

    iceberg_server.fail_next_commit(409)
    desired = make_spec(properties={"tier": "silver"})
    write(adapter, view, desired, planned)  # planned against the old state
    assert iceberg_server.pending_failures() == 0  # the injected 409 was hit and retried

    props = raw_metadata(iceberg_server, view)["properties"]
    assert props["reviewed"] == "yes"  # the other client's change survives
    assert props["tier"] == "silver"  # ours landed
    live = fetch_view(adapter, view)
    assert live.spec_digest == adapter.storable(view, desired).digest()


def test_409_with_a_clashing_change_is_a_conflict(adapter: IcebergRestAdapter, iceberg_server: IcebergServer,
                                                  namespace: str) -> None:
    view = ViewId("lake", namespace, "clash")
    write(adapter, view, make_spec())
    planned = fetch_view(adapter, view)
    other_client_commit(iceberg_server, view, [{"action": "set-properties", "updates": {"tier": "bronze"}}])
    iceberg_server.fail_next_commit(409)
    try:  # the clash is seen before committing now: the injected 409 may stay unused
        with pytest.raises(ConflictError, match=r"changed by another client.*'tier'"):
            write(adapter, view, make_spec(properties={"tier": "silver"}), planned)
    finally:
        iceberg_server.fail_next_commit(409, count=0)
    assert raw_metadata(iceberg_server, view)["properties"]["tier"] == "bronze"  # theirs is untouched


def test_409_every_time_gives_up_with_a_conflict(adapter: IcebergRestAdapter, iceberg_server: IcebergServer,
                                                 namespace: str) -> None:
    view = ViewId("lake", namespace, "hot")
    write(adapter, view, make_spec())
    planned = fetch_view(adapter, view)
    iceberg_server.fail_next_commit(409, count=10)
    try:
        with pytest.raises(ConflictError, match="still conflicting after 3 attempts"):
            write(adapter, view, make_spec(comment="new"), planned)
    finally:
        iceberg_server.fail_next_commit(409, count=0)
    assert fetch_view(adapter, view).spec.comment == "Aggregated customer data"


def test_view_replaced_or_dropped_by_another_client_is_a_conflict(
        adapter: IcebergRestAdapter, iceberg_server: IcebergServer, namespace: str) -> None:
    view = ViewId("lake", namespace, "replaced")
    write(adapter, view, make_spec())
    planned = fetch_view(adapter, view)
    other = iceberg_server.client_catalog()
    other.drop_view((namespace, "replaced"))
    write(adapter, view, make_spec(comment="someone else's view"))  # same name, new view-uuid
    # a real 409 from Iceberg (assert-view-uuid fails), then the reload sees a different view
    with pytest.raises(ConflictError, match="replaced by another client"):
        write(adapter, view, make_spec(comment="ours"), planned)
    assert fetch_view(adapter, view).spec.comment == "someone else's view"

    other.drop_view((namespace, "replaced"))
    with pytest.raises(ConflictError, match="no longer exists"):
        write(adapter, view, make_spec(comment="ours"), planned)


def test_500_after_the_commit_landed_is_success(adapter: IcebergRestAdapter, iceberg_server: IcebergServer,
                                                namespace: str) -> None:
    view = ViewId("lake", namespace, "unknown_ok")
    write(adapter, view, make_spec())
    planned = fetch_view(adapter, view)
    iceberg_server.fail_next_commit(500, phase="after")
    desired = make_spec(representations=[{"dialect": "spark", "sql": "SELECT 42 AS customer_id"},
                                         {"dialect": "trino", "sql": "SELECT 42 AS customer_id"}])
    write(adapter, view, desired, planned)  # no exception: the reload shows our version
    assert iceberg_server.pending_failures() == 0
    assert assert_converged(adapter, view, desired).native_version == "2"


def test_500_before_the_commit_reports_it_did_not_land(adapter: IcebergRestAdapter,
                                                       iceberg_server: IcebergServer, namespace: str) -> None:
    view = ViewId("lake", namespace, "unknown_bad")
    first = write(adapter, view, make_spec())
    planned = fetch_view(adapter, view)
    iceberg_server.fail_next_commit(500, phase="before")
    with pytest.raises(AdapterError, match="did NOT land") as err:
        write(adapter, view, make_spec(comment="changed"), planned)
    assert not isinstance(err.value, ConflictError)
    assert fetch_view(adapter, view).spec.digest() == first.digest()


def test_create_with_unknown_commit_state(adapter: IcebergRestAdapter, iceberg_server: IcebergServer,
                                          namespace: str) -> None:
    landed = ViewId("lake", namespace, "created_then_500")
    iceberg_server.fail_next_commit(500, phase="after")
    write(adapter, landed, make_spec())  # the reload finds our view: success
    assert_converged(adapter, landed, make_spec())

    lost = ViewId("lake", namespace, "500_before_create")
    iceberg_server.fail_next_commit(500, phase="before")
    with pytest.raises(AdapterError, match="did NOT land"):
        write(adapter, lost, make_spec())
    assert not adapter.view_exists(lost)


def test_tables_and_missing_namespace(adapter: IcebergRestAdapter, iceberg_server: IcebergServer,
                                      namespace: str) -> None:
    other = iceberg_server.client_catalog()
    other.create_table((namespace, "orders"), Schema(NestedField(1, "id", LongType(), required=False)))
    write(adapter, ViewId("lake", namespace, "a_view"), make_spec())
    snap = adapter.fetch(namespace)
    assert snap.tables == {"orders"} and set(snap.views) == {"a_view"}

    with pytest.raises(AdapterError, match="name is taken"):
        write(adapter, ViewId("lake", namespace, "orders"), make_spec())

    missing = adapter.fetch(namespace + "_missing")
    assert missing.exists is False and missing.views == {}


def test_create_makes_a_missing_nested_namespace(adapter: IcebergRestAdapter, namespace: str) -> None:
    view = ViewId("lake", f"{namespace}_new.inner", "v")
    desired = make_spec()
    write(adapter, view, desired)
    assert_converged(adapter, view, desired)
    assert f"{namespace}_new.inner" in adapter.list_schemas()
    assert namespace in adapter.list_schemas()


def test_view_written_by_another_client_reads_unmanaged(adapter: IcebergRestAdapter,
                                                        iceberg_server: IcebergServer, namespace: str) -> None:
    from pyiceberg.view.metadata import SQLViewRepresentation, ViewRepresentation, ViewVersion

    other = iceberg_server.client_catalog()
    version = ViewVersion(version_id=1, schema_id=0, summary={"engine-name": "spark"},
                          representations=[ViewRepresentation(SQLViewRepresentation(
                              type="sql", sql="SELECT 1 AS id", dialect="Spark"))],
                          default_namespace=(namespace,))
    other.create_view((namespace, "legacy"), Schema(NestedField(1, "id", LongType(), required=False)), version,
                      properties={"spark.query-column-names": "id", "team": "x"})
    live = fetch_view(adapter, ViewId("lake", namespace, "legacy"))
    assert live.managed_by is None and live.spec_digest is None
    assert live.spec.dialects() == ["spark"] and live.spec.properties == {"team": "x"}
    assert live.spec.security == "definer"

    # adopting it: our update stamps the marker and keeps the engine's own property
    desired = make_spec(columns=[{"name": "id", "type": "bigint"}],
                        representations=[{"dialect": "spark", "sql": "SELECT 1 AS id"}], properties={})
    write(adapter, live.id, desired, live)
    assert_converged(adapter, live.id, desired)
    assert raw_metadata(iceberg_server, live.id)["properties"]["spark.query-column-names"] == "id"


def test_check_reports_what_iceberg_cannot_hold(adapter: IcebergRestAdapter) -> None:
    view = ViewId("lake", "analytics", "v")
    errors = adapter.check(view, make_spec(columns=[], properties={"owner": "x", "spark.a": "b"}))
    codes = [code for code, _ in errors]
    assert codes == ["columns_required", "reserved_property", "reserved_property"]
    assert "'lake'" in errors[0][1] and "lake.analytics.v" in errors[0][1]


def test_parallel_fetches_of_different_schemas(adapter: IcebergRestAdapter, iceberg_server: IcebergServer,
                                               namespace: str) -> None:
    schemas = [f"{namespace}_p{i}" for i in range(4)]
    for i, schema in enumerate(schemas):
        for j in range(i + 1):
            write(adapter, ViewId("lake", schema, f"v{j}"), make_spec())
    with ThreadPoolExecutor(4) as pool:
        snaps = list(pool.map(adapter.fetch, schemas * 3))
    assert [len(s.views) for s in snaps] == [1, 2, 3, 4] * 3


def test_bad_options_are_reported_without_secrets() -> None:
    with pytest.raises(AdapterError, match="unknown option"):
        open_adapter("lake", {"type": "iceberg-rest", "uri": "http://x", "tokn": "abc"})
    with pytest.raises(AdapterError, match="'uri' is required"):
        open_adapter("lake", {"type": "iceberg-rest"})


def test_unreachable_catalog_is_an_adapter_error() -> None:
    a = open_adapter("lake", {"type": "iceberg-rest", "uri": "http://127.0.0.1:9", "token": "tok-unreachable"})
    with pytest.raises(AdapterError, match="cannot connect") as err:
        a.fetch("x")
    assert "tok-unreachable" not in str(err.value)


def test_token_auth_and_secret_hygiene(iceberg_auth_server: IcebergServer) -> None:
    srv = iceberg_auth_server
    assert srv.token
    good = open_adapter("lake", {"type": "iceberg-rest", "uri": srv.uri, "token": srv.token, "prefix": srv.prefix,
                                 "warehouse": "wh1", "headers": {"X-Request-Source": "viewsync-tests"}})
    view = ViewId("lake", "secure", "v")
    write(good, view, make_spec())
    assert_converged(good, view, make_spec())
    assert srv.token not in good.describe()
    with good._catalogs.lease() as cat:  # type: ignore[attr-defined]
        assert cat._session.headers["X-Request-Source"] == "viewsync-tests"

    bad = open_adapter("lake", {"type": "iceberg-rest", "uri": srv.uri, "token": "wrong-tok-123"})
    with pytest.raises(AdapterError) as err:
        bad.fetch("secure")
    assert "wrong-tok-123" not in str(err.value) and "Not authorized" in str(err.value)


def test_oauth2_client_credentials(iceberg_auth_server: IcebergServer) -> None:
    srv = iceberg_auth_server
    assert srv.client
    a = open_adapter("lake", {"type": "iceberg-rest", "uri": srv.uri, "credential": srv.client,
                              "oauth2-server-uri": f"{srv.uri}/v1/oauth/tokens", "scope": "catalog"})
    view = ViewId("lake", "oauth", "v")
    write(a, view, make_spec())
    assert_converged(a, view, make_spec())
    secret = srv.client.split(":", 1)[1]
    assert secret not in a.describe()

    wrong = open_adapter("lake", {"type": "iceberg-rest", "uri": srv.uri, "credential": "viewsync-ci:nope-nope"})
    with pytest.raises(AdapterError) as err:
        wrong.fetch("oauth")
    assert "nope-nope" not in str(err.value)
