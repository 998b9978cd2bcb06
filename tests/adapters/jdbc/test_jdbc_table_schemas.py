"""JdbcAdapter.table_schemas on PostgreSQL, MariaDB and SQLite: the inspector's columns in our grammar."""

from __future__ import annotations

from reconciler.adapters.jdbc import JdbcAdapter
from reconciler.core.model import Column
from tests.helpers.jdbc import Db


def test_table_columns_for_the_verifier(db: Db) -> None:
    db.run(f"CREATE TABLE {db.q(db.schema)}.{db.q('orders')} (id BIGINT, amount DECIMAL(18,2), note VARCHAR(20))"
           if db.kind != "sqlite" else "CREATE TABLE orders (id BIGINT, amount DECIMAL(18,2), note VARCHAR(20))")
    adapter = JdbcAdapter("pg", {"url": db.url})
    try:
        got = adapter.table_schemas([(db.schema, "orders"), (db.schema, "nope")])
    finally:
        adapter.close()
    assert list(got) == [(db.schema, "orders")]
    assert [(c.name, c.type) for c in got[(db.schema, "orders")]] == [
        ("id", "bigint"), ("amount", "decimal(18,2)"), ("note", "varchar(20)")]
    assert all(isinstance(c, Column) for c in got[(db.schema, "orders")])
