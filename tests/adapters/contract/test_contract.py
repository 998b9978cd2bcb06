"""The adapter contract (reconciler/adapters/base.py), run on every writable adapter
against its real backend: create, read back, update, drop; idempotent drop;
conflicts; views of others untouched; no perpetual diff. JDBC gets the read-only part."""

from __future__ import annotations

import pytest

from reconciler.adapters import REGISTRY, AdapterError, adapter_class
from reconciler.adapters.base import (
    Capabilities,
    ConflictError,
    LiveView,
    Marker,
    ReadOnlyAdapter,
    SchemaSnapshot,
    WritableAdapter,
    WriteContext,
)
from reconciler.core.model import PREVIEW, PREVIEW_COMMIT, PREVIEW_EXPIRES, ViewId, ViewSpec
from reconciler.plan.planner import PlanOptions, build_plan
from tests.helpers.contract import CATALOGS, NO_VERSION_CHECKS, READ_ONLY, WRITABLE_BACKENDS, Backend
from tests.helpers.specs import spec as base_spec

PROJECT = "contract"
CTX = WriteContext(actor="contract-suite")


def test_every_registered_kind_has_a_backend() -> None:
    missing = sorted(set(REGISTRY) - set(CATALOGS))
    assert not missing, (f"catalog kinds without a contract backend (CATALOGS in tests/helpers/contract.py, "
                         f"a fixture in tests/adapters/contract/conftest.py): {missing}")
    assert all(CATALOGS[kind] for kind in REGISTRY)


def test_every_registered_kind_states_its_writability_by_its_base() -> None:
    for kind in REGISTRY:
        cls = adapter_class(kind)
        assert issubclass(cls, ReadOnlyAdapter if kind in READ_ONLY else WritableAdapter), kind
        assert cls.WRITABLE is (kind not in READ_ONLY)


class _Reads:
    """The read half of the contract, for the adapters below (no catalog behind them)."""

    kind = "test"

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(strategy="managed", writable=True)

    def list_schemas(self) -> list[str]:
        return []

    def fetch(self, schema: str) -> SchemaSnapshot:
        return SchemaSnapshot("cat", schema, exists=False)


def test_a_writable_adapter_missing_a_write_cannot_be_instantiated() -> None:
    class Forgetful(_Reads, WritableAdapter):  # implements create and drop, forgets update
        def create(self, view: ViewId, spec: ViewSpec, marker: Marker, ctx: WriteContext) -> None:
            pass

        def drop(self, live: LiveView, ctx: WriteContext) -> None:
            pass

    with pytest.raises(TypeError, match="update"):
        Forgetful("cat", {})


def test_a_read_only_adapter_refuses_writes_with_its_message() -> None:
    class Archive(_Reads, ReadOnlyAdapter):
        READ_ONLY_MESSAGE = "archives are read-only in viewsync"

    a = Archive("cat", {})
    assert a.WRITABLE is False
    view = ViewId("cat", "s", "v")
    live = LiveView(id=view, spec=spec().resolved(view), format="test", writable=False)
    marker = Marker(PROJECT, live.spec.digest())
    for write in (lambda: a.create(view, live.spec, marker, CTX), lambda: a.update(live, live.spec, marker, CTX),
                  lambda: a.drop(live, CTX)):
        with pytest.raises(AdapterError) as err:
            write()
        assert str(err.value) == "catalog 'cat', view cat.s.v: archives are read-only in viewsync"


@pytest.fixture(params=WRITABLE_BACKENDS)
def backend(request: pytest.FixtureRequest) -> Backend:
    b: Backend = request.getfixturevalue(request.param)
    return b


def spec(sql: str = "SELECT 1 AS id, 'a' AS name", comment: str = "first") -> ViewSpec:
    """A view every writable kind can store: columns, Spark and Trino SQL."""
    return base_spec(sql, dialects=("spark", "trino"), comment=comment, properties={"tier": "gold"},
                     columns=[{"name": "id", "type": "bigint"}, {"name": "name", "type": "string"}])


def _snapshot(b: Backend) -> SchemaSnapshot:
    snap = b.adapter.fetch(b.schema)
    assert snap.exists
    return snap


def _plan_actions(b: Backend, desired: dict[ViewId, ViewSpec], prune: bool = False) -> list[tuple[str, str]]:
    plan = build_plan(desired, {(b.adapter.name, b.schema): _snapshot(b)}, {b.adapter.name: b.adapter},
                      PlanOptions(project=PROJECT, prune=prune, allow_mass_drop=True), "sha256:" + "0" * 64)
    assert not plan.errors, plan.errors
    return [(a.action, a.view.name) for a in plan.actions]


def _write(b: Backend, vid: ViewId, want: ViewSpec, project: str = PROJECT) -> None:
    live = _snapshot(b).find(vid.name, b.adapter.capabilities.fold_names)
    stored = b.adapter.storable(vid, want, live)
    assert b.adapter.check(vid, want, live) == []
    marker = Marker(project, stored.digest())
    if live is None:
        b.adapter.create(vid, stored, marker, CTX)
    else:
        b.adapter.update(live, stored, marker, CTX)


def test_create_read_back_update_drop(backend: Backend) -> None:
    a, vid = backend.adapter, ViewId(backend.adapter.name, backend.schema, "orders_v")
    assert a.capabilities.writable and a.WRITABLE
    first = spec()
    _write(backend, vid, first)
    live = _snapshot(backend).find(vid.name, a.capabilities.fold_names)
    assert live is not None and live.writable and live.managed_by == PROJECT
    assert live.spec.canonical() == a.storable(vid, first).canonical()  # read back as storable() predicted
    assert live.spec_digest == a.storable(vid, first).digest()
    assert _plan_actions(backend, {vid: first}) == []  # no perpetual diff

    second = spec("SELECT 2 AS id, 'b' AS name", comment="second")
    assert _plan_actions(backend, {vid: second}) == [("update", vid.name)]
    _write(backend, vid, second)
    live = _snapshot(backend).find(vid.name, a.capabilities.fold_names)
    assert live is not None and live.spec.canonical() == a.storable(vid, second, live).canonical()
    assert _plan_actions(backend, {vid: second}) == []

    a.drop(live, CTX)
    assert _snapshot(backend).find(vid.name, a.capabilities.fold_names) is None
    a.drop(live, CTX)  # idempotent: a re-run converges


def test_create_over_a_taken_name_is_a_conflict(backend: Backend) -> None:
    a, vid = backend.adapter, ViewId(backend.adapter.name, backend.schema, "taken_v")
    _write(backend, vid, spec())
    stored = a.storable(vid, spec("SELECT 3 AS id, 'c' AS name"))
    with pytest.raises(ConflictError):  # the plan saw the name free; someone took it since
        a.create(vid, stored, Marker(PROJECT, stored.digest()), CTX)


def test_creates_sent_ahead_are_answered_in_order_each_with_its_own_outcome(backend: Backend) -> None:
    """A catalog whose capabilities say `creates_sent_ahead`: three creates sent from one thread,
    the middle one over a taken name, are answered in the order sent (created, conflict,
    created) and read back as `storable` predicted. Any other catalog refuses `send_create`."""
    a = backend.adapter
    vids = [ViewId(a.name, backend.schema, f"ahead_{i}") for i in range(3)]
    _write(backend, vids[1], spec())  # taken
    stored = [a.storable(v, spec(f"SELECT {i} AS id, 'a' AS name")) for i, v in enumerate(vids)]
    if not a.capabilities.creates_sent_ahead:
        with pytest.raises(AdapterError, match="one create at a time"):
            a.send_create(vids[0], stored[0], Marker(PROJECT, stored[0].digest()), CTX)
        return
    answers = [a.send_create(v, s, Marker(PROJECT, s.digest()), CTX) for v, s in zip(vids, stored, strict=True)]
    answers[0]()
    with pytest.raises(ConflictError):
        answers[1]()
    answers[2]()
    snap = _snapshot(backend)
    for i in (0, 2):
        live = snap.find(vids[i].name, a.capabilities.fold_names)
        assert live is not None and live.spec.canonical() == stored[i].canonical()


def test_update_of_a_view_changed_since_it_was_read_is_a_conflict(backend: Backend,
                                                                 request: pytest.FixtureRequest) -> None:
    if request.node.callspec.params["backend"] in NO_VERSION_CHECKS:
        pytest.skip(NO_VERSION_CHECKS[request.node.callspec.params["backend"]])
    a, vid = backend.adapter, ViewId(backend.adapter.name, backend.schema, "raced_v")
    _write(backend, vid, spec())
    stale = _snapshot(backend).find(vid.name, a.capabilities.fold_names)
    assert stale is not None
    _write(backend, vid, spec("SELECT 4 AS id, 'd' AS name"))  # another writer wins the race
    mine = a.storable(vid, spec("SELECT 5 AS id, 'e' AS name"), stale)
    with pytest.raises(ConflictError):
        a.update(stale, mine, Marker(PROJECT, mine.digest()), CTX)


def test_views_of_others_are_listed_never_dropped(backend: Backend) -> None:
    a = backend.adapter
    theirs, ours = ViewId(a.name, backend.schema, "theirs_v"), ViewId(a.name, backend.schema, "ours_v")
    _write(backend, theirs, spec(), project="another-project")
    _write(backend, ours, spec())
    # nothing declared, pruning on: only our own view may go
    assert _plan_actions(backend, {}, prune=True) == [("drop", ours.name)]
    plan = build_plan({}, {(a.name, backend.schema): _snapshot(backend)}, {a.name: a},
                      PlanOptions(project=PROJECT, prune=True, allow_mass_drop=True), "sha256:" + "0" * 64)
    assert [(u.view.name, u.managed_by) for u in plan.unmanaged] == [(theirs.name, "another-project")]


def test_preview_marks_are_stamped_and_read_back_outside_the_spec(backend: Backend) -> None:
    a, vid = backend.adapter, ViewId(backend.adapter.name, backend.schema, "copy_v")
    stored = a.storable(vid, spec())
    marks = {PREVIEW: "pr1", PREVIEW_COMMIT: "c0ffee", PREVIEW_EXPIRES: "2030-01-01T00:00:00+00:00"}
    a.create(vid, stored, Marker(PROJECT, stored.digest(), tuple(marks.items())), CTX)
    live = _snapshot(backend).find(vid.name, a.capabilities.fold_names)
    assert live is not None and live.marks == marks
    assert live.spec.canonical() == stored.canonical()  # the marks are not properties of the view
    later = {**marks, PREVIEW_COMMIT: "beef"}
    a.update(live, stored, Marker(PROJECT, stored.digest(), tuple(later.items())), CTX)
    live = _snapshot(backend).find(vid.name, a.capabilities.fold_names)
    assert live is not None and live.marks == later
    plain = ViewId(a.name, backend.schema, "plain_v")
    _write(backend, plain, spec())
    other = _snapshot(backend).find(plain.name, a.capabilities.fold_names)
    assert other is not None and other.marks == {}


def test_schemas_are_created_once_and_dropped_only_when_empty(backend: Backend) -> None:
    a = backend.adapter
    schema = backend.schema + "__pv"
    assert a.create_schema(schema, {PREVIEW: "pv"}) is True
    inside = Backend(a, schema)
    _write(inside, ViewId(a.name, schema, "in_it"), spec())  # (a managed schema exists while it holds a view)
    assert a.create_schema(schema, {PREVIEW: "pv"}) is False  # it exists: not ours to record again
    assert a.drop_schema(schema) is False  # never with anything in it
    live = _snapshot(inside).find("in_it", a.capabilities.fold_names)
    assert live is not None
    a.drop(live, CTX)
    assert a.drop_schema(schema) is True
    assert schema not in a.list_schemas()
    if a.kind != "managed":  # (a managed schema is a name its views share: nothing is left to drop)
        assert a.drop_schema(schema) is False  # gone already


# ---------------------------------------------------------------- read-only kinds
@pytest.fixture(params=[f for kind in sorted(READ_ONLY) for f in CATALOGS[kind]])
def read_only(request: pytest.FixtureRequest) -> Backend:
    b: Backend = request.getfixturevalue(request.param)
    return b


def test_read_only_catalogs_read_and_refuse_writes(read_only: Backend) -> None:
    a = read_only.adapter
    assert not a.capabilities.writable and not a.WRITABLE
    live = _snapshot(read_only).views["v"]
    assert not live.writable and [c.name for c in live.spec.columns] == ["id", "name"]
    # a declaration matching the live view is a met expectation: no actions, no errors
    declared = live.spec.model_copy(update={"default_namespace": None})
    assert _plan_actions(read_only, {live.id: declared}) == []
    marker = Marker(PROJECT, live.spec.digest())
    for write in (lambda: a.create(ViewId(a.name, read_only.schema, "new_v"), live.spec, marker, CTX),
                  lambda: a.update(live, live.spec, marker, CTX), lambda: a.drop(live, CTX)):
        with pytest.raises(AdapterError, match="read-only") as err:
            write()
        assert a.READ_ONLY_MESSAGE in str(err.value)


@pytest.fixture(params=[f for kind, fs in CATALOGS.items() if not adapter_class(kind).KEEPS_SCHEMA_OWNER
                        for f in fs])
def ownerless(request: pytest.FixtureRequest) -> Backend:
    b: Backend = request.getfixturevalue(request.param)
    return b


def test_catalogs_without_schema_owners_say_so_with_an_adapter_error(ownerless: Backend) -> None:
    a = ownerless.adapter
    for call in (lambda: a.read_schema_owner(ownerless.schema), lambda: a.write_schema_owner(ownerless.schema, "x")):
        with pytest.raises(AdapterError, match="keep no schema owner") as err:
            call()
        assert repr(a.name) in str(err.value)
