"""The README's quick start stays true: CI runs its test command, and its main
command works from a fresh clone of the repository."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.helpers.paths import ROOT

pytestmark = pytest.mark.slow  # starts a JVM, Spark or a slow backend (pytest -m 'not slow' skips it)


def _commands() -> list[str]:
    readme = (ROOT / "README.md").read_text()
    quick = readme.split("## Quick start", 1)[1].split("## Concepts", 1)[0]
    return [c.strip() for c in re.findall(r"```sh\n(.*?)\n```", quick, re.S)]


def test_readme_has_two_commands_and_ci_runs_the_test_one() -> None:
    main_cmd, test_cmd = _commands()
    assert "viewsync plan" in main_cmd and "viewsync apply --auto-approve" in main_cmd
    assert "pytest" in test_cmd
    assert test_cmd in (ROOT / ".ci" / "run").read_text().splitlines()


def test_ci_runs_the_test_command_in_a_new_virtual_environment() -> None:
    """A package lingering on the CI machine once hid a failure that a fresh clone showed
    (PyYAML 6.0.4's libyaml has a nesting limit of its own): CI installs as a newcomer does."""
    lines = [ln.strip() for ln in (ROOT / ".ci" / "run").read_text().splitlines()]
    test_at = lines.index(_commands()[1])
    before = lines[:test_at]
    venv_at = next(i for i, ln in enumerate(before) if re.match(r'python3 -m venv "?\$venv"?$', ln))
    assert any(re.match(r'(\.|source) "?\$venv/bin/activate"?$', ln) for ln in before[venv_at:])
    assert not any("--system-site-packages" in ln for ln in before)


def test_main_command_on_a_fresh_clone(tmp_path: Path) -> None:
    if shutil.which("git") is None or shutil.which("viewsync") is None:
        raise AssertionError("git and the installed viewsync console script are required")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    # The committed sample, not this working tree: what a newcomer gets.
    shutil.rmtree(clone / ".viewsync", ignore_errors=True)
    main_cmd = _commands()[0].split("&&", 1)[1]  # the install step already ran for this test session
    res = subprocess.run(main_cmd, shell=True, cwd=clone, capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "Apply complete: 6 applied" in res.stdout
    again = subprocess.run(["viewsync", "plan", "--detailed-exitcode"], cwd=clone, capture_output=True, text=True)
    assert again.returncode == 0 and "No changes" in again.stdout
