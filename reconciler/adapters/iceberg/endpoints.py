"""Which Iceberg REST endpoints viewsync's view operations need, and which of them a server
does not offer. Pure: no I/O.

A server lists what it serves in `/v1/config` as `endpoints` ("METHOD /v1/{prefix}/path", the
REST spec's spelling). A server that lists none (the field missing or empty) is a legacy server:
it is assumed to serve every view endpoint, as Iceberg's clients do under
`view-endpoints-supported=true`, and a missing one fails when it is called.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from reconciler.core.model import ViewId

LIST_VIEWS = "GET /v1/{prefix}/namespaces/{namespace}/views"
CREATE_VIEW = "POST /v1/{prefix}/namespaces/{namespace}/views"
LOAD_VIEW = "GET /v1/{prefix}/namespaces/{namespace}/views/{view}"
REPLACE_VIEW = "POST /v1/{prefix}/namespaces/{namespace}/views/{view}"
DROP_VIEW = "DELETE /v1/{prefix}/namespaces/{namespace}/views/{view}"

# Every read of views: a fetch lists a namespace's views and loads each one.
READS: tuple[str, ...] = (LIST_VIEWS, LOAD_VIEW)
# Per plan action: a replace loads the view first (the base of its commit).
WRITES: Mapping[str, tuple[str, ...]] = {
    "create": (CREATE_VIEW,),
    "update": (LOAD_VIEW, REPLACE_VIEW),
    "adopt": (LOAD_VIEW, REPLACE_VIEW),
    "drop": (DROP_VIEW,),
}
_VERBS = {"create": "create", "update": "replace", "adopt": "adopt", "drop": "drop"}


def normalised(endpoint: str) -> str:
    """`endpoint` as compared: the method upper-case, one space, the path as given."""
    method, _, path = endpoint.strip().partition(" ")
    return f"{method.upper()} {path.strip()}"


def offered(listed: Sequence[str] | None) -> frozenset[str] | None:
    """The endpoints a /v1/config answer lists; None when it lists none (a legacy server)."""
    if not listed:
        return None
    return frozenset(normalised(e) for e in listed)


def missing(served: frozenset[str] | None, needed: Iterable[str]) -> list[str]:
    """The `needed` endpoints the server does not offer, in order, each once."""
    if served is None:
        return []
    out: list[str] = []
    for endpoint in needed:
        if endpoint not in served and endpoint not in out:
            out.append(endpoint)
    return out


def refusal(served: frozenset[str] | None, writes: Iterable[tuple[str, ViewId]]) -> str | None:
    """Why a server with `served` endpoints cannot carry out `writes` ((action, view) pairs),
    each missing endpoint with the first view that needs it; None when it can."""
    needing: dict[str, list[str]] = {}
    for action, view in writes:
        for endpoint in missing(served, WRITES.get(action, ())):
            needing.setdefault(endpoint, []).append(f"{_VERBS[action]} {view}")
    if not needing:
        return None
    parts = []
    for endpoint, uses in needing.items():
        more = f" and {len(uses) - 1} more" if len(uses) > 1 else ""
        parts.append(f'"{endpoint}" (to {uses[0]}{more})')
    return "the REST server does not offer " + ", ".join(parts)
