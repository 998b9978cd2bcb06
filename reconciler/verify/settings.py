"""The `spark:` section of viewsync.yaml: when and how the verifier runs."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class SparkSettings:
    verify: bool = False  # verify every plan/apply, as if --spark were given
    master: str = "local[1]"
    conf: dict[str, str] = field(default_factory=dict)
    jvm_options: tuple[str, ...] = ()
    driver_memory: str = "512m"
    class_data_sharing: bool = True  # archive JDK+Spark classes under ~/.cache/viewsync (start 2x faster)


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
    )
