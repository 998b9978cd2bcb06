"""The engines other than Spark 4.3 reading what viewsync writes, on the real servers: a Trino with
a `hive` catalog on the test Hive Metastore and an `iceberg` catalog on the test Iceberg REST
server (tests/helpers/trino.py), and, for the tests that ask, a `nessie` catalog on the test Nessie
(tests/helpers/nessie.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.adapters.contract.conftest import nessie
from tests.adapters.iceberg.conftest import iceberg_server, namespace
from tests.adapters.metastore.glue.conftest import moto_url
from tests.adapters.metastore.hms.conftest import Metastore, database, hms_client, metastore
from tests.helpers.iceberg import IcebergServer
from tests.helpers.nessie import Nessie
from tests.helpers.trino import Trino, start

__all__ = ["database", "hms_client", "iceberg_server", "metastore", "moto_url", "namespace",
           "nessie"]  # fixtures pytest must find

NESSIE_CATALOG = "nessie"  # what Trino and Spark 3.5 name Nessie's main branch in these tests


@pytest.fixture(scope="session")
def trino(metastore: Metastore, iceberg_server: IcebergServer,
          tmp_path_factory: pytest.TempPathFactory) -> Iterator[Trino]:
    yield from start(tmp_path_factory.mktemp("trino"), metastore.uri, iceberg_server.uri)


@pytest.fixture(scope="session")
def nessie_trino(trino: Trino, nessie: Nessie) -> Trino:
    """The session's Trino, with catalog NESSIE_CATALOG on Nessie's main branch (data on moto S3)."""
    trino.create_catalog(NESSIE_CATALOG, "iceberg", nessie.trino_catalog())
    return trino
