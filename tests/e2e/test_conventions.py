"""What users of git, Terraform and dbt expect of a command line (issue 43, item 4): the config
found from a subdirectory, `--version`, help written for people, tables with headers, each
preview drop said once, and an empty test run called what it is."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from reconciler import __version__
from tests.helpers.cli import run_cli
from tests.helpers.preview import chain_repo, change


def _viewsync(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`viewsync ARGS` as a shell runs it in `cwd` (no --repo)."""
    return subprocess.run([sys.executable, "-m", "reconciler.cli", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120, env=os.environ.copy())


def test_a_command_run_in_a_subdirectory_finds_viewsync_yaml_in_a_parent(sample_repo: Path) -> None:
    done = _viewsync(sample_repo / "views" / "local", "validate")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("Valid: 6 view(s)"), done.stdout


def test_no_viewsync_yaml_up_the_tree_is_said_without_a_made_up_location(tmp_path: Path) -> None:
    done = _viewsync(tmp_path, "plan")
    assert done.returncode == 1
    assert done.stderr.strip() == (f"Error: no viewsync.yaml in {tmp_path.resolve()} or any parent directory "
                                   "(pass --repo DIR or --config FILE)")


def test_version(tmp_path: Path) -> None:
    done = _viewsync(tmp_path, "--version")
    assert (done.returncode, done.stdout) == (0, f"viewsync {__version__}\n")


def _commands() -> list[list[str]]:
    from reconciler.cli.app import command

    root = command()
    out: list[list[str]] = [[]]
    for name, sub in root.commands.items():
        out.append([name])
        out += [[name, inner] for inner in getattr(sub, "commands", {})]
    return out


def test_help_is_written_for_users_and_lists_every_choice(tmp_path: Path) -> None:
    helps = {}
    for words in _commands():
        res = run_cli(tmp_path, *words, "--help")
        assert res.code == 0, (words, res.text)
        helps[" ".join(words)] = res.out
    assert len(helps) > 20
    for words, text in helps.items():
        assert not re.search(r"<[a-z]|\{[a-z]|list\[", text, re.I), (words, text)
    assert "--definition declared|live" in helps["check"]
    assert "--format text|markdown|json|junit" in helps["test"]
    assert " history [OPTIONS] VIEW\n" in helps["history"]
    assert "--select GLOB" in helps["plan"]


def test_history_and_audit_are_tables_with_headers(sample_repo: Path) -> None:
    assert run_cli(sample_repo, "apply", "--auto-approve", "--allow-dirty").code == 0
    history = run_cli(sample_repo, "history", "local.sales.completed_orders").out.splitlines()
    assert history[1].split() == ["VERSION", "TIME", "(UTC)", "ACTION", "ACTOR", "COMMIT", "CHANGED", "FIELDS"]
    assert history[2].split()[0] == "v1"
    audit = run_cli(sample_repo, "audit").out.splitlines()
    assert audit[0].split() == ["TIME", "(UTC)", "RUN", "COMMAND", "ACTOR", "ACTION", "VIEW", "OUTCOME", "COMMIT",
                                "NOTE"]
    assert len(audit) == 7 and all(" apply " in line for line in audit[1:])


def test_audit_marks_preview_runs_and_preview_down_says_each_drop_once(tmp_path: Path) -> None:
    config = {"version": 1, "project": "p", "state": "sqlite:///.viewsync/state.db",
              "catalogs": {"local": {"type": "managed", "url": "sqlite:///.viewsync/catalog.db"}}}
    repo = chain_repo(tmp_path / "repo", config, "local", "shop", "sales.orders")
    assert run_cli(repo, "apply", "--auto-approve").code == 0
    change(repo, "local", "shop", "sales.orders")
    assert run_cli(repo, "preview", "up", "--env", "pr1", "--base", "main").code == 0
    down = run_cli(repo, "preview", "down", "--env", "pr1")
    assert down.code == 0, down.text
    for copy in ("local.shop__pr1.a", "local.shop__pr1.b", "local.shop__pr1.c"):
        assert down.text.count(copy) == 1, down.text
    assert "Preview env 'pr1' removed: 3 view(s), 0 namespace(s) dropped." in down.out
    rows = run_cli(repo, "audit").out.splitlines()[1:]
    preview_rows = [line for line in rows if "shop__pr1" in line]
    assert len(preview_rows) == 6 and all(line.split()[3] == "preview" for line in preview_rows), rows
    assert all(line.split()[3] == "apply" for line in rows if line not in preview_rows), rows


def test_an_empty_test_run_says_no_tests_selected() -> None:
    from reconciler.viewtests import render
    from reconciler.viewtests.result import TestRun

    assert render.text(TestRun()) == "No tests selected.\n"
    assert render.summary(TestRun()) == "No tests selected."
