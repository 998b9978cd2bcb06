"""Throw-away databases of the JDBC tests (the fixtures are in tests/adapters/jdbc/)."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

import sqlalchemy as sa


@dataclass
class Db:
    """One throw-away database: `url` for the adapter, `schema` where views go."""

    kind: str  # postgres | mysql | sqlite
    url: str
    schema: str
    engine: sa.Engine
    extra_databases: list[str] = field(default_factory=list)  # MariaDB: dropped with the fixture

    def run(self, *statements: str) -> None:
        with self.engine.begin() as conn:
            for statement in statements:
                conn.exec_driver_sql(statement)

    def q(self, name: str) -> str:
        """Quote an identifier the way this database wants (for raw DDL in tests)."""
        return self.engine.dialect.identifier_preparer.quote_identifier(name)

    def create_schema(self, name: str) -> None:
        """A second schema (PostgreSQL) / database (MariaDB) / attached file (not SQLite)."""
        if self.kind == "postgres":
            self.run(f"CREATE SCHEMA {self.q(name)}")
        elif self.kind == "mysql":
            self.extra_databases.append(name)
            self.run(f"CREATE DATABASE {self.q(name)}")
        else:
            raise ValueError("SQLite has one schema, main")


def unique(prefix: str = "vs") -> str:
    return f"{prefix}_{uuid.uuid4().hex[:10]}"
