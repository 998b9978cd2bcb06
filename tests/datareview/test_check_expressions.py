"""An `expression:` check is exactly one boolean SQL expression: what could break out of the
check's query (an unbalanced parenthesis, `;`, a comment) is refused at its line in the YAML by
`validate`, `plan` and `check`, before any catalog or data is read (issue 38, item 3)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.helpers.cli import run_cli
from tests.helpers.repos import write_repo


def repo_with_check(tmp_path: Path, expression: str) -> Path:
    view = {"name": "payments_v", "representations": [{"dialect": "spark", "sql": "SELECT id, amount FROM payments"}],
            "checks": [{"not_null": ["id"]}, {"expression": expression}]}
    return write_repo(tmp_path / "repo", {
        "version": 1, "project": "review", "state": f"sqlite:///{tmp_path}/state.db",
        # nothing listens there: a command that read the catalog would fail differently
        "catalogs": {"hive": {"type": "hms", "uri": "thrift://127.0.0.1:9", "timeout": 2}}},
        {"views/hive/shop.yaml": yaml.safe_dump({"catalog": "hive", "schema": "shop", "views": [view]},
                                                sort_keys=False, width=1000)})


@pytest.mark.parametrize(("expression", "why"), [
    ("amount > 0) OR (1=1", "unbalanced ')'"),
    ("1=1) OR (1=1", "unbalanced ')'"),
    ("amount > 0\n) OR (\n1=1", "unbalanced ')'"),
    ("(amount > 0", "unbalanced '('"),
    ("amount > 0; DROP TABLE payments", "';' is not allowed"),
    ("amount > 0 -- and the rest is gone", "a comment is not allowed"),
    ("amount > 0 /* x */", "a comment is not allowed"),
    ("amount > 0 amount", "not exactly one boolean SQL expression"),
    ("SELECT 1", "not exactly one boolean SQL expression"),
    ("42", "not a boolean condition"),
])
@pytest.mark.parametrize("command", [("validate",), ("plan",), ("check",)])
def test_an_expression_that_is_not_one_condition_is_refused_at_its_line(
        tmp_path: Path, expression: str, why: str, command: tuple[str, ...]) -> None:
    repo = repo_with_check(tmp_path, expression)
    res = run_cli(repo, *command)
    assert res.code == 1, res.text
    lines = (repo / "views" / "hive" / "shop.yaml").read_text().splitlines()
    line = next(i for i, t in enumerate(lines, 1) if "expression:" in t)
    located = [ln.strip() for ln in res.err.splitlines() if ln.strip().startswith(f"views/hive/shop.yaml:{line}:")]
    assert any("checks[1].expression" in ln and why in ln for ln in located), res.err
    assert "Traceback" not in res.text and "127.0.0.1:9" not in res.text


@pytest.mark.parametrize("expression", ["amount > 0", "amount >= 0 AND (id IS NULL OR id > 0)",
                                        "status IN ('a', 'b')", "coalesce(amount, 0) < 100", "is_paid",
                                        "EXISTS (SELECT 1)", "note <> ')'"])
def test_ordinary_conditions_validate(tmp_path: Path, expression: str) -> None:
    res = run_cli(repo_with_check(tmp_path, expression), "validate")
    assert res.code == 0, res.text
