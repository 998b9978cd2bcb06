"""One view, two engines, on Iceberg REST: viewsync writes a view with a `spark` and a `trino`
representation; Spark 3.5 (Iceberg's SparkCatalog) and Trino (its iceberg connector) each read it
with their own SQL, and both give the same rows."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.adapters.iceberg.spark35 import Spark35
from tests.adapters.iceberg.test_iceberg_spark35 import CATALOG, spark35
from tests.helpers.cli import run_cli
from tests.helpers.iceberg import IcebergServer
from tests.helpers.repos import write_repo
from tests.helpers.trino import Trino

pytestmark = pytest.mark.slow  # an Iceberg REST server, Spark 3.5 and Trino
__all__ = ["spark35"]  # the fixture, imported so pytest finds it here

# Each engine's own functions: neither engine knows the other's (format_string / format).
SPARK_SQL = "SELECT id, format_string('%s-%d', name, id) AS tag FROM people WHERE id < 3"
TRINO_SQL = "SELECT id, format('%s-%d', name, id) AS tag FROM people WHERE id < 3"


def test_spark_and_trino_each_read_their_own_sql_of_one_view_and_agree(
        tmp_path: Path, iceberg_server: IcebergServer, namespace: str, spark35: Spark35, trino: Trino) -> None:
    spark = spark35
    spark.rows(f"CREATE TABLE {CATALOG}.{namespace}.people (id BIGINT, name STRING) USING iceberg")
    spark.rows(f"INSERT INTO {CATALOG}.{namespace}.people VALUES (1, 'ann'), (2, 'bob'), (3, 'cy')")
    # Trino reads the default namespace only under a default catalog, by its own catalog's name:
    # both engines name this catalog `lake` (tests/helpers/trino.py)
    view = {"name": "tagged", "comment": "one view, two engines", "default_catalog": CATALOG,
            "columns": [{"name": "id", "type": "bigint"}, {"name": "tag", "type": "string"}],
            "representations": [{"dialect": "spark", "sql": SPARK_SQL}, {"dialect": "trino", "sql": TRINO_SQL}]}
    repo = write_repo(tmp_path / "repo", {
        "version": 1, "project": "engines", "state": f"sqlite:///{tmp_path}/state.db",
        "catalogs": {CATALOG: {"type": "iceberg-rest", "uri": iceberg_server.uri}}},
        {f"views/{CATALOG}/{namespace}.yaml": yaml.safe_dump({"catalog": CATALOG, "schema": namespace,
                                                              "views": [view]}, sort_keys=False)})
    res = run_cli(repo, "apply", "--auto-approve")
    assert res.code == 0, res.text

    by_spark = spark.rows(f"SELECT id, tag FROM {CATALOG}.{namespace}.tagged ORDER BY id")
    by_trino = trino.rows(f"SELECT id, tag FROM {CATALOG}.{namespace}.tagged ORDER BY id")
    assert by_spark == [[1, "ann-1"], [2, "bob-2"]]
    assert by_trino == by_spark
    # each engine runs its own representation: the other's SQL would not even parse there
    assert "format_string" in trino.error(f"SELECT {SPARK_SQL.split('SELECT ', 1)[1].split(' FROM')[0]} "
                                          f"FROM {CATALOG}.{namespace}.people")
    shown = trino.rows(f"SHOW CREATE VIEW {CATALOG}.{namespace}.tagged")[0][0]
    assert "format('%s-%d', name, id)" in shown and "COMMENT 'one view, two engines'" in shown, shown
