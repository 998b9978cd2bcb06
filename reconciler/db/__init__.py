"""SQL plumbing shared by our own stores and the SQL-backed adapters: SQLAlchemy engines
with timeouts and WAL (`engines`, `timeouts`) and read-only access to a store without
SQLAlchemy where SQLite's own module will do (`store_reads`).

May import nothing of viewsync outside `db`.
"""
