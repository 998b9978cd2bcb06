"""Timeouts for SQL connections (state store, managed store, JDBC catalogs):
a server that accepts a connection and never answers must not hang a run.

Set per URL with the driver's own query parameters (`?connect_timeout=5` for
PostgreSQL; `connect_timeout`, `read_timeout`, `write_timeout` for MySQL);
otherwise DEFAULT_S applies."""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

DEFAULT_S = 30


def sql_connect_args(url: str | sa.URL, seconds: float = DEFAULT_S) -> dict[str, Any]:
    """Driver arguments bounding connect and reads, unless the URL already sets them."""
    parsed = sa.make_url(url) if isinstance(url, str) else url
    backend, query = parsed.get_backend_name(), parsed.query
    whole = max(1, int(seconds))
    if backend == "postgresql":
        # libpq's connect_timeout covers the TCP connect and the whole start-up exchange.
        return {} if "connect_timeout" in query else {"connect_timeout": whole}
    if backend in ("mysql", "mariadb"):
        return {k: whole for k in ("connect_timeout", "read_timeout", "write_timeout") if k not in query}
    return {}
