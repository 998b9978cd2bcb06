"""SQLAlchemy engines for our own SQL stores (the managed catalog, the state store).

Each store owns its engine and disposes of it on close(): nothing is cached per
process, so closing a workspace releases every connection it opened.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from reconciler.timeouts import sql_connect_args


def create_engine(url: str) -> Engine:
    """An engine with connection timeouts (reconciler.timeouts). Creates nothing: the
    SQLite file and its directory are made by the first write (ensure_tables)."""
    eng = sa.create_engine(url, future=True, connect_args=sql_connect_args(url))
    if eng.dialect.name == "sqlite":

        @sa.event.listens_for(eng, "connect")
        def _pragmas(conn: Any, _record: Any) -> None:
            cur = conn.cursor()
            cur.execute("PRAGMA journal_mode=WAL")
            # WAL + NORMAL: no corruption on crash; only a power loss can lose the last commits.
            cur.execute("PRAGMA synchronous=NORMAL")
            # The catalog and the state store may share one SQLite file, through two engines.
            cur.execute("PRAGMA busy_timeout=30000")
            cur.close()
    return eng
