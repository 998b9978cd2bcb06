"""A neutral, plain-Python description of a metastore table.

HMS (Thrift `Table`) and AWS Glue (`Table` dicts) both describe views with the
same fields; the codecs in this package read and write only this shape, and
each adapter converts it to and from its client's objects.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

VIRTUAL_VIEW = "VIRTUAL_VIEW"


class HiveColumn(NamedTuple):
    """One entry of StorageDescriptor.cols / Columns: a Hive type string."""

    name: str
    type: str
    comment: str | None = None


@dataclass
class TableDesc:
    database: str
    name: str
    table_type: str = VIRTUAL_VIEW
    view_original_text: str | None = None
    view_expanded_text: str | None = None
    parameters: dict[str, str] = field(default_factory=dict)
    columns: list[HiveColumn] = field(default_factory=list)
    owner: str | None = None
    # storage hints (Spark writes SequenceFile formats for its views); None = leave unset
    input_format: str | None = None
    output_format: str | None = None
    serde_lib: str | None = None

    @property
    def is_view(self) -> bool:
        return self.table_type.upper() == VIRTUAL_VIEW
