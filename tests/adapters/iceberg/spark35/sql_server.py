"""Runs inside the Spark 3.5 venv (not the project's): one SparkSession with Iceberg's
SparkCatalog on the test REST server, answering one JSON request per stdin line.

Request: {"sql": "..."}; reply: {"columns": [[name, type, comment]], "rows": [[...]]} or {"error": "..."}.
Request: {"conf": {key: value}} sets the session's conf (e.g. one more catalog); reply: {} or {"error": "..."}.
Argv: uri of the REST catalog, catalog name, jar paths (comma-separated), work dir.
"""

import json
import sys


def main() -> None:
    uri, catalog, jars, work = sys.argv[1:5]
    from pyspark.sql import SparkSession

    spark = (
        SparkSession.builder.master("local[1]").appName("viewsync-iceberg-spark35")
        .config("spark.jars", jars)
        .config("spark.sql.extensions", "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions")
        .config(f"spark.sql.catalog.{catalog}", "org.apache.iceberg.spark.SparkCatalog")
        .config(f"spark.sql.catalog.{catalog}.type", "rest")
        .config(f"spark.sql.catalog.{catalog}.uri", uri)
        .config(f"spark.sql.catalog.{catalog}.cache-enabled", "false")
        .config(f"spark.sql.catalog.{catalog}.warehouse", f"file://{work}/warehouse")
        .config("spark.sql.warehouse.dir", f"file://{work}/spark-warehouse")
        .config("spark.driver.extraJavaOptions", f"-Djava.io.tmpdir={work}")
        .config("spark.ui.enabled", "false").config("spark.sql.shuffle.partitions", "1")
        .getOrCreate()
    )
    spark.sparkContext.setLogLevel("ERROR")
    print(json.dumps({"ready": spark.version}), flush=True)
    for line in sys.stdin:
        try:
            request = json.loads(line)
            if "conf" in request:
                for key, value in request["conf"].items():
                    spark.conf.set(key, value)
                reply = {}
            else:
                df = spark.sql(request["sql"])
                columns = [[f.name, f.dataType.simpleString(), f.metadata.get("comment")] for f in df.schema.fields]
                rows = [[_plain(v) for v in r] for r in df.collect()]
                reply = {"columns": columns, "rows": rows}
        except Exception as exc:  # noqa: BLE001 - every failure goes back to the test
            reply = {"error": f"{type(exc).__name__}: {exc}"[:4000]}
        print(json.dumps(reply, default=str), flush=True)


def _plain(v: object) -> object:
    if hasattr(v, "asDict"):
        return [_plain(x) for x in v]  # a Row (struct) as a list
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    return str(v)  # decimals, dates, timestamps


if __name__ == "__main__":
    main()
