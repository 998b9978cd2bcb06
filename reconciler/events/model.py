"""Events as CloudEvents 1.0 JSON (structured mode). Pure: building and
filtering events, no I/O.

Types: `run.started`, `run.finished`, `tests.finished` (a run of view tests); per action a pre-event
`view.<action>.pre` before the catalog is touched and a post-event after it
(`view.created`, `view.updated`, `view.dropped`, `view.adopted`, or
`view.apply_failed`). Every event id is derived from the run, the action's
sequence number and the type, so it is stable: consumers deduplicate by it.
"""

from __future__ import annotations

import fnmatch
import json
import uuid
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

from reconciler.core.secrets import may_need_redaction, redact

SPECVERSION = "1.0"
POST_TYPES = {"create": "view.created", "update": "view.updated", "drop": "view.dropped", "adopt": "view.adopted"}
FAILED = "view.apply_failed"
RUN_STARTED = "run.started"
RUN_FINISHED = "run.finished"
TESTS_FINISHED = "tests.finished"  # a run of view tests (viewsync test), with per-view results
ALL_TYPES = ([f"view.{a}.pre" for a in POST_TYPES] + list(POST_TYPES.values())
             + [FAILED, RUN_STARTED, RUN_FINISHED, TESTS_FINISHED])
_NAMESPACE = uuid.UUID("8a6bb0c6-3c1e-4d55-9a57-6a0f2c4e7d10")  # viewsync's event-id namespace


def pre_type(action: str) -> str:
    return f"view.{action}.pre"


def post_type(action: str, ok: bool) -> str:
    return POST_TYPES[action] if ok else FAILED


def is_pre(event_type: str) -> bool:
    return event_type.endswith(".pre")


def event_id(run_id: str, seq: int, event_type: str) -> str:
    return str(uuid.uuid5(_NAMESPACE, f"{run_id}/{seq}/{event_type}"))


def redacted(value: Any, secrets: Iterable[str] = ()) -> Any:
    """The value with every secret masked in every string, structure kept (JSON stays valid)."""
    secrets = frozenset(secrets)
    try:  # one C-speed scan of the whole value first: most events hold nothing to mask
        if not may_need_redaction(json.dumps(value, ensure_ascii=False), secrets):
            return value
    except (TypeError, ValueError):
        pass  # not plain JSON: walk it
    return _redacted(value, secrets)


def _redacted(value: Any, secrets: frozenset[str]) -> Any:
    if isinstance(value, str):
        return redact(value, secrets)
    if isinstance(value, Mapping):
        return {redact(str(k), secrets): _redacted(v, secrets) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_redacted(v, secrets) for v in value]
    return value


def cloud_event(project: str, event_type: str, event_id_: str, subject: str, data: Mapping[str, Any],
                time: datetime | None = None, secrets: Iterable[str] = (), masked: bool = False) -> dict[str, Any]:
    """`masked`: every string in `data` has been through `redact` already (nothing is scanned)."""
    return {
        "specversion": SPECVERSION,
        "id": event_id_,
        "source": f"/viewsync/{project}",
        "type": event_type,
        "time": (time or datetime.now(UTC)).isoformat().replace("+00:00", "Z"),
        "subject": subject,
        "datacontenttype": "application/json",
        "data": dict(data) if masked else redacted(dict(data), secrets),
    }


def matches(event_type: str, subject: str, types: Sequence[str], views: Sequence[str]) -> bool:
    """A sink's filter: glob patterns over the short type and over the view id (runs have no view:
    a view filter lets run events through)."""
    if types and not any(fnmatch.fnmatchcase(event_type, p) for p in types):
        return False
    return not views or not event_type.startswith("view.") or any(fnmatch.fnmatchcase(subject, p) for p in views)


def action_data(*, run_id: str, seq: int, actor: str, git: Mapping[str, Any], action: str, view: Mapping[str, str],
                catalog_kind: str, strategy: str, changes: list[dict[str, Any]], before_digest: str | None,
                after_digest: str | None, after: Mapping[str, Any] | None, outcome: str | None = None,
                error: str | None = None) -> dict[str, Any]:
    data: dict[str, Any] = {
        "view": dict(view), "action": action, "catalog_kind": catalog_kind, "strategy": strategy,
        "run_id": run_id, "seq": seq, "actor": actor, "git": dict(git), "changes": changes,
        "before_digest": before_digest, "after_digest": after_digest, "after": after,
    }
    if outcome is not None:
        data["outcome"] = outcome
    if error is not None:
        data["error"] = error
    return data
