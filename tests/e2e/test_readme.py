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


# What .ci/run may do before the README's test command without the README saying so: shell
# plumbing and the new virtual environment. Anything else (an apt-get, a pip install, a download)
# is an install step a newcomer would not know about, unless it is a script the README names.
PLUMBING = (r"set -euo pipefail", r'cd "\$\(dirname "\$0"\)/\.\."', r"step\(\) \{.*\}", r"step_start=\$SECONDS",
            r'step ".*"', r"export VIEWSYNC_REQUIRE_BACKENDS=1", r'venv="\$\(mktemp -d\)/venv"', r"trap .* EXIT",
            r'python3 -m venv "\$venv"', r'\. "\$venv/bin/activate"', r'echo ".*"')


def test_ci_installs_nothing_before_the_tests_that_the_readme_does_not_name() -> None:
    """Twice an install step only CI ran (Debian's JDBC jars, an older PyYAML) hid a red README
    command: before the test command, .ci/run runs plumbing and scripts the README tells a
    newcomer to run, nothing else."""
    readme = (ROOT / "README.md").read_text()
    development = readme.split("## Development", 1)[1]
    lines = [ln.strip() for ln in (ROOT / ".ci" / "run").read_text().splitlines()]
    before = lines[1:lines.index(_commands()[1])]
    for line in before:
        if not line or line.startswith("#") or any(re.fullmatch(p, line) for p in PLUMBING):
            continue
        script = re.fullmatch(r"(?:sudo )?bash (scripts/[\w.-]+)", line)
        assert script, f".ci/run runs {line!r} before the tests: move it into a script the README names"
        assert f"bash {script[1]}" in development, f"the README's Development section does not name {script[1]}"
        assert (ROOT / script[1]).is_file()


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


def _data_review_demo() -> tuple[list[str], list[str]]:
    """The commands the README's Data review section starts with, and the output lines it shows."""
    section = (ROOT / "README.md").read_text().split("## Data review", 1)[1].split("\n## ", 1)[0]
    commands = re.search(r"```sh\n(.*?)\n```", section, re.S)
    shown = re.search(r"```text\n(.*?)\n```", section, re.S)
    assert commands and shown and section.index(commands[0]) < section.index("Tests run on fixture rows")
    return [c.strip() for c in commands[1].splitlines() if c.strip()], shown[1].splitlines()


def test_data_review_demo_on_a_fresh_clone(tmp_path: Path) -> None:
    """Issue 43: on a fresh clone, README command 1 then the Data review demo: `diff` shows the
    filter change's rows and `check` runs the sample's checks and passes, with no server (the
    sample's tables are files in the repository) and nothing but Java."""
    if shutil.which("git") is None or shutil.which("viewsync") is None or shutil.which("perl") is None:
        raise AssertionError("git, perl and the installed viewsync console script are required")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    shutil.rmtree(clone / ".viewsync", ignore_errors=True)
    main_cmd = _commands()[0].split("&&", 1)[1]  # the install step already ran for this test session
    res = subprocess.run(main_cmd, shell=True, cwd=clone, capture_output=True, text=True)
    assert res.returncode == 0, res.stdout + res.stderr

    commands, shown = _data_review_demo()
    assert commands[0] == "python3 -m pip install -e '.[spark]'"  # this test session has the Spark extra
    assert commands[-2:] == ["viewsync diff", "viewsync check"]
    out = ""
    for command in commands[1:]:
        done = subprocess.run(command, shell=True, cwd=clone, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, f"{command}: {done.stdout}{done.stderr}"
        out += done.stdout
    for line in shown:
        assert line in out, f"the README shows {line!r}; the demo printed:\n{out}"
    diff_out = out.split("Diffed ", 1)[0]
    assert "added 39" in diff_out and "SKIPPED" not in out
    assert " 0 failed, " in out and "skipped" not in out.split("Checks (", 1)[1]
