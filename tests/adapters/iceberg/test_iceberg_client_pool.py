"""The Iceberg REST adapter's clients are pooled (reconciler.adapters.base.ClientPool), on the real
reference server behind a recording proxy: each client costs a GET /v1/config (and a token with
OAuth2), and its requests session serves one call at a time. A command opens as many clients as
it makes calls at once, not one per thread that ever called."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from reconciler.adapters import open_adapter
from reconciler.adapters.base import Marker, WriteContext
from reconciler.adapters.iceberg.adapter import IcebergRestAdapter
from reconciler.core.model import ViewId
from tests.helpers.rest_proxy import RestProxy
from tests.helpers.specs import spec

pytestmark = pytest.mark.slow  # the Iceberg REST server is a JVM


def _configs(proxy: RestProxy) -> int:
    return sum(1 for r in proxy.requests() if r.method == "GET" and r.route.endswith("/v1/config"))


def _in_thread(fn: Callable[[], object]) -> None:
    t = threading.Thread(target=fn)
    t.start()
    t.join()


def test_threads_calling_one_after_another_share_one_client(namespace: str, proxied: RestProxy) -> None:
    adapter = open_adapter("lake", {"type": "iceberg-rest", "uri": proxied.uri})
    assert isinstance(adapter, IcebergRestAdapter)
    try:
        view = ViewId("lake", namespace, "pooled")
        # a write, then reads, each on a thread of its own (as apply's writers and a plan's readers)
        _in_thread(lambda: adapter.create(view, spec("SELECT 1 AS x"), Marker("p", "d"), WriteContext()))
        seen: list[object] = []
        for _ in range(3):
            _in_thread(lambda: seen.append(adapter.fetch(namespace).views.get("pooled")))
        assert all(v is not None for v in seen)
        assert adapter.connections_opened == 1
        assert _configs(proxied) == 1, [f"{r.method} {r.route}" for r in proxied.requests()]
    finally:
        adapter.close()


def test_a_call_while_another_holds_a_client_opens_its_own(namespace: str, proxied: RestProxy) -> None:
    """Two calls in flight together never share a requests session: the second opens a client,
    and both are reused after."""
    adapter = open_adapter("lake", {"type": "iceberg-rest", "uri": proxied.uri})
    assert isinstance(adapter, IcebergRestAdapter)
    inside, release = threading.Event(), threading.Event()

    def hold() -> None:  # a call under way on another thread: its client stays leased
        with adapter._catalogs.lease():
            inside.set()
            release.wait(30)

    t = threading.Thread(target=hold)
    try:
        t.start()
        assert inside.wait(30)
        assert adapter.fetch(namespace).exists
        assert adapter.connections_opened == 2
        release.set()
        t.join()
        for _ in range(2):
            _in_thread(lambda: adapter.fetch(namespace))
        assert adapter.connections_opened == 2
        assert _configs(proxied) == 2
    finally:
        release.set()
        t.join()
        adapter.close()
