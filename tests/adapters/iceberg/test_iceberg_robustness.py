"""What the adapter does with views it cannot read, stalled servers and misbehaving servers.

Unreadable views are made on the real Iceberg REST server. A stalled server and servers that
break the protocol (a namespace listing that ignores `?parent=`, metadata from a newer Iceberg)
are tiny local stubs: the real server cannot be made to misbehave that way.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
import requests
import requests.adapters

import tests.helpers.servers
from reconciler.adapters import open_adapter
from reconciler.adapters.base import AdapterError, Marker, WriteContext
from reconciler.adapters.iceberg.adapter import UNREADABLE_FORMAT, IcebergRestAdapter
from reconciler.core.model import ViewId
from reconciler.plan.planner import PlanOptions, build_plan
from tests.adapters.iceberg.test_iceberg_adapter import PROJECT, make_spec
from tests.helpers.iceberg import IcebergServer
from tests.helpers.servers import free_port

from . import conftest

pytestmark = pytest.mark.slow  # starts a JVM, Spark or a slow backend (pytest -m 'not slow' skips it)

DIGEST = "sha256:" + "0" * 64


@pytest.fixture
def adapter(iceberg_server: IcebergServer) -> Iterator[IcebergRestAdapter]:
    a = open_adapter("lake", {"type": "iceberg-rest", "uri": iceberg_server.uri})
    assert isinstance(a, IcebergRestAdapter)
    yield a
    a.close()


def create_raw_view(server: IcebergServer, namespace: str, name: str, fields: list[dict[str, Any]],
                    dialect: str = "spark", properties: dict[str, str] | None = None) -> None:
    """Another tool creates a view over raw HTTP (CreateViewRequest), valid for Iceberg."""
    body = {"name": name, "schema": {"type": "struct", "schema-id": 0, "fields": fields},
            "view-version": {"version-id": 1, "schema-id": 0, "timestamp-ms": 1_700_000_000_000,
                             "summary": {"engine-name": "other"},
                             "representations": [{"type": "sql", "sql": "SELECT 1 AS id", "dialect": dialect}],
                             "default-namespace": [namespace]},
            "properties": properties or {}}
    r = requests.post(f"{server.uri}/v1/namespaces/{namespace}/views", data=json.dumps(body),
                      headers={"Content-Type": "application/json"}, timeout=5)
    assert r.status_code == 200, r.text


def field(fid: int, name: str, ftype: str = "long") -> dict[str, Any]:
    return {"id": fid, "name": name, "type": ftype, "required": False}


# ------------------------------------------------------------- unreadable views
def test_unreadable_views_are_read_only_placeholders_that_block_create(
        adapter: IcebergRestAdapter, iceberg_server: IcebergServer, namespace: str) -> None:
    # Iceberg names are case-sensitive, so `id` and `ID` are two columns; our model refuses them.
    create_raw_view(iceberg_server, namespace, "dup_cols", [field(1, "id"), field(2, "ID")],
                    properties={"viewsync.managed-by": PROJECT, "viewsync.spec-digest": DIGEST})
    # a dialect name our model refuses
    create_raw_view(iceberg_server, namespace, "odd_dialect", [field(1, "id")], dialect="Spark SQL")

    snap = adapter.fetch(namespace)
    assert set(snap.views) == {"dup_cols", "odd_dialect"}
    dup, odd = snap.views["dup_cols"], snap.views["odd_dialect"]
    for live in (dup, odd):
        assert live.writable is False and live.format == UNREADABLE_FORMAT
        assert live.native_version == "1" and live.fingerprint
    assert dup.managed_by == PROJECT and dup.spec_digest == DIGEST
    assert dup.spec.sql_for("spark") == "SELECT 1 AS id" and dup.spec.columns == []
    assert odd.managed_by is None
    assert len(snap.warnings) == 2
    assert any("dup_cols" in w and "duplicate column" in w for w in snap.warnings)
    assert any("odd_dialect" in w and "dialect" in w for w in snap.warnings)

    # Declaring those names is a plan error, never a create that fails with 409 in apply;
    # the foreign one is still listed as unmanaged when not declared.
    snaps = {("lake", namespace): snap}
    dup_id, odd_id = ViewId("lake", namespace, "dup_cols"), ViewId("lake", namespace, "odd_dialect")
    plan = build_plan({dup_id: make_spec(), odd_id: make_spec()}, snaps, {"lake": adapter},
                      PlanOptions(project=PROJECT), DIGEST)
    assert plan.actions == []
    assert sorted((e.code, e.view) for e in plan.errors) == [("unreadable_view", dup_id),
                                                              ("unreadable_view", odd_id)]
    assert "cannot read" in plan.errors[0].message and "'lake'" in plan.errors[0].message

    plan = build_plan({}, snaps, {"lake": adapter}, PlanOptions(project=PROJECT, prune=True,
                                                                allow_mass_drop=True), DIGEST)
    # unreadable views are never written or dropped, even ours: listed, and ours kept with a warning
    assert sorted(u.view for u in plan.unmanaged) == sorted([dup_id, odd_id])
    assert plan.actions == []
    assert any(str(dup_id) in w and "cannot manage it" in w for w in plan.warnings)
    adapter.drop(dup, WriteContext())
    assert set(adapter.fetch(namespace).views) == {"odd_dialect"}


def test_unreadable_view_does_not_break_its_neighbours(adapter: IcebergRestAdapter,
                                                      iceberg_server: IcebergServer, namespace: str) -> None:
    view = ViewId("lake", namespace, "fine")
    stored = adapter.storable(view, make_spec())
    adapter.create(view, stored, Marker(PROJECT, stored.digest()), WriteContext())
    create_raw_view(iceberg_server, namespace, "broken", [field(1, "id"), field(2, "ID")])
    snap = adapter.fetch(namespace)
    assert snap.views["fine"].writable and snap.views["fine"].spec.digest() == stored.digest()
    assert not snap.views["broken"].writable


# ------------------------------------------------------------------ stub servers
Route = Callable[[BaseHTTPRequestHandler], tuple[int, Any] | None]


class StubRest:
    """A minimal HTTP server answering GETs from `routes` (path -> status, JSON body)."""

    def __init__(self, routes: dict[str, Route | Any]) -> None:
        self.routes = routes
        self.hits: dict[str, int] = {}
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                path = urlsplit(self.path).path
                stub.hits[path] = stub.hits.get(path, 0) + 1
                route = stub.routes.get(path)
                answer = route(self) if callable(route) else (200, route) if route is not None else None
                status, body = answer if answer is not None else (404, {"error": {
                    "message": f"no route {path}", "type": "NoSuchNamespaceException", "code": 404}})
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        class Server(ThreadingHTTPServer):
            def handle_error(self, request: Any, client_address: Any) -> None:
                pass  # a client that timed out and hung up is what some tests do on purpose

        self.server = Server(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def uri(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def stub() -> Iterator[Callable[[dict[str, Any]], StubRest]]:
    made: list[StubRest] = []

    def make(routes: dict[str, Any]) -> StubRest:
        made.append(StubRest({"/v1/config": {"defaults": {}, "overrides": {}}} | routes))
        return made[-1]

    yield make
    for s in made:
        s.close()


def test_namespace_walk_survives_a_server_that_ignores_parent(stub: Callable[[dict[str, Any]], StubRest]) -> None:
    # Every listing answers the same, whatever ?parent= says; a walk without a visited set loops
    # a -> b -> a ... (the stub gives up after 50 listings so the old behaviour fails, not hangs).
    def namespaces(_: BaseHTTPRequestHandler) -> tuple[int, Any]:
        if server.hits["/v1/namespaces"] > 50:
            return 500, {"error": {"message": "looping", "type": "ServerError", "code": 500}}
        return 200, {"namespaces": [["a"], ["b"], ["a", "x"]]}

    server = stub({"/v1/namespaces": namespaces})
    a = open_adapter("lake", {"type": "iceberg-rest", "uri": server.uri})
    assert a.list_schemas() == ["a", "a.x", "b"]
    assert server.hits["/v1/namespaces"] == 4  # the top level, then once per namespace


def test_view_from_a_newer_iceberg_is_a_placeholder_not_a_failed_fetch(
        stub: Callable[[dict[str, Any]], StubRest]) -> None:
    # Iceberg v3 types (timestamp_ns) are beyond Iceberg 1.5.2, so a stub plays the newer server.
    metadata = {
        "view-uuid": "5f7a3c1e-0000-4000-8000-000000000001", "format-version": 1,
        "location": "file:///wh/a/v", "current-version-id": 1,
        "properties": {"viewsync.managed-by": PROJECT},
        "schemas": [{"type": "struct", "schema-id": 0, "fields": [field(1, "at", "timestamp_ns")]}],
        "versions": [{"version-id": 1, "schema-id": 0, "timestamp-ms": 1, "summary": {},
                      "representations": [{"type": "sql", "sql": "SELECT now() AS at", "dialect": "spark"}],
                      "default-namespace": ["a"]}],
        "version-log": [{"version-id": 1, "timestamp-ms": 1}],
    }
    server = stub({
        "/v1/namespaces/a/views": {"identifiers": [{"namespace": ["a"], "name": "v"}]},
        "/v1/namespaces/a/tables": {"identifiers": []},
        "/v1/namespaces/a/views/v": {"metadata-location": "file:///wh/a/v/m1.json", "metadata": metadata},
    })
    a = open_adapter("lake", {"type": "iceberg-rest", "uri": server.uri})
    snap = a.fetch("a")
    live = snap.views["v"]
    assert live.writable is False and live.format == UNREADABLE_FORMAT and live.managed_by == PROJECT
    assert live.spec.sql_for("spark") == "SELECT now() AS at"
    assert len(snap.warnings) == 1 and "timestamp_ns" in snap.warnings[0]


# ----------------------------------------------------------------------- timeouts
@pytest.fixture
def stalled_port() -> Iterator[int]:
    """A server that accepts connections and never answers."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    held: list[socket.socket] = []
    done = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not done.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            held.append(conn)

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield int(listener.getsockname()[1])
    done.set()
    thread.join(5)
    for conn in held:
        conn.close()
    listener.close()


def test_stalled_server_times_out_without_leaking_the_token(stalled_port: int) -> None:
    a = open_adapter("lake", {"type": "iceberg-rest", "uri": f"http://127.0.0.1:{stalled_port}",
                              "token": "tok-stalled-s3cret", "timeout": 1})
    started = time.monotonic()
    with pytest.raises(AdapterError, match="timed out") as err:
        a.fetch("anything")
    assert time.monotonic() - started < 10
    assert "tok-stalled-s3cret" not in str(err.value) and "'lake'" in str(err.value)


def test_timeout_covers_requests_after_connecting(stub: Callable[[dict[str, Any]], StubRest]) -> None:
    release = threading.Event()

    def stall(_: BaseHTTPRequestHandler) -> tuple[int, Any]:
        release.wait(30)
        return 200, {"identifiers": []}

    server = stub({"/v1/namespaces/a/views": stall})
    a = open_adapter("lake", {"type": "iceberg-rest", "uri": server.uri, "timeout": 0.5})
    started = time.monotonic()
    try:
        with pytest.raises(AdapterError, match="cannot read namespace 'a'.*timed out"):
            a.fetch("a")
    finally:
        release.set()
    assert time.monotonic() - started < 10


@pytest.mark.parametrize("bad", [0, -1, "30", True])
def test_timeout_must_be_a_positive_number(bad: Any) -> None:
    with pytest.raises(AdapterError, match="'timeout' must be a number"):
        open_adapter("lake", {"type": "iceberg-rest", "uri": "http://127.0.0.1:9", "timeout": bad})


def test_default_timeout_is_applied(adapter: IcebergRestAdapter, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[Any] = []
    send = requests.adapters.HTTPAdapter.send

    def spy(self: requests.adapters.HTTPAdapter, request: Any, **kwargs: Any) -> Any:
        seen.append(kwargs.get("timeout"))
        return send(self, request, **kwargs)

    monkeypatch.setattr(requests.adapters.HTTPAdapter, "send", spy)
    adapter.list_schemas()
    assert seen and all(t == 30.0 for t in seen)


# ------------------------------------------------------------- the server fixture
def test_missing_jdk_or_jars_fail_in_ci_and_skip_locally(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert conftest.START_TIMEOUT >= 120  # a JVM on a loaded 2-core CI machine is slow to start
    monkeypatch.setenv("VIEWSYNC_JARS_DIR", str(tmp_path / "empty-cache"))
    monkeypatch.setenv("VIEWSYNC_MAVEN_REPOSITORY", f"http://127.0.0.1:{free_port()}/maven2")  # nothing listens
    monkeypatch.setattr("shutil.which", lambda name: None)
    for require, outcome in ((False, pytest.skip.Exception), (True, pytest.fail.Exception)):
        monkeypatch.setattr(tests.helpers.servers, "REQUIRE_BACKENDS", require)
        with pytest.raises(outcome, match="cannot download org.apache.iceberg:iceberg-core:.*viewsync jars fetch"):
            conftest._jars()
        with pytest.raises(outcome, match="JDK"):
            conftest._compile([])
