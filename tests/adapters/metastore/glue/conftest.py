"""Glue fixtures: a real moto_server process (session), reset before each test."""

from __future__ import annotations

import os
import shutil
import subprocess
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest

from reconciler.adapters.metastore.glue import GlueAdapter
from tests.helpers.glue_support import ACCOUNT, REGION, Writer
from tests.helpers.servers import backend_unavailable, free_port, stop, wait_ready


@pytest.fixture(scope="session")
def moto_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    exe = shutil.which("moto_server")
    if exe is None:
        backend_unavailable("moto_server not installed (pip install 'moto[server,glue]')")
    log_dir: Path = tmp_path_factory.mktemp("moto")
    port = free_port()
    with pytest.MonkeyPatch.context() as mp:
        # Dummy credentials for every boto3 client of the session; never the user's real ones.
        mp.setenv("AWS_ACCESS_KEY_ID", "testing")
        mp.setenv("AWS_SECRET_ACCESS_KEY", "testing")
        mp.setenv("AWS_SESSION_TOKEN", "testing")
        mp.setenv("AWS_DEFAULT_REGION", REGION)
        mp.setenv("AWS_CONFIG_FILE", str(log_dir / "no-config"))
        mp.setenv("AWS_SHARED_CREDENTIALS_FILE", str(log_dir / "no-credentials"))
        mp.delenv("AWS_PROFILE", raising=False)
        log = open(log_dir / "moto.log", "wb")  # noqa: SIM115 - closed after the process
        proc = subprocess.Popen([exe, "-H", "127.0.0.1", "-p", str(port)], stdout=log,
                                stderr=subprocess.STDOUT, env=dict(os.environ))
        url = f"http://127.0.0.1:{port}"
        def probe() -> None:
            urllib.request.urlopen(url + "/moto-api/", timeout=1).close()

        try:
            why = wait_ready(proc, probe, what="moto_server", timeout=120, log=log_dir / "moto.log")
            if why:
                backend_unavailable(why)
            yield url
        finally:
            stop(proc, log)


@pytest.fixture
def glue_url(moto_url: str) -> str:
    """The moto endpoint, emptied before the test."""
    req = urllib.request.Request(moto_url + "/moto-api/reset", method="POST")
    urllib.request.urlopen(req, timeout=10).close()
    return moto_url


@pytest.fixture
def raw_glue(glue_url: str) -> Any:
    """A plain boto3 Glue client on moto, to set up and inspect state behind the adapter's back."""
    return boto3.client("glue", region_name=REGION, endpoint_url=glue_url)


@pytest.fixture
def make_adapter(glue_url: str) -> Callable[..., GlueAdapter]:
    def make(view_format: str = "multi-dialect", name: str = "glue") -> GlueAdapter:
        return GlueAdapter(name, {"region": REGION, "catalog_id": ACCOUNT, "endpoint_url": glue_url,
                                  "view_format": view_format, "trino_owner": "analyst"})

    return make


@pytest.fixture
def writer() -> Writer:
    return Writer()
