"""Real PostgreSQL, MariaDB and SQLite databases for the JDBC adapter tests.

Every test gets its own database (PostgreSQL, MariaDB) or file (SQLite) with a
unique name, dropped in a finalizer, so the suite can run twice in a row and
next to other runs.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from tests.helpers.dbs import START_HINT
from tests.helpers.jdbc import Db, unique
from tests.helpers.servers import backend_unavailable

PG_ADMIN = os.environ.get("VIEWSYNC_TEST_PG", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
MYSQL_ADMIN = os.environ.get("VIEWSYNC_TEST_MYSQL", "mysql+pymysql://root@127.0.0.1:3306/test")


def _admin_engine(url: str, reason: str) -> sa.Engine:
    engine = sa.create_engine(url, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect():
            pass
    except sa.exc.SQLAlchemyError as exc:
        engine.dispose()
        backend_unavailable(f"{reason} is not reachable ({type(exc).__name__}); {START_HINT}")
    return engine


@pytest.fixture(scope="session")
def pg_admin() -> Iterator[sa.Engine]:
    engine = _admin_engine(PG_ADMIN, "PostgreSQL at 127.0.0.1:5432")
    yield engine
    engine.dispose()


@pytest.fixture(scope="session")
def mysql_admin() -> Iterator[sa.Engine]:
    engine = _admin_engine(MYSQL_ADMIN, "MariaDB at 127.0.0.1:3306")
    yield engine
    engine.dispose()


@pytest.fixture
def pg_db(pg_admin: sa.Engine) -> Iterator[Db]:
    name = unique("vsjdbc")
    with pg_admin.connect() as conn:
        conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
    url = sa.engine.make_url(PG_ADMIN).set(database=name)
    engine = sa.create_engine(url)
    try:
        yield Db("postgres", url.render_as_string(hide_password=False), "public", engine)
    finally:
        engine.dispose()
        with pg_admin.connect() as conn:
            conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def mysql_db(mysql_admin: sa.Engine) -> Iterator[Db]:
    name = unique("vsjdbc")
    with mysql_admin.connect() as conn:
        conn.exec_driver_sql(f"CREATE DATABASE `{name}`")
    url = sa.engine.make_url(MYSQL_ADMIN).set(database=name)
    engine = sa.create_engine(url)
    db = Db("mysql", url.render_as_string(hide_password=False), name, engine)
    try:
        yield db
    finally:
        engine.dispose()
        with mysql_admin.connect() as conn:
            for extra in [name, *db.extra_databases]:
                conn.exec_driver_sql(f"DROP DATABASE IF EXISTS {db.q(extra)}")


@pytest.fixture
def sqlite_db(tmp_path: Path) -> Iterator[Db]:
    url = f"sqlite:///{tmp_path / 'views.db'}"
    engine = sa.create_engine(url)
    with engine.connect() as conn:  # creates the (empty) file: the adapter opens it read-only
        conn.exec_driver_sql("PRAGMA user_version")
    try:
        yield Db("sqlite", url, "main", engine)
    finally:
        engine.dispose()


@pytest.fixture(params=["postgres", "mysql", "sqlite"])
def db(request: pytest.FixtureRequest) -> Db:
    fixture = {"postgres": "pg_db", "mysql": "mysql_db", "sqlite": "sqlite_db"}[request.param]
    result: Db = request.getfixturevalue(fixture)
    return result
