"""Impact of changed and dropped views on the views that read them.

Dependents are found from SQL text (declared views, and live views in our
catalogs that nobody declares), transitively; Spark re-analyses them against
the new state. A change is breaking when it removes, renames or retypes
columns, or drops a view that is read; adding columns at the end, or a new
SQL with the same columns, is not.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from reconciler.core import sql as vsql
from reconciler.core.model import Column, LiveView, ViewId, ViewSpec
from reconciler.verify.result import Dependent, Impact, ViewResult


def _references(vid: ViewId, spec: ViewSpec) -> set[tuple[str, str, str]]:
    """Lower-cased (catalog, schema, name) keys the view's SQL may mean (any dialect)."""
    home = spec.default_catalog or vid.catalog
    ns = ".".join(spec.default_namespace) if spec.default_namespace else vid.schema
    keys: set[tuple[str, str, str]] = set()
    for rep in spec.representations:
        for parts in vsql.referenced_tables(rep.sql, rep.dialect):
            p = [x.lower() for x in parts]
            if len(p) == 1:
                keys |= {(home.lower(), ns.lower(), p[0]), (vid.catalog.lower(), ns.lower(), p[0])}
            elif len(p) == 2:
                keys |= {(home.lower(), p[0], p[1]), (vid.catalog.lower(), p[0], p[1])}
            else:
                keys.add((p[0], ".".join(p[1:-1]), p[-1]))
    return keys


_WORD = re.compile(r"\w+")


def _words(specs: Mapping[ViewId, ViewSpec]) -> dict[str, set[ViewId]]:
    """Each word of the views' SQL, lower-cased, and the views whose SQL has it: a changed view's
    readers are then found by one lookup, not a search of every SQL (a fifth of a 1,000-view
    `plan --spark`'s own time went to those searches)."""
    index: dict[str, set[ViewId]] = {}
    for vid, spec in specs.items():
        for word in {w.lower() for r in spec.representations for w in _WORD.findall(r.sql)}:
            index.setdefault(word, set()).add(vid)
    return index


def dependents(changed: Iterable[ViewId], declared: Mapping[ViewId, ViewSpec],
               live: Mapping[ViewId, LiveView]) -> dict[ViewId, set[ViewId]]:
    """For each changed view, every view that reads it, directly or through others.

    Only SQL that mentions a candidate's name is parsed, so a plan over thousands
    of views parses a handful."""
    specs: dict[ViewId, ViewSpec] = {v: lv.spec for v, lv in live.items() if v not in declared and lv.writable}
    specs.update(declared)
    readers: dict[ViewId, set[ViewId]] = {}
    words: dict[str, set[ViewId]] | None = None

    def mentioning(target: ViewId) -> Iterable[ViewId]:
        nonlocal words
        if not _WORD.fullmatch(target.name):  # a name that is not one word: search every SQL for it
            name = re.compile(r"(?i)(?<![\w])`?" + re.escape(target.name) + r"`?(?![\w])")
            return [v for v, s in specs.items() if any(name.search(r.sql) for r in s.representations)]
        if words is None:
            words = _words(specs)
        return words.get(target.name.lower(), ())

    def direct(target: ViewId) -> set[ViewId]:
        if target not in readers:
            key = (target.catalog.lower(), target.schema.lower(), target.name.lower())
            readers[target] = {v for v in mentioning(target) if v != target and key in _references(v, specs[v])}
        return readers[target]

    out: dict[ViewId, set[ViewId]] = {}
    for root in changed:
        seen: set[ViewId] = set()
        todo = [root]
        while todo:
            for d in direct(todo.pop()):
                if d not in seen and d != root:
                    seen.add(d)
                    todo.append(d)
        out[root] = seen
    return out


def _sig(cols: list[Column] | None) -> list[tuple[str, str]] | None:
    return None if not cols else [(c.name.lower(), c.type) for c in cols]


def classify(before: list[Column] | None, after: list[Column] | None, dropped: bool) -> tuple[str, bool, str]:
    """(change, breaking, detail) of one view's output columns."""
    if dropped:
        return "dropped", True, "the view is dropped"
    b, a = _sig(before), _sig(after)
    if b is None or a is None:
        return "unknown", False, "output columns unknown before or after the change"
    if a == b:
        return "same_output", False, "same columns"
    if a[:len(b)] == b:
        added = ", ".join(n for n, _ in a[len(b):])
        return "columns_added", False, f"columns added at the end: {added}"
    after_by = dict(a)
    removed = [n for n, _ in b if n not in after_by]
    retyped = [f"{n} {t} -> {after_by[n]}" for n, t in b if n in after_by and after_by[n] != t]
    moved = not removed and not retyped
    parts = []
    if removed:
        parts.append("removed/renamed: " + ", ".join(removed))
    if retyped:
        parts.append("retyped: " + ", ".join(retyped))
    if moved:
        parts.append("columns reordered")
    return "columns_changed", True, "; ".join(parts)


def dependent_status(vid: ViewId, declared: bool, result: ViewResult | None, live: LiveView | None,
                     column_findings: bool) -> Dependent:
    if result is None or result.status in ("error", "not_checked"):
        why = (result.reason if result is not None and result.reason else "no longer resolves")
        return Dependent(vid, declared, "broken", why)
    if declared and column_findings:
        return Dependent(vid, declared, "type_changed", "its declared columns no longer match Spark's output")
    before = _sig(live.spec.columns) if live is not None else None
    after = _sig(result.columns)
    if before is not None and after is not None and before != after:
        return Dependent(vid, declared, "type_changed", "its output columns change")
    return Dependent(vid, declared, "ok", "still resolves with the same columns")


def _broken(r: ViewResult | None) -> bool:
    return r is None or r.status in ("error", "not_checked")


def attributed_status(vid: ViewId, declared: bool, now: ViewResult | None, now_off: bool,
                      before: ViewResult | None, before_off: bool) -> Dependent:
    """A dependent's status caused by one input alone: its output with the input as planned (`now`)
    against its output with the input as it is live (`before`), its own SQL the same in both, so a
    dependent that changes itself is judged as its own action. `*_off`: its declared columns do
    not match Spark's output."""
    if _broken(now):
        if _broken(before):
            return Dependent(vid, declared, "ok", "does not resolve with the old input either (judged on its own)")
        why = now.reason if now is not None and now.reason else "no longer resolves"
        return Dependent(vid, declared, "broken", why)
    if declared and now_off and not before_off:
        return Dependent(vid, declared, "type_changed", "its declared columns no longer match Spark's output")
    a, b = _sig(now.columns if now else None), _sig(before.columns if before and not _broken(before) else None)
    if a is not None and b is not None and a != b:
        return Dependent(vid, declared, "type_changed", "its output columns change")
    return Dependent(vid, declared, "ok", "same columns with the old and the new input")


def impact_of(view: ViewId, before: list[Column] | None, after: list[Column] | None, dropped: bool,
              deps: list[Dependent]) -> Impact:
    change, breaking, detail = classify(before, after, dropped)
    affected = [d for d in deps if d.status != "ok"]
    if change in ("same_output", "columns_added", "unknown") and affected:
        breaking = True
    return Impact(view, change, breaking and bool(deps), detail, tuple(deps))  # type: ignore[arg-type]
