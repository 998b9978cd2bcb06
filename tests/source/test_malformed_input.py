"""Bad declarations and config: exit 1, a message with file:line and the field,
no traceback, and nothing changed anywhere (no catalog, no state written)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.helpers.cli import run_cli
from tests.helpers.hostile import GOOD as GOOD_VIEW

# (case id, file to write, content, expected "file:line" prefix, expected field text, expected message part)
VIEW_CASES = [
    ("yaml-syntax", "views/local/sales.yaml", "catalog: local\nschema: sales\nviews:\n  - name: [unclosed\n",
     "views/local/sales.yaml:5", "", "invalid YAML"),
    ("unknown-top-key", "views/local/sales.yaml", GOOD_VIEW + "extra: 1\n",
     "views/local/sales.yaml:8", "extra", "unknown key 'extra'"),
    ("unknown-view-key", "views/local/sales.yaml", GOOD_VIEW.replace("    representations:", "    colums: []\n"
                                                                     "    representations:"),
     "views/local/sales.yaml:5", "views[0].colums", "unknown key 'colums'"),
    ("missing-representations", "views/local/sales.yaml",
     "catalog: local\nschema: sales\nviews:\n  - name: v1\n    comment: x\n",
     "views/local/sales.yaml:4", "views[0]", "'representations' is required"),
    ("empty-representations", "views/local/sales.yaml",
     "catalog: local\nschema: sales\nviews:\n  - name: v1\n    representations: []\n",
     "views/local/sales.yaml:5", "views[0].representations", "should be non-empty"),
    ("duplicate-dialect", "views/local/sales.yaml", GOOD_VIEW + "      - dialect: spark\n        sql: SELECT 2\n",
     "views/local/sales.yaml:8", "views[0].representations[1].dialect", "duplicate dialect 'spark'"),
    ("bad-dialect-name", "views/local/sales.yaml", GOOD_VIEW.replace("dialect: spark", "dialect: Spark SQL"),
     "views/local/sales.yaml:6", "views[0].representations[0].dialect", "does not match"),
    ("empty-sql", "views/local/sales.yaml", GOOD_VIEW.replace("sql: SELECT 1 AS x", "sql: '   '"),
     "views/local/sales.yaml:7", "views[0].representations[0].sql", "does not match"),
    ("invalid-view-name", "views/local/sales.yaml", GOOD_VIEW.replace("name: v1", "name: a.b"),
     "views/local/sales.yaml:4", "views[0].name", "invalid name 'a.b'"),
    ("duplicate-view", "views/local/sales.yaml",
     GOOD_VIEW + "  - name: v1\n    representations:\n      - {dialect: spark, sql: SELECT 2}\n",
     "views/local/sales.yaml:8", "views[1].name", "duplicate view 'v1'"),
    ("catalog-path-mismatch", "views/local/sales.yaml", GOOD_VIEW.replace("catalog: local", "catalog: lake"),
     "views/local/sales.yaml:1", "catalog", "does not match the file path"),
    ("schema-path-mismatch", "views/local/sales.yaml", GOOD_VIEW.replace("schema: sales", "schema: finance"),
     "views/local/sales.yaml:2", "schema", "does not match the file path"),
    ("unknown-catalog", "views/lake/sales.yaml", GOOD_VIEW.replace("catalog: local", "catalog: lake"),
     "views/lake/sales.yaml:1", "catalog", "unknown catalog 'lake'"),
    ("bad-column-type", "views/local/sales.yaml",
     GOOD_VIEW.replace("    representations:", "    columns:\n      - {name: x, type: integr}\n    representations:"),
     "views/local/sales.yaml:6", "views[0].columns[0].type", "unknown type 'integr'"),
    ("bad-decimal", "views/local/sales.yaml",
     GOOD_VIEW.replace("    representations:", "    columns:\n      - {name: x, type: 'decimal(50,2)'}\n"
                       "    representations:"),
     "views/local/sales.yaml:6", "views[0].columns[0].type", "decimal(p,s)"),
    ("duplicate-column", "views/local/sales.yaml",
     GOOD_VIEW.replace("    representations:", "    columns:\n      - {name: x, type: int}\n"
                       "      - {name: X, type: int}\n    representations:"),
     "views/local/sales.yaml:7", "views[0].columns[1].name", "duplicate column 'X'"),
    ("nbsp-around-column-name", "views/local/sales.yaml",
     GOOD_VIEW.replace("    representations:", '    columns:\n      - {name: "x\\u00a0", type: int}\n'
                       "    representations:"),
     "views/local/sales.yaml:6", "views[0].columns[0].name", "surrounding white space other than spaces"),
    ("tab-in-column-name", "views/local/sales.yaml",
     GOOD_VIEW.replace("    representations:", '    columns:\n      - {name: " x\\t", type: int}\n'
                       "    representations:"),
     "views/local/sales.yaml:6", "views[0].columns[0].name", "control character U+0009"),
    ("spaces-only-column-name", "views/local/sales.yaml",
     GOOD_VIEW.replace("    representations:", '    columns:\n      - {name: "  ", type: int}\n'
                       "    representations:"),
     "views/local/sales.yaml:6", "views[0].columns[0].name", "only spaces"),
    ("space-around-view-name", "views/local/sales.yaml", GOOD_VIEW.replace("name: v1", 'name: "v1 "'),
     "views/local/sales.yaml:4", "views[0].name", "surrounding spaces"),
    ("bad-security", "views/local/sales.yaml", GOOD_VIEW + "    security: owner\n",
     "views/local/sales.yaml:8", "views[0].security", "is not one of"),
    ("non-string-property", "views/local/sales.yaml", GOOD_VIEW + "    properties: {tier: 3}\n",
     "views/local/sales.yaml:8", "views[0].properties.tier", "is not of type 'string'"),
    ("reserved-property", "views/local/sales.yaml", GOOD_VIEW + "    properties: {viewsync.managed-by: me}\n",
     "views/local/sales.yaml:8", "views[0].properties", "viewsync"),
    ("views-not-a-list", "views/local/sales.yaml", "catalog: local\nschema: sales\nviews: {name: v1}\n",
     "views/local/sales.yaml:3", "views", "is not of type 'array'"),
    ("wrong-file-place", "views/sales.yaml", GOOD_VIEW,
     "views/sales.yaml:1", "", "views/<catalog>/<schema>.yaml"),
]

CONFIG_CASES = [
    ("config-unknown-catalog-type", "catalogs:\n  local: {type: mongo, url: x}\n",
     "viewsync.yaml:4", "catalogs.local.type", "is not one of"),
    ("config-unknown-option", "catalogs:\n  local: {type: managed, url: 'sqlite:///x.db', pasword: x}\n",
     "viewsync.yaml:4", "catalogs.local.pasword", "unknown key 'pasword'"),
    ("config-missing-env", "catalogs:\n  local: {type: managed, url: '${VS_TEST_UNSET_VAR}'}\n",
     "viewsync.yaml:4", "catalogs.local.url", "environment variable VS_TEST_UNSET_VAR is not set"),
    ("config-bad-policy",
     "catalogs:\n  local: {type: managed, url: 'sqlite:///x.db'}\npolicy: {max_drop_fraction: 2}\n",
     "viewsync.yaml:5", "policy.max_drop_fraction", "greater than the maximum"),
    ("config-duplicate-key", "catalogs:\n  local: {type: managed, url: 'sqlite:///x.db'}\n"
     "  local: {type: managed, url: 'sqlite:///y.db'}\n", "viewsync.yaml:5", "catalogs.local", "duplicate key"),
]


def _snapshot(repo: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(repo)): p.read_bytes() if p.is_file() else None for p in sorted(repo.rglob("*"))}


def _assert_rejected(repo: Path, prefix: str, field: str, message: str) -> None:
    before = _snapshot(repo)
    for command in (["validate"], ["plan"], ["apply", "--auto-approve"], ["drift"]):
        res = run_cli(repo, *command)
        assert res.code == 1, (command, res.text)
        assert "Traceback" not in res.text
        line = next((ln for ln in res.err.splitlines() if prefix + ":" in ln), None)
        assert line is not None, res.err
        assert re.search(r":\d+:\d+: ", line), line  # file:line:col
        if field:
            assert f": {field}: " in line, line
        assert message in line, line
    assert _snapshot(repo) == before  # nothing written: no catalog, no state, no files


@pytest.mark.parametrize(("rel", "content", "prefix", "field", "message"),
                         [c[1:] for c in VIEW_CASES], ids=[c[0] for c in VIEW_CASES])
def test_malformed_view_file(sample_repo: Path, rel: str, content: str, prefix: str, field: str,
                             message: str) -> None:
    path = sample_repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content)
    _assert_rejected(sample_repo, prefix, field, message)


@pytest.mark.parametrize(("catalogs", "prefix", "field", "message"),
                         [c[1:] for c in CONFIG_CASES], ids=[c[0] for c in CONFIG_CASES])
def test_malformed_config(sample_repo: Path, catalogs: str, prefix: str, field: str, message: str) -> None:
    (sample_repo / "viewsync.yaml").write_text("version: 1\nproject: p\n" + catalogs)
    _assert_rejected(sample_repo, prefix, field, message)


def test_secret_from_env_is_never_echoed(sample_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VS_TEST_SECRET_PW", "s3cr3t-hunter2")
    (sample_repo / "viewsync.yaml").write_text(
        "version: 1\nproject: p\ncatalogs:\n"
        "  local: {type: managed, url: 'postgresql+psycopg://u:${VS_TEST_SECRET_PW}@127.0.0.1:1/nope'}\n")
    res = run_cli(sample_repo, "plan")
    assert res.code == 1 and "Traceback" not in res.text
    assert "s3cr3t-hunter2" not in res.text
    assert "managed store" in res.text
