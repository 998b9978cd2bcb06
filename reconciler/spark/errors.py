"""The two ways a Spark child fails a caller."""

from __future__ import annotations

from typing import Any

from reconciler.core.errors import UserError


class SparkUnavailable(UserError):
    """Spark cannot run here (no PySpark, no Java, or the JVM did not start), or it died."""


class SparkError(UserError):
    """Spark refused a request (analysis or runtime error); the message is Spark's."""

    def __init__(self, error: dict[str, Any]) -> None:
        self.error = error
        super().__init__(f"[{error.get('class')}] {error.get('message')}")
