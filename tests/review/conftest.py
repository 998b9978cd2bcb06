"""A real Hive Metastore with parquet tables Spark writes (the HMS tests' fixtures), and a
repository whose `spark.live` reads it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.adapters.metastore.hms.conftest import database, hms_client, metastore, spark
from tests.helpers.repos import write_repo

__all__ = ["database", "hms_client", "metastore", "spark"]  # the fixtures, imported so pytest finds them


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
