"""The deadline (`reconciler.adapters.deadline`) for HTTP requests made through urllib3
(requests for Iceberg REST, botocore for Glue).

Inside `deadline(seconds)`, a request (connect, redirects, retries and the whole
response, body included) ends by one deadline: every read of a response waits at most
the time left, then fails as urllib3's read timeout. No threads: each socket read's own
timeout is set to the time left.
"""

from __future__ import annotations

import http.client
import io
import socket
from collections.abc import Callable
from typing import Any

import requests
from botocore.awsrequest import AWSHTTPConnection, AWSHTTPConnectionPool, AWSHTTPSConnection, AWSHTTPSConnectionPool
from requests.adapters import HTTPAdapter
from urllib3 import PoolManager, ProxyManager
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

from reconciler.adapters.deadline import current, deadline, left_until


class _DeadlineReader(io.RawIOBase):
    """The response's socket reads, each waiting at most until the deadline."""

    def __init__(self, sock: socket.socket, deadline: float) -> None:
        super().__init__()
        # the socket's own reader: it keeps the socket open while the response is read
        self._raw = sock.makefile("rb", buffering=0)
        self._sock, self._deadline = sock, deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int | None:
        self._sock.settimeout(left_until(self._deadline))
        return self._raw.readinto(buffer)

    def close(self) -> None:
        self._raw.close()
        super().close()


class _DeadlineSocket:
    """What http.client's response asks of a socket (`makefile`), with the deadline."""

    def __init__(self, sock: socket.socket, deadline: float) -> None:
        self._sock, self._deadline = sock, deadline

    def makefile(self, mode: str) -> io.BufferedReader:
        return io.BufferedReader(_DeadlineReader(self._sock, self._deadline))


class _DeadlineResponse(http.client.HTTPResponse):
    def __init__(self, sock: socket.socket, *args: Any, **kwargs: Any) -> None:
        end = current()
        super().__init__(sock if end is None else _DeadlineSocket(sock, end),  # type: ignore[arg-type]
                         *args, **kwargs)


class _DeadlineConnection(HTTPConnection):
    """Mixed into a urllib3 connection class: responses read by the deadline, and a
    connect (of a redirect or retry too) waits no longer than the time left."""

    response_class = _DeadlineResponse

    def connect(self) -> None:
        end = current()
        if end is not None:
            left = left_until(end)
            self.timeout = min(self.timeout, left) if isinstance(self.timeout, int | float) else left
        super().connect()


class _HTTPConnection(_DeadlineConnection):
    pass


class _HTTPSConnection(_DeadlineConnection, HTTPSConnection):
    pass


class _AWSHTTPConnection(_DeadlineConnection, AWSHTTPConnection):  # type: ignore[misc]  # botocore: untyped
    pass


class _AWSHTTPSConnection(_DeadlineConnection, AWSHTTPSConnection):  # type: ignore[misc]
    pass


class _HTTPPool(HTTPConnectionPool):
    ConnectionCls = _HTTPConnection


class _HTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _HTTPSConnection


class _AWSHTTPPool(AWSHTTPConnectionPool):  # type: ignore[misc]
    ConnectionCls = _AWSHTTPConnection


class _AWSHTTPSPool(AWSHTTPSConnectionPool):  # type: ignore[misc]
    ConnectionCls = _AWSHTTPSConnection


_POOLS = {"http": _HTTPPool, "https": _HTTPSPool}


def use_deadline_pools(session: requests.Session) -> None:
    """Make every mounted adapter's connections honour the deadline, through an HTTP(S)
    proxy too (idempotent)."""
    for adapter in session.adapters.values():
        if isinstance(adapter, HTTPAdapter) and not hasattr(adapter, "_viewsync_bounded"):
            adapter.poolmanager.pool_classes_by_scheme = _POOLS
            adapter.proxy_manager_for = _bounded_proxies(adapter.proxy_manager_for)  # type: ignore[method-assign]
            adapter._viewsync_bounded = True  # type: ignore[attr-defined]


def _bounded_proxies(make: Callable[..., PoolManager]) -> Callable[..., PoolManager]:
    def proxy_manager_for(proxy: str, **kwargs: Any) -> PoolManager:
        manager = make(proxy, **kwargs)
        if type(manager) is ProxyManager:  # not SOCKS: its pools have their own connection classes
            manager.pool_classes_by_scheme = _POOLS
        return manager
    return proxy_manager_for


def bound_requests(session: requests.Session, seconds: float) -> None:
    """Every request of `session` (redirects and reading the body included) takes at most
    `seconds` of wall time; a longer one raises requests' timeout/connection errors."""
    use_deadline_pools(session)
    request = session.request

    def bounded(method: str, url: str | bytes, *args: Any, **kwargs: Any) -> requests.Response:
        with deadline(seconds):
            if kwargs.get("timeout") is None:
                kwargs["timeout"] = seconds  # connect, and a first bound on each read
            return request(method, url, *args, **kwargs)

    session.request = bounded  # type: ignore[method-assign]


def bound_botocore(client: Any) -> None:
    """Make a botocore client's connections honour the deadline. botocore has no public
    hook for its connection classes: its URLLib3Session keeps them in `_pool_classes_by_scheme`
    (proxy managers are given the same)."""
    http_session: Any = getattr(client._endpoint, "http_session", None)
    if not hasattr(http_session, "_pool_classes_by_scheme") or not hasattr(http_session, "_manager"):
        return  # another botocore: its per-read timeouts still apply (the hung-server tests say so)
    pools = {"http": _AWSHTTPPool, "https": _AWSHTTPSPool}
    http_session._pool_classes_by_scheme = pools
    http_session._manager.pool_classes_by_scheme = pools
