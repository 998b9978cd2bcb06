"""viewsync on a real Nessie (tests/helpers/nessie.py) beside the contract suite: a Nessie branch is
reached through the catalog's `prefix`, and what viewsync writes on a branch stays there until it
is merged (Nessie's API v2)."""

from __future__ import annotations

import json
import urllib.request
import uuid
from typing import Any

import pytest

from reconciler.adapters import open_adapter
from reconciler.adapters.base import AdapterError, Marker, WriteContext
from reconciler.core.model import ViewId
from tests.adapters.contract.conftest import nessie
from tests.adapters.metastore.glue.conftest import moto_url
from tests.helpers.rest_proxy import rest_proxy
from tests.helpers.specs import spec

pytestmark = pytest.mark.slow  # moto_server and Nessie
__all__ = ["moto_url", "nessie"]  # the fixtures, imported so pytest finds them


def _api(nessie: Any, path: str, body: dict[str, Any] | None = None) -> dict[str, Any]:
    base = nessie.iceberg_uri.rsplit("/iceberg", 1)[0]
    req = urllib.request.Request(f"{base}/api/v2/{path}", method="POST" if body is not None else "GET",
                                 data=json.dumps(body).encode() if body is not None else None,
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        return dict(json.loads(resp.read() or b"{}"))


def test_a_branch_is_reached_through_the_prefix_and_stays_apart_until_merged(nessie: Any) -> None:
    from pyiceberg.catalog.rest import RestCatalog

    schema = "b_" + uuid.uuid4().hex[:8]
    RestCatalog("nessie", uri=nessie.iceberg_uri).create_namespace(schema)
    branch = "pr_" + uuid.uuid4().hex[:6]
    main = _api(nessie, "trees/main")["reference"]
    _api(nessie, f"trees?name={branch}&type=BRANCH", {"type": "BRANCH", "name": "main", "hash": main["hash"]})

    on_main = open_adapter("lake", {"type": "iceberg-rest", "uri": nessie.iceberg_uri})
    on_branch = open_adapter("lake", {"type": "iceberg-rest", "uri": nessie.iceberg_uri, "prefix": branch})
    try:
        vid = ViewId("lake", schema, "orders_v")
        stored = on_branch.storable(vid, spec("SELECT 1 AS id"))
        on_branch.create(vid, stored, Marker("p", stored.digest()), WriteContext(actor="t"))
        assert on_branch.fetch(schema).find("orders_v", False) is not None
        assert on_main.fetch(schema).find("orders_v", False) is None  # not on main before the merge

        head = _api(nessie, f"trees/{branch}")["reference"]["hash"]
        main = _api(nessie, "trees/main")["reference"]
        _api(nessie, f"trees/main@{main['hash']}/history/merge", {"fromRefName": branch, "fromHash": head})
        merged = on_main.fetch(schema).find("orders_v", False)
        assert merged is not None and merged.managed_by == "p" and merged.spec_digest == stored.digest()
    finally:
        on_main.close()
        on_branch.close()


def test_the_prefix_and_uri_are_the_ones_nessies_config_gives_for_the_warehouse(nessie: Any) -> None:
    """Nessie's /v1/config gives the prefix of a `warehouse` (`main|warehouse`, encoded) as a default and
    its own `uri` as an override: viewsync asks for the warehouse and goes where the answer says."""
    base = nessie.iceberg_uri.rsplit("/iceberg", 1)[0]
    schema = "w_" + uuid.uuid4().hex[:8]
    with rest_proxy(base, preserve_host=True) as proxy:  # Nessie's `uri` override: back through the proxy
        a = open_adapter("lake", {"type": "iceberg-rest", "uri": f"{proxy.uri}/iceberg", "warehouse": "warehouse"})
        try:
            vid = ViewId("lake", schema, "v")
            stored = a.storable(vid, spec("SELECT 1 AS id"))
            a.create(vid, stored, Marker("p", stored.digest()), WriteContext(actor="t"))
            assert a.fetch(schema).views["v"].spec_digest == stored.digest()
        finally:
            a.close()
        seen = proxy.requests()
    assert [(r.route, r.query) for r in seen[:1]] == [("/iceberg/v1/config", {"warehouse": ["warehouse"]})]
    assert seen[1:] and all(r.route.startswith("/iceberg/v1/main%7Cwarehouse/") for r in seen[1:]), \
        [r.path for r in seen]

    with rest_proxy(base) as proxy:  # Nessie's `uri` override is then Nessie itself: only /v1/config passes here
        a = open_adapter("lake", {"type": "iceberg-rest", "uri": f"{proxy.uri}/iceberg", "warehouse": "warehouse"})
        try:
            assert "v" in a.fetch(schema).views
        finally:
            a.close()
        assert [r.route for r in proxy.requests()] == ["/iceberg/v1/config"]

    unknown = open_adapter("lake", {"type": "iceberg-rest", "uri": nessie.iceberg_uri, "warehouse": "nope"})
    with pytest.raises(AdapterError) as err:
        unknown.list_schemas()
    assert str(err.value).startswith("catalog 'lake': cannot connect to ")
    assert "Warehouse 'nope' is not known" in str(err.value) and "\n" not in str(err.value)
