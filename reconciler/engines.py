"""SQLAlchemy engines for our own SQL stores (the managed catalog, the state store).

Each store owns its engine and disposes of it on close(): nothing is cached per
process, so closing a workspace releases every connection it opened.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from reconciler.store_reads import BUSY_TIMEOUT_S
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
            cur.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_S * 1000}")
            cur.close()
    return eng


def _sqlite_file(engine: Engine) -> Path | None:
    if engine.dialect.name == "sqlite" and engine.url.database not in (None, "", ":memory:"):
        return Path(engine.url.database)
    return None


def has_tables(names: Iterable[str], engine: Engine) -> bool:
    """Whether the store holds these tables, without creating anything (not even
    the SQLite file): read-only commands read an absent store as empty."""
    path = _sqlite_file(engine)
    if path is not None and not path.exists():
        return False
    with engine.connect() as conn:
        present = set(sa.inspect(conn).get_table_names())
    return all(name in present for name in names)


def ensure_tables(meta: sa.MetaData, engine: Engine) -> None:
    """create_all that survives another process creating the same tables at the same moment.
    Called by writers only: plan and the other read-only commands create nothing."""
    path = _sqlite_file(engine)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
    for attempt in range(5):
        try:
            meta.create_all(engine)
            return
        except (sa.exc.OperationalError, sa.exc.ProgrammingError, sa.exc.IntegrityError):
            if attempt == 4:
                raise
            time.sleep(0.1 * (attempt + 1))  # the other creator finishes; checkfirst then sees its tables


def insert_returning_ids(conn: sa.Connection, insert: sa.Insert, id_column: sa.Column[Any],
                         rows: list[dict[str, Any]]) -> list[int]:
    """Insert `rows` and return their generated ids, in the rows' order: one multi-row
    statement where the store returns ids in parameter order (SQLite 3.35+, PostgreSQL),
    else one statement per row."""
    if not rows:
        return []
    if len(rows) > 1 and conn.dialect.insert_executemany_returning_sort_by_parameter_order:
        res = conn.execute(insert.returning(id_column, sort_by_parameter_order=True), rows)
        return [int(r[0]) for r in res]
    ids = []
    for row in rows:
        res = conn.execute(insert, row)
        ids.append(int(res.inserted_primary_key[0]) if res.inserted_primary_key else 0)
    return ids
