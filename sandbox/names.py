"""The one rule for names: which attribute names a program may use.

The same rule applies when a program writes ``obj.name``, calls ``getattr(obj,
"name")``, or hands pandas a string that pandas turns into an attribute (see
:mod:`sandbox.dispatch`).
"""
from __future__ import annotations

import string
from typing import Any

from RestrictedPython.transformer import INSPECT_ATTRIBUTES

from .outcome import PolicyError

#: ``__name__`` of the program's globals; classes/functions it defines carry it.
PROGRAM_MODULE = "sandbox_program"

#: Methods that take a function spec and turn it into look-ups or calls: handed out only in
#: their guarded form (``sandbox.dispatch.SPEC_PARAMS`` says which parameters are specs).
ENTRY_POINT_NAMES = frozenset({
    "agg", "aggregate", "apply", "transform", "filter", "pivot_table", "crosstab", "map",
    "applymap", "pipe", "combine",
})

#: Members that evaluate a string as code: refused with a hint at the alternative.
CODE_STRING_NAMES = frozenset({"eval", "query", "exec"})

#: Attribute names refused on every object.
DENIED_NAMES = CODE_STRING_NAMES | frozenset({
    # plotting / styling (imports matplotlib or a plot backend named by a string, renders files)
    "style", "plot", "plotting", "hist", "boxplot", "sparse_plot",
    # module-like members of pandas / numpy
    "io", "core", "compat", "api", "testing", "tests", "errors", "arrays",
    "tseries", "offsets", "util", "extensions", "interchange",
    "ctypeslib", "ctypes", "lib", "libs", "f2py", "distutils",
    "polynomial", "ma", "rec", "char", "strings", "fft", "linalg", "emath",
    "typing", "exceptions",
    # options / global state
    "options", "set_option", "get_option", "reset_option", "describe_option",
    "option_context", "set_eng_float_format", "show_versions", "show_config",
    "seterr", "seterrcall", "set_printoptions", "setbufsize", "set_string_function",
    # files and raw memory
    "tofile", "fromfile", "dump", "dumps", "load", "loads", "save", "savez",
    "savez_compressed", "savetxt", "loadtxt", "genfromtxt", "memmap",
    "data_as", "string_at", "frombuffer", "DataSource",
    # a SparseArray's index: its ``indices`` is a writable alias of positions pandas trusts unchecked
    # (the class of trusted codes, sandbox/codes.py)
    "sp_index",
    # introspection / interpreter internals
    "gi_frame", "gi_code", "gi_yieldfrom", "cr_frame", "cr_code",
    "cr_await", "cr_origin", "ag_frame", "ag_code", "ag_await", "tb_frame",
    "tb_next", "f_back", "f_globals", "f_locals", "f_builtins", "f_code",
    "f_trace", "co_code", "mro", "modules", "builtins", "system", "popen",
    "spawn", "fork", "import_module",
})

#: ``to_*`` members that only convert in memory.
TO_ALLOWED = frozenset({
    "to_dict", "to_list", "to_numpy", "to_string", "to_frame", "to_series",
    "to_period", "to_timestamp", "to_pydatetime", "to_pytimedelta",
    "to_datetime64", "to_timedelta64", "to_flat_index", "to_records",
    "to_numeric", "to_datetime", "to_timedelta", "to_julian_date", "to_tuples",
    "to_offset",
})

_FORMAT_NAMES = ("format", "format_map", "vformat", "get_field", "get_value")


def check_attribute_name(obj: Any, name: Any) -> None:
    """Raise PolicyError if ``obj.<name>`` is not allowed (TypeError for a non-str name)."""
    if type(name) is not str:
        raise TypeError("attribute name must be a str")
    if name.startswith("_"):
        raise PolicyError(f"access to private or dunder attribute {name!r} is not allowed")
    if name in CODE_STRING_NAMES:
        raise PolicyError(f"{name!r} evaluates a string as code and is not allowed in the sandbox; "
                          "filter with a boolean mask instead, e.g. df[df['a'] > 1]")
    if name in INSPECT_ATTRIBUTES or name in DENIED_NAMES:
        raise PolicyError(f"attribute {name!r} is not allowed in the sandbox")
    if name.startswith("read_"):
        raise PolicyError(f"attribute {name!r} reads files and is not allowed")
    if name.startswith("to_") and name not in TO_ALLOWED:
        raise PolicyError(f"attribute {name!r} writes or exports data and is not allowed")
    if name in _FORMAT_NAMES:
        if isinstance(obj, (str, string.Formatter)) or (
            isinstance(obj, type) and issubclass(obj, (str, string.Formatter))
        ):
            raise PolicyError(f"str.{name} is not allowed (use f-strings or %)")
    if name == "obj" and isinstance(obj, BaseException):
        raise PolicyError("exception attribute 'obj' is not allowed")
