"""Spark constructs whose meaning differs on Trino are found, with where they start, so
`viewsync generate --dialect trino` can warn at file:line:col (issue 41).
Each kind: one query that has it, and a portable neighbour that does not."""

from __future__ import annotations

import pytest
import yaml

from reconciler.plan.dialect_differences import (
    ARRAY_INDEX,
    CASE_SENSITIVITY,
    CONCAT_NULL,
    DATETIME,
    IMPLICIT_CAST,
    INTEGER_DIVISION,
    NULL_ORDERING,
    REGEX,
    Finding,
    differences,
)
from reconciler.source.yamlsrc import scalar_position


def codes(sql: str) -> list[str]:
    return [f.code for f in differences(sql)]


def only(sql: str, code: str) -> Finding:
    found = [f for f in differences(sql) if f.code == code]
    assert len(found) == 1, found
    return found[0]


# --- array indexing -------------------------------------------------------------------------

def test_an_expression_subscript_is_flagged_at_its_place() -> None:
    finding = only("SELECT items[pos] AS item FROM orders", ARRAY_INDEX)
    assert (finding.offset, finding.line, finding.col) == (7, 1, 8)
    assert finding.construct == "items[pos]"
    assert "0-based" in finding.message and "element_at(arr, i + 1)" in finding.message


def test_literal_subscripts_element_at_and_map_keys_are_flagged_try_element_at_is_not() -> None:
    assert codes("SELECT items[0] FROM t") == [ARRAY_INDEX]
    assert "literal index" in only("SELECT items[0] FROM t", ARRAY_INDEX).message
    assert "keep element_at" in only("SELECT element_at(items, 1) FROM t", ARRAY_INDEX).message
    assert "missing key" in only("SELECT attrs['colour'] FROM t", ARRAY_INDEX).message
    assert codes("SELECT try_element_at(items, 1), items FROM t") == []


# --- integer division -----------------------------------------------------------------------

def test_division_div_and_modulo_are_flagged() -> None:
    assert codes("SELECT qty / 2, qty DIV 2, qty % 2 FROM t") == [INTEGER_DIVISION] * 3
    assert "truncating in Trino" in only("SELECT qty / 2 FROM t", INTEGER_DIVISION).message


def test_other_arithmetic_is_not() -> None:
    assert codes("SELECT qty * 2 + 1 - price FROM t") == []


# --- NULL ordering --------------------------------------------------------------------------

def test_ascending_order_without_nulls_placement_is_flagged_in_order_by_and_windows() -> None:
    sql = "SELECT a, row_number() OVER (PARTITION BY g ORDER BY ts) AS n FROM t ORDER BY a"
    found = [f for f in differences(sql) if f.code == NULL_ORDERING]
    assert [f.construct for f in found] == ["ts", "a"]


def test_descending_or_explicit_nulls_placement_is_not() -> None:
    sql = "SELECT array_sort(e) FROM t ORDER BY a DESC, b NULLS FIRST, upper(c) ASC NULLS LAST, d DESC NULLS FIRST"
    assert codes(sql) == []


def test_sort_array_is_flagged_in_both_directions() -> None:
    assert codes("SELECT sort_array(xs), sort_array(xs, false) FROM t") == [NULL_ORDERING] * 2


# --- string concatenation with NULL ---------------------------------------------------------

def test_concatenation_of_columns_is_flagged() -> None:
    assert codes("SELECT concat(first, ' ', last) FROM t") == [CONCAT_NULL]
    assert codes("SELECT first || last FROM t") == [CONCAT_NULL]
    assert "skips NULL" in only("SELECT concat_ws(' ', first, last) FROM t", CONCAT_NULL).message


def test_concatenation_of_string_literals_is_not() -> None:
    assert codes("SELECT concat('a', 'b'), 'c' || 'd' FROM t") == []


# --- date, time and time zones --------------------------------------------------------------

@pytest.mark.parametrize("call, says", [
    ("date_format(ts, 'yyyy-MM-dd')", "DateTimeFormatter"),
    ("from_utc_timestamp(ts, 'Europe/Paris')", "time zone"),
    ("current_timestamp()", "TIMESTAMP(3) WITH TIME ZONE"),
    ("cast(s AS timestamp)", "milliseconds"),
    ("cast(s AS date)", "NULL"),
    ("trunc(d, 'MM')", "date_trunc('MM', d)"),
])
def test_date_time_and_zone_constructs_are_flagged_once(call: str, says: str) -> None:
    finding = only(f"SELECT {call} FROM t", DATETIME)
    assert finding.offset == 7 and says in finding.message


def test_a_date_call_inside_another_is_one_finding_and_plain_columns_are_none() -> None:
    assert codes("SELECT date_format(to_date(s), 'yyyy') FROM t") == [DATETIME]
    assert codes("SELECT d, ts, year_total FROM t") == []


# --- implicit casts -------------------------------------------------------------------------

def test_strings_against_numbers_and_date_strings_against_columns_are_flagged() -> None:
    assert codes("SELECT * FROM t WHERE '1' = 1") == [IMPLICIT_CAST]
    assert codes("SELECT * FROM t WHERE d = '2024-01-31'") == [IMPLICIT_CAST]
    assert codes("SELECT * FROM t WHERE qty IN ('1', '2')") == [IMPLICIT_CAST]
    assert codes("SELECT qty + '1' FROM t") == [IMPLICIT_CAST]


def test_typed_literals_and_word_strings_are_not() -> None:
    assert codes("SELECT * FROM t WHERE d = DATE '2024-01-31' AND status = 'open' AND qty = 1") == []


# --- case sensitivity -----------------------------------------------------------------------

def test_mixed_case_output_names_ilike_and_collate_are_flagged() -> None:
    finding = only("SELECT id AS CustomerId FROM t", CASE_SENSITIVITY)
    assert "'customerid'" in finding.message
    assert codes("SELECT * FROM t WHERE name ILIKE 'a%'") == [CASE_SENSITIVITY]


def test_lower_case_output_names_and_like_are_not() -> None:
    assert codes("SELECT id AS customer_id, Name FROM t WHERE name LIKE 'A%'") == []


# --- regular expressions --------------------------------------------------------------------

def test_regex_functions_are_flagged_with_what_differs() -> None:
    assert "Trino NULL" in only("SELECT regexp_extract(s, '(\\\\d+)', 1) FROM t", REGEX).message
    assert codes("SELECT * FROM t WHERE s RLIKE '^a'") == [REGEX]
    assert codes("SELECT split(s, ',') FROM t") == [REGEX]
    assert codes("SELECT regexp_replace(s, 'a', 'b') FROM t") == [REGEX]


def test_like_and_plain_string_functions_are_not() -> None:
    assert codes("SELECT upper(s), replace(s, 'a', 'b') FROM t WHERE s LIKE 'a%'") == []


# --- places, pairs, errors ------------------------------------------------------------------

def test_findings_come_in_text_order_with_line_and_column_of_a_multiline_query() -> None:
    sql = "\n  SELECT\n    a / b,\n    xs[i]\n  FROM t\n"
    found = differences(sql)
    assert [(f.code, f.line, f.col) for f in found] == [(INTEGER_DIVISION, 2, 5), (ARRAY_INDEX, 3, 5)]


def test_a_finding_maps_to_its_file_line_and_column_in_a_view_file() -> None:
    text = "name: v\nrepresentations:\n  - dialect: spark\n    sql: |\n      SELECT\n        xs[i] AS x\n      FROM t\n"
    node = yaml.compose(text)
    scalar = node.value[1][1].value[0].value[1][1]
    finding = only(scalar.value, ARRAY_INDEX)
    assert scalar_position(scalar, text, finding.offset) == (6, 9)


def test_an_unknown_pair_or_unreadable_sql_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="spark -> trino, not trino -> spark"):
        differences("SELECT 1", "trino", "spark")
    with pytest.raises(ValueError, match="the spark SQL cannot be read"):
        differences("SELECT FROM WHERE (")
