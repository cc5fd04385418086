"""Table names: made from file stems (sanitised, suffixed on clashes) or checked when the caller chose them."""

from __future__ import annotations

import pytest

from binder_py.errors import BinderError
from binder_py.language.table_names import RESERVED_NAMES, check_table_names, names_from_stems, variable_name


@pytest.mark.parametrize("stem, name", [
    ("orders", "orders"),
    ("Order Lines 2024", "Order_Lines_2024"),
    ("sales-q3.final", "sales_q3_final"),
    ("2024_sales", "t_2024_sales"),
    ("__private__", "private"),
    ("---", "t"),
    ("list", "list_"),        # a builtin
    ("class", "class_"),      # a keyword
    ("df", "df_"),            # what programs call the first table
    ("table", "table_"),
    ("pd", "pd_"),
    ("np", "np_"),
    ("f_col", "f_col_"),
    ("f_val", "f_val_"),
    ("printed", "printed_"),
    ("café", "café"),          # a Python identifier
])
def test_stems_become_identifiers_that_hide_nothing(stem, name):
    assert variable_name(stem) == name
    assert name.isidentifier() and name not in RESERVED_NAMES and not name.startswith("_")


def test_duplicate_stems_are_suffixed_in_order():
    assert names_from_stems(["orders", "orders", "customers", "orders"]) == ["orders", "orders_2", "customers",
                                                                            "orders_3"]
    # a sanitised name clashing with a later verbatim one
    assert names_from_stems(["a b", "a_b"]) == ["a_b", "a_b_2"]


def test_chosen_names_are_kept_when_usable():
    assert check_table_names(["orders", "customers"]) == ["orders", "customers"]
    assert check_table_names(["df", "customers"]) == ["df", "customers"]  # the first table is df anyway


@pytest.mark.parametrize("names, problem, suggestion", [
    (["orders", "df"], "what programs call the first table", "df_"),
    (["table"], "what programs call the first table", "table_"),
    (["order lines"], "not a Python identifier", "order_lines"),
    (["_hidden"], "starts with '_'", "hidden"),
    (["lambda"], "keyword", "lambda_"),
    (["pd"], "would hide a name", "pd_"),
    (["f_col"], "would hide a name", "f_col_"),
    (["sum"], "would hide a name", "sum_"),
])
def test_unusable_chosen_names_are_a_clear_error(names, problem, suggestion):
    with pytest.raises(BinderError, match=problem) as error:
        check_table_names(names)
    assert repr(suggestion) in str(error.value)


def test_non_string_names_are_refused():
    with pytest.raises(BinderError, match="must be strings"):
        check_table_names([1])
