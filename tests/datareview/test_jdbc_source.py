"""A PostgreSQL catalog read by the review's Spark through its JDBC source (the pinned driver,
fetched into viewsync's jar cache as `viewsync jars fetch postgresql` does): a Hive view's
`relationships` check against a PostgreSQL table, a diff of a Hive view that reads one,
and the checks of a PostgreSQL view evaluated by the database itself."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa

from tests.datareview.conftest import review_repo, view, view_file
from tests.helpers.cli import run_cli
from tests.helpers.jars import fetched

pytestmark = pytest.mark.slow  # starts a metastore and two Sparks

CUSTOMERS = [{"name": "id", "type": "bigint"}, {"name": "name", "type": "string"}]


@pytest.fixture
def pg(pg_url: str) -> str:
    fetched("postgresql")  # the review finds the driver in the jar cache
    engine = sa.create_engine(pg_url)
    with engine.begin() as conn:
        conn.execute(sa.text("CREATE TABLE public.customers (id BIGINT PRIMARY KEY, name TEXT)"))
        conn.execute(sa.text("INSERT INTO public.customers VALUES (1, 'ann'), (2, 'bob'), (3, NULL)"))
        conn.execute(sa.text("CREATE VIEW public.named AS SELECT id, upper(name) AS name FROM customers"))
    engine.dispose()
    return pg_url


def test_postgresql_tables_and_views_are_read_through_spark_jdbc(tmp_path: Path, metastore: Any, spark: Any,
                                                                  database: str, pg: str) -> None:
    spark.sql(f"CREATE TABLE {database}.payments (id BIGINT, customer_id BIGINT) USING parquet")
    spark.sql(f"INSERT INTO {database}.payments VALUES (1, 1), (2, 2), (3, 99), (4, 98), (5, NULL)")
    files = {
        **view_file(database,
                    view("payments_v", "SELECT id, customer_id FROM payments",
                         columns=[{"name": "id", "type": "bigint"}, {"name": "customer_id", "type": "bigint"}],
                         checks=[{"relationships": {"column": "customer_id", "to": "pg.public.customers",
                                                    "field": "id"}}]),
                    view("customers_v", "SELECT id, name FROM pg.public.customers", columns=CUSTOMERS,
                         key=["id"])),
        **view_file("public", {"name": "named", "columns": CUSTOMERS, "checks": [{"not_null": ["name"]}],
                               "representations": [{"dialect": "postgres",
                                                    "sql": "SELECT id, upper(name) AS name FROM customers"}]},
                    catalog="pg"),
    }
    repo = review_repo(tmp_path, metastore.uri, files, catalogs={"pg": {"type": "jdbc", "url": pg}})
    assert run_cli(repo, "apply", "--auto-approve", "--catalog", "hive").code == 0

    res = run_cli(repo, "check", "--format", "json")
    assert res.code == 1, res.text
    report = {v["view"]["name"]: v for v in json.loads(res.out)["views"]}
    rel = report["payments_v"]["checks"][0]
    assert (rel["status"], rel["failing"]) == ("fail", 2)  # customers 98 and 99 are not in PostgreSQL
    assert sorted(r["customer_id"] for r in rel["samples"]) == [98, 99]
    named = report["named"]["checks"][0]  # the PostgreSQL view's SQL, run by PostgreSQL
    assert (named["status"], named["failing"], named["samples"]) == ("fail", 1, [{"id": 3, "name": None}])

    (repo / "views" / "hive" / f"{database}.yaml").write_text(json.dumps(view_file(database, view(
        "customers_v", "SELECT id, name FROM pg.public.customers WHERE id < 3", columns=CUSTOMERS,
        key=["id"]))[f"views/hive/{database}.yaml"]))
    diff = run_cli(repo, "diff", "--format", "json", "--select", f"hive.{database}.customers_v")
    assert diff.code == 0, diff.text
    [v] = json.loads(diff.out)["views"]
    assert v["counts"]["removed"] == 1 and v["samples"][0]["before"] == {"id": 3, "name": None}


def test_a_check_whose_table_cannot_be_read_is_reported_not_run_and_fails_the_gate(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, metastore: Any, spark: Any, database: str) -> None:
    """No PostgreSQL driver anywhere (issue 38, item 5): the `relationships` check against
    `pg.public.customers` is in the report as not run, with the reason; the view's other checks
    still run; the gate fails."""
    from reconciler.adapters.jdbc import dialects
    from reconciler.jars import maven

    monkeypatch.setenv(maven.CACHE_ENV, str(tmp_path / "empty-jar-cache"))
    for db in (dialects.Postgres, dialects.MySQL):
        monkeypatch.setattr(db, "debian_driver_jar", str(tmp_path / "none.jar"))
    spark.sql(f"CREATE TABLE {database}.payments (id BIGINT, customer_id BIGINT) USING parquet")
    spark.sql(f"INSERT INTO {database}.payments VALUES (1, 1), (2, NULL)")
    files = view_file(database, view(
        "payments_v", "SELECT id, customer_id FROM payments",
        columns=[{"name": "id", "type": "bigint"}, {"name": "customer_id", "type": "bigint"}],
        checks=[{"relationships": {"column": "customer_id", "to": "pg.public.customers", "field": "id"}},
                {"not_null": ["id"]}, {"expression": "id > 0", "severity": "warn"}]))
    repo = review_repo(tmp_path, metastore.uri, files,
                       catalogs={"pg": {"type": "jdbc", "url": "postgresql+psycopg://app@127.0.0.1:1/shop"}})
    assert run_cli(repo, "apply", "--auto-approve", "--catalog", "hive").code == 0

    res = run_cli(repo, "check", "--format", "json")
    assert res.code == 1, res.text
    [v] = json.loads(res.out)["views"]
    rel, not_null, expression = v["checks"]
    assert rel["kind"] == "relationships" and rel["status"] == "error", rel
    assert rel["detail"].startswith("not run: pg.public.customers cannot be read") and \
        "viewsync jars fetch postgresql" in rel["detail"], rel
    assert (not_null["status"], expression["status"]) == ("pass", "pass")
    text = run_cli(repo, "check")
    assert "not run: pg.public.customers cannot be read" in text.out, text.text
