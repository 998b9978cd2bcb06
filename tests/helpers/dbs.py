"""The PostgreSQL and MariaDB servers the tests reach on loopback (scripts/databases installs and
starts them; .ci/run runs it every time)."""

from __future__ import annotations

import sqlalchemy as sa

PG_ADMIN_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
MARIADB_ADMIN_URL = "mysql+pymysql://root@127.0.0.1:3306/test"
START_HINT = "run `sudo bash scripts/databases` (installs and starts PostgreSQL and MariaDB)"


def _server_up(url: str) -> str | None:
    try:
        eng = sa.create_engine(url)
        with eng.connect():
            pass
        eng.dispose()
        return None
    except Exception as e:  # noqa: BLE001
        return str(e).splitlines()[0]


def require_server(url: str, what: str) -> None:
    """Skip (fail in CI) with one line, saying what to run, when the server at `url` is not up."""
    down = _server_up(url)
    if down:
        from tests.helpers.servers import backend_unavailable

        backend_unavailable(f"{what} not reachable: {down}; {START_HINT}")
