"""Methods of objects from modules that are not vetted are not callable (red team 8).

A program may hold such objects: a time stamp's ``tz`` is a ``zoneinfo.ZoneInfo``, an Arrow
column's ``dtype.pyarrow_dtype`` a ``pyarrow.DataType``. Their methods were callable
(the value check vetted a bound method by its name only), and nobody had read them:
``ts.tz.from_file(f)`` reads ``f.read()`` (a program object's method) as a TZif file, and
CPython 3.11's C reader accepts a transition index equal to the number of its types, one past
its table: the zone then reads object pointers out of bounds (plain CPython dies with SIGSEGV on
``datetime(..., tzinfo=z).utcoffset()``). The value check now refuses a method whose object
(or class) comes from a module that is not vetted, by every route.
"""
import pytest

TZIF = (
    "def be32(n):\n"
    "    return chr(n // 16777216) + chr((n // 65536) % 256) + chr((n // 256) % 256) + chr(n % 256)\n"
    "hdr = 'TZif' + chr(0) * 16 + be32(0) + be32(0) + be32(0) + be32(4) + be32(1) + be32(4)\n"
    "body = be32(0) + be32(1000) + be32(2000) + be32(3000) + chr(0) + chr(1) + chr(0) + chr(0)\n"
    "body = body + be32(0) + chr(0) + chr(0) + 'UTC' + chr(0)\n"
    "class F:\n"
    "    def __init__(self, d):\n"
    "        self.d = d\n"
    "        self.pos = 0\n"
    "    def read(self, n=-1):\n"
    "        n = len(self.d) - self.pos if n is None or n < 0 else n\n"
    "        out = self.d[self.pos:self.pos + n]\n"
    "        self.pos = self.pos + n\n"
    "        return out\n"
    "tz = pd.Timestamp('2020-01-01', tz='Europe/Paris').tz\n"
)

ATTACKS = [
    ("zoneinfo_from_file", TZIF + "import datetime\nz = tz.from_file(F((hdr + body).encode('latin-1')))\n"
                                  "datetime.datetime(1970, 1, 1, 0, 25, tzinfo=z).utcoffset()"),
    ("zoneinfo_from_file_getattr", TZIF + "getattr(tz, 'from_file')"),
    ("zoneinfo_no_cache", TZIF + "tz.no_cache('UTC')"),
    ("zoneinfo_clear_cache", TZIF + "tz.clear_cache()"),
    ("zoneinfo_method_in_map", TZIF + "list(map(tz.tzname, [None]))"),
    ("zoneinfo_apply", TZIF + "pd.Series([tz]).apply(lambda t: t.no_cache('UTC'))"),
    ("arrow_datatype", "pd.Series([1], dtype='int64[pyarrow]').dtype.pyarrow_dtype.field"),
    ("arrow_timestamp_type", "pd.Series([pd.Timestamp('2020')]).astype('timestamp[ns][pyarrow]')"
                             ".dtype.pyarrow_dtype.equals"),
    ("timedelta_components", "pd.Timedelta(1).components.count"),
]


@pytest.mark.parametrize("name,program", ATTACKS, ids=[a[0] for a in ATTACKS])
def test_methods_of_unvetted_objects_are_refused(sb, name, program):
    outcome = sb.run(program)
    assert outcome.error is not None and outcome.error.kind == "policy", outcome.error or outcome.value
    assert "not vetted" in outcome.error.message


def test_such_objects_can_still_be_held_and_passed(sb):
    program = (
        "ts = pd.Timestamp('2020-06-01 12:00', tz='Europe/Paris')\n"
        "tz = ts.tz\n"
        "u = pd.Timestamp('2020-06-01 10:00', tz='UTC').tz_convert(tz)\n"
        "s = pd.Series([1, 2], dtype='int64[pyarrow]')\n"
        "[str(tz), u == ts, str(s.dtype.pyarrow_dtype), pd.Timedelta('1 day 2h').components.hours,\n"
        " 'a,b'.split(','), {'k': 1}.get('k'), [3, 1].index(1), (1, 2).count(1)]"
    )
    outcome = sb.run(program)
    assert outcome.ok, outcome.error
    assert outcome.value == ["Europe/Paris", True, "int64", 2, ["a", "b"], 1, 1, 1]
