"""Plans as text (Terraform-like), Markdown (PR comment) and JSON; what an apply says when done."""

from __future__ import annotations

import difflib
import json
from typing import TYPE_CHECKING, Any

from reconciler.core.output import OutputFormat
from reconciler.events.lineage import change_of
from reconciler.plan.planner import Action, Change, Plan, YamlChange
from reconciler.verify import report as verify_report

if TYPE_CHECKING:
    from reconciler.apply.run import ApplyResult

SYMBOL = {"create": "+", "update": "~", "drop": "-", "adopt": "&"}
COLOR = {"create": "32", "update": "33", "drop": "31", "adopt": "36"}
GITHUB_COMMENT_LIMIT = 65_536
MARKDOWN_MARKER = "<!-- viewsync-plan -->"


def _c(text: str, code: str, color: bool) -> str:
    return f"\x1b[{code}m{text}\x1b[0m" if color else text


def _short(value: Any) -> str:
    if value is None:
        return "(none)"
    if isinstance(value, str):
        one = " ".join(value.split())
        return json.dumps(one if len(one) <= 80 else one[:77] + "...")
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= 100 else text[:97] + "..."


def sql_diff(before: str | None, after: str | None, name: str = "") -> list[str]:
    a = (before or "").strip().splitlines()
    b = (after or "").strip().splitlines()
    return list(difflib.unified_diff(a, b, f"live/{name}", f"declared/{name}", lineterm="", n=2))


def _is_sql(change: Change) -> bool:
    return change.field.startswith("representations.")


def _column_text(col: dict[str, Any]) -> str:
    comment = f"  -- {col['comment']}" if col.get("comment") else ""
    return f"{col['name']} {col['type']}{comment}"


def column_changes(before: list[dict[str, Any]] | None, after: list[dict[str, Any]] | None) -> list[str]:
    """One line per added (+), removed (-) or changed (~) column, matched by name."""
    old = {c["name"]: c for c in before or []}
    new = {c["name"]: c for c in after or []}
    lines = []
    for c in after or []:
        if c["name"] not in old:
            lines.append(f"+ {_column_text(c)}")
        elif old[c["name"]] != c:
            lines.append(f"~ {_column_text(old[c['name']])}  ->  {_column_text(c)}")
    lines += [f"- {_column_text(c)}" for c in before or [] if c["name"] not in new]
    if not lines and [c["name"] for c in before or []] != [c["name"] for c in after or []]:
        lines.append("~ order: " + ", ".join(c["name"] for c in after or []))
    return lines


def access_line(plan: Plan) -> str | None:
    """Which access policy the plan was checked against, for whom (None: not checked)."""
    acc = plan.access
    if acc is None:
        return None
    if acc.get("policy") is None:
        return f"Access: {acc.get('note') or 'no access policy'}."
    authors = {a["label"] for people in (acc.get("authors") or {}).values() for a in people}
    extra = f" and {len(authors)} commit author(s)" if authors else ""
    return f"Access: checked against {acc['policy']} for {acc['actor']['label']}{extra}."


def summary_line(plan: Plan) -> str:
    s = plan.summary()
    return (f"Plan: {s['create']} to create, {s['update']} to update, {s['drop']} to drop, "
            f"{s['adopt']} to adopt ({s['unchanged']} unchanged).")


def kinds_line(plan: Plan) -> str | None:
    """How many updates of each kind (None: no update has one); cosmetic ones change no meaning."""
    counts: dict[str, int] = {}
    for a in plan.actions:
        if a.kind is not None:
            counts[a.kind.category] = counts.get(a.kind.category, 0) + 1
    if not counts:
        return None
    order = ("breaking", "unknown", "logic", "additive", "cosmetic")
    parts = [f"{counts[c]} {c}" + (" (no change of meaning)" if c == "cosmetic" else "") for c in order if c in counts]
    return "Kinds of change: " + ", ".join(parts) + "."


def kind_text(a: Action) -> str | None:
    """`logic: WHERE: a → b; JOIN added: t`: an update's category and edits."""
    return f"{a.kind.category}: {a.kind.summary()}" if a.kind is not None else None


def applied(plan: Plan, run: ApplyResult | None) -> str:
    """What `apply` says once the plan is carried out: the schema owners written (only by a run
    that succeeded: they follow its views), then the run's tally."""
    if run is None:
        return "Nothing to apply.\n"
    owners = "".join(f"~ schema {c.catalog}.{c.schema} owner: {c.after!r}\n" for c in plan.schema_owners)
    refused = f", {len(run.refused)} refused by hooks" if run.refused else ""
    return (owners if run.ok else "") + (f"Apply {'complete' if run.ok else 'FAILED'}: {len(run.applied)} applied, "
                                         f"{len(run.failed)} failed{refused}, {len(run.skipped)} skipped "
                                         f"(run {run.run_id}).\n")


# --------------------------------------------------------------------- text
def text(plan: Plan, color: bool = False) -> str:
    out: list[str] = []
    if plan.yaml_changes is not None:
        out.extend(_yaml_changes_text(plan.yaml_changes))
    if plan.actions:
        out.append("viewsync will perform the following actions:")
        out.append("")
        for a in plan.actions:
            out.extend(_action_text(a, color))
            out.append("")
    elif not plan.schema_owners:
        out.append("No changes. The catalogs match the declarations.")
        out.append("")
    if plan.schema_owners:
        out.append("Schema owners:")
        out.extend(_c(f"  ~ schema {c.catalog}.{c.schema} owner: {c.before!r} -> {c.after!r}", COLOR["update"], color)
                   for c in plan.schema_owners)
        out.append("")
    out.append(summary_line(plan))
    if kinds_line(plan):
        out.append(str(kinds_line(plan)))
    out.extend(verify_report.text_lines(plan.verification))
    if plan.tests is not None:
        from reconciler.viewtests import render as tests_render
        from reconciler.viewtests.result import TestRun

        out.extend(tests_render.text(TestRun.from_json(plan.tests)).rstrip("\n").splitlines())
        out.extend(tests_render.matrix_text(plan.engines or []))
    if access_line(plan):
        out.append(str(access_line(plan)))
    for w in plan.warnings:
        out.append(_c("Warning: ", "33", color) + w)
    if plan.unmanaged:
        out.append(f"{len(plan.unmanaged)} unmanaged view(s) seen, never touched:")
        for u in plan.unmanaged[:50]:
            owner = f", managed by {u.managed_by}" if u.managed_by else ""
            out.append(f"  {u.view} ({u.format}{owner})")
        if len(plan.unmanaged) > 50:
            out.append(f"  ... and {len(plan.unmanaged) - 50} more")
    if plan.errors:
        out.append("")
        out.append(_c(f"Error: the plan has {len(plan.errors)} error(s) and cannot be applied:", "31", color))
        for e in plan.errors:
            out.append(f"  {e}")
    return "\n".join(out) + "\n"


def _action_text(a: Action, color: bool) -> list[str]:
    sym = SYMBOL[a.action]
    head = _c(f"  {sym} {a.action} {a.view}", COLOR[a.action], color) + f"  ({a.strategy})"
    lines = [head]
    if kind_text(a):
        lines.append(f"      kind {kind_text(a)}")
    for ch in a.changes:
        if ch.field == "columns":
            lines.append(f"      {'+' if a.action == 'create' else '-' if a.action == 'drop' else '~'} columns")
            lines.extend("          " + c for c in column_changes(ch.before, ch.after))
        elif _is_sql(ch) and a.action in ("update", "adopt") and ch.before and ch.after:
            lines.append(f"      ~ {ch.field}")
            for d in sql_diff(ch.before, ch.after)[2:]:
                code = "32" if d.startswith("+") else "31" if d.startswith("-") else "0"
                lines.append("          " + _c(d, code, color and code != "0"))
        elif a.action == "create" and _is_sql(ch):
            lines.append(f"      + {ch.field}")
            lines.extend("          " + _c("+ " + ln, "32", color) for ln in str(ch.after).strip().splitlines())
        elif a.action == "create":
            lines.append(f"      + {ch.field} = {_short(ch.after)}")
        elif a.action == "drop":
            lines.append(f"      - {ch.field} = {_short(ch.before)}")
        else:
            mark = "+" if ch.before is None else "-" if ch.after is None else "~"
            lines.append(f"      {mark} {ch.field}: {_short(ch.before)} -> {_short(ch.after)}")
    return lines


def _yaml_changes_text(changes: list[YamlChange]) -> list[str]:
    out = ["Declaration changes (base -> head):"]
    if not changes:
        out.append("  (none)")
    for c in changes:
        sym = {"added": "+", "changed": "~", "removed": "-"}[c.change]
        fields = f" ({', '.join(c.fields)})" if c.fields else ""
        out.append(f"  {sym} {c.view} {c.change}{fields}")
    out.append("")
    return out


# ----------------------------------------------------------------- markdown
def markdown(plan: Plan, limit: int = GITHUB_COMMENT_LIMIT) -> str:
    s = plan.summary()
    head = [MARKDOWN_MARKER, "### viewsync plan", ""]
    if plan.git is not None and plan.git.commit:
        head.append(f"Declarations at `{plan.git.commit[:12]}`" + (f" ({plan.git.ref})" if plan.git.ref else ""))
        head.append("")
    head += ["| create | update | drop | adopt | unchanged | errors |",
             "|---:|---:|---:|---:|---:|---:|",
             f"| {s['create']} | {s['update']} | {s['drop']} | {s['adopt']} | {s['unchanged']} | "
             f"{len(plan.errors)} |", ""]
    if kinds_line(plan):
        head += [_md_escape(str(kinds_line(plan))), ""]
    if access_line(plan):
        head += [_md_escape(str(access_line(plan))), ""]
    if plan.errors:
        head.append("**The plan has errors and cannot be applied:**")
        head += [f"- `{e.code}` " + (f"`{e.location}` " if e.location is not None else "") + _md_escape(e.message)
                 for e in plan.errors]
        head.append("")
    if plan.yaml_changes is not None:
        head.append("#### Declaration changes in this branch")
        head += [f"- **{c.change}** `{c.view}`" + (f" ({', '.join(c.fields)})" if c.fields else "")
                 for c in plan.yaml_changes] or ["- (none)"]
        head.append("")
    if plan.schema_owners:
        head.append("#### Schema owners")
        head += [f"- `{c.catalog}.{c.schema}`: {_md_escape(repr(c.before))} → {_md_escape(repr(c.after))}"
                 for c in plan.schema_owners]
        head.append("")
    if not plan.actions:
        head.append("No changes. The catalogs match the declarations." if not plan.schema_owners else
                    "No view changes.")
    else:
        from reconciler.render import mermaid

        head += mermaid.markdown_lines(plan)
        head.append("#### Changes against the live catalogs")
    tail: list[str] = ["", *verify_report.markdown_lines(plan.verification)] if plan.verification else []
    if plan.tests is not None:
        from reconciler.viewtests import render as tests_render
        from reconciler.viewtests.result import TestRun

        tail += ["", *tests_render.markdown_lines(TestRun.from_json(plan.tests))]
        tail += tests_render.matrix_markdown(plan.engines or [])
    if plan.warnings:
        tail += ["", "**Warnings**"] + [f"- {_md_escape(w)}" for w in plan.warnings]
    if plan.unmanaged:
        tail += ["", f"<details><summary>{len(plan.unmanaged)} unmanaged view(s), never touched</summary>", ""]
        tail += [f"- `{u.view}` ({u.format})" for u in plan.unmanaged[:200]]
        tail += ["", "</details>"]
    body = "\n".join(head) + "\n"
    end = "\n".join(tail) + "\n"
    blocks = [_action_markdown(a) for a in plan.actions]
    note_room = 200
    kept = 0
    parts: list[str] = []
    size = len(body) + len(end) + note_room
    for block in blocks:
        if size + len(block) > limit:
            break
        parts.append(block)
        size += len(block)
        kept += 1
    out = body + "".join(parts)
    if kept < len(blocks):
        out += (f"\n> **Note:** {len(blocks) - kept} of {len(blocks)} actions are not shown: the comment "
                "would exceed GitHub's size limit. Run `viewsync plan` for the full plan.\n")
    return out + end


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|").replace("<", "&lt;")


def _action_markdown(a: Action) -> str:
    sym = SYMBOL[a.action]
    fields = ", ".join(c.field for c in a.changes) or "marker only"
    kind = f" <i>{a.kind.category}</i>" if a.kind is not None else ""
    lines = [f"<details><summary><code>{sym} {a.action}</code> <b>{a.view}</b>{kind} — {_md_escape(fields)}"
             "</summary>", ""]
    if a.kind is not None:
        lines += [f"**Kind: {a.kind.category}**", *[f"- {_md_escape(e)}" for e in a.kind.edits], ""]
    for ch in a.changes:
        if _is_sql(ch):
            lines.append(f"`{ch.field}`")
            lines.append("```diff")
            lines.extend(sql_diff(ch.before, ch.after, ch.field.split(".")[1]))
            lines.append("```")
        elif ch.field == "columns":
            lines.append("- `columns`")
            lines.extend(f"  - `{_md_escape(c)}`" for c in column_changes(ch.before, ch.after))
        else:
            lines.append(f"- `{ch.field}`: {_md_escape(_short(ch.before))} → {_md_escape(_short(ch.after))}")
    lineage = change_of(str(a.view), a.before, a.desired)
    if lineage:
        lines += ["", "Lineage:", "```diff", *lineage, "```"]
    lines += ["", "</details>", ""]
    return "\n".join(lines)


# --------------------------------------------------------------------- json
def as_json(plan: Plan) -> str:
    return json.dumps(plan.to_json(), indent=2, sort_keys=False, default=str) + "\n"


def render(plan: Plan, fmt: OutputFormat, color: bool = False) -> str:
    if fmt is OutputFormat.JSON:
        return as_json(plan)
    if fmt is OutputFormat.MARKDOWN:
        return markdown(plan)
    return text(plan, color)
