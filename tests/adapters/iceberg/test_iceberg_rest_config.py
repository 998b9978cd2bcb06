"""What every real Iceberg REST catalog may do, on the real reference server behind a recording proxy
(tests/helpers/rest_proxy.py): list only some `endpoints` in /v1/config (a view write it does not
list is refused in one line before anything is written), hand out OAuth2 tokens for client
credentials with a scope, and give the `prefix` for a `warehouse` in its /v1/config overrides."""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from pyiceberg.catalog.rest import RestCatalog

from reconciler.adapters import open_adapter
from reconciler.adapters.base import AdapterError, Marker, WriteContext
from reconciler.adapters.iceberg import endpoints as ep
from reconciler.core.model import ViewId
from tests.helpers.cli import CliResult, run_cli
from tests.helpers.iceberg import IcebergServer
from tests.helpers.rest_proxy import RestProxy, rest_proxy
from tests.helpers.specs import spec

pytestmark = pytest.mark.slow  # the Iceberg REST server is a JVM


def _view(name: str, sql: str = "SELECT 1 AS x") -> dict[str, Any]:
    return {"name": name, "columns": [{"name": "x", "type": "int"}],
            "representations": [{"dialect": "spark", "sql": sql}]}


class Repo:
    """A git repository of viewsync.yaml (catalog `lake`) and views/lake/<ns>.yaml."""

    def __init__(self, root: Path, ns: str, catalog: dict[str, Any], env: dict[str, str] | None = None) -> None:
        self.root, self.ns, self.env = root, ns, env or {}
        self.state = root.parent / "state.db"
        (root / "views" / "lake").mkdir(parents=True)
        (root / "viewsync.yaml").write_text(yaml.safe_dump({
            # a project of its own: prune never reaches the views of other tests on the server
            "version": 1, "project": ns, "state": f"sqlite:///{self.state}",
            "catalogs": {"lake": {"type": "iceberg-rest", **catalog}},
            "policy": {"prune": True, "max_drop_fraction": 1.0},
        }, sort_keys=False))
        self.git("init", "-q", "-b", "main")

    def git(self, *args: str) -> None:
        subprocess.run(["git", "-c", "user.name=CI", "-c", "user.email=ci@example.com", *args], cwd=self.root,
                       check=True, capture_output=True)

    def declare(self, *views: dict[str, Any]) -> None:
        """Commit these views as the whole of views/lake/<ns>.yaml."""
        (self.root / "views" / "lake" / f"{self.ns}.yaml").write_text(yaml.safe_dump(
            {"catalog": "lake", "schema": self.ns, "views": list(views)}, sort_keys=False))
        self.git("add", "-A")
        self.git("commit", "-q", "--allow-empty", "-m", "views")

    def run(self, *args: str, process: bool = True) -> CliResult:
        return run_cli(self.root, *args, env={"NO_COLOR": "1", **self.env}, process=process)

    def rows(self, sql: str, *params: Any) -> list[tuple[Any, ...]]:
        with sqlite3.connect(self.state) as db:
            return list(db.execute(sql, params))

    def dump(self) -> str:
        """Every row of every table of the state store, as text."""
        with sqlite3.connect(self.state) as db:
            tables = [t for (t,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
            return "\n".join(repr(row) for t in tables for row in db.execute(f'SELECT * FROM "{t}"'))


def _ns(request: pytest.FixtureRequest) -> str:
    return "cfg_" + hashlib.sha1(request.node.nodeid.encode()).hexdigest()[:8]


def _writes(proxy: RestProxy) -> list[str]:
    """The view writes that went through the proxy."""
    return [f"{r.method} {r.route}" for r in proxy.requests()
            if r.method in ("POST", "DELETE") and "/views" in r.route]


# ---------------------------------------------------------------------------------- endpoints

def test_a_view_write_the_server_does_not_list_is_refused_before_anything_is_written(
        tmp_path: Path, request: pytest.FixtureRequest, iceberg_server: IcebergServer, proxied: RestProxy) -> None:
    ns = _ns(request)
    iceberg_server.client_catalog().create_namespace(ns)
    repo = Repo(tmp_path / "repo", ns, {"uri": proxied.uri})
    direct = open_adapter("lake", {"type": "iceberg-rest", "uri": iceberg_server.uri})

    proxied.hidden = {ep.DROP_VIEW}
    repo.declare(_view("a"), _view("b"))
    first = repo.run("apply", "--auto-approve")  # creates only: the missing drop does not matter
    assert first.code == 0, first.text
    before = {name: live.fingerprint for name, live in direct.fetch(ns).views.items()}
    assert set(before) == {"a", "b"}

    # an update of a and a drop of b: the drop is refused, and so is the whole run
    repo.declare(_view("a", "SELECT 2 AS x"))
    proxied.clear()
    refused = repo.run("apply", "--auto-approve")
    assert refused.code == 1, refused.text
    line = (f"Error: catalog 'lake': the REST server does not offer "
            f"\"DELETE /v1/{{prefix}}/namespaces/{{namespace}}/views/{{view}}\" (to drop lake.{ns}.b); "
            f"nothing was applied")
    assert refused.err.strip() == line, refused.err
    assert _writes(proxied) == []  # not one write request reached the server
    assert {name: live.fingerprint for name, live in direct.fetch(ns).views.items()} == before
    [(run_id, outcome, summary)] = repo.rows(
        "SELECT run_id, outcome, summary FROM vs_runs ORDER BY started_at DESC LIMIT 1")
    assert outcome == "refused" and json.loads(summary)["reason"] == "refused by the catalog"
    assert repo.rows("SELECT action, view_name FROM vs_audit WHERE run_id = ?", run_id) == []
    assert repo.rows("SELECT count(*) FROM vs_versions") == [(2,)]  # the two creates only

    # the same server takes a plan without a drop: the update alone applies
    repo.declare(_view("a", "SELECT 2 AS x"), _view("b"))
    proxied.clear()
    updated = repo.run("apply", "--auto-approve")
    assert updated.code == 0, updated.text
    assert _writes(proxied) == [f"POST /v1/namespaces/{ns}/views/a"]
    assert direct.fetch(ns).views["a"].spec.representations[0].sql == "SELECT 2 AS x"

    # a server that does not list the create endpoint refuses a new view the same way
    proxied.hidden = {ep.CREATE_VIEW}
    repo.declare(_view("a", "SELECT 2 AS x"), _view("b"), _view("c"))
    proxied.clear()
    no_create = repo.run("apply", "--auto-approve")
    assert no_create.code == 1
    assert no_create.err.strip() == (f"Error: catalog 'lake': the REST server does not offer "
                                     f"\"POST /v1/{{prefix}}/namespaces/{{namespace}}/views\" (to create "
                                     f"lake.{ns}.c); nothing was applied")
    assert _writes(proxied) == [] and "c" not in direct.fetch(ns).views
    direct.close()


def test_a_server_listing_no_endpoints_is_assumed_to_offer_the_view_endpoints(
        tmp_path: Path, request: pytest.FixtureRequest, iceberg_server: IcebergServer, proxied: RestProxy) -> None:
    """Legacy servers (and Nessie) omit `endpoints`: viewsync creates, replaces and drops views there."""
    ns = _ns(request)
    iceberg_server.client_catalog().create_namespace(ns)
    proxied.omit_endpoints = True
    repo = Repo(tmp_path / "repo", ns, {"uri": proxied.uri})
    repo.declare(_view("a"), _view("b"))
    assert repo.run("apply", "--auto-approve").code == 0
    repo.declare(_view("a", "SELECT 3 AS x"))
    applied = repo.run("apply", "--auto-approve")
    assert applied.code == 0, applied.text
    assert sorted(_writes(proxied)) == [f"DELETE /v1/namespaces/{ns}/views/b",
                                        f"POST /v1/namespaces/{ns}/views", f"POST /v1/namespaces/{ns}/views",
                                        f"POST /v1/namespaces/{ns}/views/a"]
    # no credentials configured: no Authorization header (pyiceberg alone sends "Bearer None")
    assert [r.headers.get("Authorization") for r in proxied.requests()] == [None] * len(proxied.requests())


def test_a_server_that_lists_no_view_load_endpoint_cannot_be_read(proxied: RestProxy) -> None:
    proxied.hidden = {ep.LOAD_VIEW}
    a = open_adapter("lake", {"type": "iceberg-rest", "uri": proxied.uri})
    with pytest.raises(AdapterError) as err:
        a.list_schemas()
    assert str(err.value) == ("catalog 'lake': not usable: the REST server does not offer "
                              "\"GET /v1/{prefix}/namespaces/{namespace}/views/{view}\"")
    a.close()


# ---------------------------------------------------------------------------------- OAuth2

SCOPE = "PRINCIPAL_ROLE:viewsync catalog"


def test_oauth2_client_credentials_with_a_scope(tmp_path: Path, request: pytest.FixtureRequest,
                                                iceberg_auth_server: IcebergServer,
                                                caplog: pytest.LogCaptureFixture) -> None:
    srv = iceberg_auth_server
    assert srv.client and srv.token
    client_id, secret = srv.client.split(":", 1)
    ns = _ns(request)
    RestCatalog("setup", uri=srv.uri, token=srv.token).create_namespace(ns)
    with rest_proxy(srv.uri) as proxy:
        repo = Repo(tmp_path / "repo", ns, {"uri": proxy.uri, "credential": "${LAKE_CREDENTIAL}",
                                            "oauth2-server-uri": f"{proxy.uri}/v1/oauth/tokens", "scope": SCOPE},
                    env={"LAKE_CREDENTIAL": srv.client})
        repo.declare(_view("a"), _view("b"))
        caplog.set_level(logging.DEBUG)  # every library's log, as a user debugging would see it
        outputs = [repo.run("plan", process=False), repo.run("apply", "--auto-approve", process=False),
                   repo.run("history", f"lake.{ns}.a", process=False)]
        assert [r.code for r in outputs] == [0, 0, 0], [r.text for r in outputs]
        seen = proxy.requests()

    tokens = [r for r in seen if r.route == "/v1/oauth/tokens"]
    assert tokens, "no token request"
    for r in tokens:
        assert r.method == "POST"
        assert r.form() == {"grant_type": ["client_credentials"], "client_id": [client_id],
                            "client_secret": [secret], "scope": [SCOPE]}
    catalog = [r for r in seen if r.route != "/v1/oauth/tokens"]
    assert any(r.route == f"/v1/{srv.prefix}/namespaces/{ns}/views" and r.method == "POST" for r in catalog)
    for r in catalog:
        assert r.headers.get("Authorization") == f"Bearer {srv.token}", f"{r.method} {r.path}"
        assert secret not in r.path + json.dumps(r.headers) + r.body.decode()

    shown = "\n".join(r.text for r in outputs)
    for hidden in (secret, srv.client, srv.token):  # the token the server issued is not shown either
        assert hidden not in shown
        assert hidden not in repo.dump()
        assert hidden not in caplog.text


# ---------------------------------------------------------------------------------- warehouse and prefix

def test_the_prefix_is_the_one_config_gives_for_the_warehouse(request: pytest.FixtureRequest,
                                                              iceberg_auth_server: IcebergServer) -> None:
    """The reference server with a prefix announces it in /v1/config's overrides: viewsync uses that
    prefix, whether the catalog names none or another one (the server's overrides win, as the REST
    spec says), and asks /v1/config for the configured warehouse."""
    srv = iceberg_auth_server
    assert srv.prefix and srv.token
    ns = _ns(request)
    with rest_proxy(srv.uri) as proxy:
        for i, given in enumerate(({}, {"prefix": "not-the-servers"})):
            proxy.clear()
            a = open_adapter("lake", {"type": "iceberg-rest", "uri": proxy.uri, "token": srv.token,
                                      "warehouse": "wh1", **given})
            try:
                vid = ViewId("lake", ns, f"v{i}")
                stored = a.storable(vid, spec("SELECT 1 AS x", columns=[{"name": "x", "type": "int"}]))
                a.create(vid, stored, Marker("p", stored.digest()), WriteContext(actor="t"))
                assert a.fetch(ns).views[vid.name].spec_digest == stored.digest()
            finally:
                a.close()
            seen = proxy.requests()
            assert [(r.route, r.query) for r in seen[:1]] == [("/v1/config", {"warehouse": ["wh1"]})]
            assert seen[1:] and all(r.route.startswith(f"/v1/{srv.prefix}/") for r in seen[1:]), \
                [r.path for r in seen]
