"""Where events go: `webhook` (signed HTTP POST), `openlineage` (through the
openlineage-python client and its transports) and `command` (a program that
reads the event on stdin; `blocking: true` makes it a veto on pre-events).

A sink's `send` raises DeliveryError; `retryable` says whether trying again
later can help (timeouts, 5xx, a refused connection) or not (4xx).
"""

from __future__ import annotations

import hashlib
import hmac
import json
import shlex
import subprocess
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reconciler.core.secrets import redact
from reconciler.events.model import is_pre, matches

STDERR_LIMIT = 2000


class DeliveryError(Exception):
    """Its message masks URL passwords; the emitter masks the config's secrets before storing it."""

    def __init__(self, message: str, retryable: bool = True) -> None:
        super().__init__(redact(message))
        self.retryable = retryable


def body_bytes(event: dict[str, Any]) -> bytes:
    return json.dumps(event, sort_keys=True, separators=(",", ":")).encode()


def signature(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


@dataclass
class Sink:
    name: str
    types: list[str] = field(default_factory=list)
    views: list[str] = field(default_factory=list)
    retries: int = 3  # delivery attempts at the end of a run, with backoff

    def accepts(self, event_type: str, subject: str) -> bool:
        return matches(event_type, subject, self.types, self.views)

    @property
    def blocking(self) -> bool:
        return False

    def send(self, event: dict[str, Any]) -> None:
        raise NotImplementedError


@dataclass
class WebhookSink(Sink):
    url: str = ""
    secret: str | None = None
    timeout: float = 5.0
    headers: dict[str, str] = field(default_factory=dict)

    def send(self, event: dict[str, Any]) -> None:
        body = body_bytes(event)
        headers = {"Content-Type": "application/cloudevents+json", "User-Agent": "viewsync",
                   "X-Viewsync-Event-Id": str(event["id"]), **self.headers}
        if self.secret:
            headers["X-Viewsync-Signature"] = signature(self.secret, body)
        request = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as resp:  # noqa: S310 (configured URL)
                resp.read()
        except urllib.error.HTTPError as err:
            raise DeliveryError(f"HTTP {err.code} from {self.url}", retryable=err.code >= 500 or err.code == 429) \
                from None
        except (urllib.error.URLError, TimeoutError, OSError) as err:
            reason = getattr(err, "reason", err)
            raise DeliveryError(f"cannot reach {self.url}: {reason}") from None


@dataclass
class CommandSink(Sink):
    command: list[str] = field(default_factory=list)
    block: bool = False
    timeout: float = 30.0
    cwd: Path | None = None

    @property
    def blocking(self) -> bool:
        return self.block

    def run(self, event: dict[str, Any]) -> tuple[int, str]:
        try:
            proc = subprocess.run(self.command, input=body_bytes(event), capture_output=True, timeout=self.timeout,
                                  cwd=self.cwd, check=False)
        except FileNotFoundError:
            return 127, f"command not found: {self.command[0]}"
        except subprocess.TimeoutExpired:
            return 124, f"timed out after {self.timeout:g}s"
        except OSError as err:
            return 126, str(err)
        stderr = proc.stderr.decode(errors="replace").strip()
        return proc.returncode, redact(stderr)[:STDERR_LIMIT]

    def veto(self, event: dict[str, Any]) -> str | None:
        """For a blocking hook on a pre-event: why it refused, or None to go ahead.
        A hook that cannot run refuses: a guard that silently vanished must not wave drops through."""
        if not self.block or not is_pre(event["type"]):
            return None
        code, stderr = self.run(event)
        if code == 0:
            return None
        return f"refused by hook {self.name!r} (exit {code})" + (f": {stderr}" if stderr else "")

    def send(self, event: dict[str, Any]) -> None:
        if self.block and is_pre(event["type"]):
            return  # already run as a veto before the action
        code, stderr = self.run(event)
        if code != 0:
            raise DeliveryError(f"command exited {code}" + (f": {stderr}" if stderr else ""))


def command_argv(value: str | list[str]) -> list[str]:
    return shlex.split(value) if isinstance(value, str) else [str(v) for v in value]


@dataclass
class OpenLineageSink(Sink):
    transport: dict[str, Any] = field(default_factory=dict)
    namespaces: dict[str, str] = field(default_factory=dict)  # viewsync catalog -> OpenLineage namespace
    job_namespace: str = "viewsync"
    _transport: Any = None

    def send(self, event: dict[str, Any]) -> None:
        from reconciler.events import openlineage as ol

        run_event = ol.run_event(event, self.namespaces, self.job_namespace)
        if run_event is None:
            return  # pre-events and run events have no OpenLineage counterpart
        try:
            self._client().emit(run_event)
        except DeliveryError:
            raise
        except Exception as err:  # the client's transports raise their own kinds
            status = getattr(getattr(err, "response", None), "status_code", None)
            retryable = not (isinstance(status, int) and 400 <= status < 500 and status != 429)
            raise DeliveryError(f"openlineage {self.transport.get('type')}: {type(err).__name__}: {err}",
                                retryable) from None

    def _client(self) -> Any:
        if self._transport is None:
            from openlineage.client.transport import get_default_factory

            config = dict(self.transport)
            if config.get("type") in ("http", "async_http"):
                # The outbox retries with backoff across runs; the transport's own retries would only
                # hold the apply up while a receiver is down.
                config.setdefault("retry", {"total": 0})
            try:
                self._transport = get_default_factory().create(config=config)
            except Exception as err:  # e.g. kafka without its library: kept pending until it is installed
                raise DeliveryError(f"openlineage transport {self.transport.get('type')!r}: {err}") from None
        return self._transport
