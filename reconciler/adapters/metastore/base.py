"""The middle class of metastore-style catalogs (Hive Metastore, Glue).

Both keep a view as a table in one engine's format (Spark, Trino, Hive...),
read whatever format wrote it, and write the engine format the catalog's
option chooses. What they share lives here: that option, the choice of the
engine format for a write (the same in check, storable and update), the
per-view codec call with its fallback to a read-only placeholder, and the
shape of what a codec decodes. Subclasses supply the I/O and the codecs.
"""

from __future__ import annotations

import functools
from abc import abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from reconciler.adapters.base import DECODE_FAILURES, Capabilities, WritableAdapter
from reconciler.core.model import MANAGED_BY, SPEC_DIGEST, AdapterHandle, LiveView, ViewId, ViewSpec, marks_of


@dataclass
class Decoded:
    """A view as a codec read it back: spec plus ownership markers."""

    spec: ViewSpec
    format: str
    managed_by: str | None = None
    spec_digest: str | None = None
    writable: bool = True
    warnings: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Unreadable:
    """What is shown of a view no codec can read: its engine format, the dialect its
    text is probably in, the raw text and parameters (for the ownership markers)."""

    format: str
    dialect: str
    text: str
    parameters: Mapping[str, str]
    default_namespace: list[str] | None = None


def markers(params: Mapping[str, str]) -> tuple[str | None, str | None]:
    """(managed_by, spec_digest) stamped in a table's parameters."""
    return params.get(MANAGED_BY) or None, params.get(SPEC_DIGEST) or None


class MetastoreAdapter(WritableAdapter):
    """A catalog of views stored as metastore tables in engine formats.

    Invariant: `check`, `storable` and `update` all write in `engine_format_for(spec,
    live)`; `create` writes in the catalog's `engine_format`."""

    FORMAT_OPTION: ClassVar[str] = "engine_format"  # the option choosing the engine format of new views
    REWRITES_SQL: ClassVar[bool] = False  # the catalog stores some views' SQL in its own encoding
    CREATES_SENT_AHEAD: ClassVar[bool] = False  # its connections take creates ahead of their answers
    DEPRECATED_FORMAT_OPTION: ClassVar[str]  # its old name, still accepted
    ENGINE_FORMATS: ClassVar[tuple[str, ...]]  # its accepted values
    DEFAULT_FORMAT: ClassVar[str]

    def __init__(self, name: str, options: dict[str, Any]) -> None:
        super().__init__(name, options)
        new, old = options.get(self.FORMAT_OPTION), options.get(self.DEPRECATED_FORMAT_OPTION)
        if new and old and new != old:
            raise self.error(f"catalog {name!r} ({self.kind}): {self.DEPRECATED_FORMAT_OPTION} is the old name of "
                             f"{self.FORMAT_OPTION}; give only {self.FORMAT_OPTION}")
        fmt = str(new or old or self.DEFAULT_FORMAT)
        if fmt not in self.ENGINE_FORMATS:
            given = self.DEPRECATED_FORMAT_OPTION if old and not new else self.FORMAT_OPTION  # as the user wrote it
            raise self.error(f"catalog {name!r} ({self.kind}): {given} must be one of "
                             f"{', '.join(self.ENGINE_FORMATS)}, got {fmt!r}")
        self.engine_format = fmt

    @functools.cached_property
    def capabilities(self) -> Capabilities:
        # Other dialects than the engine format's travel in parameters: any dialect is storable;
        # metastores lowercase database and table names. Each subclass keeps one client per
        # writer thread, so apply may write concurrently. Built once: asked once per view.
        return Capabilities(strategy="format-aware", writable=self.WRITABLE, writable_dialects=None,
                            rewrites_sql=self.REWRITES_SQL, fold_names=True, parallel_writes=True,
                            creates_sent_ahead=self.CREATES_SENT_AHEAD)

    # ------------------------------------------------------------ engine format
    @abstractmethod
    def kept_format(self, live_format: str) -> str | None:
        """The engine format an update of a view in `live_format` keeps.

        Args:
            live_format: a LiveView.format this catalog fetched.

        Returns:
            The value of FORMAT_OPTION that writes views in that format; None when a view
            in that format is not rewritten in place.
        """

    @abstractmethod
    def format_dialects(self, fmt: str) -> tuple[str, ...]:
        """Args:
            fmt: a value of FORMAT_OPTION.

        Returns:
            The dialects whose SQL that engine format holds natively.
        """

    def engine_format_for(self, spec: ViewSpec, live: LiveView | None) -> str:
        """The engine format a write of `spec` over `live` uses: an update keeps the live
        view's format when `spec` has SQL in its dialect (the engines reading the view keep
        working), else the catalog's engine format."""
        kept = self.kept_format(live.format) if live is not None else None
        if kept is not None and any(spec.sql_for(d) for d in self.format_dialects(kept)):
            return kept
        return self.engine_format

    # ------------------------------------------------------------------ reading
    @abstractmethod
    def decode(self, view: ViewId, raw: Any) -> Decoded:
        """The view in a raw table of this catalog, through the codec of its format.

        Args:
            view: the view's id.
            raw: the table as this catalog's client returned it.

        Returns:
            The decoded view and its ownership markers.

        Raises:
            One of DECODE_FAILURES: the table cannot be read (it becomes a placeholder).
        """

    @abstractmethod
    def unreadable(self, view: ViewId, raw: Any) -> Unreadable:
        """Args:
            view: the view's id.
            raw: a table `decode` rejected.

        Returns:
            What to show of it. Never raises.
        """

    def live_view(self, view: ViewId, raw: Any, warnings: list[str], *, fingerprint: str = "",
                  native_version: str | None = None, handle: AdapterHandle | None = None) -> LiveView:
        """The LiveView of one raw table: decoded, or a read-only placeholder and a warning."""
        try:
            decoded = self.decode(view, raw)
        except DECODE_FAILURES as exc:
            shown = self.unreadable(view, raw)
            warnings.append(f"catalog {self.name!r}: view {view} ({shown.format} format) cannot be read and "
                            f"is left untouched: {exc}")
            managed_by, digest = markers(shown.parameters)
            return self.placeholder(view, shown.text, shown.dialect, shown.format, fingerprint=fingerprint,
                                    managed_by=managed_by, spec_digest=digest, native_version=native_version,
                                    handle=handle, default_namespace=shown.default_namespace)
        warnings.extend(f"{view}: {w}" for w in decoded.warnings)
        return LiveView(id=view, spec=decoded.spec, format=decoded.format, managed_by=decoded.managed_by,
                        spec_digest=decoded.spec_digest, fingerprint=fingerprint, native_version=native_version,
                        writable=decoded.writable, handle=handle, marks=marks_of(self.parameters_of(raw)))

    def parameters_of(self, raw: Any) -> Mapping[str, str]:
        """The table parameters of a raw table (where the preview marks are)."""
        params = getattr(raw, "parameters", None)
        return params if isinstance(params, Mapping) else {}
