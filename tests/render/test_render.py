"""PR comment Markdown stays under GitHub's limit, with a note when truncated."""

from __future__ import annotations

from reconciler.core.model import ViewId
from reconciler.plan.planner import Action, Change, Plan
from reconciler.render.plan import GITHUB_COMMENT_LIMIT, markdown, text


def _big_plan(n: int) -> Plan:
    plan = Plan(project="p", declarations_digest="sha256:" + "0" * 64)
    for i in range(n):
        before = "\n".join(f"SELECT col_{j} FROM t_{i}" for j in range(40))
        plan.actions.append(Action("update", ViewId("c", "s", f"v{i}"), "managed",
                                   [Change("representations.spark.sql", before, before.replace("col_", "c_"))],
                                   "sha256:" + "1" * 64, {}, {}))
    return plan


def test_markdown_truncates_under_github_limit() -> None:
    md = markdown(_big_plan(300))
    assert len(md) <= GITHUB_COMMENT_LIMIT
    assert "actions are not shown" in md and "| 0 | 300 | 0 | 0 | 0 | 0 |" in md


def test_markdown_has_unified_sql_diff_per_view() -> None:
    md = markdown(_big_plan(2))
    assert md.count("<details>") == 2 and "```diff" in md and "-SELECT col_0 FROM t_0" in md
    assert "not shown" not in md


def test_text_plan_shows_sql_diff_lines() -> None:
    out = text(_big_plan(1))
    assert "~ update c.s.v0" in out and "-SELECT col_1 FROM t_0" in out and "+SELECT c_1 FROM t_0" in out


def test_column_changes_are_listed_per_column() -> None:
    from reconciler.render.plan import column_changes

    before = [{"name": "id", "type": "bigint", "comment": None}, {"name": "old", "type": "int", "comment": None}]
    after = [{"name": "id", "type": "int", "comment": "key"}, {"name": "amount", "type": "decimal(18,2)",
                                                                 "comment": None}]
    assert column_changes(before, after) == ["~ id bigint  ->  id int  -- key", "+ amount decimal(18,2)",
                                             "- old int"]
    plan = Plan(project="p", declarations_digest="sha256:" + "0" * 64)
    plan.actions.append(Action("update", ViewId("c", "s", "v"), "managed", [Change("columns", before, after)],
                               "sha256:" + "1" * 64, {}, {}))
    out = text(plan)
    assert "~ columns" in out and "+ amount decimal(18,2)" in out and "- old int" in out
    assert "- `columns`" in markdown(plan) and "`+ amount decimal(18,2)`" in markdown(plan)
