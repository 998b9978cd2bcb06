"""Shared fixtures: a copy of the sample repository, an in-process CLI runner,
throwaway PostgreSQL databases on the machine's real server (scripts/databases), and a
check that every plan any test emits is valid and round-trips."""

from __future__ import annotations

import json
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa

from tests.helpers.cli import run_cli
from tests.helpers.dbs import PG_ADMIN_URL, require_server
from tests.helpers.paths import ROOT


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


@pytest.fixture
def pg_url() -> Iterator[str]:
    """A fresh PostgreSQL database on the machine's server, dropped afterwards."""
    require_server(PG_ADMIN_URL, "PostgreSQL at 127.0.0.1:5432")
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

    from tests.helpers.servers import backend_unavailable

    if importlib.util.find_spec("pyspark") is None:
        backend_unavailable("the Spark verifier needs pyspark (pip install 'viewsync[spark]')")
    if shutil.which("java") is None:
        backend_unavailable("the Spark verifier needs Java 17 (`java` not on PATH)")
