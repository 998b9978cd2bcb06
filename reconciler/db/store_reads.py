"""Read-only SQL against one of our own stores, without SQLAlchemy where SQLite's own module will do.

A plan only reads. On the embedded default (a SQLite file) importing SQLAlchemy cost more
than all of a plan's reads together (0.2 s against 0.04 s for 10,000 views), so a plain
`sqlite:///path` URL is read with the standard library's sqlite3; every other URL
(PostgreSQL, in-memory SQLite, a URL with options or escapes) through a SQLAlchemy engine.
Statements are text with :named parameters, which both accept, so each is written once.

Neither reader creates anything: an absent SQLite file reads as a store without tables.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from reconciler.db.busy import BUSY_TIMEOUT_S

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

Row = Sequence[Any]
_PLAIN_SQLITE = "sqlite:///"


class ReadFailed(Exception):
    """A read the store refused; `cause` is the driver's exception."""

    def __init__(self, cause: BaseException) -> None:
        super().__init__(str(cause))
        self.cause = cause


def sqlite_file(url: str) -> str | None:
    """The file of a plain `sqlite:///path` URL, or None for any URL SQLAlchemy must read
    (another backend or driver, in-memory, URL options, percent-escapes)."""
    if not url.startswith(_PLAIN_SQLITE) or any(c in url for c in "?#%"):
        return None
    path = url[len(_PLAIN_SQLITE):]
    return None if path in ("", ":memory:") else path


class Reads:
    """Rows of read-only statements. `backend` is the SQLAlchemy dialect name ("sqlite",
    "postgresql"...)."""

    backend: str

    def rows(self, sql: str, params: dict[str, Any]) -> list[Row]:
        """All rows of one statement; raises ReadFailed."""
        raise NotImplementedError

    def has_tables(self, names: Iterable[str]) -> bool:
        """Whether every named table exists (False for an absent store); raises ReadFailed."""
        raise NotImplementedError

    def close(self) -> None:
        """No read starts after this one returns."""


class SqliteFileReads(Reads):
    """One short connection per read: connections cannot cross threads, and a plan's reads
    run on a prefetch thread. Opened with mode=rw, which never creates the file."""

    backend = "sqlite"

    def __init__(self, path: str) -> None:
        self.path = os.path.abspath(path)
        self._idle = threading.Condition()  # guards the two below
        self._open = 0  # connections open now (a prefetch reads on other threads)
        self._closed = False

    def _connect(self) -> sqlite3.Connection | None:
        with self._idle:
            if self._closed:
                raise sqlite3.ProgrammingError("the store's reader was closed")
            if not os.path.exists(self.path):
                return None
            conn = sqlite3.connect(f"file:{quote(self.path)}?mode=rw", uri=True, timeout=BUSY_TIMEOUT_S)
            self._open += 1
            return conn

    def _run(self, fn: Callable[[sqlite3.Connection], list[Row]]) -> list[Row] | None:
        try:
            conn = self._connect()
            if conn is None:
                return None
            try:
                return fn(conn)
            finally:
                conn.close()
                with self._idle:
                    self._open -= 1
                    self._idle.notify_all()
        except sqlite3.Error as err:
            raise ReadFailed(err) from None

    def close(self) -> None:
        """Also waits for the reads under way (each bounded by the busy timeout): a reader
        cut off by the process's exit leaves the file's -wal/-shm behind, and a command that
        stops early (bad declarations) must leave the working tree as it found it."""
        with self._idle:
            self._closed = True
            self._idle.wait_for(lambda: self._open == 0)

    def rows(self, sql: str, params: dict[str, Any]) -> list[Row]:
        return self._run(lambda conn: conn.execute(sql, params).fetchall()) or []

    def has_tables(self, names: Iterable[str]) -> bool:
        found = self._run(lambda conn: conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
                          .fetchall())
        present = {r[0] for r in found or ()}
        return found is not None and all(n in present for n in names)


class EngineReads(Reads):
    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.backend = engine.dialect.name

    def rows(self, sql: str, params: dict[str, Any]) -> list[Row]:
        import sqlalchemy as sa

        try:
            with self.engine.connect() as conn:
                return list(conn.execute(sa.text(sql), params).all())
        except sa.exc.SQLAlchemyError as err:
            raise ReadFailed(err) from None

    def has_tables(self, names: Iterable[str]) -> bool:
        import sqlalchemy as sa

        from reconciler.db.engines import has_tables

        try:
            return has_tables(names, self.engine)
        except sa.exc.SQLAlchemyError as err:
            raise ReadFailed(err) from None
