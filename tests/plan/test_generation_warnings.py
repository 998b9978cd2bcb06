"""Each kind of Spark/Trino dialect difference becomes a warning at the file's own line and
column of the construct in the view's spark SQL (plan warns so for a view it writes that has
both dialects, and generate when it writes one)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from reconciler.plan import dialect_differences as dd
from reconciler.plan import generation
from reconciler.workspace import Workspace
from tests.helpers.paths import ROOT

# kind -> (the spark SQL of the view, written over two lines, and the construct flagged)
KINDS = {
    dd.ARRAY_INDEX: ("SELECT id,\n  tags[pos] AS tag FROM t", "tags[pos]"),
    dd.INTEGER_DIVISION: ("SELECT id,\n  qty / 2 AS half FROM t", "qty / 2"),
    dd.NULL_ORDERING: ("SELECT id FROM t\n  ORDER BY name, id DESC", "name, id"),
    dd.CONCAT_NULL: ("SELECT id,\n  concat(name, id) AS label FROM t", "concat(name, id)"),
    dd.DATETIME: ("SELECT id,\n  date_format(ts, 'yyyy-MM') AS month FROM t", "date_format("),
    dd.IMPLICIT_CAST: ("SELECT id FROM t\n  WHERE id = '1'", "id = '1'"),
    dd.CASE_SENSITIVITY: ("SELECT id,\n  name ILIKE 'a%' AS a FROM t", "name ILIKE"),
    dd.REGEX: ("SELECT id,\n  regexp_extract(name, '(a+)', 1) AS a FROM t", "regexp_extract("),
}


def _file(spark: str, trino: str | None, style: str) -> str:
    lines = ["catalog: local", "schema: shop", "views:", "  - name: v", "    representations:",
             "      # the source", "      - dialect: spark"]
    if style == "|":
        lines += ["        sql: |"] + ["          " + ln for ln in spark.split("\n")]
    else:  # one line, quoted
        lines += ['        sql: "' + spark.replace("\n", " ") + '"']
    if trino is not None:
        lines += ["      - dialect: trino", f"        sql: {trino}"]
    return "\n".join(lines) + "\n"


def _warnings(tmp_path: Path, text: str) -> list[str]:
    root = tmp_path / "repo"
    (root / "views" / "local").mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "viewsync.yaml", root / "viewsync.yaml")
    (root / "views" / "local" / "shop.yaml").write_text(text)
    ws = Workspace.open(root)
    try:
        decl = ws.declarations_at(None)
    finally:
        ws.close()
    return generation.difference_warnings(decl, decl.views)


@pytest.mark.parametrize("style", ["|", '"'])
@pytest.mark.parametrize("code", sorted(KINDS))
def test_each_kind_is_warned_at_the_constructs_line_and_column_in_the_yaml(tmp_path: Path, code: str,
                                                                           style: str) -> None:
    spark, construct = KINDS[code]
    text = _file(spark, "SELECT 1 AS id", style)
    found = [w for w in _warnings(tmp_path, text) if f"[{code}]" in w]
    assert len(found) == 1, found
    where = found[0].split(": ", 1)[0]
    assert where.startswith("views/local/shop.yaml:")
    line, col = (int(x) for x in where.rsplit(":", 2)[1:])
    at = text.splitlines()[line - 1][col - 1:]
    assert at.startswith(construct), (where, at)
    assert f"[{code}] local.shop.v (spark SQL, trino): " in found[0]


def test_no_warning_without_a_trino_representation(tmp_path: Path) -> None:
    spark, _ = KINDS[dd.ARRAY_INDEX]
    assert _warnings(tmp_path, _file(spark, None, "|")) == []
