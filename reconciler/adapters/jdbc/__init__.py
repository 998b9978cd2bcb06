"""JDBC databases, read-only: `adapter` (I/O), `dialects` (one class per database holding
only its differences), `types` (column types to canonical types, SQLite inference)."""

from reconciler.adapters.jdbc.adapter import READ_ONLY_MESSAGE, JdbcAdapter

__all__ = ["READ_ONLY_MESSAGE", "JdbcAdapter"]
