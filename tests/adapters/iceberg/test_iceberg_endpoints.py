"""Which REST endpoints a plan's view writes need, and the one line refusing those a server does not
list in /v1/config (reconciler.adapters.iceberg.endpoints, pure)."""

from __future__ import annotations

from reconciler.adapters.iceberg import endpoints as ep
from reconciler.core.model import ViewId

# what Iceberg 1.7+ lists for views
ALL_VIEWS = [ep.LIST_VIEWS, ep.CREATE_VIEW, ep.LOAD_VIEW, ep.REPLACE_VIEW, ep.DROP_VIEW,
             "HEAD /v1/{prefix}/namespaces/{namespace}/views/{view}", "POST /v1/{prefix}/views/rename"]
A, B, C = ViewId("lake", "sales", "a"), ViewId("lake", "sales", "b"), ViewId("lake", "sales", "c")


def served_without(*hidden: str) -> frozenset[str] | None:
    return ep.offered([e for e in ALL_VIEWS if e not in hidden])


def test_a_server_listing_no_endpoints_is_assumed_to_offer_every_view_operation() -> None:
    for listed in (None, []):
        served = ep.offered(listed)
        assert served is None
        assert ep.missing(served, ep.READS) == []
        assert ep.refusal(served, [("create", A), ("update", B), ("adopt", B), ("drop", C)]) is None


def test_listed_endpoints_are_compared_whatever_their_spacing_and_method_case() -> None:
    served = ep.offered(["  delete   /v1/{prefix}/namespaces/{namespace}/views/{view} ", ep.LIST_VIEWS])
    assert served is not None and ep.DROP_VIEW in served
    assert ep.refusal(served, [("drop", A)]) is None


def test_a_write_the_server_does_not_list_is_refused_naming_the_endpoint_and_the_view() -> None:
    served = served_without(ep.DROP_VIEW)
    assert ep.refusal(served, [("create", A), ("update", B)]) is None  # a plan without a drop passes
    assert ep.refusal(served, [("create", A), ("drop", C)]) == (
        'the REST server does not offer "DELETE /v1/{prefix}/namespaces/{namespace}/views/{view}" '
        "(to drop lake.sales.c)")


def test_each_missing_endpoint_is_named_once_with_the_first_view_that_needs_it() -> None:
    served = served_without(ep.CREATE_VIEW, ep.REPLACE_VIEW)
    why = ep.refusal(served, [("create", A), ("create", B), ("create", C), ("adopt", C), ("drop", A)])
    assert why == ('the REST server does not offer '
                   '"POST /v1/{prefix}/namespaces/{namespace}/views" (to create lake.sales.a and 2 more), '
                   '"POST /v1/{prefix}/namespaces/{namespace}/views/{view}" (to adopt lake.sales.c)')
    assert "\n" not in why


def test_a_replace_needs_the_load_of_the_view_it_commits_on() -> None:
    served = served_without(ep.LOAD_VIEW)
    assert ep.missing(served, ep.READS) == [ep.LOAD_VIEW]
    why = ep.refusal(served, [("update", A), ("drop", B)])
    assert why == ('the REST server does not offer "GET /v1/{prefix}/namespaces/{namespace}/views/{view}" '
                   "(to replace lake.sales.a)")
