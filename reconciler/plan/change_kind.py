"""The kind of an update, from the SQL's syntax trees (sqlglot) and the declared columns. Pure.

Categories, mildest first: `cosmetic` (formatting, comments, spelling or quoting of
identifiers, metadata such as a comment: the view's rows do not change), `additive` (output
columns added at the end, nothing else), `logic` (the rows may change: a filter, a join, an
aggregate, a CTE...), `unknown` (the analysis cannot decide) and `breaking` (output columns
removed, renamed, reordered or retyped, as `verify.impact.classify` finds them). A change
gets the gravest category among its edits, with one short line per edit.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, get_args

from reconciler.core import sql as vsql

Category = Literal["cosmetic", "additive", "logic", "unknown", "breaking"]
CATEGORIES: tuple[Category, ...] = get_args(Category)  # mildest first
_RANK = {c: i for i, c in enumerate(CATEGORIES)}
# dialects whose identifiers mean the same in any case, quoted or not
_FOLDS_QUOTED = frozenset({"spark", "hive", "databricks", "trino", "presto", "athena", "mysql", "sqlite",
                           "duckdb", "bigquery", "flink"})
_CLAUSES = {"where": "WHERE", "group": "GROUP BY", "having": "HAVING", "qualify": "QUALIFY",
            "order": "ORDER BY", "limit": "LIMIT", "offset": "OFFSET", "distinct": "DISTINCT"}
_METADATA = ("comment", "owner")
Edit = tuple[Category, str]


@dataclass(frozen=True)
class ChangeKind:
    """An update's category and its edits, one short line each."""

    category: Category
    edits: tuple[str, ...] = ()

    @property
    def changes_meaning(self) -> bool:
        return self.category != "cosmetic"

    def summary(self) -> str:
        return "; ".join(self.edits) or "no edit found"

    def to_json(self) -> dict[str, Any]:
        return {"category": self.category, "edits": list(self.edits)}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> ChangeKind:
        if d["category"] not in CATEGORIES:
            raise ValueError(f"unknown change category {d['category']!r}")
        return cls(d["category"], tuple(str(e) for e in d.get("edits") or ()))


def classify(before: Mapping[str, Any], after: Mapping[str, Any]) -> ChangeKind:
    """The kind of the change from `before` to `after`, canonical view specs (`ViewSpec.canonical()`)."""
    edits: list[Edit] = []
    cols_b, cols_a = before.get("columns") or [], after.get("columns") or []
    columns_known = bool(cols_b) and bool(cols_a)
    if columns_known:
        edits += _column_edits(cols_b, cols_a)
    edits += _metadata_edits(before, after)
    edits += _sql_edits(_reps(before), _reps(after), columns_known)
    if not edits:
        return ChangeKind("cosmetic", ("no change",))
    worst = max((c for c, _ in edits), key=_RANK.__getitem__)
    lines: list[str] = []
    for _, line in edits:
        if line not in lines:
            lines.append(line)
    return ChangeKind(worst, tuple(lines))


def _reps(spec: Mapping[str, Any]) -> dict[str, str]:
    return {str(r["dialect"]): str(r["sql"]) for r in spec.get("representations") or []}


# ------------------------------------------------------------------ columns and metadata
def _column_edits(before: Sequence[Mapping[str, Any]], after: Sequence[Mapping[str, Any]]) -> list[Edit]:
    """The declared (or inferred) output columns compared as impact analysis does: names and types."""
    b = [(str(c["name"]).lower(), str(c["type"]).lower()) for c in before]
    a = [(str(c["name"]).lower(), str(c["type"]).lower()) for c in after]
    if a == b:
        comments = [str(c["name"]) for c, d in zip(before, after, strict=True) if c.get("comment") != d.get("comment")]
        return [("cosmetic", "column comments: " + ", ".join(comments))] if comments else []
    if a[:len(b)] == b:
        return [("additive", "columns added at the end: " + ", ".join(n for n, _ in a[len(b):]))]
    after_types = dict(a)
    removed = [n for n, _ in b if n not in after_types]
    added = [n for n, _ in a if n not in dict(b)]
    retyped = [f"{n} {t} → {after_types[n]}" for n, t in b if n in after_types and after_types[n] != t]
    out: list[Edit] = []
    if removed and len(removed) == len(added) and len(a) == len(b):
        out.append(("breaking", "columns renamed: " + ", ".join(f"{r} → {n}" for r, n in zip(removed, added,
                                                                                          strict=True))))
    elif removed:
        out.append(("breaking", "columns removed: " + ", ".join(removed)))
    if retyped:
        out.append(("breaking", "columns retyped: " + ", ".join(retyped)))
    if not out:
        kept = [n for n, _ in a if n in dict(b)]
        out.append(("breaking", "columns reordered" if kept != [n for n, _ in b] else
                    "columns added before others: " + ", ".join(added)))
    return out


def _metadata_edits(before: Mapping[str, Any], after: Mapping[str, Any]) -> list[Edit]:
    out: list[Edit] = []
    fields = [f for f in _METADATA if before.get(f) != after.get(f)]
    props_b, props_a = before.get("properties") or {}, after.get("properties") or {}
    fields += [f"properties.{k}" for k in sorted(set(props_b) | set(props_a)) if props_b.get(k) != props_a.get(k)]
    if fields:
        out.append(("cosmetic", "metadata: " + ", ".join(fields)))
    for f in ("default_catalog", "default_namespace"):
        if before.get(f) != after.get(f):
            out.append(("logic", f"{f}: {_plain(before.get(f))} → {_plain(after.get(f))} (unqualified names "
                                 "may read other tables)"))
    if before.get("security") != after.get("security"):
        out.append(("logic", f"security: {_plain(before.get('security'))} → {_plain(after.get('security'))}"))
    return out


def _plain(value: Any) -> str:
    if value is None:
        return "(none)"
    return ".".join(value) if isinstance(value, list) else str(value)


# ------------------------------------------------------------------ SQL
def _sql_edits(before: Mapping[str, str], after: Mapping[str, str], columns_known: bool) -> list[Edit]:
    out: list[Edit] = []
    changed = [d for d in sorted(set(before) & set(after)) if before[d].strip() != after[d].strip()]
    per_dialect = {d: sql_edits(before[d], after[d], d, columns_known) for d in changed}
    same = len({tuple(e) for e in per_dialect.values()}) <= 1
    for dialect, edits in per_dialect.items():
        out += [(c, line if same else f"[{dialect}] {line}") for c, line in edits]
    out += [("logic", f"representation added: {d}") for d in sorted(set(after) - set(before))]
    out += [("logic", f"representation removed: {d}") for d in sorted(set(before) - set(after))]
    return out


def sql_edits(before: str, after: str, dialect: str, columns_known: bool = False) -> list[Edit]:
    """The edits from one SQL text to another, in one dialect. `columns_known`: the output
    columns are judged from declared columns, so the SQL's output names are not."""
    glot = vsql.sqlglot_dialect(dialect)
    old, new = vsql.tree(before, glot), vsql.tree(after, glot)
    if old is None or new is None:
        return [("unknown", f"{dialect} SQL: sqlglot cannot read it, so the change is not analysed")]
    fold = dialect in _FOLDS_QUOTED
    if _norm(old.copy(), fold, keep_spelling=True) == _norm(new.copy(), fold, keep_spelling=True):
        return [("cosmetic", _cosmetic_kind(old, new))]
    old, new = _norm(old, fold), _norm(new, fold)
    if old == new:
        return [("cosmetic", "identifier spelling or quoting")]
    return _query_edits(old, new, glot, "", columns_known)


def _cosmetic_kind(old: Any, new: Any) -> str:
    def comments(tree: Any) -> list[str]:
        return [c.strip() for node in tree.walk() for c in node.comments or ()]

    return "comments only" if comments(old) != comments(new) else "formatting only"


def _norm(tree: Any, fold_quoted: bool, keep_spelling: bool = False) -> Any:
    """The tree without comments; identifiers unquoted and lower-cased where that keeps their meaning."""
    from sqlglot import exp

    for node in tree.walk():
        node.comments = None
        if isinstance(node, exp.Identifier) and not keep_spelling:
            if fold_quoted or not node.quoted:
                node.set("this", node.name.lower())
            node.set("quoted", False)
    return tree


def _text(node: Any, glot: str | None) -> str:
    text = " ".join(node.sql(dialect=glot).split()) if node is not None else "(none)"
    return text if len(text) <= 120 else text[:117] + "..."


def _query_edits(old: Any, new: Any, glot: str | None, where: str, columns_known: bool) -> list[Edit]:
    """Edits between two normalised queries; `where` prefixes each line (a CTE's name)."""
    from sqlglot import exp

    if old == new:
        return []
    if isinstance(old, exp.Subquery) and isinstance(new, exp.Subquery):
        return _query_edits(old.this, new.this, glot, where, columns_known)
    if isinstance(old, exp.SetOperation) or isinstance(new, exp.SetOperation):
        if type(old) is type(new) and old.args.get("distinct") == new.args.get("distinct"):
            return (_query_edits(old.left, new.left, glot, where, columns_known)
                    + _query_edits(old.right, new.right, glot, where + "set operation's right side: ", True))
        return [("logic", f"{where}set operation: {type(old).__name__.upper()} → {type(new).__name__.upper()}")]
    if not isinstance(old, exp.Select) or not isinstance(new, exp.Select):
        return [("unknown", f"{where}the query's form changed: {_text(old, glot)} → {_text(new, glot)}")]
    out = _cte_edits(old, new, glot, where)
    out += _projection_edits(old, new, glot, where, columns_known)
    out += _source_edits(old, new, glot, where)
    for key, label in _CLAUSES.items():
        a, b = old.args.get(key), new.args.get(key)
        if a == b:
            continue
        bare = key in ("where", "having", "qualify")  # said without its keyword
        ta, tb = (_text(n.this if bare and n is not None else n, glot) for n in (a, b))
        if a is None:
            out.append(("logic", f"{where}{label} added: {tb}"))
        elif b is None:
            out.append(("logic", f"{where}{label} removed: {ta}"))
        else:
            out.append(("logic", f"{where}{label}: {ta} → {tb}"))
    handled = {"expressions", "with_", "from_", "joins", *_CLAUSES}
    for key in sorted((set(old.args) | set(new.args)) - handled):
        if old.args.get(key) != new.args.get(key) and (old.args.get(key) or new.args.get(key)):
            out.append(("unknown", f"{where}{key} changed: {_text(old.args.get(key), glot)} → "
                                   f"{_text(new.args.get(key), glot)}"))
    explained = columns_known and old.expressions != new.expressions  # the columns' own edits say it
    return out or ([] if explained else [("unknown", f"{where}the SQL changed where the analysis does not look")])


def _cte_edits(old: Any, new: Any, glot: str | None, where: str) -> list[Edit]:
    def ctes(node: Any) -> dict[str, Any]:
        w = node.args.get("with_")
        return {c.alias_or_name: c.this for c in w.expressions} if w is not None else {}

    a, b = ctes(old), ctes(new)
    out: list[Edit] = [("logic", f"{where}CTE added: {n}") for n in b if n not in a]
    out += [("logic", f"{where}CTE removed: {n}") for n in a if n not in b]
    for name in (n for n in b if n in a and a[n] != b[n]):
        inner = _query_edits(a[name], b[name], glot, f"{where}CTE {name}: ", False)
        out += [("logic" if c != "unknown" else c, line) for c, line in inner]  # its columns are not the view's
    return out


def _projection_edits(old: Any, new: Any, glot: str | None, where: str, columns_known: bool) -> list[Edit]:
    from sqlglot import exp

    pb, pa = old.expressions, new.expressions
    if pb == pa:
        return []
    stars = any(isinstance(p, exp.Star) or (isinstance(p, exp.Column) and isinstance(p.this, exp.Star))
                for p in (*pb, *pa))
    if stars and not columns_known:
        return [("unknown", f"{where}SELECT list with *: {_text_list(pb, glot)} → {_text_list(pa, glot)}; "
                            "the output columns cannot be told from the SQL")]
    nb, na = [p.alias_or_name for p in pb], [p.alias_or_name for p in pa]
    out: list[Edit] = []
    if not columns_known and not stars:
        if na[:len(nb)] == nb:
            if len(na) > len(nb):
                out.append(("additive", f"{where}columns added at the end: {', '.join(na[len(nb):])}"))
        elif len(na) == len(nb) and [_inner(p) for p in pb] == [_inner(p) for p in pa]:
            pairs = [f"{x} → {y}" for x, y in zip(nb, na, strict=True) if x != y]
            return out + [("breaking", f"{where}columns renamed: {', '.join(pairs)}")]
        else:
            removed = [n for n in nb if n not in na]
            added = [n for n in na if n not in nb]
            if removed:
                out.append(("breaking", f"{where}columns removed or renamed: {', '.join(removed)}"))
            elif [n for n in na if n in nb] != nb:
                out.append(("breaking", f"{where}columns reordered"))
            if added and not removed:  # a column before others moves them: readers by position break
                out.append(("breaking", f"{where}columns added before others: {', '.join(added)}"))
    by_name = {p.alias_or_name: p for p in pa}
    for p in pb:
        q = by_name.get(p.alias_or_name)
        if q is None or _inner(p) == _inner(q):
            continue
        out.append(_expression_edit(p.alias_or_name, _inner(p), _inner(q), glot, where, columns_known))
    return out


def _text_list(items: Sequence[Any], glot: str | None) -> str:
    return _text_join([_text(p, glot) for p in items])


def _text_join(parts: list[str]) -> str:
    text = ", ".join(parts)
    return text if len(text) <= 120 else text[:117] + "..."


def _inner(p: Any) -> Any:
    from sqlglot import exp

    return p.this if isinstance(p, exp.Alias) else p


def _expression_edit(name: str, a: Any, b: Any, glot: str | None, where: str, columns_known: bool) -> Edit:
    """One output column computed differently: a new CAST type is a retype (breaking), an
    aggregate's function or argument a logic change."""
    from sqlglot import exp

    if not columns_known:
        ta = a.args.get("to") if isinstance(a, exp.Cast) else None
        tb = b.args.get("to") if isinstance(b, exp.Cast) else None
        if tb is not None and ta != tb:
            return ("breaking", f"{where}column retyped: {name}: {_text(ta, glot) if ta else '?'} → {_text(tb, glot)}")
        if ta is not None and tb is None:
            return ("unknown", f"{where}column {name}: CAST to {_text(ta, glot)} removed, its type may change")
    agg_a, agg_b = a.find(exp.AggFunc), b.find(exp.AggFunc)
    if agg_a is not None or agg_b is not None:
        return ("logic", f"{where}aggregate changed: {name}: {_text(a, glot)} → {_text(b, glot)}")
    return ("logic", f"{where}column {name}: {_text(a, glot)} → {_text(b, glot)}")


def _source_edits(old: Any, new: Any, glot: str | None, where: str) -> list[Edit]:
    out: list[Edit] = []
    fa, fb = old.args.get("from_"), new.args.get("from_")
    if fa != fb:
        out.append(("logic", f"{where}FROM: {_source_name(fa.this if fa else None, glot)} → "
                             f"{_source_name(fb.this if fb else None, glot)}"))
    ja = {_source_name(j.this, glot): j for j in old.args.get("joins") or []}
    jb = {_source_name(j.this, glot): j for j in new.args.get("joins") or []}
    out += [("logic", f"{where}JOIN added: {t}") for t in jb if t not in ja]
    out += [("logic", f"{where}JOIN removed: {t}") for t in ja if t not in jb]
    out += [("logic", f"{where}JOIN changed: {_text(ja[t], glot)} → {_text(jb[t], glot)}")
            for t in jb if t in ja and ja[t] != jb[t]]
    return out


def _source_name(node: Any, glot: str | None) -> str:
    """A table by its name (without its alias); a subquery or function by its text."""
    from sqlglot import exp

    if isinstance(node, exp.Table) and isinstance(node.this, exp.Identifier):
        return ".".join(vsql.table_parts(node))
    return _text(node, glot)
