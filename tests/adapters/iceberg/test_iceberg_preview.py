"""Preview environments on the Iceberg REST catalog (issue 31's acceptance): the copies read back
through the REST API, and through Spark 3.5 with Iceberg's SparkCatalog where the tests build it.

Here rather than in tests/preview/: the Spark 3.5 session is this directory's fixture."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.adapters.iceberg.spark35 import BuildError, Spark35, build
from tests.helpers.cli import run_cli
from tests.helpers.iceberg import IcebergServer
from tests.helpers.preview import chain_repo, change
from tests.helpers.servers import backend_unavailable

CATALOG = "lake"


def _config(tmp_path: Path, srv: IcebergServer) -> dict[str, Any]:
    return {"version": 1, "project": "p", "state": f"sqlite:///{tmp_path}/state.db",
            "catalogs": {CATALOG: {"type": "iceberg-rest", "uri": srv.uri}}}


def _catalog_state(srv: IcebergServer, skip: str) -> dict[str, Any]:
    """Every namespace (with its properties) and view (its current version, properties) of the
    catalog, but the preview namespace `skip`, through the REST API."""
    cat = srv.client_catalog()
    out: dict[str, Any] = {}
    for ns in cat.list_namespaces():
        name = ".".join(ns)
        if name == skip:
            continue
        out[name] = cat.load_namespace_properties(ns)
        for ident in cat.list_views(ns):
            view = cat.load_view(ident)
            out[".".join(ident)] = (view.metadata.current_version_id, dict(view.metadata.properties))
    return out


def _sql(srv: IcebergServer, ns: str, name: str) -> str:
    view = srv.client_catalog().load_view((ns, name))
    version = next(v for v in view.metadata.versions if v.version_id == view.metadata.current_version_id)
    return str(version.representations[0].root.sql)


def test_preview_on_iceberg_rest_read_back_through_rest(tmp_path: Path, iceberg_server: IcebergServer,
                                                        namespace: str) -> None:
    repo = chain_repo(tmp_path / "repo", _config(tmp_path, iceberg_server), CATALOG, namespace, "orders")
    assert run_cli(repo, "apply", "--auto-approve").code == 0
    preview = f"{namespace}__pr7"
    before = _catalog_state(iceberg_server, preview)
    change(repo, CATALOG, namespace, "orders")
    res = run_cli(repo, "preview", "up", "--env", "pr7", "--base", "main", "-f", "json")
    assert res.code == 0, res.text
    assert json.loads(res.out)["schemas_created"] == [f"{CATALOG}.{preview}"]
    cat = iceberg_server.client_catalog()
    assert sorted(i[-1] for i in cat.list_views((preview,))) == ["a", "b", "c"]
    assert _sql(iceberg_server, preview, "a") == f"SELECT id, amount FROM {namespace}.orders WHERE amount > 100"
    assert _sql(iceberg_server, preview, "b") == f"SELECT id, amount * 2 AS doubled FROM {preview}.a"
    assert _sql(iceberg_server, preview, "c").endswith(f"FROM {preview}.b")
    props = dict(cat.load_view((preview, "c")).metadata.properties)
    assert props["viewsync.preview"] == "pr7" and props["viewsync.managed-by"] == "p"
    assert cat.load_namespace_properties((preview,)).get("viewsync.preview") == "pr7"
    assert _catalog_state(iceberg_server, preview) == before

    again = run_cli(repo, "preview", "up", "--env", "pr7", "--base", "main", "-f", "json")
    assert again.code == 0 and json.loads(again.out)["steps"] == []
    assert run_cli(repo, "preview", "down", "--env", "pr7").code == 0
    assert (preview,) not in cat.list_namespaces()
    assert _catalog_state(iceberg_server, "") == before


@pytest.fixture(scope="module")
def spark35(iceberg_server: IcebergServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Spark35]:
    try:
        python, jars = build()
        session = Spark35(python, jars, iceberg_server.uri, CATALOG, tmp_path_factory.mktemp("spark35"))
    except BuildError as exc:
        backend_unavailable(f"Spark 3.5 + Iceberg SparkCatalog: {exc}")
    try:
        yield session
    finally:
        session.close()


@pytest.mark.slow
def test_spark35_reads_the_preview_of_c(tmp_path: Path, iceberg_server: IcebergServer, namespace: str,
                                        spark35: Spark35) -> None:
    spark35.rows(f"CREATE TABLE {CATALOG}.{namespace}.orders (id BIGINT, amount BIGINT) USING iceberg")
    spark35.rows(f"INSERT INTO {CATALOG}.{namespace}.orders VALUES (1, 50), (2, 150), (3, 500)")
    repo = chain_repo(tmp_path / "repo", _config(tmp_path, iceberg_server), CATALOG, namespace, "orders")
    assert run_cli(repo, "apply", "--auto-approve").code == 0
    change(repo, CATALOG, namespace, "orders")
    assert run_cli(repo, "preview", "up", "--env", "pr7", "--base", "main").code == 0
    assert spark35.rows(f"SELECT n, total FROM {CATALOG}.{namespace}__pr7.c") == [[2, 1300]]
    assert spark35.rows(f"SELECT n, total FROM {CATALOG}.{namespace}.c") == [[3, 1400]]
    assert run_cli(repo, "preview", "down", "--env", "pr7").code == 0
