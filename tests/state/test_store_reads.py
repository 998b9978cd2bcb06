"""The managed store's reads: SQLite files through the standard library, everything else through
SQLAlchemy, with the same rows either way and nothing ever created by a read."""

from __future__ import annotations

from pathlib import Path

import pytest

from reconciler.adapters.base import Marker, WriteContext
from reconciler.adapters.managed.adapter import TABLES, ManagedAdapter
from reconciler.core.errors import AdapterError
from reconciler.core.model import ViewId, ViewSpec
from reconciler.db.store_reads import EngineReads, SqliteFileReads, sqlite_file
from tests.helpers.cli import modules_loaded, run_cli
from tests.helpers.specs import spec


def test_only_plain_sqlite_file_urls_skip_sqlalchemy() -> None:
    assert sqlite_file("sqlite:////abs/catalog.db") == "/abs/catalog.db"
    assert sqlite_file("sqlite:///rel/catalog.db") == "rel/catalog.db"
    # SQLAlchemy reads these: options, escapes, memory, another driver or backend.
    for url in ("sqlite:///c.db?timeout=5", "sqlite:////a%20b.db", "sqlite:///:memory:", "sqlite://",
                "sqlite+pysqlite:///c.db", "postgresql://u:p@h/db"):
        assert sqlite_file(url) is None, url


def test_the_table_names_are_the_stores() -> None:
    from reconciler.adapters.managed.tables import metadata

    assert set(TABLES) == set(metadata.tables)


def _spec(sql: str) -> ViewSpec:
    return spec(sql, dialects=("spark", "trino"), comment="c", default_namespace=["s"], properties={"tier": "gold"},
                columns=[{"name": "id", "type": "bigint", "comment": "k"}])


def test_both_readers_read_the_same_views(tmp_path: Path) -> None:
    db = tmp_path / "store" / "catalog.db"
    writer = ManagedAdapter("cat", {"url": f"sqlite:///{db}"})
    for i in range(3):
        spec = _spec(f"SELECT {i} AS id")
        writer.create(ViewId("cat", "s", f"v{i}"), spec, Marker("p", spec.digest()), WriteContext(actor="a"))
    live = writer.fetch("s").views["v1"]
    writer.update(live, _spec("SELECT 10 AS id"), Marker("p", _spec("SELECT 10 AS id").digest()), WriteContext())
    writer.drop(writer.fetch("s").views["v2"], WriteContext())
    through_sqlalchemy = ManagedAdapter("cat", {"url": f"sqlite:///{db}?timeout=5"})
    assert isinstance(writer._reads, SqliteFileReads) and isinstance(through_sqlalchemy._reads, EngineReads)

    for reader in (writer, through_sqlalchemy):
        assert reader.list_schemas() == ["s"]
        views = reader.fetch("s").views
        assert sorted(views) == ["v0", "v1"]
        assert views["v1"].spec.digest() == _spec("SELECT 10 AS id").digest() == views["v1"].spec_digest
        assert views["v1"].native_version == "2" and views["v1"].managed_by == "p"
        assert [v.version for v in reader.native_history(ViewId("cat", "s", "v1"))] == ["1", "2"]
    a, b = writer.fetch("s").views, through_sqlalchemy.fetch("s").views
    assert {n: v.fingerprint for n, v in a.items()} == {n: v.fingerprint for n, v in b.items()}
    writer.close()
    through_sqlalchemy.close()


def test_reading_an_absent_store_creates_nothing(tmp_path: Path) -> None:
    db = tmp_path / "missing" / "catalog.db"
    adapter = ManagedAdapter("cat", {"url": f"sqlite:///{db}"})
    assert adapter.list_schemas() == [] and adapter.fetch("s").views == {}
    assert not db.parent.exists()


def test_a_file_that_is_not_a_store_is_an_error_naming_the_catalog(tmp_path: Path) -> None:
    db = tmp_path / "catalog.db"
    db.write_text("not a database\n" * 100)
    with pytest.raises(AdapterError, match="cat.*cannot open the managed store"):
        ManagedAdapter("cat", {"url": f"sqlite:///{db}"})


def test_a_plan_on_the_embedded_default_loads_no_sqlalchemy(sample_repo: Path) -> None:
    assert run_cli(sample_repo, "apply", "--auto-approve", "--allow-dirty").code == 0
    assert modules_loaded(sample_repo, "plan", "--detailed-exitcode", modules=["sqlalchemy"]) == ([], 0)
