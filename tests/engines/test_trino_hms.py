"""Trino reads the Trino-format views viewsync writes on a real Hive Metastore, over tables Trino
wrote: definer views with an owner and invoker views, every type of the column grammar, comments,
and names that need quoting; `DESCRIBE` and `SHOW CREATE VIEW` agree with the declaration."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.helpers.cli import run_cli
from tests.helpers.repos import write_repo
from tests.helpers.trino import Trino

pytestmark = pytest.mark.slow  # a metastore and a Trino

OWNER = "analyst"


def hms_repo(tmp_path: Path, uri: str, database: str, views: list[dict[str, Any]], fmt: str = "trino") -> Path:
    return write_repo(tmp_path / "repo", {
        "version": 1, "project": "engines", "state": f"sqlite:///{tmp_path}/state.db",
        "catalogs": {"hive": {"type": "hms", "uri": uri, "engine_format": fmt, "trino_catalog": "hive",
                              "trino_owner": OWNER}}},
        {f"views/hive/{database}.yaml": yaml.safe_dump({"catalog": "hive", "schema": database, "views": views},
                                                      sort_keys=False)})


def seed(trino: Trino, database: str) -> None:
    trino.rows(f"CREATE TABLE hive.{database}.orders (id BIGINT, customer VARCHAR, amount DECIMAL(18,2), "
               "placed DATE, at TIMESTAMP(3), paid BOOLEAN, weight DOUBLE) WITH (format = 'PARQUET')")
    trino.rows(f"INSERT INTO hive.{database}.orders VALUES "
               "(1, 'ann', 10.50, DATE '2026-01-02', TIMESTAMP '2026-01-02 10:00:00.123', true, 1.5), "
               "(2, 'bob', 20.00, DATE '2026-01-03', TIMESTAMP '2026-01-03 11:30:00.000', false, 2.25), "
               "(3, NULL, 5.25, DATE '2026-01-03', NULL, true, NULL)")


def trino_view(name: str, sql: str, columns: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {"name": name, "columns": columns, "representations": [{"dialect": "trino", "sql": sql}], **extra}


TYPED = [
    {"name": "id", "type": "bigint", "comment": "the order"},
    {"name": "customer", "type": "string"},
    {"name": "amount", "type": "decimal(18,2)"},
    {"name": "placed", "type": "date"},
    {"name": "at", "type": "timestamp(3)"},
    {"name": "paid", "type": "boolean"},
    {"name": "weight", "type": "double"},
    {"name": "tags", "type": "array<string>"},
    {"name": "by_key", "type": "map<string,bigint>"},
    {"name": "point", "type": "struct<x:bigint,label:string>"},
    {"name": "small", "type": "integer"},
    {"name": "order count", "type": "bigint"},
]
TYPED_SQL = ("SELECT id, customer, amount, placed, at, paid, weight, ARRAY[customer, 'x'] AS tags, "
             "MAP(ARRAY['k'], ARRAY[id]) AS by_key, CAST(ROW(id, customer) AS ROW(x BIGINT, label VARCHAR)) AS point, "
             "CAST(id AS INTEGER) AS small, id * 2 AS \"order count\" FROM orders")


def test_trino_reads_definer_and_invoker_views_of_every_type(tmp_path: Path, metastore: Any, trino: Trino,
                                                             database: str) -> None:
    seed(trino, database)
    views = [trino_view("typed_v", TYPED_SQL, TYPED, comment="every type", security="definer", owner="alice"),
             trino_view("invoker_v", "SELECT id, amount FROM orders WHERE paid",
                        [{"name": "id", "type": "bigint"}, {"name": "amount", "type": "decimal(18,2)"}],
                        security="invoker"),
             trino_view("default_owner_v", "SELECT count(*) AS n FROM orders", [{"name": "n", "type": "bigint"}],
                        security="definer")]
    repo = hms_repo(tmp_path, metastore.uri, database, views)
    res = run_cli(repo, "apply", "--auto-approve")
    assert res.code == 0, res.text

    rows = trino.rows(f"SELECT * FROM hive.{database}.typed_v ORDER BY id")
    assert rows[0][:7] == [1, "ann", Decimal("10.50"), dt.date(2026, 1, 2), dt.datetime(2026, 1, 2, 10, 0, 0, 123000),
                           True, 1.5]
    assert rows[0][7:] == [["ann", "x"], {"k": 1}, (1, "ann"), 1, 2], rows[0]
    assert [r[0] for r in rows] == [1, 2, 3] and rows[2][1] is None and rows[2][4] is None
    assert trino.rows(f"SELECT id FROM hive.{database}.invoker_v ORDER BY id") == [[1], [3]]
    assert trino.rows(f"SELECT n FROM hive.{database}.default_owner_v") == [[3]]

    described = trino.rows(f"DESCRIBE hive.{database}.typed_v")
    assert [(r[0], r[1]) for r in described] == [
        ("id", "bigint"), ("customer", "varchar"), ("amount", "decimal(18,2)"), ("placed", "date"),
        ("at", "timestamp(3)"), ("paid", "boolean"), ("weight", "double"), ("tags", "array(varchar)"),
        ("by_key", "map(varchar, bigint)"), ("point", "row(x bigint, label varchar)"), ("small", "integer"),
        ("order count", "bigint")]
    assert described[0][3] == "the order"  # the column's comment
    shown = trino.rows(f"SHOW CREATE VIEW hive.{database}.typed_v")[0][0]
    assert "COMMENT 'every type'" in shown and "SECURITY DEFINER" in shown, shown
    assert "SECURITY INVOKER" in trino.rows(f"SHOW CREATE VIEW hive.{database}.invoker_v")[0][0]
    again = run_cli(repo, "plan", "--detailed-exitcode")
    assert again.code == 0 and "No changes" in again.out, again.text
