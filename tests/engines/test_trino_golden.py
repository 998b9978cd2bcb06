"""The golden vectors of Trino's view format (tests/adapters/metastore/formats/golden/trino/trino476_*.json),
written by the real Trino 476 into the test metastore: this test creates each view in Trino and
fails when what Trino wrote differs from the committed vector (VIEWSYNC_WRITE_GOLDEN=1 rewrites
them). The unit tests of test_fmt_golden.py then hold viewsync's codec to them (decode, and
re-encode over the same table with no field lost)."""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Iterator
from typing import Any

import pytest

from reconciler.adapters.metastore.formats import read_view
from tests.adapters.metastore.formats.test_fmt_golden import GOLDEN, load
from tests.helpers.trino import Trino

pytestmark = pytest.mark.slow  # a metastore and a Trino

DB = "golden"  # the database the vectors name: a fixed name, as it is inside Trino's encoded definition
# Parameters that change on every run: dropped from the vectors.
VOLATILE = ("transient_lastDdlTime", "trino_query_id")
VIEWS = {
    "trino476_definer_comment": "CREATE VIEW {q}.paid COMMENT 'paid orders' SECURITY DEFINER AS "
                                "SELECT id, amount FROM {q}.orders WHERE status = 'paid'",
    "trino476_invoker_types": "CREATE VIEW {q}.shapes SECURITY INVOKER AS SELECT id, "
                              "CAST(amount AS DECIMAL(38, 10)) AS wide, ARRAY[status] AS tags, "
                              "MAP(ARRAY[status], ARRAY[id]) AS by_status, "
                              "CAST(ROW(id, status) AS ROW(k BIGINT, \"the label\" VARCHAR(20))) AS point, "
                              "CAST(NULL AS TIMESTAMP(6) WITH TIME ZONE) AS at FROM {q}.orders",
    "trino476_unqualified": "CREATE VIEW {q}.plain AS SELECT count(*) AS n FROM orders",
}


def _vector(table: Any, statement: str) -> dict[str, Any]:
    params = {k: v for k, v in (table.parameters or {}).items() if k not in VOLATILE}
    doc = {
        "source": f"written by the real Trino 476 (io.trino:trino-server, tests/helpers/trino.py) into a Hive "
                  f"Metastore by tests/engines/test_trino_golden.py: {statement.format(q='hive.golden')}",
        "format": "trino",
        "table": {"database": DB, "name": table.tableName, "owner": table.owner,
                  "view_original_text": table.viewOriginalText, "view_expanded_text": table.viewExpandedText,
                  "columns": [[c.name, c.type, c.comment] for c in table.sd.cols], "parameters": params},
    }
    return doc


@pytest.fixture
def golden_db(hms_client: Any, metastore: Any) -> Iterator[str]:
    from hmsclient.genthrift.hive_metastore.ttypes import Database

    if DB in hms_client.get_all_databases():
        hms_client.drop_database(DB, True, True)
    hms_client.create_database(Database(name=DB, locationUri=f"file://{metastore.dir}/warehouse/{DB}.db",
                                        parameters={}))
    yield DB
    hms_client.drop_database(DB, True, True)


def test_trino_476_writes_what_the_golden_vectors_say(trino: Trino, hms_client: Any, golden_db: str) -> None:
    database = golden_db
    q = f"hive.{database}"
    trino.rows(f"CREATE TABLE {q}.orders (id BIGINT, amount DECIMAL(18,2), status VARCHAR) WITH (format = 'PARQUET')")
    # The unqualified view needs its schema as the session's: Trino stores it in the definition.
    written: dict[str, dict[str, Any]] = {}
    for name, statement in VIEWS.items():
        sql = statement.format(q=q)
        if "{q}.orders" not in statement:
            with contextlib.closing(trino.connect(catalog="hive", schema=database)) as conn:
                cur = conn.cursor()
                cur.execute(sql)
                cur.fetchall()
        else:
            trino.rows(sql)
        view = sql.split("VIEW ", 1)[1].split(" ", 1)[0].rsplit(".", 1)[1]
        written[name] = _vector(hms_client.get_table(database, view), statement)

    stale = []
    for name, doc in written.items():
        path = GOLDEN / "trino" / f"{name}.json"
        if os.environ.get("VIEWSYNC_WRITE_GOLDEN") == "1":
            path.write_text(json.dumps(doc, indent=2) + "\n")
        old = json.loads(path.read_text()) if path.exists() else None
        if old is None or {k: v for k, v in old.items() if k != "expected"} != doc:
            stale.append(name)
        _, table = load(path)  # viewsync reads what Trino wrote
        assert read_view(table).format == "trino"
    assert not stale, f"Trino 476 wrote something else than the golden vectors {stale} (VIEWSYNC_WRITE_GOLDEN=1)"
