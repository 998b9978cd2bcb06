"""The `spark:` section of viewsync.yaml: when and how the verifier runs, and (`spark.live`)
how data review's Spark reads the live catalogs (reconciler/datareview/)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class LiveCatalog:
    """What Spark needs to read one catalog (`spark.live.catalogs.<name>`)."""

    jars: tuple[str, ...] = ()
    packages: tuple[str, ...] = ()
    driver_jar: str | None = None  # jdbc: the driver's jar (default: the pinned one, cached, else Debian's)
    conf: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class LiveSettings:
    """`spark.live`: the read-only Spark of `viewsync diff` and `viewsync check`."""

    master: str | None = None  # default: spark.master
    python: str | None = None  # the interpreter that runs its driver (default: viewsync's own)
    driver_memory: str = "1g"
    conf: dict[str, str] = field(default_factory=dict)
    jvm_options: tuple[str, ...] = ()
    catalogs: dict[str, LiveCatalog] = field(default_factory=dict)


@dataclass(frozen=True)
class SparkSettings:
    verify: bool = False  # verify every plan/apply, as if --spark were given
    master: str = "local[1]"
    conf: dict[str, str] = field(default_factory=dict)
    jvm_options: tuple[str, ...] = ()
    driver_memory: str = "512m"
    class_data_sharing: bool = True  # archive JDK+Spark classes under ~/.cache/viewsync (start 2x faster)
    live: LiveSettings = field(default_factory=LiveSettings)


def parse(data: Any) -> SparkSettings:
    """Build settings from the (schema-validated) `spark:` mapping. The schema refuses conf keys
    that would connect the scratch session to a real catalog (spark.sql.catalog*, *.hive.*)."""
    if not data:
        return SparkSettings()
    opts = data.get("jvm_options") or []
    if isinstance(opts, str):
        opts = opts.split()
    return SparkSettings(
        verify=bool(data.get("verify", False)),
        master=str(data.get("master", "local[1]")),
        conf={str(k): str(v) for k, v in (data.get("conf") or {}).items()},
        jvm_options=tuple(str(o) for o in opts),
        driver_memory=str(data.get("driver_memory", "512m")),
        class_data_sharing=bool(data.get("class_data_sharing", True)),
        live=_live(data.get("live")),
    )


def _strings(value: Any) -> tuple[str, ...]:
    if not value:
        return ()
    return tuple(str(v) for v in (value.split() if isinstance(value, str) else value))


def _live(data: Any) -> LiveSettings:
    if not data:
        return LiveSettings()
    return LiveSettings(
        master=str(data["master"]) if data.get("master") else None,
        python=str(data["python"]) if data.get("python") else None,
        driver_memory=str(data.get("driver_memory", "1g")),
        conf={str(k): str(v) for k, v in (data.get("conf") or {}).items()},
        jvm_options=_strings(data.get("jvm_options")),
        catalogs={str(name): LiveCatalog(jars=_strings(c.get("jars")), packages=_strings(c.get("packages")),
                                         driver_jar=str(c["driver_jar"]) if c.get("driver_jar") else None,
                                         conf={str(k): str(v) for k, v in (c.get("conf") or {}).items()})
                  for name, c in (data.get("catalogs") or {}).items()})
