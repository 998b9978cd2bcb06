"""ARCHITECTURE.md's rules of dependency are checked by import-linter (`lint-imports`, in
.ci/run; its contracts in pyproject.toml): the tree as it is keeps them, and one upward import
breaks them."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _lint(tree: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    return subprocess.run([sys.executable, "-c", "import sys; from importlinter.cli import lint_imports_command; "
                           "sys.argv = ['lint-imports', '--no-cache']; lint_imports_command()"],
                          cwd=tree, env=env, capture_output=True, text=True, timeout=300)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "reconciler", tmp_path / "reconciler", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def test_the_tree_keeps_the_rules(tree: Path) -> None:
    res = _lint(tree)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "0 broken" in res.stdout


def test_an_upward_import_breaks_the_layers(tree: Path) -> None:
    plan = tree / "reconciler" / "plan" / "planner.py"
    plan.write_text(plan.read_text() + "\nfrom reconciler.services import apply as _upward  # noqa\n")
    res = _lint(tree)
    assert res.returncode != 0
    assert "BROKEN" in res.stdout and "reconciler.plan.planner -> reconciler.services.apply" in res.stdout


def test_a_spark_child_importing_viewsync_breaks_its_contract(tree: Path) -> None:
    ops = tree / "reconciler" / "datareview" / "spark_ops.py"
    ops.write_text(ops.read_text() + "\nfrom reconciler.core import sql as _not_in_another_python  # noqa\n")
    res = _lint(tree)
    assert res.returncode != 0
    assert "reconciler.datareview.spark_ops -> reconciler.core.sql" in res.stdout


def _cycles(imports: dict[str, set[str]]) -> list[list[str]]:
    """The groups of modules that import each other, directly or through others (Tarjan's strongly
    connected components of more than one module)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for other in imports.get(module, ()):
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            group = [stack.pop()]
            while group[-1] != module:
                group.append(stack.pop())
            if len(group) > 1:
                found.append(sorted(group))

    for module in sorted(imports):
        if module not in index:
            visit(module)
    return found


def test_the_cycle_finder_finds_a_cycle_through_a_third_module() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_two_modules_import_each_other() -> None:
    """A module cycle (even through an import inside a function) means two modules are one idea
    split in two, or one of them is in the wrong layer; the layers contract cannot see it within
    a package."""
    import grimp  # import-linter's graph builder

    graph = grimp.build_graph("reconciler")
    assert _cycles({m: set(graph.find_modules_directly_imported_by(m)) for m in graph.modules}) == []
