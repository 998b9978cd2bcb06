"""The engines other than Spark 4.3 reading what viewsync writes, on the real servers: a Trino with
a `hive` catalog on the test Hive Metastore and an `iceberg` catalog on the test Iceberg REST
server (tests/helpers/trino.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.adapters.iceberg.conftest import iceberg_server, namespace
from tests.adapters.metastore.hms.conftest import Metastore, database, hms_client, metastore
from tests.helpers.iceberg import IcebergServer
from tests.helpers.trino import Trino, start

__all__ = ["database", "hms_client", "iceberg_server", "metastore", "namespace"]  # fixtures pytest must find


@pytest.fixture(scope="session")
def trino(metastore: Metastore, iceberg_server: IcebergServer,
          tmp_path_factory: pytest.TempPathFactory) -> Iterator[Trino]:
    yield from start(tmp_path_factory.mktemp("trino"), metastore.uri, iceberg_server.uri)
