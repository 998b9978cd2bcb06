"""A repository for preview environments: views a <- b <- c (each reads the one before) and
an unrelated d, committed on `main`, then a branch `pr` that changes `a`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from tests.helpers.access import commit_all, git

A_LIVE = "SELECT id, amount FROM {table} WHERE amount > 10"
A_BRANCH = "SELECT id, amount FROM {table} WHERE amount > 100"


def chain_views(table: str, a_sql: str = A_LIVE, b_factor: int = 2,
                dialects: tuple[str, ...] = ("spark",)) -> list[dict[str, Any]]:
    def view(name: str, cols: list[str], sql: str) -> dict[str, Any]:
        return {"name": name, "columns": [{"name": c, "type": "bigint"} for c in cols],
                "representations": [{"dialect": d, "sql": sql} for d in dialects]}

    return [view("a", ["id", "amount"], a_sql.format(table=table)),
            view("b", ["id", "doubled"], f"SELECT id, amount * {b_factor} AS doubled FROM a"),
            view("c", ["n", "total"], "SELECT COUNT(*) AS n, SUM(doubled) AS total FROM b"),
            view("d", ["id"], f"SELECT id FROM {table}")]


def write_views(repo: Path, catalog: str, schema: str, views: list[dict[str, Any]]) -> None:
    path = repo / "views" / catalog / f"{schema}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump({"catalog": catalog, "schema": schema, "views": views}, sort_keys=False))


def chain_repo(repo: Path, config: dict[str, Any], catalog: str, schema: str, table: str,
               dialects: tuple[str, ...] = ("spark",)) -> Path:
    """The repository on `main` (views as live), checked out on branch `pr` (no change yet)."""
    repo.mkdir(parents=True, exist_ok=True)
    (repo / "viewsync.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    (repo / ".gitignore").write_text(".viewsync/\n")
    write_views(repo, catalog, schema, chain_views(table, dialects=dialects))
    git(repo, "init", "-q", "-b", "main")
    commit_all(repo, "views", "platform")
    git(repo, "checkout", "-q", "-b", "pr")
    return repo


def change(repo: Path, catalog: str, schema: str, table: str, a_sql: str = A_BRANCH, b_factor: int = 2,
           message: str = "change", dialects: tuple[str, ...] = ("spark",)) -> None:
    """Commit new declarations on the branch."""
    write_views(repo, catalog, schema, chain_views(table, a_sql, b_factor, dialects))
    commit_all(repo, message, "platform")
