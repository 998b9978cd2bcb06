"""Flink (PyFlink, batch mode) as a child process: `client` (our side: start with a handshake,
`call`, stop; an `Engine`), `serve` (the child's side, standard library and PyFlink only, run by
path by the Flink venv's interpreter), `relations` (fixture rows as Flink SQL: typed inline
`VALUES`). The child registers each relation as a temporary view under the name the view's SQL
reads (`sales.orders`, in an in-memory catalog of that name), so the SQL runs as written and an
error's line and column are the view's own."""
