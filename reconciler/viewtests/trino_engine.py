"""The user's Trino as an engine of view tests (`core.engine.Engine`): the `tests` operation
runs each query over Trino's HTTP protocol, through the `trino` client (viewsync[trino]).

Every query is a read of inline VALUES (viewtests.trino_sql); no statement that writes is ever
sent, and no catalog or schema is set on the session. Queries run a few at a time: each waits
on Trino's scheduling more than on this process.
"""

from __future__ import annotations

import datetime as dt
import math
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from reconciler.core.engine import Engine, OnProgress
from reconciler.core.errors import UserError
from reconciler.source.config import Config
from reconciler.source.engine_settings import TrinoSettings
from reconciler.viewtests import trino_sql
from reconciler.viewtests.engines import TestEngine

THREADS = 4  # queries in flight at once
# Planning, not running, is most of a test's time on Trino (its rows are a few literals): without
# statistics the cost-based join reordering and the choice of a partitioned join only add plan
# stages and scheduling. Fixed join order and broadcast joins halve a test's time on Trino 476
# (README, "One view, every engine"); neither changes any result. One driver per task: a test's
# few rows gain nothing from parallel drivers, which only add local exchanges to plan and run
# (~15% of a run's time, benchmarks/view_tests.py --engine trino).
SESSION = {"join_reordering_strategy": "NONE", "join_distribution_type": "BROADCAST",
           "enable_dynamic_filtering": "false", "task_concurrency": "1"}


class TrinoUnavailable(UserError):
    """The client is not installed, or the server does not answer."""


def _client() -> Any:
    try:
        import trino
    except ImportError:
        raise TrinoUnavailable("tests on Trino need its client: pip install 'viewsync[trino]'") from None
    return trino


def to_wire(value: Any) -> Any:
    """A value the client returned, as values.coerce reads it (a row as a mapping by field name)."""
    names = getattr(value, "_names", None)
    if isinstance(value, tuple) and names is not None:
        pairs = enumerate(zip(names, value, strict=True))
        return {str(n) if n is not None else f"_{i}": to_wire(v) for i, (n, v) in pairs}
    if isinstance(value, (list, tuple)):
        return [to_wire(v) for v in value]
    if isinstance(value, dict):
        return [[to_wire(k), to_wire(v)] for k, v in value.items()]
    if isinstance(value, float) and not math.isfinite(value):  # as values.to_wire writes them
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, (dt.time, dt.timedelta, uuid.UUID)):  # compared as text (trino_sql.type_of)
        return str(value)
    return value


class TrinoEngine:
    """One Trino, answering {"op": "tests", "queries": [{"id", "sql"}]} as the Spark child does:
    {"answers": [{"id", "schema": [{"name", "type"}], "rows"} | {"id", "error": {"class", "message"}}]}."""

    def __init__(self, settings: TrinoSettings) -> None:
        if (settings.password or settings.token) and not settings.url.startswith("https://"):
            raise TrinoUnavailable("engines.trino: a password or token is sent over https only (Trino accepts "
                                   f"credentials over TLS only), and the url is {settings.url}")
        self.settings = settings
        self._trino = _client()
        # One connection per thread, kept for the run: a connection is an HTTP session, and a new
        # one per query cost its TCP connect and session set-up each time.
        self._local = threading.local()
        self._opened: list[Any] = []
        self._lock = threading.Lock()
        started = time.monotonic()
        self._one("SELECT 1")  # reachable, and the credentials accepted
        self.start_seconds = time.monotonic() - started

    def _connect(self) -> Any:
        from urllib.parse import urlsplit

        s = self.settings
        url = urlsplit(s.url)
        auth = None
        if s.password is not None:
            auth = self._trino.auth.BasicAuthentication(s.user, s.password)
        elif s.token is not None:
            auth = self._trino.auth.JWTAuthentication(s.token)
        return self._trino.dbapi.connect(
            host=url.hostname, port=url.port or (443 if url.scheme == "https" else 80), user=s.user,
            http_scheme=url.scheme, auth=auth, verify=s.verify, request_timeout=s.timeout,
            source="viewsync-tests", session_properties=dict(SESSION))

    def _connection(self) -> Any:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = self._connect()
            with self._lock:
                self._opened.append(conn)
        return conn

    def _one(self, sql: str) -> tuple[list[dict[str, Any]], list[list[Any]]]:
        conn = self._connection()
        try:
            cur = conn.cursor()
            cur.execute(sql)
            rows = cur.fetchall()
            schema = [{"name": d[0], "type": d[1]} for d in cur.description or ()]
            return schema, [[to_wire(v) for v in r] for r in rows]
        except self._trino.exceptions.TrinoQueryError:
            raise
        except (self._trino.exceptions.TrinoConnectionError, OSError) as exc:
            self._local.conn = None  # the next query opens a new one
            raise TrinoUnavailable(f"Trino at {self.settings.url} does not answer: {exc}") from None
        except self._trino.exceptions.HttpError as exc:  # 401, 403, 5xx
            self._local.conn = None
            raise TrinoUnavailable(f"Trino at {self.settings.url} refused: {exc}") from None

    def _answer(self, item: dict[str, Any]) -> dict[str, Any]:
        try:
            schema, rows = self._one(item["sql"])
        except self._trino.exceptions.TrinoQueryError as exc:
            return {"id": item["id"], "error": {"class": exc.error_name, "message": exc.message or ""}}
        return {"id": item["id"], "schema": schema, "rows": rows}

    def call(self, request: dict[str, Any], progress: OnProgress | None = None) -> dict[str, Any]:
        if request.get("op") != "tests":
            raise UserError(f"Trino runs view tests only, not {request.get('op')!r}")
        queries = list(request.get("queries", []))
        with ThreadPoolExecutor(max_workers=THREADS, thread_name_prefix="viewsync-trino") as pool:
            return {"answers": list(pool.map(self._answer, queries))}

    def close(self) -> None:
        with self._lock:
            opened, self._opened = self._opened, []
        for conn in opened:
            conn.close()


def _open(config: Config) -> Engine:
    if config.engines.trino is None:
        raise UserError("no Trino is configured: add engines.trino (url, user) to viewsync.yaml")
    return TrinoEngine(config.engines.trino)


TEST_ENGINE = TestEngine("trino", trino_sql.FLAVOR, trino_sql.PROFILE, _open)
