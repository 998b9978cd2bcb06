"""Every connection has a timeout: a state store, managed store, JDBC, Iceberg REST,
Hive Metastore or Glue catalog that is closed, accepts and hangs, trickles bytes,
sends garbage (or, over HTTP, errors, redirects in a loop or answers wrongly typed
JSON) fails within its timeout + 5 s, with one line naming what failed."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import requests

from reconciler.adapters.deadline.http import bound_requests
from reconciler.adapters.metastore.glue.adapter import GlueAdapter
from reconciler.core.errors import AdapterError
from tests.helpers.cli import run_cli
from tests.helpers.misbehaving import MODES, THRIFT_REPLIES, misbehaving
from tests.helpers.repos import write_repo

pytestmark = pytest.mark.slow  # starts a JVM, Spark or a slow backend (pytest -m 'not slow' skips it)

TIMEOUT = 2
VIEW = "catalog: local\nschema: s\nviews:\n  - name: v\n    representations:\n      - {dialect: spark, sql: SELECT 1}\n"


def _repo(tmp_path: Path, state: str, catalog: str) -> Path:
    return write_repo(tmp_path, f"version: 1\nproject: p\nstate: '{state}'\ncatalogs:\n  local: {catalog}\n",
                      {"views/local/s.yaml": VIEW})


def _one_line_within(repo: Path, *args: str, within: float = TIMEOUT + 5) -> str:
    start = time.monotonic()
    res = run_cli(repo, *args)
    elapsed = time.monotonic() - start
    assert res.code == 1, res.text
    assert elapsed < within, elapsed
    lines = [ln for ln in res.err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: "), res.err
    assert "Error: unexpected" not in res.err
    return lines[0]


SQL_MODES = ("closed", "hang", "trickle", "garbage")


@pytest.mark.parametrize("mode", SQL_MODES)
def test_state_store_postgres(tmp_path: Path, mode: str) -> None:
    with misbehaving(mode) as port:
        url = f"postgresql+psycopg://u@127.0.0.1:{port}/db?connect_timeout={TIMEOUT}"
        repo = _repo(tmp_path, url, "{type: managed, url: 'sqlite:///.viewsync/c.db'}")
        assert "state store" in _one_line_within(repo, "apply", "--auto-approve", "--allow-dirty")


@pytest.mark.parametrize("mode", SQL_MODES)
def test_managed_store_postgres(tmp_path: Path, mode: str) -> None:
    with misbehaving(mode) as port:
        url = f"postgresql+psycopg://u@127.0.0.1:{port}/db?connect_timeout={TIMEOUT}"
        repo = _repo(tmp_path, "sqlite:///.viewsync/s.db", f"{{type: managed, url: '{url}'}}")
        assert "'local'" in _one_line_within(repo, "plan")


@pytest.mark.parametrize("mode", SQL_MODES)
@pytest.mark.parametrize("kind", ["postgresql+psycopg", "mysql+pymysql"])
def test_jdbc_catalog(tmp_path: Path, mode: str, kind: str) -> None:
    with misbehaving(mode) as port:
        query = f"connect_timeout={TIMEOUT}" + (f"&read_timeout={TIMEOUT}" if kind.startswith("mysql") else "")
        url = f"{kind}://u@127.0.0.1:{port}/db?{query}"
        repo = _repo(tmp_path, "sqlite:///.viewsync/s.db", f"{{type: jdbc, url: '{url}'}}")
        assert "local" in _one_line_within(repo, "plan")


# ------------------------------------------------ catalogs over HTTP and Thrift
SECRET = "s3cr3t-token-value"


@pytest.mark.parametrize("mode", MODES)
def test_iceberg_rest(tmp_path: Path, mode: str) -> None:
    with misbehaving(mode) as port:
        catalog = f"{{type: iceberg-rest, uri: 'http://127.0.0.1:{port}', timeout: {TIMEOUT}, token: {SECRET}}}"
        line = _one_line_within(_repo(tmp_path, "sqlite:///.viewsync/s.db", catalog), "plan")
        assert "'local'" in line and SECRET not in line


@pytest.mark.parametrize("mode", [*SQL_MODES, *THRIFT_REPLIES])
def test_hms(tmp_path: Path, mode: str) -> None:
    with misbehaving(mode) as port:
        catalog = f"{{type: hms, uri: 'thrift://127.0.0.1:{port}', timeout: {TIMEOUT}}}"
        # the timeout bounds the whole call once (it was doubled by the reconnect-and-retry)
        line = _one_line_within(_repo(tmp_path, "sqlite:///.viewsync/s.db", catalog), "plan", within=2 * TIMEOUT)
        assert "'local'" in line
        if mode in THRIFT_REPLIES:  # a reply header, then bytes no metastore sends (issue 27.5)
            assert f"listing databases failed: the answer of 127.0.0.1:{port} is not a Hive Metastore's" in line, line


@pytest.mark.parametrize("body", [b'{"defaults": 5, "overrides": "x"}', b'{"endpoints": 5}', b'{"endpoints": [5]}',
                                  b'{"endpoints": "GET /v1/config"}', b"<html>not json</html>"])
def test_iceberg_rest_config_of_the_wrong_shapes(tmp_path: Path, body: bytes) -> None:
    """/v1/config answers 200 with shapes the protocol does not allow: one line naming the
    catalog and the field, never pyiceberg's TypeError or AttributeError (issue 27.5)."""
    with misbehaving("json", body) as port:
        catalog = f"{{type: iceberg-rest, uri: 'http://127.0.0.1:{port}', timeout: {TIMEOUT}}}"
        line = _one_line_within(_repo(tmp_path, "sqlite:///.viewsync/s.db", catalog), "plan")
    assert line.startswith(f"Error: catalog 'local': cannot connect to http://127.0.0.1:{port}: the server's answer "
                           "is not a valid ConfigResponse: "), line


@pytest.mark.parametrize("mode", [*SQL_MODES, "http500"])
def test_glue(tmp_path: Path, mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", SECRET)
    with misbehaving(mode) as port:
        catalog = (f"{{type: glue, region: us-east-1, endpoint_url: 'http://127.0.0.1:{port}', "
                   f"timeout: {TIMEOUT}}}")
        line = _one_line_within(_repo(tmp_path, "sqlite:///.viewsync/s.db", catalog), "plan")
        assert "'local'" in line and SECRET not in line


def test_http_deadline_bounds_the_whole_response(monkeypatch: pytest.MonkeyPatch) -> None:
    """Good headers, then a body trickling one byte a second: each read is quick, yet the
    request ends by its deadline, through requests and through botocore alike."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    with misbehaving("slowbody") as port:
        session = requests.Session()
        bound_requests(session, 1)
        start = time.monotonic()
        with pytest.raises(requests.RequestException):
            session.get(f"http://127.0.0.1:{port}/v1/config")
        assert time.monotonic() - start < 2
        glue = GlueAdapter("g", {"region": "us-east-1", "endpoint_url": f"http://127.0.0.1:{port}", "timeout": 1})
        start = time.monotonic()
        with pytest.raises(AdapterError, match="timed out"):
            glue.list_schemas()
        assert time.monotonic() - start < 1 + 4  # one timeout, then attempts that fail at once, backoff


def test_a_huge_server_message_is_one_clipped_line(tmp_path: Path) -> None:
    """A server's 1 MB error text is cut in the one error line, not echoed whole."""
    with misbehaving("hugeerror") as port:
        repo = _repo(tmp_path, "sqlite:///.viewsync/s.db",
                     f"{{type: iceberg-rest, uri: 'http://127.0.0.1:{port}', timeout: {TIMEOUT}}}")
        line = _one_line_within(repo, "plan")
    assert "local" in line and len(line) <= 2000, len(line)


@pytest.mark.parametrize("bad", [0, -1, True, "30", None])
def test_a_timeout_option_must_be_positive_seconds(bad: object) -> None:
    from reconciler.adapters.iceberg.adapter import IcebergRestAdapter

    for make, kind in ((lambda o: GlueAdapter("g", {"region": "us-east-1", **o}), "glue"),
                       (lambda o: IcebergRestAdapter("i", {"uri": "http://127.0.0.1:9", **o}), "iceberg-rest")):
        with pytest.raises(AdapterError, match=rf"\({kind}\): option 'timeout' must be a number of seconds > 0"):
            make({"timeout": bad})
        assert make({"timeout": 2}) is not None and make({}) is not None
