"""Text, Markdown (the PR comment) and JSON of what `preview up/down/list/gc` did."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from reconciler.preview.model import DownResult, EnvSummary, UpResult


def _when(value: datetime) -> str:
    return value.isoformat(timespec="seconds")


def up_text(res: UpResult) -> str:
    lines = [f"Preview env {res.env!r} ({len(res.copies)} view(s), expires {_when(res.expires_at)}):"]
    lines += [f"  {c.copy}  <- {c.source} ({c.reason})" for c in res.copies]
    if not res.copies:
        lines.append("  no view changed since the base; the env holds no copy")
    lines += [f"  + namespace {c}.{s}" for c, s in res.schemas_created]
    lines += [f"  - namespace {c}.{s}" for c, s in res.schemas_dropped]
    lines += [f"Note: {n}" for n in res.notes]
    changed = sum(1 for s in res.steps if s.outcome == "applied")
    state = "complete" if res.ok else "FAILED"
    tail = f" (run {res.run_id})." if res.run_id else ", nothing to change."
    lines.append(f"Preview {state}: {changed} write(s)" + tail)
    return "\n".join(lines) + "\n"


def up_markdown(res: UpResult) -> str:
    """The PR comment: the fully qualified names to query."""
    lines = [f"### viewsync preview `{res.env}`", ""]
    if not res.copies:
        lines.append("No view changed since the base: nothing to preview.")
    else:
        lines += [f"Query the branch's views (commit `{(res.commit or '')[:12]}`) until {_when(res.expires_at)}:", "",
                  "| view | preview copy | why |", "|---|---|---|"]
        lines += [f"| `{c.source}` | `{c.copy}` | {c.reason} |" for c in res.copies]
    lines += ["", *[f"> {n}" for n in res.notes]] if res.notes else []
    if not res.ok:
        failed = [s for s in res.steps if s.outcome != "applied"]
        lines += ["", "**Preview failed:** " + "; ".join(f"{s.action} `{s.view}`: {s.outcome}"
                                                        + (f" ({s.error})" if s.error else "") for s in failed)]
    return "\n".join(lines) + "\n"


def up_json(res: UpResult) -> str:
    return _dump({"env": res.env, "commit": res.commit, "base": res.base, "expires_at": _when(res.expires_at),
                  "ok": res.ok, "run_id": res.run_id,
                  "copies": [{"view": str(c.source), "copy": str(c.copy), "reason": c.reason} for c in res.copies],
                  "steps": [_step(s) for s in res.steps],
                  "schemas_created": [f"{c}.{s}" for c, s in res.schemas_created],
                  "schemas_dropped": [f"{c}.{s}" for c, s in res.schemas_dropped], "notes": res.notes})


def down_text(res: DownResult) -> str:
    if not res.found:
        return f"Preview env {res.env!r}: nothing to remove.\n"
    # each drop was said as it happened (progress on stderr): not again here
    lines = [f"  - namespace {c}.{s}" for c, s in res.schemas_dropped]
    lines += [f"Note: {n}" for n in res.notes]
    dropped = sum(1 for s in res.steps if s.outcome == "applied")
    lines.append(f"Preview env {res.env!r} {'removed' if res.ok else 'NOT fully removed'}: {dropped} view(s), "
                 f"{len(res.schemas_dropped)} namespace(s) dropped.")
    return "\n".join(lines) + "\n"


def down_json(res: DownResult) -> dict[str, Any]:
    return {"env": res.env, "found": res.found, "ok": res.ok, "run_id": res.run_id,
            "steps": [_step(s) for s in res.steps], "schemas_dropped": [f"{c}.{s}" for c, s in res.schemas_dropped],
            "schemas_kept": [f"{c}.{s}" for c, s in res.schemas_kept], "notes": res.notes}


def list_text(envs: Sequence[EnvSummary], now: datetime) -> str:
    if not envs:
        return "No preview environments.\n"
    lines = []
    for e in envs:
        age = now - e.updated_at
        state = "EXPIRED" if e.expires_at <= now else f"expires {_when(e.expires_at)}"
        lines.append(f"{e.env}: {len(e.views)} view(s), commit {(e.commit or '?')[:12]}, by {e.actor}, "
                     f"updated {_age(age.total_seconds())} ago, {state}")
        lines += [f"  {v}" for v in e.views]
    return "\n".join(lines) + "\n"


def list_json(envs: Sequence[EnvSummary], now: datetime) -> str:
    return _dump([{"env": e.env, "commit": e.commit, "actor": e.actor, "created_at": _when(e.created_at),
                   "updated_at": _when(e.updated_at), "expires_at": _when(e.expires_at),
                   "expired": e.expires_at <= now, "views": [str(v) for v in e.views],
                   "schemas": [f"{c}.{s}" for c, s in e.schemas]} for e in envs])


def _age(seconds: float) -> str:
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{int(seconds // size)}{unit}"
    return f"{int(max(seconds, 0))}s"


def _step(s: Any) -> dict[str, Any]:
    return {"action": s.action, "view": str(s.view), "outcome": s.outcome, "error": s.error}


def _dump(data: Any) -> str:
    return json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
