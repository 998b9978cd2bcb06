"""How long a SQLite reader or writer waits for another's transaction: the stores' plain
sqlite3 reads and the SQLAlchemy engines' busy_timeout alike (a module of its own, so the
no-op plan's sqlite3 reads load no SQLAlchemy)."""

BUSY_TIMEOUT_S = 30
