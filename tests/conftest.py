"""Shared fixtures: a copy of the sample repository, an in-process CLI runner,
throwaway PostgreSQL / MariaDB databases on the machine's real servers, and a
check that every plan any test emits is valid and round-trips."""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterable, Iterator, Mapping
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


def run_cli(repo: Path, *args: str, env: Mapping[str, str] | None = None, process: bool = False,
            timeout: float = 300) -> CliResult:
    """The one way tests run `viewsync --repo REPO ARGS...`, with `env` added to the
    environment. In-process by default, exactly as the console script runs (fast);
    `process=True` runs it in a child process, as a shell would (nothing shared with
    the test process: logging, caches, the secrets seen)."""
    if process:
        done = subprocess.run([sys.executable, "-m", "reconciler.cli", "--repo", str(repo), *args],
                              capture_output=True, text=True, timeout=timeout, env={**os.environ, **(env or {})})
        return CliResult(done.returncode, done.stdout, done.stderr)
    from reconciler.cli import main

    stdout, stderr = io.StringIO(), io.StringIO()
    argv, saved_env = sys.argv, {k: os.environ.get(k) for k in env or {}}
    sys.argv = ["viewsync", "--repo", str(repo), *args]
    os.environ.update(env or {})
    code = 0
    try:
        with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
            main()
    except SystemExit as e:
        code = int(e.code or 0)
    finally:
        sys.argv = argv
        for key, value in saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    return CliResult(code, stdout.getvalue(), stderr.getvalue())


_LOADED = """
import json, sys
from reconciler import cli
watched = json.loads(sys.argv[1])
sys.argv = ["viewsync", *sys.argv[2:]]
code = None
try:
    cli.main()
except SystemExit as e:
    code = e.code
print(json.dumps([sorted(m for m in watched if m in sys.modules), code]))
"""


def modules_loaded(repo: Path | None, *args: str, modules: Iterable[str],
                   env: Mapping[str, str] | None = None) -> tuple[list[str], int | None]:
    """Which of `modules` `viewsync [--repo REPO] ARGS...` imports in a fresh process, and its
    exit code: a command must import only what it uses."""
    argv = [*(["--repo", str(repo)] if repo is not None else []), *args]
    res = subprocess.run([sys.executable, "-c", _LOADED, json.dumps(list(modules)), *argv], capture_output=True,
                         text=True, timeout=120, env={**os.environ, **(env or {})})
    try:
        loaded, code = json.loads(res.stdout.splitlines()[-1])
    except (IndexError, ValueError):
        raise AssertionError(f"viewsync {' '.join(argv)} did not finish:\n{res.stdout}{res.stderr}") from None
    return loaded, code


@pytest.fixture(autouse=True)
def _every_plan_validates_and_round_trips(monkeypatch: pytest.MonkeyPatch) -> None:
    """Wrap Plan.to_json: whatever a test makes the code emit (plan --format json, --out,
    show) must match schemas/plan.schema.json and load back to the same plan."""
    import jsonschema

    from reconciler.plan.model import Plan

    schema = json.loads((ROOT / "schemas" / "plan.schema.json").read_text(encoding="utf-8"))
    original = Plan.to_json

    def checked(plan: Plan) -> dict:  # type: ignore[type-arg]
        data = original(plan)
        jsonschema.validate(data, schema)
        again = original(Plan.from_json(json.loads(json.dumps(data))))
        assert again == data, "a saved plan does not load back to the same plan"
        return data

    monkeypatch.setattr(Plan, "to_json", checked)


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
