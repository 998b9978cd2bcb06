"""The SQL state store: runs, audit rows, versions and the apply lock (`store`),
whether a lock holder is dead (`lockholder`) and the history and audit queries (`history`).

May import `core`, `db` and `adapters.base` (values only).
"""
