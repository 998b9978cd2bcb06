"""SQLAlchemy engines for our own SQL stores (the managed catalog, the state store).

Each store owns its engine and disposes of it on close(): nothing is cached per
process, so closing a workspace releases every connection it opened.
"""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import sqlalchemy as sa
from sqlalchemy.engine import Engine

from reconciler.db.busy import BUSY_TIMEOUT_S
from reconciler.db.timeouts import sql_connect_args

# The Python module a SQLAlchemy driver imports -> the package that provides it.
_DRIVER_PACKAGES = {
    "MySQLdb": "mysqlclient", "psycopg2": "psycopg2-binary", "psycopg": "psycopg[binary]", "pymysql": "pymysql",
    "mysql": "mysql-connector-python", "mariadb": "mariadb", "pg8000": "pg8000", "asyncpg": "asyncpg",
    "pyodbc": "pyodbc", "pymssql": "pymssql", "oracledb": "oracledb", "cx_Oracle": "cx_Oracle",
}
# A backend -> (module, URL scheme) of the driver viewsync depends on (pyproject.toml).
_OURS = {"postgresql": ("psycopg", "postgresql+psycopg"), "mysql": ("pymysql", "mysql+pymysql"),
         "mariadb": ("pymysql", "mariadb+pymysql")}


def missing_driver(url: str | sa.URL, exc: ImportError) -> str:
    """Why a URL's driver cannot be loaded, and what to do: the package to install, or the
    scheme of a driver that is installed."""
    parsed = sa.make_url(url) if isinstance(url, str) else url
    scheme = parsed.drivername
    if not isinstance(exc, ModuleNotFoundError) or not exc.name:  # installed, but broken
        return f"the driver of {scheme}:// cannot be loaded ({str(exc).strip() or type(exc).__name__})"
    module = exc.name.split(".")[0]
    text = (f"the driver of {scheme}:// is not installed (no Python module {module!r}): "
            f"pip install '{_DRIVER_PACKAGES.get(module, module)}'")
    ours = _OURS.get(parsed.get_backend_name())
    if ours is not None and ours[1] != scheme and importlib.util.find_spec(ours[0]) is not None:
        text += f", or write the URL as {ours[1]}://..., whose driver is installed"
    return text


def create_engine(url: str) -> Engine:
    """An engine with connection timeouts (reconciler.db.timeouts). Creates nothing: the
    SQLite file and its directory are made by the first write (ensure_tables)."""
    try:
        eng = sa.create_engine(url, future=True, connect_args=sql_connect_args(url))
    except ImportError as exc:  # the dialect's driver: SQLAlchemy imports it here
        raise sa.exc.NoSuchModuleError(missing_driver(url, exc)) from None
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
