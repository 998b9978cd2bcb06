"""A real Hive Metastore with parquet tables Spark writes (the HMS tests' fixtures), and a
repository whose `spark.live` reads it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.adapters.metastore.hms.conftest import Metastore, database, hms_client, metastore
from tests.helpers.hive_spark import HiveSpark
from tests.helpers.repos import write_repo
from tests.helpers.servers import backend_unavailable

__all__ = ["database", "hms_client", "metastore"]  # the fixtures, imported so pytest finds them


@pytest.fixture(scope="session")
def spark(metastore: Metastore, tmp_path_factory: pytest.TempPathFactory) -> Iterator[HiveSpark]:
    """Spark with Hive support on the metastore, in a child process (this process may already
    hold a SparkSession of another kind): the tests write their parquet tables with it."""
    try:
        session = HiveSpark(metastore.uri, tmp_path_factory.mktemp("seed-spark"))
    except RuntimeError as exc:
        backend_unavailable(str(exc))
    try:
        yield session
    finally:
        session.close()


@pytest.fixture(autouse=True)
def _needs_spark(spark_verifier: None) -> None:
    """Data review needs PySpark and Java like the verifier: skip without them (fail in CI)."""


def review_repo(tmp_path: Path, uri: str, files: dict[str, Any], live: dict[str, Any] | None = None,
                catalogs: dict[str, Any] | None = None) -> Path:
    """A repository with the `hive` catalog at `uri` (plus `catalogs`) and `files` under views/."""
    return write_repo(tmp_path / "repo", {
        "version": 1, "project": "review", "state": f"sqlite:///{tmp_path}/state.db",
        "catalogs": {"hive": {"type": "hms", "uri": uri, "engine_format": "spark"}, **(catalogs or {})},
        "spark": {"live": {"master": "local[1]", **(live or {})}}}, files)


def view(name: str, sql: str, **extra: Any) -> dict[str, Any]:
    return {"name": name, "representations": [{"dialect": "spark", "sql": sql}], **extra}


def view_file(database: str, *views: dict[str, Any], catalog: str = "hive") -> dict[str, Any]:
    return {f"views/{catalog}/{database}.yaml": {"catalog": catalog, "schema": database, "views": list(views)}}


def metastore_state(client: Any) -> list[Any]:
    """Everything a review could touch: databases, and every object of every database."""
    state: list[Any] = []
    for db in sorted(client.get_all_databases()):
        names = sorted(client.get_all_tables(db))
        tables = client.get_table_objects_by_name(db, names) if names else []
        state.append((db, [(t.tableName, t.tableType, t.viewOriginalText, sorted((t.parameters or {}).items()),
                            [(c.name, c.type) for c in t.sd.cols], t.sd.location) for t in tables]))
    return state
