"""What a feature needs of an engine that runs its SQL: send one request, get its answer (with
progress while it runs), stop. A Spark child process is one (`reconciler.spark.client.SparkChild`);
the view tests' runner and data review speak only this, so a second engine (Trino over HTTP) is
one more implementation, not a second stack."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

OnProgress = Callable[[dict[str, Any]], None]  # what an engine reports while a request runs


class Engine(Protocol):
    start_seconds: float  # how long it took to become ready

    def call(self, request: dict[str, Any], progress: OnProgress | None = None) -> dict[str, Any]:
        """One request's answer. Raises the engine's own error for a refused request."""
        ...

    def close(self) -> None: ...
