"""Flink (PyFlink, batch mode) as a child process on the child-process layer (reconciler.child):
`client` (our side, a `ChildProcess`: Flink's errors; an `Engine`), `serve` (the engine module the
child's side serves, standard library and PyFlink only, loaded by path by the Flink venv's
interpreter; `tests` for view tests, `query`), `relations` (fixture rows as Flink SQL: typed inline
`VALUES`). View tests' queries read their fixture rows inline (viewtests.flink_engine); for
`query` the child registers each relation as a temporary view under the name the view's SQL
reads (`sales.orders`, in an in-memory catalog of that name), so the SQL runs as written and an
error's line and column are the view's own."""
