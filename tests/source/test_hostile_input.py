"""The fixed corpus of issue 14: every hostile input found by hand, run through
every command. Each is rejected with one located line (file:line:col), never an
"unexpected" error or a crash, nothing is written, and no declared view is
silently lost. The generated inputs are in test_fuzz_input.py."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from reconciler.core import deps
from reconciler.core.coltypes import MAX_DEPTH
from tests.helpers.cli import run_cli
from tests.helpers.hostile import GOOD, assert_rejected, snapshot, write


def _bomb() -> str:
    text = 'a: &a ["x","x","x","x","x","x","x","x","x","x"]\n'
    for i in range(1, 9):
        prev, cur = chr(96 + i), chr(97 + i)
        text += f"{cur}: &{cur} [" + ",".join([f"*{prev}"] * 10) + "]\n"
    return text


# Past the bound (1,200 levels parse: tests/core/test_deep_types.py)
NESTED_TYPE = "array<" * (MAX_DEPTH + 1) + "int" + ">" * (MAX_DEPTH + 1)

TOO_DEEP_FLOW = "sales.yaml:3:40: nested deeper than 32 levels"  # "views: " and 32 brackets before it
TOO_DEEP_BLOCK = "nested deeper than 32 levels"

# (id, content of views/local/sales.yaml, expected message part)
VIEW_CORPUS: list[tuple[str, str | bytes, str]] = [
    ("bom-in-view-name", GOOD.replace("name: v1", 'name: "\\ufeffv1"'), "invalid name"),
    ("zero-width-in-view-name", GOOD.replace("name: v1", 'name: "v\\u200b1"'), "invalid name"),
    ("bidi-in-schema", GOOD.replace("schema: sales", 'schema: "sa\\u202eles"'), "schema"),
    ("nul-byte", GOOD + "\0  - name: v2\n    representations: [{dialect: spark, sql: SELECT 2}]\n",
     "control character U+0000"),
    ("bell-byte", GOOD.replace("v1", "v\x071"), "control character U+0007"),
    # One rule and one message whatever the style or the parser build (PyYAML 6.0.4's libyaml
    # has a flow limit of its own at 1,000 levels): the bracket opening level 33 is located.
    ("deep-flow-30000", "catalog: local\nschema: sales\nviews: " + "[" * 30000 + "]" * 30000 + "\n", TOO_DEEP_FLOW),
    ("deep-flow-1000", "catalog: local\nschema: sales\nviews: " + "[" * 1000 + "]" * 1000 + "\n", TOO_DEEP_FLOW),
    ("deep-flow-40", "catalog: local\nschema: sales\nviews: " + "[" * 40 + "]" * 40 + "\n", TOO_DEEP_FLOW),
    ("deep-flow-mapping-1000", "catalog: local\nschema: sales\nviews: " + "{a: " * 1000 + "1" + "}" * 1000 + "\n",
     "sales.yaml:3:136: nested deeper than 32 levels"),
    ("deep-block-30000", "catalog: local\nschema: sales\nviews:\n" + "- " * 30000 + "x\n", TOO_DEEP_BLOCK),
    ("deep-block-1000", "catalog: local\nschema: sales\nviews:\n" + "- " * 1000 + "x\n", TOO_DEEP_BLOCK),
    ("deep-block-indented", "catalog: local\nschema: sales\nviews:\n"
     + "".join(" " * i + f"k{i}:\n" for i in range(300)) + " " * 300 + "x: 1\n", "nested"),
    ("alias-bomb", _bomb(), "aliases expand"),
    ("recursive-alias", "catalog: local\nschema: sales\nviews: &v [*v]\n", "alias"),
    ("two-documents", GOOD + "---\n" + GOOD, "more than one YAML document"),
    ("non-string-key", GOOD + "1: x\n", "keys must be strings"),
    ("complex-key", GOOD + "? [a, b]\n: x\n", "keys must be strings"),
    ("nan-property", GOOD + "    properties: {tier: .nan}\n", "not a number"),
    ("not-utf8", GOOD.encode() + b"  - name: caf\xe9\n", "not UTF-8"),
    ("utf16", GOOD.encode("utf-16"), "not UTF-8"),
    ("type-nested-too-deep", GOOD.replace("    representations:", f"    columns:\n      - {{name: x, type: "
                                      f"'{NESTED_TYPE}'}}\n    representations:"), "nested deeper than"),
    ("long-key", GOOD + "x" * 1000 + ": 1\n", "unknown key"),
    ("huge-key", GOOD + "x" * 100_000 + ": 1\n", "invalid YAML"),
    ("huge-name", GOOD.replace("name: v1", "name: " + "v" * 100_000), "views[0].name"),
    ("tab-in-name", GOOD.replace("name: v1", 'name: "v\\t1"'), "invalid name"),
]


@pytest.mark.parametrize(("content", "message"), [c[1:] for c in VIEW_CORPUS], ids=[c[0] for c in VIEW_CORPUS])
def test_hostile_view_file(sample_repo: Path, content: str | bytes, message: str) -> None:
    write(sample_repo, "views/local/sales.yaml", content)
    assert_rejected(sample_repo, "views/local/sales.yaml:", message)


# (id, viewsync.yaml content, environment, expected message part)
CONFIG_BASE = "version: 1\nproject: p\ncatalogs:\n  local: {type: managed, url: 'sqlite:///.viewsync/c.db'}\n"
CONFIG_CORPUS: list[tuple[str, str | bytes, dict[str, str], str]] = [
    ("empty-env-state", CONFIG_BASE + "state: ${VS_T_STATE_URL}\n", {"VS_T_STATE_URL": ""},
     "environment variable VS_T_STATE_URL is empty"),
    ("unset-env-state", CONFIG_BASE + "state: ${VS_T_STATE_URL}\n", {}, "VS_T_STATE_URL is not set"),
    ("unterminated-env", CONFIG_BASE + "state: 'sqlite:///${VS_T_STATE_URL'\n", {"VS_T_STATE_URL": "x"},
     "malformed ${...}"),
    ("nested-env", CONFIG_BASE + "state: '${A:-${VS_T_STATE_URL}}'\n", {"VS_T_STATE_URL": "x"}, "malformed"),
    ("nan-policy", CONFIG_BASE + "policy: {max_drop_fraction: .nan}\n", {}, "not a number"),
    ("inf-policy", CONFIG_BASE + "policy: {max_drop_fraction: .inf}\n", {}, "not a number"),
    ("bom-inside", CONFIG_BASE.replace("project: p", "\ufeffproject: p"), {}, "invalid YAML"),
    ("two-docs", CONFIG_BASE + "---\n" + CONFIG_BASE, {}, "more than one YAML document"),
    ("not-utf8", CONFIG_BASE.encode() + b"# \xff\n", {}, "not UTF-8"),
    ("nul", CONFIG_BASE + "\0", {}, "control character"),
]


@pytest.mark.parametrize(("content", "env", "message"), [c[1:] for c in CONFIG_CORPUS],
                         ids=[c[0] for c in CONFIG_CORPUS])
def test_hostile_config(sample_repo: Path, monkeypatch: pytest.MonkeyPatch, content: str | bytes,
                        env: dict[str, str], message: str) -> None:
    monkeypatch.delenv("VS_T_STATE_URL", raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    write(sample_repo, "viewsync.yaml", content)
    assert_rejected(sample_repo, "viewsync.yaml:", message)


def test_env_default(sample_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VS_T_EMPTY", "")
    monkeypatch.delenv("VS_T_UNSET", raising=False)
    write(sample_repo, "viewsync.yaml", CONFIG_BASE.replace("'sqlite:///.viewsync/c.db'", "'${VS_T_EMPTY:-sqlite:///"
                                                            ".viewsync/c.db}'")
          + "state: '${VS_T_UNSET:-sqlite:///.viewsync/s.db}'\n")
    res = run_cli(sample_repo, "validate")
    assert res.code == 0, res.text


def test_bom_at_file_start_is_accepted(sample_repo: Path) -> None:
    path = sample_repo / "views/local/sales.yaml"
    before = run_cli(sample_repo, "validate")
    path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    cfg = sample_repo / "viewsync.yaml"
    cfg.write_bytes(b"\xef\xbb\xbf" + cfg.read_bytes())
    after = run_cli(sample_repo, "validate")
    assert before.code == after.code == 0, after.text
    assert after.out == before.out  # same number of views: none lost


# ------------------------------------------------------------ files and SQL
def test_view_files_never_silently_ignored(sample_repo: Path) -> None:
    (sample_repo / "views/local/finance.YAML").write_text(GOOD.replace("sales", "finance"))
    assert_rejected(sample_repo, "views/local/finance.YAML:1:1", "lowercase")
    (sample_repo / "views/local/finance.YAML").unlink()
    (sample_repo / "views/local/gone.yaml").symlink_to(sample_repo / "nowhere.yaml")
    assert_rejected(sample_repo, "views/local/gone.yaml:1:1", "broken symbolic link")
    (sample_repo / "views/local/gone.yaml").unlink()
    import shutil

    shutil.rmtree(sample_repo / "views")
    (sample_repo / "views").write_text("not a directory")
    assert_rejected(sample_repo, "views:1:1", "not a directory")


SQL_CORPUS = [
    ("drop-table", "DROP TABLE sales.orders", "DROP"),
    ("two-statements", "SELECT 1; DROP TABLE sales.orders", "2 statements"),
    ("not-sql", "this is not sql", "not a query"),
    ("insert", "INSERT INTO sales.orders SELECT 1", "INSERT"),
]


@pytest.mark.parametrize(("sql", "message"), [c[1:] for c in SQL_CORPUS], ids=[c[0] for c in SQL_CORPUS])
def test_view_sql_is_one_query(sample_repo: Path, sql: str, message: str) -> None:
    write(sample_repo, "views/local/extra.yaml", GOOD.replace("sales", "extra").replace("SELECT 1 AS x", sql))
    assert_rejected(sample_repo, "views/local/extra.yaml:", message, (["validate"],))
    before = snapshot(sample_repo)
    for command in (["plan"], ["apply", "--auto-approve", "--allow-dirty"]):
        res = run_cli(sample_repo, *command)
        # located as validate locates it: the sql field of the view's spark representation
        assert res.code == 1, res.text
        assert "[not_a_query] views/local/extra.yaml:7:14: local.extra.v1: representations.spark.sql: " \
            in res.out, res.text
        assert message in res.out
    res = run_cli(sample_repo, "plan", "--format", "json")
    (error,) = json.loads(res.out)["errors"]
    assert error["location"] == {"file": "views/local/extra.yaml", "line": 7, "column": 14,
                                 "field": "views[0].representations[0].sql"}
    res = run_cli(sample_repo, "plan", "--format", "markdown")
    assert "- `not_a_query` `views/local/extra.yaml:7:14` local.extra.v1" in res.out, res.out
    assert snapshot(sample_repo) == before


def test_cycles_in_validate_and_every_plan(sample_repo: Path) -> None:
    # A view reading itself: one action only, still a cycle.
    write(sample_repo, "views/local/extra.yaml", GOOD.replace("sales", "extra").replace("v1", "a")
          .replace("SELECT 1 AS x", "SELECT * FROM a"))
    assert_rejected(sample_repo, "views/local/extra.yaml:", "cycle", (["validate"],))
    res = run_cli(sample_repo, "plan")
    assert res.code == 1, res.text
    assert "[dependency_cycle] views/local/extra.yaml:6:7: views depend on each other in a cycle" in res.out
    (sample_repo / "views/local/extra.yaml").unlink()

    # One update closing a cycle through a view that does not change.
    assert run_cli(sample_repo, "apply", "--auto-approve", "--allow-dirty").code == 0
    path = sample_repo / "views/local/sales.yaml"
    text = path.read_text()
    assert "FROM sales.orders" in text
    path.write_text(text.replace("FROM sales.orders", "FROM sales.daily_revenue", 1))
    res = run_cli(sample_repo, "plan")
    assert res.code == 1 and "cycle" in res.text, res.text
    assert "1 to update" in res.text or "update" in res.text
    res = run_cli(sample_repo, "validate")
    assert res.code == 1 and "cycle" in res.text and re.search(r"sales\.yaml:\d+:\d+: ", res.err), res.err


def test_valid_chain_of_990_views(sample_repo: Path) -> None:
    views = "".join(f"  - name: v{i}\n    representations:\n      - dialect: spark\n"
                    f"        sql: SELECT * FROM v{i - 1}\n" for i in range(1, 990))
    write(sample_repo, "views/local/chain.yaml", "catalog: local\nschema: chain\nviews:\n  - name: v0\n"
          "    representations:\n      - dialect: spark\n        sql: SELECT 1 AS x\n" + views)
    assert run_cli(sample_repo, "validate").code == 0
    res = run_cli(sample_repo, "plan", "--format", "json", "--select", "local.chain.*")
    assert res.code == 0, res.text[-2000:]
    import json

    order = [a["view"]["name"] for a in json.loads(res.out)["actions"]]
    assert order == [f"v{i}" for i in range(990)]


def test_ordering_is_iterative_and_linear_for_100000_views() -> None:
    n = 100_000
    order, cycle = deps.topological([f"v{n - 1}"], lambda v: [f"v{int(v[1:]) - 1}"] if v != "v0" else [],
                                    key=lambda v: v)
    assert cycle is None and order[0] == "v0" and order[-1] == f"v{n - 1}" and len(order) == n
    ring, cycle = deps.topological(["v0"], lambda v: [f"v{(int(v[1:]) + 1) % n}"], key=lambda v: v)
    assert cycle is not None and len(cycle) == n + 1 and cycle[0] == cycle[-1]


# --------------------------------------------------------- secrets, drivers
def test_secret_host_name_is_masked_in_any_case(sample_repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VS_T_HOST", "Secret-Host-Name.Invalid")
    write(sample_repo, "viewsync.yaml", CONFIG_BASE.replace(
        "'sqlite:///.viewsync/c.db'", "'postgresql+psycopg://u@${VS_T_HOST}:5432/db'"))
    res = run_cli(sample_repo, "plan")
    assert res.code == 1 and "Error: unexpected" not in res.text, res.text
    assert "secret-host-name" not in res.text.lower(), res.text


def test_missing_driver_and_unwritable_state(sample_repo: Path) -> None:
    write(sample_repo, "viewsync.yaml", CONFIG_BASE.replace(
        "{type: managed, url: 'sqlite:///.viewsync/c.db'}", "{type: jdbc, url: 'mysql://u@127.0.0.1:1/x'}"))
    write(sample_repo, "views/local/sales.yaml", GOOD)
    (sample_repo / "views/local/analytics.yaml").unlink()
    res = run_cli(sample_repo, "plan")
    assert res.code == 1 and "Error: unexpected" not in res.text and "local" in res.err, res.text
    assert len(res.err.strip().splitlines()) == 1, res.err

    write(sample_repo, "viewsync.yaml", CONFIG_BASE + "state: 'sqlite:////proc/viewsync-nope/state.db'\n")
    res = run_cli(sample_repo, "apply", "--auto-approve", "--allow-dirty")
    assert res.code == 1 and "Error: unexpected" not in res.text and "state store" in res.err, res.text


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads unreadable files")
def test_unreadable_view_file(sample_repo: Path) -> None:
    path = sample_repo / "views/local/sales.yaml"
    path.chmod(0)
    try:
        assert_rejected(sample_repo, "views/local/sales.yaml:1:1", "cannot read")
    finally:
        path.chmod(0o644)
