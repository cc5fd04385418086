"""In-context exemplars and instructions for program-writing prompts, read from ``prompts/parse/``.

Layout (see ``prompts/README.md``)::

    prompts/parse/<task>/instruction.txt          the instruction that opens the prompt
    prompts/parse/<task>/instruction_python.txt   optional: the instruction for mode "python"
    prompts/parse/<task>/exemplars.jsonl          one exemplar (JSON object) a line

Loads are cached (the files are package data and do not change while running).
Every problem is a :class:`~binder_py.errors.BinderError` naming the file and
line and what to fix.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from importlib import resources
from typing import Any

import pandas as pd

from binder_py.errors import BinderError

__all__ = [
    "Exemplar",
    "ExemplarTable",
    "NEURAL_FUNCTIONS",
    "available_tasks",
    "load_exemplars",
    "load_instruction",
    "parse_exemplar_lines",
    "program_uses_neural",
    "clear_caches",
]

NEURAL_FUNCTIONS = frozenset({"f_col", "f_val"})
_REQUIRED = ("id", "columns", "rows", "question", "program")


def program_uses_neural(program: str) -> bool:
    """True when the program calls ``f_col(...)`` or ``f_val(...)`` (checked on the syntax tree).

    A name inside a string or a comment does not count. A program that does
    not parse is checked by substring as a fallback (``"f_col("`` / ``"f_val("``).
    """
    try:
        tree = ast.parse(program)
    except SyntaxError:
        return any(f"{name}(" in program for name in NEURAL_FUNCTIONS)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id in NEURAL_FUNCTIONS:
                return True
            if isinstance(func, ast.Attribute) and func.attr in NEURAL_FUNCTIONS:
                return True
    return False


def _typed_table(columns: tuple[str, ...], rows: tuple[tuple[str, ...], ...]) -> pd.DataFrame:
    from binder_py.tables import prepare_table

    return prepare_table(pd.DataFrame([list(r) for r in rows], columns=list(columns), dtype=object))


def _check_cells(data: dict[str, Any], where: str = "") -> tuple[tuple[str, ...], tuple[tuple[str, ...], ...]]:
    columns = data.get("columns")
    if not isinstance(columns, list) or not columns or not all(isinstance(c, str) for c in columns):
        raise ValueError(f"{where}field 'columns' must be a non-empty list of strings")
    if len(set(columns)) != len(columns):
        raise ValueError(f"{where}field 'columns' has duplicate names")
    rows = data.get("rows")
    if not isinstance(rows, list) or not rows:
        raise ValueError(f"{where}field 'rows' must be a non-empty list of rows")
    for i, row in enumerate(rows):
        if not isinstance(row, list) or len(row) != len(columns):
            raise ValueError(f"{where}row {i} must be a list of {len(columns)} cells (one per column)")
        if not all(isinstance(cell, str) for cell in row):
            raise ValueError(f"{where}row {i}: every cell must be a string (write numbers as text, e.g. \"41\")")
    return tuple(columns), tuple(tuple(r) for r in rows)


def _check_name(name: Any, where: str) -> str:
    if not isinstance(name, str) or not name.isidentifier() or name.startswith("_") or name in ("df", "table"):
        raise ValueError(f"{where} must be a Python identifier other than df and table (programs use it), "
                         f"got {name!r}")
    return name


@dataclass(frozen=True)
class ExemplarTable:
    """A table of a several-table exemplar after its first: its name, columns and rows."""

    name: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]

    @cached_property
    def table(self) -> pd.DataFrame:
        return _typed_table(self.columns, self.rows)


@dataclass(frozen=True)
class Exemplar:
    """One in-context exemplar: a small table (or several), a question (or statement) and its program.

    A several-table exemplar names its first table (``name``) and lists the others in
    ``others``; its program sees every table by name and the first also as ``df``.
    """

    id: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    question: str
    program: str
    title: str = ""
    answer: Any = None
    oracle: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    name: str = ""
    others: tuple[ExemplarTable, ...] = ()

    @property
    def several_tables(self) -> bool:
        return bool(self.others)

    @cached_property
    def tables(self) -> dict[str, pd.DataFrame]:
        """Every table by name, the first first (empty for a one-table exemplar)."""
        if not self.others:
            return {}
        return {self.name: self.table, **{t.name: t.table for t in self.others}}

    @property
    def uses_neural(self) -> bool:
        """Whether the program calls the neural API (``f_col``/``f_val``); see :func:`program_uses_neural`."""
        return program_uses_neural(self.program)

    @cached_property
    def table(self) -> pd.DataFrame:
        """The exemplar's table typed as a program sees it (:func:`binder_py.tables.prepare_table`)."""
        return _typed_table(self.columns, self.rows)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Exemplar:
        """Build and validate an exemplar from a parsed JSON object; raises ``ValueError`` with the reason."""
        if not isinstance(data, dict):
            raise ValueError(f"expected a JSON object, got {type(data).__name__}")
        missing = [k for k in _REQUIRED if k not in data]
        if missing:
            raise ValueError(f"missing field(s) {', '.join(missing)} (required: {', '.join(_REQUIRED)})")
        for key in ("id", "question", "program"):
            if not isinstance(data[key], str) or not data[key].strip():
                raise ValueError(f"field {key!r} must be a non-empty string")
        title = data.get("title", "")
        if not isinstance(title, str):
            raise ValueError("field 'title' must be a string")
        columns, rows = _check_cells(data)
        name, others = _other_tables(data)
        program = data["program"]
        if any(not line.strip() for line in program.strip("\n").split("\n")):
            raise ValueError("field 'program' contains a blank line (programs never contain one: "
                             "generation stops at the first blank line)")
        try:
            ast.parse(program)
        except SyntaxError as error:
            raise ValueError(f"field 'program' is not valid Python: {error.msg} (program line {error.lineno})") from None
        oracle = data.get("oracle") or {}
        if not isinstance(oracle, dict):
            raise ValueError("field 'oracle' must be an object")
        return cls(id=data["id"], columns=columns, rows=rows,
                   question=data["question"], program=program.strip("\n"), title=title,
                   answer=data.get("answer"), oracle=oracle, name=name, others=others)


def _other_tables(data: dict[str, Any]) -> tuple[str, tuple[ExemplarTable, ...]]:
    """``name`` (the first table's) and ``tables`` (the others: name, columns, rows) of a
    several-table exemplar; both absent for a one-table exemplar."""
    if "tables" not in data:
        if "name" in data:
            raise ValueError("field 'name' names the first of several tables; add the others in 'tables'")
        return "", ()
    name = _check_name(data.get("name"), "field 'name' (the first table's name)")
    tables = data["tables"]
    if not isinstance(tables, list) or not tables:
        raise ValueError("field 'tables' must be a non-empty list of {\"name\", \"columns\", \"rows\"} objects")
    others: list[ExemplarTable] = []
    for i, other in enumerate(tables):
        if not isinstance(other, dict):
            raise ValueError(f"tables[{i}] must be an object with name, columns and rows")
        other_name = _check_name(other.get("name"), f"tables[{i}].name")
        if other_name in [name, *(t.name for t in others)]:
            raise ValueError(f"tables[{i}].name {other_name!r} is taken by another table")
        others.append(ExemplarTable(other_name, *_check_cells(other, f"tables[{i}]: ")))
    return name, tuple(others)


def parse_exemplar_lines(lines: Iterable[str], source: str = "<exemplars>") -> list[Exemplar]:
    """Parse JSON-lines exemplar text (blank lines skipped); errors name ``source`` and the line number."""
    exemplars: list[Exemplar] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            data = json.loads(line)
        except json.JSONDecodeError as error:
            raise BinderError(f"{source}, line {number}: not valid JSON ({error.msg}, column {error.colno}); "
                              "each line must be one JSON object") from None
        try:
            exemplar = Exemplar.from_dict(data)
        except ValueError as error:
            raise BinderError(f"{source}, line {number}: malformed exemplar: {error}") from None
        if exemplar.id in seen:
            raise BinderError(f"{source}, line {number}: duplicate exemplar id {exemplar.id!r} "
                              f"(first on line {seen[exemplar.id]}); ids must be unique")
        seen[exemplar.id] = number
        exemplars.append(exemplar)
    return exemplars


def _parse_root():
    return resources.files("prompts") / "parse"


@lru_cache(maxsize=1)
def _tasks() -> tuple[str, ...]:
    root = _parse_root()
    try:
        entries = list(root.iterdir())
    except (FileNotFoundError, NotADirectoryError):
        return ()
    return tuple(sorted(e.name for e in entries
                        if e.is_dir() and ((e / "exemplars.jsonl").is_file() or (e / "instruction.txt").is_file())))


def available_tasks() -> list[str]:
    """The tasks with prompt files under ``prompts/parse/`` (e.g. ``analyst``, ``tabfact``, ``wikitq``)."""
    return list(_tasks())


def _check_task(task: str) -> None:
    if task not in _tasks():
        known = ", ".join(_tasks()) or "none installed"
        raise BinderError(f"unknown task {task!r}; known tasks: {known}")


def _task_file(task: str, name: str):
    _check_task(task)
    path = _parse_root() / task / name
    if not path.is_file():
        raise BinderError(f"prompts/parse/{task}/{name} is missing; reinstall binder-py or add the file")
    return path


@lru_cache(maxsize=None)
def _load_exemplars(task: str) -> tuple[Exemplar, ...]:
    path = _task_file(task, "exemplars.jsonl")
    text = path.read_text(encoding="utf-8")
    return tuple(parse_exemplar_lines(text.splitlines(), source=f"prompts/parse/{task}/exemplars.jsonl"))


def load_exemplars(task: str) -> list[Exemplar]:
    """The exemplars of ``task`` in file order (cached; a new list each call)."""
    return list(_load_exemplars(task))


@lru_cache(maxsize=None)
def load_instruction(task: str, mode: str = "binder") -> str:
    """The instruction of ``task`` (stripped).

    For ``mode="python"`` this is ``instruction_python.txt`` when the task has
    one, else ``instruction.txt`` followed by the note in
    ``prompts/templates/python_mode_note.txt`` (no neural calls available).
    """
    if mode == "python":
        _check_task(task)
        special = _parse_root() / task / "instruction_python.txt"
        if special.is_file():
            return special.read_text(encoding="utf-8").strip()
        from binder_py.prompting.templates import load_template

        base = _task_file(task, "instruction.txt").read_text(encoding="utf-8").strip()
        return base + "\n" + load_template("python_mode_note").strip()
    return _task_file(task, "instruction.txt").read_text(encoding="utf-8").strip()


def clear_caches() -> None:
    """Forget cached files (for tests and for editing prompt files in a running session)."""
    _tasks.cache_clear()
    _load_exemplars.cache_clear()
    load_instruction.cache_clear()
