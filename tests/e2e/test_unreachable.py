"""Every command against an unreachable catalog, for every catalog kind: one line that
names the catalog, exit 1, never an "unexpected" error or a traceback. Commands that
do not read catalogs (validate is offline, audit reads only the state store) succeed."""

from __future__ import annotations

import importlib.util
import socket
import subprocess
from pathlib import Path

import pytest

from tests.helpers.cli import run_cli


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _catalog(kind: str, port: int) -> str:
    return {
        "managed": f"{{type: managed, url: 'postgresql+psycopg://u:pw@127.0.0.1:{port}/db'}}",
        "iceberg-rest": f"{{type: iceberg-rest, uri: 'http://127.0.0.1:{port}', timeout: 2}}",
        "hms": f"{{type: hms, uri: 'thrift://127.0.0.1:{port}', timeout: 2}}",
        "glue": f"{{type: glue, region: us-east-1, endpoint_url: 'http://127.0.0.1:{port}'}}",
        "jdbc": f"{{type: jdbc, url: 'postgresql+psycopg://u:pw@127.0.0.1:{port}/db'}}",
    }[kind]


KINDS = ["managed", "iceberg-rest", "hms", "glue", "jdbc"]
# Kinds whose `history` asks the catalog for its native versions.
NATIVE_HISTORY = {"managed", "iceberg-rest", "glue"}


@pytest.fixture
def repo(tmp_path: Path, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Path:
    kind = request.param
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    monkeypatch.setenv("AWS_MAX_ATTEMPTS", "1")
    root = tmp_path / "repo"
    (root / "views" / "down").mkdir(parents=True)
    (root / "viewsync.yaml").write_text(
        f"version: 1\nproject: p\nstate: sqlite:///.viewsync/state.db\n"
        f"catalogs:\n  down: {_catalog(kind, _closed_port())}\n")
    (root / "views" / "down" / "sales.yaml").write_text(
        "catalog: down\nschema: sales\nviews:\n  - name: v\n    columns: [{name: a, type: int}]\n"
        "    representations:\n      - {dialect: " + ("postgres" if kind == "jdbc" else "spark")
        + ", sql: 'SELECT 1 AS a'}\n")
    (root / ".gitignore").write_text(".viewsync/\n")
    for cmd in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@example.invalid",
                                                 "commit", "-q", "-m", "init"]):
        subprocess.run(["git", *cmd], cwd=root, check=True)
    return root


def _one_line_naming_the_catalog(code: int, out: str, err: str) -> None:
    assert code == 1, out + err
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("Error: ") and "'down'" in lines[0], lines[0]
    assert "unexpected" not in err and "Traceback" not in err, err


@pytest.mark.parametrize("repo", KINDS, indirect=True)
@pytest.mark.parametrize("args", [
    ["plan", "--detailed-exitcode"], ["apply", "--auto-approve"], ["drift"], ["import", "--catalog", "down"],
])
def test_catalog_commands_fail_in_one_line(repo: Path, args: list[str]) -> None:
    res = run_cli(repo, *args)
    _one_line_naming_the_catalog(res.code, res.out, res.err)


@pytest.mark.parametrize("repo", KINDS, indirect=True)
def test_history_and_offline_commands(repo: Path, request: pytest.FixtureRequest) -> None:
    kind = request.node.callspec.params["repo"]
    res = run_cli(repo, "history", "down.sales.v")
    if kind in NATIVE_HISTORY:
        _one_line_naming_the_catalog(res.code, res.out, res.err)
    else:  # nothing to ask the catalog: our own (empty) history
        assert res.code == 0 and "no versions recorded" in res.out, res.text
    for args in (["validate"], ["audit"]):
        res = run_cli(repo, *args)
        assert res.code == 0, res.text
        assert "unexpected" not in res.text


@pytest.mark.parametrize(("url", "module", "package", "instead"), [
    ("mysql://u:pw@127.0.0.1:1/db", "MySQLdb", "mysqlclient", "mysql+pymysql://"),
    ("mariadb://u:pw@127.0.0.1:1/db", "MySQLdb", "mysqlclient", "mariadb+pymysql://"),
    ("postgresql+psycopg2://u:pw@127.0.0.1:1/db", "psycopg2", "psycopg2-binary", "postgresql+psycopg://"),
])
@pytest.mark.parametrize("where", ["state", "managed", "jdbc"])
def test_a_url_whose_driver_is_not_installed(tmp_path: Path, where: str, url: str, module: str, package: str,
                                             instead: str) -> None:
    """A SQLAlchemy URL naming a driver that is not installed (issue 27.5): one line naming the
    state store or the catalog, the package to install and the installed driver's URL."""
    if importlib.util.find_spec(module) is not None:
        pytest.skip(f"{module} is installed here")
    (tmp_path / "views" / "down").mkdir(parents=True)
    state = url if where == "state" else "sqlite:///.viewsync/state.db"
    catalog = f"{{type: {where}, url: '{url}'}}" if where != "state" else "{type: managed, url: 'sqlite:///c.db'}"
    (tmp_path / "viewsync.yaml").write_text(f"version: 1\nproject: p\nstate: '{state}'\ncatalogs:\n  down: {catalog}\n")
    res = run_cli(tmp_path, "apply", "--auto-approve", "--allow-dirty")
    assert res.code == 1 and res.out == "", res.text
    named = "Error: cannot open the state store: " if where == "state" else "Error: catalog 'down'"
    assert res.err.startswith(named) and res.err.count("\n") == 1, res.err
    scheme = url.split("://")[0]
    assert (f"the driver of {scheme}:// is not installed (no Python module '{module}'): pip install '{package}', "
            f"or write the URL as {instead}..., whose driver is installed") in res.err, res.err
