"""`view_sql.sql_in`: the SQL the review's Spark evaluates for a view without a spark
representation is generated the way `viewsync generate` does it, and a view it cannot be
generated for is reported as not readable, with the reason."""

from __future__ import annotations

import pytest

from reconciler.core.model import Representation, ViewId, ViewSpec
from reconciler.datareview.view_sql import NotReadable, sql_in

VID = ViewId("c", "crm", "first_tag")


def _spec(**reps: str) -> ViewSpec:
    return ViewSpec(representations=[Representation(dialect=d, sql=s) for d, s in reps.items()])


def test_the_own_representation_is_used_as_written() -> None:
    assert sql_in(_spec(trino="SELECT 1 AS a", spark="SELECT 2 AS a"), VID, "spark") == ("SELECT 2 AS a", None)


def test_a_missing_spark_sql_is_generated_with_the_right_array_base_and_said() -> None:
    sql, note = sql_in(_spec(trino="SELECT tags[1] AS t FROM crm.profile"), VID, "spark")
    assert "tags[0]" in sql.replace(" ", "")
    assert note == "c.crm.first_tag: spark SQL generated from its trino representation by sqlglot"


def test_sql_that_cannot_be_generated_is_not_readable_with_the_reason() -> None:
    with pytest.raises(NotReadable, match=r"c\.crm\.first_tag: no trino SQL, and its spark SQL does not "
                                          r"transpile: .*"):
        sql_in(_spec(spark="SELECT * FROM t PIVOT (sum(b) FOR c IN (1, 2))"), VID, "trino")
