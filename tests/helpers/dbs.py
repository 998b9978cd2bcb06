"""The machine's PostgreSQL and MariaDB servers, as the tests reach them."""

from __future__ import annotations

import sqlalchemy as sa

PG_ADMIN_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/postgres"
MARIADB_ADMIN_URL = "mysql+pymysql://root@127.0.0.1:3306/test"


def _server_up(url: str) -> str | None:
    try:
        eng = sa.create_engine(url)
        with eng.connect():
            pass
        eng.dispose()
        return None
    except Exception as e:  # noqa: BLE001
        return str(e).splitlines()[0]
