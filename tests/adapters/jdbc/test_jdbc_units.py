"""Pure parts of the JDBC adapter: type mapping, view bodies, SQLite type inference."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import types as st
from sqlalchemy.dialects import mysql as my
from sqlalchemy.dialects import postgresql as pg
from sqlalchemy.dialects import sqlite as lite

from reconciler.adapters.jdbc.dialects import database
from reconciler.adapters.jdbc.types import canonical_type, infer_types
from reconciler.core import coltypes


@pytest.mark.parametrize("sa_type, dialect, expected", [
    (pg.INTEGER(), "postgres", "int"),
    (pg.BIGINT(), "postgres", "bigint"),
    (pg.SMALLINT(), "postgres", "smallint"),
    (pg.NUMERIC(12, 4), "postgres", "decimal(12,4)"),
    (pg.NUMERIC(), "postgres", "decimal(38,18)"),
    (pg.VARCHAR(7), "postgres", "varchar(7)"),
    (pg.VARCHAR(), "postgres", "string"),
    (pg.CHAR(2), "postgres", "char(2)"),
    (pg.TEXT(), "postgres", "string"),
    (pg.TIMESTAMP(), "postgres", "timestamp"),
    (pg.TIMESTAMP(timezone=True), "postgres", "timestamp_ltz"),
    (pg.REAL(), "postgres", "float"),
    (pg.DOUBLE_PRECISION(), "postgres", "double"),
    (pg.BYTEA(), "postgres", "binary"),
    (pg.ARRAY(pg.NUMERIC(5, 1)), "postgres", "array<decimal(5,1)>"),
    (pg.BIT(), "postgres", "boolean"),
    (pg.BIT(8), "postgres", "binary"),
    (pg.BIT(varying=True), "postgres", "binary"),
    (pg.UUID(), "postgres", "string"),
    (pg.JSONB(), "postgres", "string"),
    (pg.INTERVAL(), "postgres", "string"),
    (pg.DOMAIN("d", pg.BIGINT()), "postgres", "bigint"),
    (my.TINYINT(1), "mysql", "boolean"),
    (my.TINYINT(4), "mysql", "tinyint"),
    (my.TINYINT(unsigned=True), "mysql", "smallint"),
    (my.SMALLINT(unsigned=True), "mysql", "int"),
    (my.MEDIUMINT(), "mysql", "int"),
    (my.INTEGER(unsigned=True), "mysql", "bigint"),
    (my.BIGINT(unsigned=True), "mysql", "decimal(20,0)"),
    (my.DECIMAL(65, 30), "mysql", "decimal(38,30)"),
    (my.DECIMAL(60, 0), "mysql", "decimal(38,0)"),
    (my.FLOAT(), "mysql", "float"),
    (my.DOUBLE(), "mysql", "double"),
    (my.DATETIME(), "mysql", "timestamp"),
    (my.TIMESTAMP(), "mysql", "timestamp_ltz"),
    (my.LONGTEXT(), "mysql", "string"),
    (my.ENUM("a", "b"), "mysql", "string"),
    (my.SET("a", "b"), "mysql", "string"),
    (my.YEAR(), "mysql", "int"),
    (my.VARBINARY(16), "mysql", "binary"),
    (my.BIT(1), "mysql", "boolean"),
    (lite.INTEGER(), "sqlite", "int"),
    (lite.REAL(), "sqlite", "double"),
    (lite.FLOAT(), "sqlite", "double"),
    (lite.DATETIME(), "sqlite", "timestamp"),
    (lite.NUMERIC(), "sqlite", "decimal(38,18)"),
    (lite.DECIMAL(9, 3), "sqlite", "decimal(9,3)"),
    (lite.BLOB(), "sqlite", "binary"),
    (st.NullType(), "sqlite", None),
])
def test_canonical_type(sa_type: st.TypeEngine[object], dialect: str, expected: str | None) -> None:
    got = canonical_type(sa_type, database(dialect))
    assert got == expected
    if got is not None:
        assert coltypes.canonical(got) == got  # always in the canonical grammar


@pytest.mark.parametrize("definition, dialect, body", [
    (" SELECT t.a\n   FROM t;", "postgres", "SELECT t.a\n   FROM t"),
    ("CREATE VIEW v AS SELECT 1", "sqlite", "SELECT 1"),
    ("create temp view if not exists \"a as b\" (x, y) as\n  select 1, 2", "sqlite", "select 1, 2"),
    ("CREATE VIEW `as` AS WITH c AS (SELECT 1 AS x) SELECT x FROM c", "sqlite",
     "WITH c AS (SELECT 1 AS x) SELECT x FROM c"),
    ("CREATE VIEW [x] AS SELECT 'AS' AS y", "sqlite", "SELECT 'AS' AS y"),
    ("select `db`.`t`.`a` AS `a` from `db`.`t`", "mysql", "select `db`.`t`.`a` AS `a` from `db`.`t`"),
])
def test_view_body(definition: str, dialect: str, body: str) -> None:
    assert database(dialect).view_body(definition) == body


def test_infer_types_follows_tables_and_views() -> None:
    known = {"orders": {"id": "bigint", "amount": "decimal(10,2)", "note": "string"},
             "base": {"n": "int"}}
    got = infer_types(
        "SELECT o.id, SUM(o.amount) AS total, COUNT(*) AS c, UPPER(o.note) AS u, b.n * 1.5 AS f, "
        "o.id = 1 AS flag FROM orders AS o JOIN base AS b ON b.n = o.id GROUP BY o.id, o.note, b.n",
        "sqlite", "main", known)
    assert got == [("id", "bigint"), ("total", "decimal(10,2)"), ("c", "bigint"), ("u", "string"),
                   ("f", "double"), ("flag", "boolean")]


def test_infer_types_is_best_effort() -> None:
    assert infer_types("this is not sql (", "sqlite", "main", {}) == []
    assert infer_types("SELECT x FROM unknown_table", "sqlite", "main", {}) in ([], [("x", None)])


def test_unrepresentable_view_is_a_warning_not_a_crash(tmp_path: Path) -> None:
    import sqlite3

    from reconciler.adapters.jdbc import JdbcAdapter

    db = tmp_path / "odd.db"
    con = sqlite3.connect(db)
    con.executescript('CREATE TABLE t (a INT); CREATE VIEW fine AS SELECT a FROM t; '
                      'CREATE VIEW blank AS SELECT a AS "" FROM t;')
    con.close()
    snap = JdbcAdapter("lite", {"url": f"sqlite:///{db}"}).fetch("main")
    assert "fine" in snap.views and "blank" not in snap.views
    assert any("blank" in w and "cannot be represented" in w for w in snap.warnings)
