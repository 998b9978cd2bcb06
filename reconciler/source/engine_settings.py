"""The `engines:` section of viewsync.yaml: the engines a view's tests run on besides Spark
(built in, configured by `spark:`). `trino` is the user's own Trino, reached over HTTP(S);
`flink` is PyFlink in batch mode, run by the interpreter of the venv that has it (`python`).

Its password and token are secrets: they join `Config.secrets` whether written literally or
taken from the environment, so no output shows them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BUILT_IN = ("spark",)


@dataclass(frozen=True)
class TrinoSettings:
    url: str  # http(s)://host:port of the coordinator
    user: str = "viewsync"
    password: str | None = None  # HTTP basic authentication (Trino accepts it over HTTPS only)
    token: str | None = None  # a JWT, sent as a bearer token
    verify: bool = True  # check the server's TLS certificate
    timeout: float = 120.0  # seconds a request may take

    def __repr__(self) -> str:  # never the credentials
        return f"TrinoSettings(url={self.url!r}, user={self.user!r})"


@dataclass(frozen=True)
class FlinkSettings:
    python: str  # the interpreter that has PyFlink (`apache-flink`: its own venv)
    conf: dict[str, str] = field(default_factory=dict)  # Flink options for the TableEnvironment


@dataclass(frozen=True)
class EngineSettings:
    trino: TrinoSettings | None = None
    flink: FlinkSettings | None = None
    extra: dict[str, dict[str, Any]] = field(default_factory=dict)  # another engine's own section

    def configured(self) -> list[str]:
        """Every engine tests may run on, in report order: spark first."""
        return [*BUILT_IN, *(["trino"] if self.trino is not None else []),
                *(["flink"] if self.flink is not None else []), *self.extra]

    def secrets(self) -> frozenset[str]:
        t = self.trino
        return frozenset(s for s in ((t.password, t.token) if t is not None else ()) if s)


def parse(data: Any, base: Path) -> EngineSettings:
    """Settings from the (schema-validated, expanded) `engines:` mapping; a relative path in it
    is relative to `base`, the directory of viewsync.yaml, as the SQLite state's is."""
    if not data:
        return EngineSettings()
    trino, flink = data.get("trino"), data.get("flink")
    return EngineSettings(
        trino=TrinoSettings(url=str(trino["url"]).rstrip("/"), user=str(trino.get("user", "viewsync")),
                            password=trino.get("password"), token=trino.get("token"),
                            verify=bool(trino.get("verify", True)), timeout=float(trino.get("timeout", 120.0)))
        if trino else None,
        flink=FlinkSettings(python=interpreter(str(flink["python"]), base),
                            conf={str(k): _text(v) for k, v in (flink.get("conf") or {}).items()})
        if flink else None,
        extra={k: dict(v or {}) for k, v in data.items() if k not in ("trino", "flink", *BUILT_IN)},
    )


def interpreter(python: str, base: Path) -> str:
    """`python` as the child process will run it: `~` expanded, a relative path (one with a
    separator, such as `.venv-flink/bin/python`) taken from `base` so the project runs the same
    from any directory; a bare name (`python3`) is left for the PATH to find."""
    path = Path(os.path.expanduser(python))
    if path.is_absolute() or len(path.parts) == 1:
        return str(path)
    return str(base / path)


def _text(value: Any) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(value)
