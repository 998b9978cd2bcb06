"""A wall-time limit for every HTTP request of a requests Session.

requests (urllib3) timeouts bound each socket operation, so a server trickling one
byte a second is never cut off. Here a request gets a deadline (connect, redirects
and the whole response, body included); every read of the response waits at most
until the deadline, then fails as urllib3's read timeout. No threads: each socket
read's own timeout is set to the time left.
"""

from __future__ import annotations

import http.client
import io
import socket
import time
from contextvars import ContextVar
from typing import Any

import requests
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool

# The monotonic deadline of the request this thread (context) is making, if bounded.
_DEADLINE: ContextVar[float | None] = ContextVar("viewsync_http_deadline", default=None)
MAX_REDIRECTS = 5  # a REST catalog has no reason to redirect more: a loop fails fast


def _left(deadline: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError("the request took longer than its timeout")
    return left


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
        self._sock.settimeout(_left(self._deadline))
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
        deadline = _DEADLINE.get()
        super().__init__(sock if deadline is None else _DeadlineSocket(sock, deadline),  # type: ignore[arg-type]
                         *args, **kwargs)


def _clamp_connect(conn: HTTPConnection) -> None:
    """A connect (of a redirect too) waits no longer than the time left."""
    deadline = _DEADLINE.get()
    if deadline is not None:
        left = _left(deadline)
        conn.timeout = min(conn.timeout, left) if isinstance(conn.timeout, int | float) else left


class _HTTPConnection(HTTPConnection):
    response_class = _DeadlineResponse

    def connect(self) -> None:
        _clamp_connect(self)
        super().connect()


class _HTTPSConnection(HTTPSConnection):
    response_class = _DeadlineResponse

    def connect(self) -> None:
        _clamp_connect(self)
        super().connect()


class _HTTPPool(HTTPConnectionPool):
    ConnectionCls = _HTTPConnection


class _HTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _HTTPSConnection


def use_deadline_pools(session: requests.Session) -> None:
    """Make every mounted adapter's connections honour the deadline (idempotent)."""
    for adapter in session.adapters.values():
        if isinstance(adapter, HTTPAdapter):
            adapter.poolmanager.pool_classes_by_scheme = {"http": _HTTPPool, "https": _HTTPSPool}


def bound_requests(session: requests.Session, seconds: float) -> None:
    """Every request of `session` (redirects and reading the body included) takes at most
    `seconds` of wall time; a longer one raises requests' timeout/connection errors."""
    use_deadline_pools(session)
    session.max_redirects = MAX_REDIRECTS
    request = session.request

    def bounded(method: str, url: str | bytes, *args: Any, **kwargs: Any) -> requests.Response:
        if _DEADLINE.get() is not None:  # a request made while one runs (auth): same deadline
            return request(method, url, *args, **kwargs)
        token = _DEADLINE.set(time.monotonic() + seconds)
        try:
            if kwargs.get("timeout") is None:
                kwargs["timeout"] = seconds  # connect, and a first bound on each read
            return request(method, url, *args, **kwargs)
        finally:
            _DEADLINE.reset(token)

    session.request = bounded  # type: ignore[method-assign]
