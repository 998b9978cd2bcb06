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
WAREHOUSE = "warehouse"  # Nessie's name of its one warehouse, s3://BUCKET/wh
START_TIMEOUT = 120.0  # ~3 s here
S3_KEY = S3_SECRET = "testing"  # what moto accepts; no real credential
S3_REGION = "us-east-1"


@dataclass
class Nessie:
    port: int
    s3_url: str  # the moto S3 its warehouse is on

    @property
    def iceberg_uri(self) -> str:
        return f"http://127.0.0.1:{self.port}/iceberg"

    def spark_catalog(self) -> dict[str, str]:
        """Properties of an Iceberg SparkCatalog on Nessie, files through S3FileIO on moto (the
        AWS SDK is the pinned iceberg-aws-bundle)."""
        return {"uri": self.iceberg_uri, "warehouse": WAREHOUSE, "io-impl": "org.apache.iceberg.aws.s3.S3FileIO",
                "s3.endpoint": self.s3_url, "s3.path-style-access": "true", "client.region": S3_REGION,
                "s3.access-key-id": S3_KEY, "s3.secret-access-key": S3_SECRET}

    def trino_catalog(self) -> dict[str, str]:
        """Properties of a Trino iceberg catalog on Nessie, files through Trino's native S3 on moto."""
        return {"iceberg.catalog.type": "rest", "iceberg.rest-catalog.uri": self.iceberg_uri,
                "fs.native-s3.enabled": "true", "s3.endpoint": self.s3_url, "s3.path-style-access": "true",
                "s3.region": S3_REGION, "s3.aws-access-key": S3_KEY, "s3.aws-secret-key": S3_SECRET}


def start(work: Path, s3_url: str) -> Iterator[Nessie]:
    import boto3

    exe = java()
    if exe is None:
        backend_unavailable("Nessie needs Java 21 or later: set VIEWSYNC_TRINO_JAVA, or install one under /usr/lib/jvm")
    [jar] = fetched("nessie-server")
    s3 = boto3.client("s3", endpoint_url=s3_url, region_name=S3_REGION, aws_access_key_id=S3_KEY,
                      aws_secret_access_key=S3_SECRET)
    s3.create_bucket(Bucket=BUCKET)
    port, management = free_port(), free_port()
    props = {
        "nessie.version.store.type": "IN_MEMORY", "quarkus.http.host": "127.0.0.1", "quarkus.http.port": port,
        "quarkus.management.host": "127.0.0.1", "quarkus.management.port": management,
        "nessie.server.authentication.enabled": "false", "nessie.catalog.default-warehouse": WAREHOUSE,
        f"nessie.catalog.warehouses.{WAREHOUSE}.location": f"s3://{BUCKET}/wh",
        "nessie.catalog.service.s3.default-options.endpoint": f"{s3_url}/",
        "nessie.catalog.service.s3.default-options.path-style-access": "true",
        "nessie.catalog.service.s3.default-options.region": S3_REGION,
        "nessie.catalog.service.s3.default-options.access-key": "urn:nessie-secret:quarkus:nessie-s3",
        "nessie-s3.name": S3_KEY, "nessie-s3.secret": S3_SECRET,
        "nessie.catalog.iceberg-config-defaults.view-endpoints-supported": "true",
    }
    cmd = [exe, "-XX:+UseSerialGC", "-Xms64m", "-Xmx256m", "-XX:TieredStopAtLevel=1",
           f"-Djava.io.tmpdir={work}", *(f"-D{k}={v}" for k, v in props.items()), "-jar", str(jar)]
    server = Nessie(port, s3_url)

    def probe() -> None:
        urllib.request.urlopen(f"{server.iceberg_uri}/v1/config", timeout=2).close()

    with serve(cmd, work, "Nessie", probe, timeout=START_TIMEOUT, interval=0.2):
        yield server
