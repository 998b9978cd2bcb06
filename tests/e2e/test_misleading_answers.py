"""Issue 43 §2: answers that misled a new user on the sample, each now a clear one."""

from __future__ import annotations

from pathlib import Path

from tests.helpers.cli import run_cli


def test_history_and_audit_of_an_unknown_view_are_errors(sample_repo: Path) -> None:
    assert run_cli(sample_repo, "apply", "--auto-approve").code == 0
    for args in (("history", "local.sales.nope"), ("audit", "--view", "local.sales.nope")):
        result = run_cli(sample_repo, *args)
        assert result.code != 0, args
        assert "local.sales.nope: not declared" in result.err
    # A declared view, applied or not, has a history (maybe empty): no error.
    assert run_cli(sample_repo, "history", "local.sales.refunds").code == 0
    assert run_cli(sample_repo, "audit", "--view", "local.sales.refunds").code == 0


def _edit(repo: Path, old: str, new: str, count: int = 1) -> None:
    path = repo / "views" / "local" / "sales.yaml"
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, count))


def test_unparseable_sql_is_an_error_at_the_yaml_line_of_the_fault(sample_repo: Path) -> None:
    _edit(sample_repo, "WHERE status = 'completed'", "WHERE status =")
    result = run_cli(sample_repo, "validate")
    assert result.code != 0
    # line 17 of the file holds `WHERE status =`; sqlglot stops at its `=`, column 24
    assert "views/local/sales.yaml:17:24: views[0].representations[0].sql: the spark SQL does not parse" \
        in result.err, result.err


def test_unparseable_sql_in_a_custom_dialect_is_a_located_warning(sample_repo: Path) -> None:
    (sample_repo / "viewsync.yaml").write_text((sample_repo / "viewsync.yaml").read_text()
                                               + "custom_dialects: [vertica]\n")
    text = (sample_repo / "views" / "local" / "sales.yaml").read_text()
    start = text.index("      - dialect: trino\n")  # completed_orders' generated trino SQL, replaced
    end = text.index("            status = 'completed'\n", start) + len("            status = 'completed'")
    _edit(sample_repo, text[start:end],
          "      - dialect: vertica\n        sql: |\n          SELECT order_id, customer_id, amount, "
          "ordered_at\n          FROM sales.orders\n          WHERE status =")
    result = run_cli(sample_repo, "validate")
    assert result.code == 0, result.text
    assert "Warning: views/local/sales.yaml:22:24: views[0].representations[1].sql: sqlglot does not know " \
           "the custom dialect 'vertica'" in result.err, result.err


def test_a_typod_dialect_is_a_located_error_with_a_suggestion(sample_repo: Path) -> None:
    _edit(sample_repo, "      - dialect: trino\n", "      - dialect: trinoo\n")
    for command in ("validate", "plan"):
        result = run_cli(sample_repo, command)
        assert result.code != 0, result.text
        assert "views/local/sales.yaml:18:18: views[0].representations[1].dialect: unknown dialect 'trinoo': " \
               "did you mean 'trino'?" in result.err, result.err
        assert "representations.trinoo" not in result.out
    _edit(sample_repo, "      - dialect: trinoo\n", "      - dialect: vertica\n")
    assert "unknown dialect 'vertica'" in run_cli(sample_repo, "validate").err
    (sample_repo / "viewsync.yaml").write_text((sample_repo / "viewsync.yaml").read_text()
                                               + "custom_dialects: [vertica]\n")
    assert run_cli(sample_repo, "validate").code == 0
    # a dialect sqlglot knows needs no listing
    _edit(sample_repo, "      - dialect: vertica\n", "      - dialect: oracle\n")
    assert run_cli(sample_repo, "validate").code == 0


def test_a_table_nothing_knows_is_one_located_warning_at_the_reference(sample_repo: Path) -> None:
    _edit(sample_repo, "FROM sales.refund_events", "FROM sales.refund_eventz")
    result = run_cli(sample_repo, "validate")
    warnings = [x for x in result.err.splitlines() if x.startswith("Warning:")]
    # line 124: `        sql: SELECT order_id, SUM(amount) AS refunded FROM sales.refund_eventz ...`
    assert warnings == ["Warning: views/local/sales.yaml:124:60: views[2].representations[0].sql: table "
                        "sales.refund_eventz is no declared view and not in sources/local/sales.yaml; "
                        "did you mean sales.refund_events?"], result.err


def test_known_tables_and_views_raise_no_warning(sample_repo: Path) -> None:
    result = run_cli(sample_repo, "validate")
    assert result.code == 0 and "Warning" not in result.err, result.text
