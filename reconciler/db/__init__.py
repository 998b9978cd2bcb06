"""SQL plumbing shared by our own stores and the SQL-backed adapters: SQLAlchemy engines
with timeouts and WAL (`engines`, `timeouts`), read-only access to a store without
SQLAlchemy where SQLite's own module will do (`store_reads`) and SQLite's busy timeout (`busy`).

May import nothing of viewsync outside `db`.
"""
