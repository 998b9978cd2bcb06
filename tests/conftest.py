"""Shared fixtures: a copy of the sample repository, an in-process CLI runner,
and throwaway PostgreSQL / MariaDB databases on the machine's real servers."""

from __future__ import annotations

import contextlib
import io
import shutil
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import sqlalchemy as sa

ROOT = Path(__file__).resolve().parent.parent
PG_ADMIN_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
MARIADB_ADMIN_URL = "mysql+pymysql://root@127.0.0.1:3306/test"


@dataclass
class CliResult:
    code: int
    out: str
    err: str

    @property
    def text(self) -> str:
        return self.out + self.err


def run_cli(repo: Path, *args: str) -> CliResult:
    """Run `viewsync --repo REPO ARGS...` in-process, exactly as the console script does."""
    from reconciler.cli import main

    stdout, stderr = io.StringIO(), io.StringIO()
    argv = sys.argv
    sys.argv = ["viewsync", "--repo", str(repo), *args]
    code = 0
    try:
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            main()
    except SystemExit as e:
        code = int(e.code or 0)
    finally:
        sys.argv = argv
    return CliResult(code, stdout.getvalue(), stderr.getvalue())


@pytest.fixture
def sample_repo(tmp_path: Path) -> Path:
    """A private copy of the repository's own sample (viewsync.yaml, views/, sources/)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    shutil.copy(ROOT / "viewsync.yaml", repo / "viewsync.yaml")
    shutil.copytree(ROOT / "views", repo / "views")
    shutil.copytree(ROOT / "sources", repo / "sources")  # table columns for the Spark verifier
    return repo


@pytest.fixture
def cli():  # type: ignore[no-untyped-def]
    return run_cli


def _server_up(url: str) -> str | None:
    try:
        eng = sa.create_engine(url)
        with eng.connect():
            pass
        eng.dispose()
        return None
    except Exception as e:  # noqa: BLE001
        return str(e).splitlines()[0]


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A fresh PostgreSQL database on the machine's server, dropped afterwards."""
    down = _server_up(PG_ADMIN_URL)
    if down:
        from tests.servers import backend_unavailable

        backend_unavailable(f"PostgreSQL not reachable at 127.0.0.1:5432: {down}")
    name = f"vs_{uuid.uuid4().hex[:12]}"
    admin = sa.create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))
    try:
        yield f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}"
    finally:
        from reconciler.adapters import managed

        with contextlib.suppress(KeyError):
            managed._engines.pop(f"postgresql+psycopg://postgres@127.0.0.1:5432/{name}").dispose()
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


@pytest.fixture(scope="session")
def spark_verifier() -> None:
    """The Spark verifier needs PySpark (viewsync[spark]) and Java: skip without them (fail in CI)."""
    import importlib.util

    from tests.servers import backend_unavailable

    if importlib.util.find_spec("pyspark") is None:
        backend_unavailable("the Spark verifier needs pyspark (pip install 'viewsync[spark]')")
    if shutil.which("java") is None:
        backend_unavailable("the Spark verifier needs Java 17 (`java` not on PATH)")
