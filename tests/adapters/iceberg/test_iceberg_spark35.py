"""Real Spark 3.5 with Iceberg's SparkCatalog on the test REST server (issue 11): it queries the
views viewsync writes (declared columns, comments, rows), and viewsync reads and adopts the views
it writes, also after an out-of-band CREATE OR REPLACE."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from reconciler.adapters.iceberg import IcebergRestAdapter
from reconciler.core.model import ViewId, ViewSpec
from tests.adapters.iceberg.spark35 import BuildError, Spark35, build
from tests.adapters.iceberg.test_iceberg_adapter import adapter, assert_converged, fetch_view
from tests.adapters.iceberg.test_iceberg_adapter import write as write_view
from tests.helpers.iceberg import IcebergServer
from tests.helpers.servers import backend_unavailable

pytestmark = pytest.mark.slow  # starts a JVM, Spark or a slow backend (pytest -m 'not slow' skips it)

__all__ = ["adapter"]  # the fixture, imported so pytest finds it here
CATALOG = "lake"


@pytest.fixture(scope="module")
def spark35(iceberg_server: IcebergServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Spark35]:
    try:
        python, jars = build()
        session = Spark35(python, jars, iceberg_server.uri, CATALOG, tmp_path_factory.mktemp("spark35"))
    except BuildError as exc:
        backend_unavailable(f"Spark 3.5 + Iceberg SparkCatalog: {exc}")
    try:
        yield session
    finally:
        session.close()


@pytest.fixture
def people(spark35: Spark35, namespace: str) -> str:
    table = f"{CATALOG}.{namespace}.people"
    spark35.rows(f"CREATE TABLE {table} (id BIGINT, name STRING) USING iceberg")
    spark35.rows(f"INSERT INTO {table} VALUES (1, 'ann'), (2, 'bob')")
    return table


def spec(sql: str, **over: Any) -> ViewSpec:
    data: dict[str, Any] = {
        "comment": "people, shouting",
        "columns": [{"name": "id", "type": "bigint", "comment": "person id"},
                    {"name": "uname", "type": "string", "comment": "upper-case name"}],
        "representations": [{"dialect": "spark", "sql": sql},
                            {"dialect": "trino", "sql": "SELECT id, upper(name) AS uname FROM people"}],
    }
    data.update(over)
    return ViewSpec.model_validate(data)


def describe(spark35: Spark35, name: str) -> dict[str, Any]:
    return {r[0]: r[1] for r in spark35.rows(f"DESCRIBE TABLE EXTENDED {name}")}


@pytest.mark.parametrize("sql", ["SELECT id, upper(name) FROM people", "SELECT id, upper(name) AS u FROM people"],
                         ids=["unnamed-expression", "renamed-output"])
def test_spark35_queries_views_viewsync_writes(spark35: Spark35, adapter: IcebergRestAdapter, namespace: str,
                                               people: str, sql: str) -> None:
    view = ViewId(CATALOG, namespace, "shout")
    write_view(adapter, view, spec(sql))
    name = f"{CATALOG}.{namespace}.shout"
    reply = spark35.sql(f"SELECT * FROM {name} ORDER BY id")
    assert "error" not in reply, reply
    assert reply["rows"] == [[1, "ANN"], [2, "BOB"]]
    assert [(c[0], c[2]) for c in reply["columns"]] == [("id", "person id"), ("uname", "upper-case name")]
    info = describe(spark35, name)
    assert info.get("Comment") == "people, shouting"
    assert info.get("View Query Output Columns") not in (None, "", "[]")
    assert "viewsync" in str(info.get("Created By", "")) or "viewsync" in str(info)


def test_views_spark35_writes_are_read_adopted_and_restored(spark35: Spark35, adapter: IcebergRestAdapter,
                                                             namespace: str, people: str) -> None:
    name = f"{CATALOG}.{namespace}.sv"
    spark35.rows(f"CREATE VIEW {name} (id COMMENT 'key', uname) COMMENT 'made by Spark' "
                 f"AS SELECT id, upper(name) AS u FROM {people}")
    view = ViewId(CATALOG, namespace, "sv")
    live = fetch_view(adapter, view)
    assert live.managed_by is None and live.spec.dialects() == ["spark"]
    assert [(c.name, c.type, c.comment) for c in live.spec.columns] == [("id", "bigint", "key"),
                                                                        ("uname", "string", None)]
    assert live.spec.comment == "made by Spark"

    declared = ViewSpec.model_validate(live.spec.model_dump())  # what `viewsync import` declares
    assert adapter.storable(view, declared).digest() == live.spec.digest()  # adoption changes nothing
    write_view(adapter, view, declared, live, commit="c0ffee")
    adopted = assert_converged(adapter, view, declared)
    assert spark35.rows(f"SELECT * FROM {name} ORDER BY id") == [[1, "ANN"], [2, "BOB"]]

    # Spark replaces it out of band; the same commit applied again converges (twice: the second
    # time Iceberg finds our version among the old ones).
    for sql in ("SELECT id, name AS u FROM {t}", "SELECT id, lower(name) AS u FROM {t}"):
        spark35.rows(f"CREATE OR REPLACE VIEW {name} (id COMMENT 'key', uname) AS " + sql.format(t=people))
        drifted = fetch_view(adapter, view)
        assert drifted.spec.digest() != adopted.spec.digest()
        write_view(adapter, view, declared, drifted, commit="c0ffee")
        assert_converged(adapter, view, declared)
        assert spark35.rows(f"SELECT * FROM {name} ORDER BY id") == [[1, "ANN"], [2, "BOB"]]
