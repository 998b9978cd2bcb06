"""A running Iceberg REST test server and its test hooks (started by tests/adapters/iceberg/conftest.py)."""

from __future__ import annotations

import json
import subprocess
import urllib.request
from dataclasses import dataclass, field
from typing import Any

from pyiceberg.catalog.rest import RestCatalog

PAGE_SIZE = 3  # server-side cap on list pages: every test with > 3 views pages


@dataclass
class IcebergServer:
    """A running server plus the test hooks of IcebergRestServer.java."""

    port: int
    token: str | None = None
    client: str | None = None
    prefix: str | None = None  # served under /v1/<prefix>/..., announced in /v1/config
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def uri(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def admin(self, action: str, method: str = "POST", **params: Any) -> dict[str, Any]:
        query = "&".join(f"{k}={v}" for k, v in params.items())
        req = urllib.request.Request(f"{self.uri}/admin/{action}?{query}", method=method)
        with urllib.request.urlopen(req, timeout=5) as resp:
            return dict(json.loads(resp.read() or b"{}"))

    def fail_next_commit(self, status: int = 409, phase: str = "before", count: int = 1) -> None:
        """The next `count` view commits fail with `status`, before or after really committing."""
        self.admin("fail", status=status, phase=phase, count=count)

    def pending_failures(self) -> int:
        return int(self.admin("fail", method="GET")["remaining"])

    def client_catalog(self) -> RestCatalog:
        """Another client of the same catalog (pyiceberg directly)."""
        props = {"uri": self.uri}
        if self.token:
            props["token"] = self.token
        return RestCatalog("other-client", **props)
