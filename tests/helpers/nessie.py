"""A real Project Nessie for the tests: the Quarkus server jar from Maven Central (pinned, fetched by
the product's own fetcher) with its in-memory version store, serving the Iceberg REST API under
/iceberg, one per test session.

Nessie keeps Iceberg metadata in an object store and 0.99 knows no file: warehouse, so its
warehouse is a bucket of the tests' moto_server (S3). It needs Java 21 or later (the JDK Trino
uses here, tests/helpers/trino.py). Its /v1/config lists no `endpoints`; view endpoints are
announced with `view-endpoints-supported`, as Java and Python clients read it.
"""

from __future__ import annotations

import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from tests.helpers.jars import fetched
from tests.helpers.servers import backend_unavailable, free_port, serve
from tests.helpers.trino import java

BUCKET = "nessie"
START_TIMEOUT = 120.0  # ~3 s here


@dataclass
class Nessie:
    port: int

    @property
    def iceberg_uri(self) -> str:
        return f"http://127.0.0.1:{self.port}/iceberg"


def start(work: Path, s3_url: str) -> Iterator[Nessie]:
    import boto3

    exe = java()
    if exe is None:
        backend_unavailable("Nessie needs Java 21 or later: set VIEWSYNC_TRINO_JAVA, or install one under /usr/lib/jvm")
    [jar] = fetched("nessie-server")
    s3 = boto3.client("s3", endpoint_url=s3_url, region_name="us-east-1", aws_access_key_id="testing",
                      aws_secret_access_key="testing")
    s3.create_bucket(Bucket=BUCKET)
    port, management = free_port(), free_port()
    props = {
        "nessie.version.store.type": "IN_MEMORY", "quarkus.http.host": "127.0.0.1", "quarkus.http.port": port,
        "quarkus.management.host": "127.0.0.1", "quarkus.management.port": management,
        "nessie.server.authentication.enabled": "false", "nessie.catalog.default-warehouse": "warehouse",
        "nessie.catalog.warehouses.warehouse.location": f"s3://{BUCKET}/wh",
        "nessie.catalog.service.s3.default-options.endpoint": f"{s3_url}/",
        "nessie.catalog.service.s3.default-options.path-style-access": "true",
        "nessie.catalog.service.s3.default-options.region": "us-east-1",
        "nessie.catalog.service.s3.default-options.access-key": "urn:nessie-secret:quarkus:nessie-s3",
        "nessie-s3.name": "testing", "nessie-s3.secret": "testing",
        "nessie.catalog.iceberg-config-defaults.view-endpoints-supported": "true",
    }
    cmd = [exe, "-XX:+UseSerialGC", "-Xms64m", "-Xmx256m", "-XX:TieredStopAtLevel=1",
           f"-Djava.io.tmpdir={work}", *(f"-D{k}={v}" for k, v in props.items()), "-jar", str(jar)]
    server = Nessie(port)

    def probe() -> None:
        urllib.request.urlopen(f"{server.iceberg_uri}/v1/config", timeout=2).close()

    with serve(cmd, work, "Nessie", probe, timeout=START_TIMEOUT, interval=0.2):
        yield server
