"""The verification section of a plan as text and Markdown (from its JSON form)."""

from __future__ import annotations

from typing import Any


def _view(v: dict[str, str]) -> str:
    return f"{v['catalog']}.{v['schema']}.{v['name']}"


def _summary(ver: dict[str, Any]) -> str:
    s = ver.get("summary", {})
    return (f"Spark verification: {s.get('ok', 0)} ok, {s.get('warning', 0)} with warnings, "
            f"{s.get('error', 0)} with errors, {s.get('not_checked', 0)} not checked, "
            f"{s.get('skipped', 0)} skipped (no spark SQL).")


def _impact_lines(ver: dict[str, Any]) -> list[str]:
    out: list[str] = []
    for imp in ver.get("impact", []):
        kind = "BREAKING" if imp["breaking"] else "non-breaking"
        out.append(f"  {_view(imp['view'])}: {kind} ({imp['detail']})")
        for d in imp["dependents"]:
            label = {"broken": "BROKEN", "type_changed": "TYPE-CHANGED", "ok": "ok"}[d["status"]]
            origin = "declared" if d["declared"] else "live, undeclared"
            out.append(f"    {label:<13} {_view(d['view'])} ({origin}): {d['detail']}")
    return out


def text_lines(ver: dict[str, Any] | None) -> list[str]:
    if not ver:
        return []
    out = [_summary(ver)]
    for r in ver.get("views", []):
        if r.get("inferred"):
            cols = ", ".join(f"{c['name']} {c['type']}" for c in r.get("columns", []))
            out.append(f"  columns of {_view(r['view'])} from Spark: {cols}")
        elif r["status"] == "not_checked":
            out.append(f"  not checked: {_view(r['view'])} ({r.get('reason')})")
    impact = _impact_lines(ver)
    if impact:
        out.append("Impact on dependent views:")
        out.extend(impact)
    return out


def markdown_lines(ver: dict[str, Any] | None) -> list[str]:
    if not ver:
        return []
    out = ["#### Spark verification", "", _summary(ver), ""]
    inferred = [r for r in ver.get("views", []) if r.get("inferred")]
    if inferred:
        out.append("Columns filled from Spark:")
        out += [f"- `{_view(r['view'])}`: " + ", ".join(f"`{c['name']} {c['type']}`" for c in r["columns"])
                for r in inferred]
        out.append("")
    skipped = [r for r in ver.get("views", []) if r["status"] == "not_checked"]
    out += [f"- not checked: `{_view(r['view'])}` ({r.get('reason')})" for r in skipped]
    impact = ver.get("impact", [])
    if impact:
        out += ["", "| changed view | change | dependent | status |", "|---|---|---|---|"]
        for imp in impact:
            kind = ("**breaking**" if imp["breaking"] else "non-breaking") + f": {imp['detail']}"
            rows = imp["dependents"] or [{"view": None, "status": "", "declared": True}]
            for d in rows:
                dep = f"`{_view(d['view'])}`" + ("" if d["declared"] else " (live)") if d["view"] else "(none)"
                status = {"broken": "BROKEN", "type_changed": "TYPE-CHANGED", "ok": "ok", "": ""}[d["status"]]
                out.append(f"| `{_view(imp['view'])}` | {kind.replace('|', '/')} | {dep} | {status} |")
        out.append("")
    return out
