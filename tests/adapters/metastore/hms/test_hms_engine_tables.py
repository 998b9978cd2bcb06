"""Views written the way Flink, Hive and Trino write them (Thrift Tables built by hand
as FORMATS.md describes) are listed with the right dialect and columns."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from hmsclient.genthrift.hive_metastore.ttypes import FieldSchema, SerDeInfo, StorageDescriptor, Table

from reconciler.adapters.base import AdapterError, Marker, WriteContext
from reconciler.adapters.metastore.hms import HiveMetastoreAdapter
from reconciler.core.model import ViewSpec

pytestmark = pytest.mark.slow  # starts a JVM, Spark or a slow backend (pytest -m 'not slow' skips it)


def view_table(db: str, name: str, *, original: str, expanded: str, params: dict[str, str],
               cols: list[FieldSchema] | None = None, owner: str | None = "engine-user") -> Table:
    return Table(tableName=name, dbName=db, owner=owner, tableType="VIRTUAL_VIEW", partitionKeys=[],
                 sd=StorageDescriptor(cols=cols or [], serdeInfo=SerDeInfo()), parameters=params,
                 viewOriginalText=original, viewExpandedText=expanded)


def test_flink_view(adapter: HiveMetastoreAdapter, database: str, hms_client: Any) -> None:
    hms_client.create_table(view_table(
        database, "flink_v", original="SELECT id, name, amount FROM src",
        expanded=f"SELECT `src`.`id`, `src`.`name`, `src`.`amount` FROM `myhive`.`{database}`.`src`",
        params={"is_generic": "true", "flink.schema.0.name": "id", "flink.schema.0.data-type": "BIGINT NOT NULL",
                "flink.schema.1.name": "name", "flink.schema.1.data-type": "VARCHAR(2147483647)",
                "flink.schema.2.name": "amount", "flink.schema.2.data-type": "DECIMAL(18, 2)",
                "flink.comment": "a Flink view", "flink.k": "v"}))
    live = adapter.fetch(database).views["flink_v"]
    assert live.format == "flink"
    assert live.spec.dialects() == ["flink"]
    assert live.spec.sql_for("flink") == "SELECT id, name, amount FROM src"
    assert [(c.name, c.type) for c in live.spec.columns] == [
        ("id", "bigint"), ("name", "string"), ("amount", "decimal(18,2)")]
    assert live.spec.comment == "a Flink view"
    assert live.spec.properties == {"k": "v"}
    assert live.managed_by is None and live.writable


def test_hive_native_view(adapter: HiveMetastoreAdapter, database: str, hms_client: Any) -> None:
    hms_client.create_table(view_table(
        database, "hive_v", original="select id, tags from src",
        expanded=f"select `src`.`id`, `src`.`tags` from `{database}`.`src`",
        params={"comment": "a Hive view", "transient_lastDdlTime": "1700000000"},
        cols=[FieldSchema("ID", "bigint", "the id"), FieldSchema("tags", "array<varchar(10)>", None)]))
    live = adapter.fetch(database).views["hive_v"]
    assert live.format == "hive"
    assert live.spec.dialects() == ["hive"]
    assert [(c.name, c.type, c.comment) for c in live.spec.columns] == [
        ("id", "bigint", "the id"), ("tags", "array<varchar(10)>", None)]
    assert live.spec.comment == "a Hive view"
    assert live.spec.properties == {}


def _envelope(prefix: str, doc: dict[str, Any]) -> str:
    return prefix + base64.b64encode(json.dumps(doc).encode()).decode() + " */"


def test_trino_view_and_materialized_view(adapter: HiveMetastoreAdapter, database: str, hms_client: Any) -> None:
    doc = {"originalSql": "SELECT id FROM src", "catalog": "hive", "schema": database,
           "columns": [{"name": "id", "type": "bigint"}], "owner": "alice", "runAsInvoker": False}
    params = {"presto_view": "true", "comment": "Presto View", "trino_created_by": "Trino Hive connector",
              "trino_version": "476", "trino_query_id": "q1"}
    hms_client.create_table(view_table(database, "trino_v", original=_envelope("/* Presto View: ", doc),
                                       expanded="/* Presto View */", params=params,
                                       cols=[FieldSchema("dummy", "string")], owner="alice"))
    hms_client.create_table(view_table(database, "trino_mv",
                                       original=_envelope("/* Presto Materialized View: ", doc),
                                       expanded="/* Presto Materialized View */",
                                       params=params | {"comment": "Presto Materialized View"},
                                       cols=[FieldSchema("dummy", "string")]))
    snap = adapter.fetch(database)
    v = snap.views["trino_v"]
    assert v.format == "trino" and v.writable
    assert v.spec.dialects() == ["trino"] and v.spec.owner == "alice"
    assert [(c.name, c.type) for c in v.spec.columns] == [("id", "bigint")]
    assert v.spec.default_catalog == "hive" and v.spec.default_namespace == [database]

    mv = snap.views["trino_mv"]
    assert mv.format == "trino-materialized-view"
    assert not mv.writable  # reported, never touched
    before = hms_client.get_table(database, "trino_mv")
    spec = ViewSpec.model_validate({"columns": [{"name": "id", "type": "bigint"}],
                                    "representations": [{"dialect": "spark", "sql": "SELECT 1 AS id"}]})
    with pytest.raises(AdapterError, match="never modified"):
        adapter.update(mv, spec, Marker("p", spec.digest()), WriteContext())
    with pytest.raises(AdapterError, match="never modified"):
        adapter.drop(mv, WriteContext())
    assert hms_client.get_table(database, "trino_mv") == before


def test_unreadable_view_is_reported_not_touched(adapter: HiveMetastoreAdapter, database: str,
                                                 hms_client: Any) -> None:
    hms_client.create_table(view_table(database, "broken", original="/* Presto View: !!! */",
                                       expanded="/* Presto View */",
                                       params={"presto_view": "true", "comment": "Presto View"}))
    snap = adapter.fetch(database)
    assert not snap.views["broken"].writable
    assert any("broken" in w and "cannot be read" in w for w in snap.warnings)
