"""One view, two engines, on Nessie (issue 40): viewsync applies a view with a `spark` and a `trino`
representation into Nessie's Iceberg REST API, over tables Spark 3.5 and Trino wrote there (their
files on the tests' moto S3); Spark 3.5 (Iceberg's SparkCatalog, S3FileIO) and Trino (its iceberg
connector, native S3) each read it with their own SQL and give the same rows. A view applied on a
Nessie branch (the catalog's `prefix`) is read there, over the branch's own rows, and main does
not have it."""

from __future__ import annotations

import json
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.adapters.iceberg.spark35 import Spark35, started
from tests.engines.conftest import NESSIE_CATALOG as CATALOG
from tests.helpers.cli import run_cli
from tests.helpers.nessie import Nessie
from tests.helpers.repos import write_repo
from tests.helpers.trino import Trino

pytestmark = pytest.mark.slow  # moto S3, Nessie, Spark 3.5 and Trino

COLUMNS = [{"name": "id", "type": "bigint"}, {"name": "tag", "type": "string"}, {"name": "total", "type": "bigint"}]
# Each engine's own function (format_string / format): neither engine knows the other's.
QUERY = ("SELECT p.id, {fmt}('%s-%d', p.name, p.id) AS tag, sum(o.amount) AS total FROM people p "
         "JOIN orders o ON o.person_id = p.id GROUP BY p.id, p.name HAVING sum(o.amount) > 1")
SPARK_SQL, TRINO_SQL = QUERY.format(fmt="format_string"), QUERY.format(fmt="format")


@pytest.fixture(scope="module")
def nessie_spark(nessie: Nessie, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Spark35]:
    """Spark 3.5 with SparkCatalog CATALOG on Nessie's main branch (S3FileIO on moto)."""
    session = started(nessie.iceberg_uri, CATALOG, tmp_path_factory.mktemp("spark35-nessie"), "iceberg-aws-bundle")
    try:
        session.set_catalog(CATALOG, nessie.spark_catalog())  # before its first use
        yield session
    finally:
        session.close()


@pytest.fixture
def schema(nessie_spark: Spark35, nessie_trino: Trino) -> str:
    """A fresh namespace on main: people written by Spark 3.5, orders by Trino."""
    name = "e_" + uuid.uuid4().hex[:10]
    nessie_spark.rows(f"CREATE NAMESPACE {CATALOG}.{name}")
    nessie_spark.rows(f"CREATE TABLE {CATALOG}.{name}.people (id BIGINT, name STRING) USING iceberg")
    nessie_spark.rows(f"INSERT INTO {CATALOG}.{name}.people VALUES (1, 'ann'), (2, 'bob'), (3, 'cy')")
    nessie_trino.rows(f"CREATE TABLE {CATALOG}.{name}.orders (person_id BIGINT, amount BIGINT)")
    nessie_trino.rows(f"INSERT INTO {CATALOG}.{name}.orders VALUES (1, 10), (1, 5), (2, 7), (3, 1)")
    return name


def apply(tmp_path: Path, catalog: str, config: dict[str, Any], schema: str, view: dict[str, Any]) -> None:
    """`viewsync apply` of one view into `schema` of the Iceberg REST catalog `config`."""
    repo = write_repo(tmp_path / "repo", {
        "version": 1, "project": "nessie-engines", "state": f"sqlite:///{tmp_path}/state.db",
        "catalogs": {catalog: {"type": "iceberg-rest", **config}}},
        {f"views/{catalog}/{schema}.yaml": yaml.safe_dump({"catalog": catalog, "schema": schema, "views": [view]},
                                                          sort_keys=False)})
    res = run_cli(repo, "apply", "--auto-approve")
    assert res.code == 0, res.text


def branch_from_main(nessie: Nessie, name: str) -> None:
    """A new Nessie branch at main's head (Nessie's API v2)."""
    base = nessie.iceberg_uri.rsplit("/iceberg", 1)[0]
    with urllib.request.urlopen(f"{base}/api/v2/trees/main", timeout=10) as resp:
        head = json.load(resp)["reference"]["hash"]
    req = urllib.request.Request(f"{base}/api/v2/trees?name={name}&type=BRANCH", method="POST",
                                 data=json.dumps({"type": "BRANCH", "name": "main", "hash": head}).encode(),
                                 headers={"Content-Type": "application/json"})
    urllib.request.urlopen(req, timeout=10).close()


def test_spark35_and_trino_read_one_view_viewsync_applies_to_nessie_and_agree(
        tmp_path: Path, nessie: Nessie, schema: str, nessie_spark: Spark35, nessie_trino: Trino) -> None:
    # The view's default catalog is what both engines name Nessie: Trino resolves the view's
    # unqualified tables only under it.
    view = {"name": "spend", "comment": "one view on Nessie, two engines", "default_catalog": CATALOG,
            "columns": COLUMNS,
            "representations": [{"dialect": "spark", "sql": SPARK_SQL}, {"dialect": "trino", "sql": TRINO_SQL}]}
    apply(tmp_path, CATALOG, {"uri": nessie.iceberg_uri}, schema, view)

    by_spark = nessie_spark.rows(f"SELECT id, tag, total FROM {CATALOG}.{schema}.spend ORDER BY id")
    by_trino = nessie_trino.rows(f"SELECT id, tag, total FROM {CATALOG}.{schema}.spend ORDER BY id")
    assert by_spark == [[1, "ann-1", 15], [2, "bob-2", 7]]
    assert by_trino == by_spark
    # each engine ran its own representation: the other's function is unknown there
    assert "format_string" in nessie_trino.error(f"SELECT format_string('%s', name) FROM {CATALOG}.{schema}.people")
    shown = nessie_trino.rows(f"SHOW CREATE VIEW {CATALOG}.{schema}.spend")[0][0]
    assert "format('%s-%d', p.name, p.id)" in shown and "COMMENT 'one view on Nessie, two engines'" in shown, shown


def test_a_view_applied_on_a_nessie_branch_is_read_there_over_the_branchs_rows(
        tmp_path: Path, nessie: Nessie, schema: str, nessie_spark: Spark35, nessie_trino: Trino) -> None:
    branch = "b_" + uuid.uuid4().hex[:8]
    branch_from_main(nessie, branch)
    # Both engines reach the branch as a catalog of their own on Nessie's /iceberg/<branch>, and the
    # view names that catalog its default, so its tables resolve on the branch too.
    on_branch = f"nessie_{branch}"
    branch_uri = f"{nessie.iceberg_uri}/{branch}"
    nessie_spark.set_catalog(on_branch, {**nessie.spark_catalog(), "uri": branch_uri})
    nessie_trino.create_catalog(on_branch, "iceberg",
                                {**nessie.trino_catalog(), "iceberg.rest-catalog.uri": branch_uri})
    nessie_spark.rows(f"INSERT INTO {on_branch}.{schema}.orders VALUES (3, 40)")  # on the branch only

    view = {"name": "spend", "default_catalog": on_branch, "columns": COLUMNS,
            "representations": [{"dialect": "spark", "sql": SPARK_SQL}, {"dialect": "trino", "sql": TRINO_SQL}]}
    apply(tmp_path, on_branch, {"uri": nessie.iceberg_uri, "prefix": branch}, schema, view)

    expected = [[1, "ann-1", 15], [2, "bob-2", 7], [3, "cy-3", 41]]
    assert nessie_trino.rows(f"SELECT id, tag, total FROM {on_branch}.{schema}.spend ORDER BY id") == expected
    assert nessie_spark.rows(f"SELECT id, tag, total FROM {on_branch}.{schema}.spend ORDER BY id") == expected
    # main has neither the view nor the branch's order
    assert "does not exist" in nessie_trino.error(f"SELECT * FROM {CATALOG}.{schema}.spend")
    assert nessie_trino.rows(f"SELECT count(*) FROM {CATALOG}.{schema}.orders") == [[4]]
