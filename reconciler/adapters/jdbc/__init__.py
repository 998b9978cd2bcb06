"""JDBC databases, read-only: `adapter` (I/O), `dialects` (one class per database holding
only its differences), `types` (column types to canonical types, SQLite inference)."""

from reconciler.adapters.jdbc.adapter import JdbcAdapter

__all__ = ["JdbcAdapter"]
