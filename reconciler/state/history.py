"""`viewsync history` and `viewsync audit`: rows of the state store shaped for people
(text) and for tools (JSON). Pure: `services/history` fetches the rows."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from reconciler.adapters.base import NativeVersion
from reconciler.core.errors import UserError
from reconciler.core.model import ViewId


def _changed_fields(row: dict[str, Any]) -> list[str]:
    return [c["field"] for c in json.loads(row["changes"] or "[]")]


def history_json(view: ViewId, rows: Sequence[dict[str, Any]], native: Sequence[NativeVersion]) -> dict[str, Any]:
    return {
        "view": view.to_json(),
        "versions": [{"version": r["version"], "at": r["at"].isoformat(), "actor": r["actor"],
                      "action": r["action"], "git_commit": r["git_commit"], "digest": r["digest"],
                      "run_id": r["run_id"], "changes": _changed_fields(r)} for r in rows],
        "native_versions": [{"version": n.version, "timestamp_ms": n.timestamp_ms, "summary": n.summary,
                             "dialects": list(n.dialects)} for n in native],
    }


def history_text(view: ViewId, rows: Sequence[dict[str, Any]], native: Sequence[NativeVersion]) -> str:
    lines = [f"History of {view}:"]
    if not rows:
        lines.append("  (no versions recorded by viewsync)")
    for r in rows:
        fields = ", ".join(_changed_fields(r)) or "-"
        commit = (r["git_commit"] or "-")[:12]
        lines.append(f"  v{r['version']:<3} {r['at']:%Y-%m-%d %H:%M:%S}  {r['action']:<6} {r['actor']:<16} "
                     f"{commit:<12} {fields}")
    if native:
        lines.append(f"Native versions in catalog {view.catalog!r}:")
        for n in native:
            when = datetime.fromtimestamp(n.timestamp_ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S") \
                if n.timestamp_ms else "-"
            summary = ", ".join(f"{k}={v}" for k, v in sorted(n.summary.items()))
            lines.append(f"  {n.version:<6} {when}  [{', '.join(n.dialects)}] {summary}")
    return "\n".join(lines) + "\n"


def audit_json(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for row in rows:
        r = dict(row)
        r["at"] = r["at"].isoformat()
        for key in ("before_spec", "after_spec", "changes"):
            r[key] = json.loads(r[key]) if r[key] else None
        out.append(r)
    return out


def audit_text(rows: Sequence[dict[str, Any]]) -> str:
    if not rows:
        return "No audit records.\n"
    lines = []
    for r in rows:
        view_id = f"{r['catalog']}.{r['schema_name']}.{r['view_name']}"
        commit = (r["git_commit"] or "-")[:12]
        line = (f"{r['at']:%Y-%m-%d %H:%M:%S}  {r['run_id'][:8]}  {r['actor']:<16} {r['action']:<6} "
                f"{view_id:<40} {r['outcome']:<8} {commit}")
        if r.get("run_outcome") not in (None, "success"):
            line += f"  (run {r['run_outcome']})"
        if r["error"]:
            line += f"  error: {r['error']}"
        lines.append(line)
    return "\n".join(lines) + "\n"


_DURATION = re.compile(r"(\d+)([smhdw])")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def parse_since(text: str | None, now: datetime | None = None) -> datetime | None:
    """`--since`: an ISO date/time (UTC when it names no zone) or a duration back from now (7d, 12h)."""
    if not text:
        return None
    m = _DURATION.fullmatch(text.strip())
    if m:
        return (now or datetime.now(UTC)) - timedelta(**{_UNITS[m.group(2)]: int(m.group(1))})
    try:
        value = datetime.fromisoformat(text)
    except ValueError:
        raise UserError(f"--since {text!r}: expected an ISO date/time or a duration like 7d, 12h") from None
    return value if value.tzinfo else value.replace(tzinfo=UTC)
