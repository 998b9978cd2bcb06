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


def _utc(at: datetime) -> str:
    """A stored time in UTC (SQLite gives it back naive, PostgreSQL in the session's zone)."""
    return f"{at.astimezone(UTC) if at.tzinfo else at:%Y-%m-%d %H:%M:%S}"


def table(columns: Sequence[str], rows: Sequence[Sequence[str]], indent: str = "") -> list[str]:
    """Rows under a header line, each column as wide as its widest cell."""
    widths = [max([len(c), *(len(r[i]) for r in rows)]) for i, c in enumerate(columns)]
    return [indent + "  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip()
            for r in [list(columns), *rows]]


def history_text(view: ViewId, rows: Sequence[dict[str, Any]], native: Sequence[NativeVersion]) -> str:
    lines = [f"History of {view}:"]
    if not rows:
        lines.append("  (no versions recorded by viewsync)")
    else:
        lines += table(["VERSION", "TIME (UTC)", "ACTION", "ACTOR", "COMMIT", "CHANGED FIELDS"],
                       [[f"v{r['version']}", _utc(r["at"]), r["action"], r["actor"],
                         (r["git_commit"] or "-")[:12], ", ".join(_changed_fields(r)) or "-"] for r in rows], "  ")
    if native:
        lines.append(f"Native versions in catalog {view.catalog!r}:")
        lines += table(["VERSION", "TIME (UTC)", "DIALECTS", "SUMMARY"],
                       [[str(n.version),
                         datetime.fromtimestamp(n.timestamp_ms / 1000, UTC).strftime("%Y-%m-%d %H:%M:%S")
                         if n.timestamp_ms else "-",
                         ", ".join(n.dialects) or "-",
                         ", ".join(f"{k}={v}" for k, v in sorted(n.summary.items())) or "-"] for n in native], "  ")
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


def _audit_note(row: dict[str, Any]) -> str:
    """What a row's outcome alone does not say: its run died or failed, the action's error."""
    notes = [f"(run {row['run_outcome']})"] if row.get("run_outcome") not in (None, "success") else []
    if row["error"]:
        notes.append(f"error: {row['error']}")
    return "  ".join(notes)


def audit_text(rows: Sequence[dict[str, Any]]) -> str:
    """One line per attempted action under a header; RUN names the run's command (apply, preview or revert)."""
    if not rows:
        return "No audit records.\n"
    return "\n".join(table(
        ["TIME (UTC)", "RUN", "COMMAND", "ACTOR", "ACTION", "VIEW", "OUTCOME", "COMMIT", "NOTE"],
        [[_utc(r["at"]), r["run_id"][:8], r.get("run_command") or "-", r["actor"], r["action"],
          f"{r['catalog']}.{r['schema_name']}.{r['view_name']}", r["outcome"], (r["git_commit"] or "-")[:12],
          _audit_note(r)] for r in rows])) + "\n"


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
