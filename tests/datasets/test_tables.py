"""binder_py.tables: typing rules and errors for user tables."""

import numpy as np
import pandas as pd
import pytest

from binder_py.errors import TableError
from binder_py.tables import load_table, make_unique_headers, normalize_header, parse_number, prepare_table


def test_normalize_header():
    assert normalize_header("  Year\nopened ") == "Year opened"
    assert normalize_header("a \t  b") == "a b"
    assert normalize_header(3) == "3"


def test_make_unique_headers():
    assert make_unique_headers(["a", "a", "b", "a"]) == ["a", "a_2", "b", "a_3"]
    assert make_unique_headers(["a", "a", "a_2"]) == ["a", "a_3", "a_2"]
    assert make_unique_headers(["x", "y"]) == ["x", "y"]


@pytest.mark.parametrize("text, value", [
    ("3", 3), ("-3", -3), ("+3", 3), ("1,234", 1234), ("1,234,567.5", 1234567.5), ("0.5", 0.5), (".5", 0.5),
    (" 12 ", 12), ("0", 0),
    ("007", None), ("1,23", None), ("12,3456", None), ("1e5", None), ("3%", None), ("$3", None),
    ("nan", None), ("inf", None), ("", None), ("1 234", None), ("1.2.3", None), ("--1", None),
])
def test_parse_number(text, value):
    assert parse_number(text) == value


def test_column_typing():
    df = pd.DataFrame({
        "int": ["1", "1,234", "+5"],
        "intlike": ["2.0", "3", "4"],
        "float": ["1.5", "2", "-0.25"],
        "gaps": ["1", "", "3"],
        "code": ["007", "1", "2"],
        "text": ["a", "1", "2"],
        "empty": ["", "", ""],
        "date": ["2001-01-05", "2002-02-06", "2003-03-07"],
        "typed": [1.5, 2.5, 3.5],
    })
    out = prepare_table(df)
    assert str(out["int"].dtype) == "int64" and out["int"].tolist() == [1, 1234, 5]
    assert str(out["intlike"].dtype) == "int64" and out["intlike"].tolist() == [2, 3, 4]
    assert str(out["float"].dtype) == "float64" and out["float"].tolist() == [1.5, 2.0, -0.25]
    assert str(out["gaps"].dtype) == "float64" and np.isnan(out["gaps"][1]) and out["gaps"][2] == 3.0
    for name in ("code", "text", "empty", "date"):
        assert pd.api.types.is_string_dtype(out[name].dtype), name
    assert out["code"].tolist() == ["007", "1", "2"]
    assert out["typed"].tolist() == [1.5, 2.5, 3.5]
    assert list(out.index) == [0, 1, 2]


def test_a_column_of_decimals_is_typed_like_numbers():
    """pd.read_sql gives a database's NUMERIC column as Decimal objects: they are numbers, not objects whose
    sum a program answered as the text "Decimal('3.75')" and that `* 1.1` refused."""
    from decimal import Decimal

    out = prepare_table(pd.DataFrame({"price": [Decimal("1.50"), Decimal("2.25"), None],
                                      "qty": [Decimal("3"), Decimal("4"), Decimal("5")],
                                      "gap": [Decimal("1"), Decimal("NaN"), Decimal("2")],
                                      "id": [Decimal("12345678901234567890"), Decimal("1"), Decimal("2")]}))
    assert str(out["price"].dtype) == "float64" and out["price"].tolist()[:2] == [1.5, 2.25]
    assert np.isnan(out["price"][2])
    assert str(out["qty"].dtype) == "int64" and out["qty"].tolist() == [3, 4, 5]
    assert str(out["gap"].dtype) == "float64" and np.isnan(out["gap"][1])
    assert out["id"].tolist() == ["12345678901234567890", "1", "2"]  # would lose digits as a float


def test_a_decimal_with_a_huge_exponent_stays_text():
    """Decimal("1E+20000000") as fixed-point text is 20 million digits, and reading it was a bare ValueError."""
    from decimal import Decimal

    out = prepare_table(pd.DataFrame({"x": [Decimal("1E+20000000"), Decimal("2"), Decimal("Infinity")]}))
    assert out["x"].tolist() == ["1E+20000000", "2", "Infinity"]
    tiny = prepare_table(pd.DataFrame({"x": [Decimal("0.5"), Decimal("0E-40"), Decimal("1E-40")]}))
    assert str(tiny["x"].dtype) == "float64" and tiny["x"].tolist() == [0.5, 0.0, 0.0]


def test_the_answer_over_a_column_of_decimals_is_a_number():
    from decimal import Decimal

    from binder_py.language import execute

    table = prepare_table(pd.DataFrame({"item": ["a", "b"], "price": [Decimal("1.50"), Decimal("2.25")]}))
    run = execute('df["price"].sum() * 2', table, neural=None)
    assert run.ok and run.value == 7.5


def test_string_column_missing_values_become_empty_and_text_is_kept():
    out = prepare_table(pd.DataFrame({"a": [" x ", None, "y"]}))
    assert out["a"].tolist() == [" x ", "", "y"]


def test_huge_integers_stay_text():
    out = prepare_table(pd.DataFrame({"id": ["12345678901234567890123", "1"]}))
    assert out["id"].tolist() == ["12345678901234567890123", "1"]


def test_column_names():
    out = prepare_table(pd.DataFrame([[1, 2]]))
    assert list(out.columns) == ["0", "1"]
    out = prepare_table(pd.DataFrame({" a\nb ": ["1"], "": ["2"]}))
    assert list(out.columns) == ["a b", "column_2"]


@pytest.mark.parametrize("df, message", [
    (pd.DataFrame({1.5: ["a"]}), "non-string name"),
    (pd.DataFrame({None: ["a"]}), "rename the columns"),
    (pd.DataFrame([[1, 2]], columns=pd.MultiIndex.from_tuples([("a", "b"), ("a", "c")])), "MultiIndex"),
    (pd.DataFrame([["1", "2"]], columns=["a", "a"]), "duplicate column names"),
    (pd.DataFrame([["1", "2"]], columns=["a", " a "]), "duplicate column names"),
    (pd.DataFrame(), "no columns"),
    (pd.DataFrame({"a": []}), "no rows"),
    (pd.DataFrame({"a": ["1"]}, index=pd.Index(["r"], name="k")), "reset_index"),
    (pd.DataFrame({"a": ["1"]}, index=["r"]), "non-integer row index"),
])
def test_prepare_table_errors(df, message):
    with pytest.raises(TableError, match=message):
        prepare_table(df)


def test_prepare_table_not_a_dataframe():
    with pytest.raises(TableError, match="expected a pandas DataFrame"):
        prepare_table([[1, 2]])


def test_filtered_frames_are_renumbered():
    df = pd.DataFrame({"a": ["1", "2", "3"]})
    out = prepare_table(df[df["a"] != "2"])
    assert list(out.index) == [0, 1] and out["a"].tolist() == [1, 3]


def test_load_csv_tsv(tmp_path):
    p = tmp_path / "t.csv"
    p.write_text('Name,Year, Score \n"Smith, J",1990,"1,234"\nLee,1991,\n', encoding="utf-8")
    df = load_table(p)
    assert list(df.columns) == ["Name", "Year", "Score"]
    assert df["Name"].tolist() == ["Smith, J", "Lee"]
    assert df["Year"].tolist() == [1990, 1991]
    assert df["Score"].iloc[0] == 1234.0 and np.isnan(df["Score"].iloc[1])
    t = tmp_path / "t.TSV"
    t.write_text("a\tb\nNA\t1\n", encoding="utf-8")
    df = load_table(t)
    assert df["a"].tolist() == ["NA"] and df["b"].tolist() == [1]   # "NA" is text, not missing


def test_load_parquet_and_excel(tmp_path):
    df = pd.DataFrame({"name": ["a", "b"], "n": [1, 2], "x": [1.5, None]})
    df.to_parquet(tmp_path / "t.parquet")
    out = load_table(tmp_path / "t.parquet")
    assert out["name"].tolist() == ["a", "b"] and out["n"].tolist() == [1, 2] and out["x"].iloc[0] == 1.5
    df.to_excel(tmp_path / "t.xlsx", index=False)
    out = load_table(tmp_path / "t.xlsx")
    assert out["name"].tolist() == ["a", "b"] and out["n"].tolist() == [1, 2]


@pytest.mark.parametrize("name, content, message", [
    ("missing.csv", None, "no such file"),
    ("t.json", "{}", "accepted extensions are .csv"),
    ("noext", "a,b", "no extension"),
    ("empty.csv", "", "the file is empty"),
    ("blank.csv", "\n\n", "empty"),
    ("header.csv", "a,b\n", "no data rows"),
    ("dup.csv", "a,b,a\n1,2,3\n", "duplicate column names 'a'"),
    ("dup2.csv", "a, a \n1,2\n", "duplicate column names"),
    ("ragged.csv", "a,b\n1,2\n1,2,3\n", "same number of fields"),
    ("latin1.csv", b"name\ncaf\xe9\n", "not UTF-8"),
    ("garbled.xlsx", b"this is not a zip file", "cannot read the file as an Excel workbook"),
    ("garbled.parquet", b"PAR1 nonsense", "cannot read the file as Parquet"),
    ("old.xls", b"\xd0\xcf\x11\xe0 not really", "xls"),
])
def test_load_table_errors(tmp_path, name, content, message):
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(TableError, match=message) as info:
        load_table(path)
    assert name in str(info.value) or "t.json" in name


def test_load_table_directory(tmp_path):
    d = tmp_path / "d.csv"
    d.mkdir()
    with pytest.raises(TableError, match="directory"):
        load_table(d)


@pytest.mark.parametrize("name, content, message", [
    ("semicolons.csv", "name;score;city\nann;3,5;Paris\nbob;5;Lyon\n",
     r"separated by semicolons.*sep=';', decimal=','"),
    ("tabs.csv", "name\tscore\nann\t3\n", r"separated by tabs.*rename it to \.tsv"),
    ("commas.tsv", "name,score\nann,3\n", r"separated by commas.*rename it to \.csv"),
])
def test_a_file_with_another_delimiter_is_refused_not_read_as_one_column(tmp_path, name, content, message):
    """A semicolon "CSV" (a spreadsheet's export in many locales) loaded as ONE column named
    'name;score;city', and every question about it went wrong without a word."""
    path = tmp_path / name
    path.write_text(content, encoding="utf-8")
    with pytest.raises(TableError, match=message):
        load_table(path)


def test_a_real_one_column_table_still_loads(tmp_path):
    path = tmp_path / "notes.csv"
    path.write_text("note\nbuy milk; eggs\nx\n", encoding="utf-8")  # a ';' in a cell, none in the header
    assert load_table(path)["note"].tolist() == ["buy milk; eggs", "x"]


def test_an_unnamed_column_does_not_take_the_name_of_a_named_one():
    """A second column without a name beside one named 'column_2' was refused: "the table has duplicate
    column names: 'column_2'", a name the table has once."""
    table = prepare_table(pd.DataFrame([[1, 2, 3]], columns=["column_2", "", "column_2_2"]))
    assert list(table.columns) == ["column_2", "column_2_3", "column_2_2"]
    assert list(prepare_table(pd.DataFrame([[1, 2]], columns=["", "b"])).columns) == ["column_1", "b"]


def test_a_parquet_files_named_index_is_kept_as_columns(tmp_path):
    """df.set_index("name").to_parquet(...) stores the names as the index; load_table dropped them
    without a word, so questions about names had nothing to read."""
    df = pd.DataFrame({"name": ["x", "y"], "year": [2001, 2002], "n": [1, 2]})
    df.set_index("name").to_parquet(tmp_path / "one.parquet")
    assert load_table(tmp_path / "one.parquet").to_dict("list") == {"name": ["x", "y"], "year": [2001, 2002],
                                                                   "n": [1, 2]}
    df.set_index(["name", "year"]).to_parquet(tmp_path / "two.parquet")
    assert list(load_table(tmp_path / "two.parquet").columns) == ["name", "year", "n"]
    df.to_parquet(tmp_path / "numbered.parquet")  # an unnamed index 0, 1, 2, ... is only row numbers
    assert list(load_table(tmp_path / "numbered.parquet").columns) == ["name", "year", "n"]
    # any other whole numbers may be data (years, ids), and cannot be told from the row numbers a filtered
    # table kept: they were dropped without a word; they are kept as a column
    df.iloc[[1]].to_parquet(tmp_path / "filtered.parquet")
    assert list(load_table(tmp_path / "filtered.parquet").columns) == ["index", "name", "year", "n"]
    pd.DataFrame({"sales": [5, 9]}, index=[2019, 2020]).to_parquet(tmp_path / "years.parquet")
    assert load_table(tmp_path / "years.parquet").to_dict("list") == {"index": [2019, 2020], "sales": [5, 9]}


@pytest.mark.parametrize("save, kind", [
    (lambda df, path: df.to_excel(path, index=False), r"an Excel workbook \(\.xlsx\) or another zip archive, not "
                                                      r"\.csv text; if it is, give it the extension \.xlsx"),
    (lambda df, path: df.to_parquet(path), r"a Parquet file, not \.csv text; if it is, give it the extension \.parquet"),
])
def test_a_workbook_or_parquet_file_named_csv_says_what_it_is(tmp_path, save, kind):
    """A workbook saved as (or renamed to) table.csv was refused with "the file is not UTF-8 text; save it as
    UTF-8", which sent its reader to re-encode a binary file."""
    path = tmp_path / "table.csv"
    save(pd.DataFrame({"a": [1, 2]}), path)
    with pytest.raises(TableError, match=f"table.csv: the file is {kind}"):
        load_table(path)
    path.write_bytes("a\nà\n".encode("latin-1"))
    with pytest.raises(TableError, match="the file is not UTF-8 text; save it as UTF-8"):
        load_table(path)


def test_a_parquet_files_unnamed_index_of_labels_is_kept_as_a_column(tmp_path):
    """A time series saved with its dates as an unnamed index (or a table with row names) lost them without
    a word: the table had no dates left to answer "which month sold most?" about."""
    series = pd.DataFrame({"sales": [5, 9]}, index=pd.to_datetime(["2024-01-01", "2024-02-01"]))
    series.to_parquet(tmp_path / "series.parquet")
    assert load_table(tmp_path / "series.parquet").to_dict("list") == {"index": ["2024-01-01", "2024-02-01"],
                                                                      "sales": [5, 9]}
    pd.DataFrame({"n": [1, 2]}, index=["alice", "bob"]).to_parquet(tmp_path / "names.parquet")
    assert load_table(tmp_path / "names.parquet")["index"].tolist() == ["alice", "bob"]
    pd.DataFrame({"index": [1, 2]}, index=["alice", "bob"]).to_parquet(tmp_path / "clash.parquet")
    with pytest.raises(TableError, match="unnamed index of labels and a column named 'index'"):
        load_table(tmp_path / "clash.parquet")


def test_blank_rows_of_a_workbook_are_skipped_like_blank_lines_of_a_csv(tmp_path):
    """A sheet whose first row is blank read with the header column_1, column_2 and the real header
    and numbers as text rows (so df["n"].sum() concatenated); a blank row in the middle became a row
    of missing values."""
    import openpyxl

    book = openpyxl.Workbook()
    for row in ([None, None], ["name", "n"], ["a", 1], [None, None], ["b", 2]):
        book.active.append(row)
    book.save(tmp_path / "t.xlsx")
    out = load_table(tmp_path / "t.xlsx")
    assert list(out.columns) == ["name", "n"] and out["name"].tolist() == ["a", "b"] and out["n"].tolist() == [1, 2]


@pytest.mark.parametrize("suffix, sep", [(".csv", ","), (".tsv", "\t")])
def test_lines_of_separators_alone_are_skipped_like_blank_lines(tmp_path, suffix, sep):
    """A spreadsheet's CSV export ends with ',,' lines for the empty rows under the table: they were
    rows of NaN, so len(df) counted them and the whole numbers of "n" became floats."""
    path = tmp_path / f"t{suffix}"
    path.write_text(sep.join(["", ""]) + "\n" + "\n".join(sep.join(r) for r in
                    (["name", "n"], ["a", "1"], ["", ""], ["b", "2"], ["", ""], ["", ""])) + "\n")
    out = load_table(path)
    assert list(out.columns) == ["name", "n"] and out["name"].tolist() == ["a", "b"]
    assert out["n"].tolist() == [1, 2] and str(out["n"].dtype) == "int64"


def test_a_json_table_says_how_to_read_it_not_to_rename_it(tmp_path):
    """`table.json` was told "rename the file or convert it to CSV": renamed, JSON reads as CSV."""
    path = tmp_path / "table.json"
    path.write_text('[{"a": 1}]')
    with pytest.raises(TableError, match=r"convert it to CSV \(pd\.read_json\(path\)\.to_csv\('table\.csv', "
                                         r"index=False\)\) or, in Python, pass the DataFrame pd\.read_json\(path\) gives"):
        load_table(path)


def test_an_empty_first_sheet_says_only_the_first_sheet_is_read(tmp_path):
    """A workbook whose table is on its second sheet was refused with "the file has no header row",
    which does not say that only the first sheet is read, nor which sheet holds the table."""
    with pd.ExcelWriter(tmp_path / "book.xlsx") as writer:
        pd.DataFrame().to_excel(writer, sheet_name="Notes")
        pd.DataFrame({"x": [1, 2]}).to_excel(writer, sheet_name="Data", index=False)
    with pytest.raises(TableError, match=r"the first sheet \('Notes'\) is empty, and binder-py reads only the "
                                         r"first sheet.*'Notes', 'Data'.*sheet_name='Data'"):
        load_table(tmp_path / "book.xlsx")
    with pd.ExcelWriter(tmp_path / "one.xlsx") as writer:
        pd.DataFrame().to_excel(writer, sheet_name="Only")
    with pytest.raises(TableError, match="one.xlsx: the sheet is empty"):
        load_table(tmp_path / "one.xlsx")


def test_a_first_sheet_with_only_a_title_says_only_the_first_sheet_is_read(tmp_path):
    """A report's cover sheet holding its title, the table on the next sheet, was refused with "the table
    has a header but no data rows; add at least one row", about a table of many rows."""
    with pd.ExcelWriter(tmp_path / "report.xlsx") as writer:
        pd.DataFrame({"Quarterly report": []}).to_excel(writer, sheet_name="Cover", index=False)
        pd.DataFrame({"x": [1, 2]}).to_excel(writer, sheet_name="Data", index=False)
    with pytest.raises(TableError, match=r"the first sheet \('Cover'\) holds one row and nothing under it, and "
                                         r"binder-py reads only the first sheet.*sheet_name='Data'"):
        load_table(tmp_path / "report.xlsx")
    with pd.ExcelWriter(tmp_path / "alone.xlsx") as writer:
        pd.DataFrame({"x": []}).to_excel(writer, sheet_name="Only", index=False)
    with pytest.raises(TableError, match="alone.xlsx: the table has a header but no data rows"):
        load_table(tmp_path / "alone.xlsx")


def test_date_columns_of_a_workbook_or_parquet_file_read_as_dates(tmp_path):
    """A workbook's date column read "2020-01-01 00:00:00" in every cell (pandas' text for the
    timestamp), shown so in prompts and never equal to "2020-01-01" in a program; it now reads as
    the dates. A column with a time of day keeps it, and so does a CSV, read as written."""
    df = pd.DataFrame({"event": ["a", "b"], "day": pd.to_datetime(["2020-01-01", "2021-03-04"]),
                       "at": pd.to_datetime(["2020-01-01 10:30", "2021-03-04 00:00"])})
    df.to_excel(tmp_path / "t.xlsx", index=False)
    df.to_parquet(tmp_path / "t.parquet")
    for name in ("t.xlsx", "t.parquet"):
        table = load_table(tmp_path / name)
        assert table["day"].tolist() == ["2020-01-01", "2021-03-04"], name
        assert table["at"].tolist() == ["2020-01-01 10:30:00", "2021-03-04 00:00:00"], name
    (tmp_path / "t.csv").write_text("event,day\na,2020-01-01 00:00:00\n")
    assert load_table(tmp_path / "t.csv")["day"].tolist() == ["2020-01-01 00:00:00"]


def test_a_files_numbers_with_cells_marked_missing_read_as_numbers(tmp_path):
    """A box-office column holding numbers and one 'N/A' stayed text: the program
    df[...]["Box office ($M)"].max() compared text and answered 'N/A' (seen with the embedded model).
    Cells pandas reads as missing are NaN in an otherwise numeric column; other columns keep them."""
    path = tmp_path / "films.csv"
    path.write_text("title,box office,country,code\nA,12.5,NA,N/A\nB,N/A,FR,x1\nC,NaN,NA,x2\nD,7,null,x3\n")
    df = load_table(path)
    assert str(df["box office"].dtype) == "float64" and df["box office"].max() == 12.5
    assert df["box office"].isna().tolist() == [False, True, True, False]
    assert df["country"].tolist() == ["NA", "FR", "NA", "null"] and df["code"].tolist() == ["N/A", "x1", "x2", "x3"]
    all_missing = tmp_path / "gaps.csv"
    all_missing.write_text("name,n\na,N/A\nb,NA\n")
    assert load_table(all_missing)["n"].tolist() == ["N/A", "NA"]  # no number in the column: text as written
