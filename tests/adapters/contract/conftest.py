"""Backends for the adapter contract suite, pyiceberg style: one fixture per real
backend, listed in CATALOGS by catalog kind. A kind registered in
`reconciler.adapters.REGISTRY` without an entry here fails the suite."""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from reconciler.adapters import CatalogAdapter, open_adapter
from tests.adapters.iceberg.conftest import iceberg_server  # noqa: F401 - fixture
from tests.adapters.metastore.glue.conftest import moto_url  # noqa: F401 - fixture
from tests.adapters.metastore.hms.conftest import metastore  # noqa: F401 - fixture
from tests.helpers.contract import Backend
from tests.helpers.glue_support import ACCOUNT, REGION


def _closing(adapter: CatalogAdapter, schema: str) -> Iterator[Backend]:
    try:
        yield Backend(adapter, schema)
    finally:
        adapter.close()


@pytest.fixture
def managed_sqlite(tmp_path: Path) -> Iterator[Backend]:
    yield from _closing(open_adapter("cat", {"type": "managed", "url": f"sqlite:///{tmp_path}/catalog.db"}), "s")


@pytest.fixture
def managed_postgres(pg_url: str) -> Iterator[Backend]:
    yield from _closing(open_adapter("cat", {"type": "managed", "url": pg_url}), "s")


@pytest.fixture
def iceberg_rest(iceberg_server: Any) -> Iterator[Backend]:  # noqa: F811 - the imported fixture
    schema = "c_" + uuid.uuid4().hex[:10]
    iceberg_server.client_catalog().create_namespace(schema)
    yield from _closing(open_adapter("cat", {"type": "iceberg-rest", "uri": iceberg_server.uri}), schema)


@pytest.fixture(scope="session")
def nessie(moto_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:  # noqa: F811
    from tests.helpers.nessie import start

    yield from start(tmp_path_factory.mktemp("nessie"), moto_url)


@pytest.fixture
def iceberg_nessie(nessie: Any) -> Iterator[Backend]:
    """Nessie's Iceberg REST API, on its default branch (the prefix its /v1/config gives)."""
    from pyiceberg.catalog.rest import RestCatalog

    schema = "c_" + uuid.uuid4().hex[:10]
    RestCatalog("nessie", uri=nessie.iceberg_uri).create_namespace(schema)
    yield from _closing(open_adapter("cat", {"type": "iceberg-rest", "uri": nessie.iceberg_uri}), schema)


@pytest.fixture
def hms(metastore: Any) -> Iterator[Backend]:  # noqa: F811 - the imported fixture
    from hmsclient import hmsclient
    from hmsclient.genthrift.hive_metastore.ttypes import Database

    schema = "c_" + uuid.uuid4().hex[:10]
    client = hmsclient.HMSClient(host="127.0.0.1", port=metastore.port)
    client.open()
    try:
        client.create_database(Database(name=schema, locationUri=f"file://{metastore.dir}/warehouse/{schema}.db",
                                        parameters={}))
        yield from _closing(open_adapter("cat", {"type": "hms", "uri": metastore.uri}), schema)
        client.drop_database(schema, True, True)
    finally:
        client.close()


@pytest.fixture
def glue_moto(moto_url: str) -> Iterator[Backend]:  # noqa: F811 - the imported fixture
    import boto3

    schema = "c_" + uuid.uuid4().hex[:10]
    boto3.client("glue", region_name=REGION, endpoint_url=moto_url).create_database(
        DatabaseInput={"Name": schema})
    # trino_owner: athena (Trino) definer views without a declared owner run as it (else owner_required)
    yield from _closing(open_adapter("cat", {"type": "glue", "region": REGION, "catalog_id": ACCOUNT,
                                             "endpoint_url": moto_url, "trino_owner": "trino_svc"}), schema)


@pytest.fixture
def jdbc_sqlite(tmp_path: Path) -> Iterator[Backend]:
    db = tmp_path / "db.sqlite"
    con = sqlite3.connect(db)
    con.executescript("CREATE TABLE t (id INTEGER, name TEXT); CREATE VIEW v AS SELECT id, name FROM t;")
    con.close()
    yield from _closing(open_adapter("cat", {"type": "jdbc", "url": f"sqlite:///{db}"}), "main")


BackendFactory = Callable[[str], Backend]
