"""Table references nothing knows, found offline: a view reads a table that is neither a
declared view nor a table of the `sources/` files kept for its catalog. A typo there would
otherwise surface only as a cascade of test-fixture errors, or in Spark's analysis.

A catalog without `sources/` files is not judged: offline, nothing says what tables it holds.
"""

from __future__ import annotations

import difflib
from collections.abc import Collection

from reconciler.core import deps
from reconciler.core import sql as vsql
from reconciler.core.model import ViewId
from reconciler.source.declarations import Declarations
from reconciler.verify.sources import SOURCES_DIR, Sources


def unknown(decl: Declarations, sources: Sources, catalogs: list[str]) -> list[str]:
    """One located warning per table reference (per view) that no declaration or sources/
    file knows, in a catalog whose tables the sources/ files keep."""
    known = {**deps.index(decl.views), **{k: None for k in sources.tables}}
    kept = {k[0] for k in sources.tables}
    out: list[str] = []
    for vid in sorted(decl.views, key=ViewId.key):
        spec = decl.views[vid]
        seen: set[tuple[str, ...]] = set()
        for j, rep in enumerate(spec.representations):
            dialect = vsql.sqlglot_dialect(rep.dialect)
            if not vsql.knows(rep.dialect):
                continue
            for ref in vsql.table_references(rep.sql, dialect) or []:
                low = tuple(p.lower() for p in ref.parts)
                if low in seen:
                    continue
                seen.add(low)
                candidates = deps.candidates(ref.parts, vid, spec, catalogs)
                if any(k in known for k in candidates) or not any(k[0] in kept for k in candidates):
                    continue
                at = next(k for k in candidates if k[0] in kept)
                files = sorted({o.split(" (")[0] for k, o in sources.origin.items() if k[:2] == at[:2]})
                where = files[0] if files else f"{SOURCES_DIR}/, which keeps catalog {at[0]!r}'s tables"
                message = (f"table {'.'.join(ref.parts)} is no declared view and not in {where}"
                           f"{_hint(at, known)}")
                out.append(str(decl.sql_problem(vid, j, ref.start, message)))
    return out


def _hint(key: tuple[str, str, str], known: Collection[tuple[str, str, str]]) -> str:
    """`: did you mean sales.refund_events?` for a near miss in the same schema."""
    names = [k[2] for k in known if k[:2] == key[:2]]
    close = difflib.get_close_matches(key[2], names, n=1, cutoff=0.75)
    return f"; did you mean {key[1]}.{close[0]}?" if close else ""
