"""The `generated:` marker of a representation that `viewsync generate` wrote from another one.

    representations:
      - dialect: spark
        sql: SELECT ...
      - dialect: trino
        generated: {from: spark, source_digest: "sha256:...", sql_digest: "sha256:..."}
        sql: |
          SELECT ...

`from` is the dialect it was generated from, `source_digest` the digest of that SQL when it was
generated, `sql_digest` the digest of the SQL generate wrote. Comparing them with today's SQL
shows a change of the source (stale) and a hand edit of the generated SQL (edited). A
representation without the marker is written by hand: deleting the marker keeps it by hand.

Like `key`, `checks` and `tests`, the marker is not catalog state: it never enters the ViewSpec
or its digest, so generating again with an unchanged result plans as no change.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Literal

FIELD = "generated"  # the representation field this module owns

Status = Literal["fresh", "stale", "edited"]


@dataclass(frozen=True)
class Generated:
    source: str  # the dialect it was generated from (`from:`)
    source_digest: str  # digest(source SQL) when it was generated
    sql_digest: str  # digest(the SQL generate wrote)

    def to_yaml(self) -> dict[str, str]:
        return {"from": self.source, "source_digest": self.source_digest, "sql_digest": self.sql_digest}

    def status(self, source_sql: str | None, own_sql: str) -> Status:
        """`edited` when the generated SQL is not what generate wrote (a hand edit wins over a
        stale source: generate must not overwrite it), `stale` when the source SQL changed or
        is gone, else `fresh`."""
        if digest(own_sql) != self.sql_digest:
            return "edited"
        if source_sql is None or digest(source_sql) != self.source_digest:
            return "stale"
        return "fresh"


def normalise(sql: str) -> str:
    """What a digest covers: the SQL without surrounding blank space, line ends as LF and
    no trailing spaces on a line (a YAML re-indent or an editor's whitespace is no change)."""
    lines = sql.replace("\r\n", "\n").replace("\r", "\n").strip().split("\n")
    return "\n".join(line.rstrip() for line in lines)


def digest(sql: str) -> str:
    return "sha256:" + hashlib.sha256(normalise(sql).encode("utf-8")).hexdigest()


def parse(raw_view: dict[str, Any]) -> dict[str, Generated]:
    """The markers of one schema-valid view mapping: {dialect: marker}."""
    found: dict[str, Generated] = {}
    for rep in raw_view.get("representations") or []:
        mark = rep.get(FIELD)
        if isinstance(mark, dict):
            found[str(rep["dialect"])] = Generated(str(mark["from"]), str(mark["source_digest"]),
                                                   str(mark["sql_digest"]))
    return found


def without_markers(representations: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The representations as the ViewSpec takes them (the marker is not part of a view)."""
    return [{k: v for k, v in rep.items() if k != FIELD} if isinstance(rep, dict) else rep
            for rep in representations]
