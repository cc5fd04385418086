"""Parse and validate a Binder-Python program; find its neural call sites with exact spans.

Neural call forms (see docs/LANGUAGE.md):

* ``f_col(question, context)`` and ``f_val(question, context)``;
* ``qa_map(table, question[, columns])`` and ``qa_ans(table, question[, columns])``;
* a bare ``f(question, context)``, resolved to ``f_col`` or ``f_val`` by position.
"""

from __future__ import annotations

import ast
import threading
from dataclasses import asdict, dataclass, field

import asttokens

from binder_py.errors import ProgramError

#: the name of the trusted worker-side function every neural call is rewritten to
BRIDGE_NAME = "binder_neural_call"
#: the parent-side callback the bridge calls through the sandbox
CALLBACK_NAME = "binder_neural"
#: the trusted worker-side function a comparison with the text yes/no is rewritten to
#: (:mod:`binder_py.language.yes_no_text`)
YES_NO_COMPARE_NAME = "binder_yes_no_compare"
#: the names a program may not mention: the rewrite's and the sandbox's own
INTERNAL_NAMES = (BRIDGE_NAME, CALLBACK_NAME, YES_NO_COMPARE_NAME)

CORE_FORMS = ("f_col", "f_val")
COMPAT_FORMS = ("f", "qa_map", "qa_ans")
NEURAL_FORMS = CORE_FORMS + COMPAT_FORMS
KIND_OF_FORM = {"f_col": "col", "f_val": "val", "qa_map": "col", "qa_ans": "val"}

# (positional parameter names, number required)
_SIGNATURES = {
    "f_col": (("question", "context"), 2),
    "f_val": (("question", "context"), 2),
    "f": (("question", "context"), 2),
    "qa_map": (("table", "question", "columns"), 2),
    "qa_ans": (("table", "question", "columns"), 2),
}


@dataclass(frozen=True)
class CallSite:
    """One neural call in the program text. ``span`` is ``(start, end)`` character offsets
    into the program; ``line``/``end_line`` are 1-based, ``col``/``end_col`` 0-based characters."""

    id: int
    kind: str  # "col" | "val"
    name: str  # the form as written: f_col, f_val, f, qa_map, qa_ans
    span: tuple[int, int]
    line: int
    col: int
    end_line: int
    end_col: int
    text: str
    parent_site: int | None = None

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class ParsedProgram:
    source: str
    tree: ast.Module
    sites: list[CallSite]
    defines_solve: bool
    neural_names: frozenset[str] = field(default_factory=frozenset)
    # ast.Call node id → site id; used by the rewriter
    node_sites: dict[int, int] = field(default_factory=dict, repr=False)

    def site(self, site_id: int) -> CallSite:
        return self.sites[site_id]


_LISTING_METHODS = ("tolist", "to_list")


def _final_f_col(tree: ast.Module) -> tuple[ast.Expr, ast.Call] | None:
    """The last statement and its ``f_col`` call when the program's answer is that call's
    column (``f_col(...)``, or ``f_col(...).tolist()``/``.to_list()``), else ``None``."""
    if not tree.body or not isinstance(tree.body[-1], ast.Expr):
        return None
    last = tree.body[-1]
    value = last.value
    if (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
            and value.func.attr in _LISTING_METHODS and not value.args and not value.keywords):
        value = value.func.value
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "f_col":
        return last, value
    return None


def answers_per_row(source: str) -> bool:
    """Whether a program's answer is an ``f_col`` column itself: its last statement is an
    ``f_col(...)`` call (or one followed by ``.tolist()``/``.to_list()``). Such a program
    answers its question once per row of the context — a column, not an answer about the
    table (a bare ``f(...)`` there is an ``f_val``). False for text that does not parse."""
    try:
        return _final_f_col(ast.parse(source)) is not None
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False


def as_value_question(source: str) -> str | None:
    """The program with its final ``f_col(question, context)`` (:func:`answers_per_row`) asked
    once of the context instead: ``f_val(question, context)``, with the same arguments and any
    ``.tolist()`` after it dropped. ``None`` when the program's answer is not an ``f_col``
    column itself."""
    try:
        atok = asttokens.ASTTokens(source, parse=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    found = _final_f_col(atok.tree)
    if found is None:
        return None
    last, call = found
    start, end = atok.get_text_range(last)
    func_start, func_end = atok.get_text_range(call.func)
    call_start, call_end = atok.get_text_range(call)
    value_call = source[call_start:func_start] + "f_val" + source[func_end:call_end]
    return source[:start] + value_call + source[end:]


#: methods after which a Series' labels are no longer the table's row labels
_RELABELLING = frozenset({"groupby", "value_counts", "set_index", "reset_index", "pivot", "pivot_table", "crosstab",
                          "agg", "aggregate", "resample", "rolling", "expanding", "transpose", "stack", "unstack",
                          "melt", "explode", "merge", "join", "concat", "sum", "mean", "count", "size", "nunique",
                          "describe", "apply", "T", "index", "columns", "to_frame", "rename_axis", "sort_index"})


def _final_row_label(atok: asttokens.ASTTokens) -> ast.Call | None:
    """The program's final ``X.idxmax()`` / ``X.idxmin()`` when ``X`` keeps the table's row labels."""
    tree = atok.tree
    if not tree.body or not isinstance(tree.body[-1], ast.Expr):
        return None
    call = tree.body[-1].value
    call = _row_label_asked(call) or call
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
            and call.func.attr in ("idxmax", "idxmin") and not call.args and not call.keywords):
        return None
    receiver = call.func.value
    if _is_mask(receiver):  # the first True row's label, or the first row's when no row is True: no answer
        return None
    names = {node.id for node in ast.walk(receiver) if isinstance(node, ast.Name)}
    if "df" not in names or names - {"df", "pd", "np", "f_col", "f_val"}:
        return None
    if any(isinstance(node, ast.Attribute) and node.attr in _RELABELLING for node in ast.walk(receiver)):
        return None
    return call


#: methods whose result is one True/False per row
_MASKING = frozenset({"contains", "startswith", "endswith", "match", "fullmatch", "isin", "isna", "isnull", "notna",
                      "notnull", "duplicated", "eq", "ne", "lt", "le", "gt", "ge", "between", "isdigit", "isalpha",
                      "isnumeric", "any", "all"})


def _is_mask(node: ast.AST) -> bool:
    """Whether an expression is a row mask: a comparison, ``~``, ``&``/``|``/``^`` of masks, a masking method."""
    if isinstance(node, ast.Compare) or (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Invert)):
        return True
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.BitAnd, ast.BitOr, ast.BitXor)):
        return True
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr in _MASKING)


def _row_label_asked(node: ast.AST) -> ast.AST | None:
    """``X.idxmax()`` for ``f_val(question, X.idxmax())`` (or ``f(...)``, ``idxmin``): a neural call handed
    a row label, a bare number from which the model cannot tell the row; None for anything else."""
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("f_val", "f")
            and len(node.args) == 2 and not node.keywords):
        label = node.args[1]
        if isinstance(label, ast.Call) and isinstance(label.func, ast.Attribute) and label.func.attr in (
                "idxmax", "idxmin"):
            return label
    return None


def wraps_row_label(source: str) -> bool:
    """Whether the program's last statement hands a row label to a neural call, ``f_val(question,
    X.idxmax())`` (:func:`as_row_name` reads that row's name instead)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return False
    return bool(tree.body) and isinstance(tree.body[-1], ast.Expr) and _row_label_asked(tree.body[-1].value) is not None


def as_row_name(source: str, column: str) -> str | None:
    """The program with its final ``X.idxmax()`` (or ``idxmin``; or ``f_val(question, X.idxmax())``, which
    hands the model a bare row number) read as that row's cell in ``column``,
    ``df.loc[X.idxmax(), column]``, when ``X`` keeps the table's row labels: it reads ``df`` (and no
    other variable) and calls no method that changes labels (``groupby``, ``value_counts``,
    ``set_index``, …). Its answer is then a row label, which on the table's default index is a row
    number (``6``), not the name a which-question asks for. ``None`` otherwise, and for a mask
    (``(df["leg"] == "win").idxmax()``: when no row is True, idxmax answers the first row)."""
    try:
        atok = asttokens.ASTTokens(source, parse=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    call = _final_row_label(atok)
    if call is None:
        return None
    start, end = atok.get_text_range(call)
    label = source[start:end]
    assert atok.tree is not None
    start, end = atok.get_text_range(atok.tree.body[-1].value)  # (the f_val around the label goes too)
    return f"{source[:start]}df.loc[{label}, {column!r}]{source[end:]}"


def as_cell_row_name(source: str, column: str, name_column: str) -> str | None:
    """The program with its final expression ``E``, whose answer is a cell of ``column``, read as the
    name of the row(s) holding that cell: ``df.loc[df[column] == (E), name_column]``
    (``df["date"].min()`` → ``df.loc[df['date'] == (df["date"].min()), 'artist']`` for "which concert was
    the earliest?"). ``None`` when the program's last statement is no expression, or the expression does
    not name ``column`` (a count of 9 is no cell of another column that holds a 9), or it calls ``f_val``
    or ``f_col`` (the model's answer, not a cell the program picked)."""
    try:
        atok = asttokens.ASTTokens(source, parse=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    tree = atok.tree
    if tree is None or not tree.body or not isinstance(tree.body[-1], ast.Expr):
        return None
    final = tree.body[-1].value
    named = {n.value for n in ast.walk(final) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    named |= {n.attr for n in ast.walk(final) if isinstance(n, ast.Attribute)}
    neural = any(isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in ("f_val", "f_col", "f")
                 for n in ast.walk(final))
    if column not in named or neural:
        return None
    start, end = atok.get_text_range(final)
    return f"{source[:start]}df.loc[df[{column!r}] == ({source[start:end]}), {name_column!r}]{source[end:]}"


def _bound_names(tree: ast.AST) -> set[str]:
    """Every name the program binds (assignments, defs, imports, loop targets, args...)."""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            names.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.alias):
            names.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            names.add(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            names.update(node.names)
        elif isinstance(node, ast.MatchAs) and node.name:
            names.add(node.name)
        elif isinstance(node, ast.MatchStar) and node.name:
            names.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            names.add(node.rest)
    return names


#: deepest syntax tree a program may have: the rewrite and the sandbox walk trees recursively, and a
#: model that repeats itself (``- - - … 1``, ``a + a + … + a``) must fail as one bad candidate, not
#: exhaust the interpreter's recursion limit (real programs are a few dozen levels deep)
MAX_TREE_DEPTH = 100


def _tree_depth(tree: ast.AST, limit: int) -> tuple[int, ast.AST | None]:
    """The tree's depth, counted without recursion, and the first node found deeper than
    ``limit`` (None when none is)."""
    deepest = 0
    stack: list[tuple[ast.AST, int]] = [(tree, 1)]
    while stack:
        node, depth = stack.pop()
        deepest = max(deepest, depth)
        if depth > limit:
            return deepest, node
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))
    return deepest, None


def parent_map(tree: ast.AST) -> dict[int, ast.AST]:
    """Each node's parent, by the node's ``id``."""
    parents: dict[int, ast.AST] = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
    return parents


def call_argument(call: ast.Call, position: int, keyword: str) -> ast.AST | None:
    """A call's argument at ``position``, else the one passed as ``keyword=``, else None."""
    if len(call.args) > position:
        return call.args[position]
    return next((k.value for k in call.keywords if k.arg == keyword), None)


def call_question(call: ast.Call) -> str:
    """A neural call's question when it is a string literal (the 2nd argument of the compatibility
    forms ``qa_map``/``qa_ans``, the 1st of the others, or ``question=``), else ``""``."""
    name = call.func.id if isinstance(call.func, ast.Name) else ""
    node = call_argument(call, 1 if name in ("qa_map", "qa_ans") else 0, "question")
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else ""


def _in_column_position(node: ast.AST, parents: dict[int, ast.AST]) -> bool:
    """The rule that resolves a bare ``f(...)``: ``f_col`` when the call stands where a
    column goes, ``f_val`` otherwise. Climbing through ``(...)``, unary/binary operators,
    comparisons and ``&``/``|``, the call is in column position when it reaches

    * the index of a subscript (``df[f(...) == "yes"]``, ``df.loc[f(...)]``) or the rows of a
      ``.loc`` subscript (``df.loc[f(...), "c"]``),
    * the value assigned to a subscript or attribute (``df["x"] = f(...)``), or
    * the object of an attribute access (``f(...).sum()``, ``f(...).str.lower()``).
    """
    child = node
    while True:
        parent = parents.get(id(child))
        if parent is None:
            return False
        if isinstance(parent, (ast.UnaryOp, ast.BinOp, ast.BoolOp, ast.Compare)):
            child = parent
            continue
        if isinstance(parent, ast.Subscript):
            return parent.slice is child
        if isinstance(parent, ast.Tuple) and parent.elts and parent.elts[0] is child:
            # the rows of df.loc[f(...), "c"]: a mask, as in df.loc[f(...)]
            outer = parents.get(id(parent))
            return (isinstance(outer, ast.Subscript) and outer.slice is parent
                    and isinstance(outer.value, ast.Attribute) and outer.value.attr == "loc")
        if isinstance(parent, ast.Attribute):
            return parent.value is child
        if isinstance(parent, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = parent.targets if isinstance(parent, ast.Assign) else [parent.target]
            return parent.value is child and all(isinstance(t, (ast.Subscript, ast.Attribute)) for t in targets)
        return False


def _position(atok: asttokens.ASTTokens, node: ast.AST) -> tuple[int, int, int, int, int, int]:
    start, end = atok.get_text_range(node)
    first, last = node.first_token, node.last_token  # type: ignore[attr-defined]
    return start, end, first.start[0], first.start[1], last.end[0], last.end[1]


#: one ``ast.parse`` at a time: CPython 3.11's AST constructor counts its recursion depth in
#: interpreter-wide state, and parses in several threads at once can fail with a spurious
#: "SystemError: AST constructor recursion depth mismatch" (python/cpython#106905)
PARSE_LOCK = threading.Lock()


def parse_program(source: str, *, filename: str = "<program>") -> ParsedProgram:
    """Parse ``source``; validate its neural calls; return the call sites in source order.

    Raises :class:`ProgramError` (with line and column) for a syntax error, a neural call
    with the wrong arguments, a neural function used without being called, an assignment
    to ``f_col``/``f_val``, or any mention of the internal bridge name.
    """
    if not isinstance(source, str):
        raise ProgramError(f"a program must be text, got {type(source).__name__}")
    try:
        with PARSE_LOCK:
            atok = asttokens.ASTTokens(source, parse=True, filename=filename)
    except SyntaxError as error:
        col = (error.offset - 1) if error.offset else None
        raise ProgramError(f"syntax error: {error.msg}", error.lineno, col) from None
    except (ValueError, TypeError) as error:  # e.g. null bytes
        raise ProgramError(f"the program cannot be parsed: {error}") from None
    except (RecursionError, MemoryError):
        raise ProgramError(f"the program is nested too deeply to parse (more than {MAX_TREE_DEPTH} levels); "
                           "write it with intermediate variables") from None
    tree = atok.tree
    assert isinstance(tree, ast.Module)
    _, too_deep = _tree_depth(tree, MAX_TREE_DEPTH)
    if too_deep is not None:
        raise ProgramError(f"the program is nested more than {MAX_TREE_DEPTH} levels deep; write it with "
                           "intermediate variables", getattr(too_deep, "lineno", None),
                           getattr(too_deep, "col_offset", None))

    bound = _bound_names(tree)
    for reserved in CORE_FORMS + INTERNAL_NAMES:
        if reserved in bound:
            node = _first_binding(tree, reserved)
            line, col = (node.lineno, node.col_offset) if node is not None else (None, None)
            raise ProgramError(f"the program may not define or assign {reserved!r}: it is the neural-call "
                               f"API of binder-py", line, col)
    # a compatibility name the program binds itself is an ordinary name there
    neural_names = frozenset(n for n in NEURAL_FORMS if n not in bound or n in CORE_FORMS)

    parents = parent_map(tree)
    calls: list[ast.Call] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id in INTERNAL_NAMES:
            raise ProgramError(f"the name {node.id!r} is reserved for binder-py", node.lineno, node.col_offset)
        if isinstance(node, ast.Name) and node.id in neural_names and isinstance(node.ctx, ast.Load):
            parent = parents.get(id(node))
            if not (isinstance(parent, ast.Call) and parent.func is node):
                _, _, line, col, _, _ = _position(atok, node)
                raise ProgramError(f"{node.id} must be called directly, as {node.id}(question, context)",
                                   line, col)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in neural_names:
            calls.append(node)

    calls.sort(key=lambda c: atok.get_text_range(c)[0])
    node_sites: dict[int, int] = {}
    for i, call in enumerate(calls):
        node_sites[id(call)] = i
    sites: list[CallSite] = []
    for i, call in enumerate(calls):
        name = call.func.id  # type: ignore[attr-defined]
        _check_arguments(atok, call, name)
        kind = KIND_OF_FORM.get(name) or ("col" if _in_column_position(call, parents) else "val")
        start, end, line, col, end_line, end_col = _position(atok, call)
        parent_site = None
        up = parents.get(id(call))
        while up is not None:
            if id(up) in node_sites:
                parent_site = node_sites[id(up)]
                break
            up = parents.get(id(up))
        sites.append(CallSite(i, kind, name, (start, end), line, col, end_line, end_col,
                              source[start:end], parent_site))

    defines_solve = any(isinstance(n, ast.FunctionDef) and n.name == "solve" for n in tree.body)
    return ParsedProgram(source, tree, sites, defines_solve, neural_names, node_sites)


def _first_binding(tree: ast.AST, name: str) -> ast.AST | None:
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, (ast.Store, ast.Del)):
            return node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            return node
        if isinstance(node, ast.arg) and node.arg == name:
            return node
    return None


def _check_arguments(atok: asttokens.ASTTokens, call: ast.Call, name: str) -> None:
    params, required = _SIGNATURES[name]
    _, _, line, col, _, _ = _position(atok, call)
    usage = f"{name}({', '.join(params[:required])}{', ' + params[required] if len(params) > required else ''})"
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        raise ProgramError(f"{name} cannot take *args or **kwargs; call it as {usage}", line, col)
    given: dict[str, ast.expr] = {}
    if len(call.args) > len(params):
        raise ProgramError(f"{name} takes at most {len(params)} arguments, got {len(call.args)}; "
                           f"call it as {usage}", line, col)
    for p, a in zip(params, call.args):
        given[p] = a
    for k in call.keywords:
        if k.arg not in params:
            raise ProgramError(f"{name} has no argument {k.arg!r}; call it as {usage}", line, col)
        if k.arg in given:
            raise ProgramError(f"{name} got {k.arg!r} twice; call it as {usage}", line, col)
        given[k.arg] = k.value
    missing = [p for p in params[:required] if p not in given]
    if missing:
        raise ProgramError(f"{name} is missing {', '.join(missing)}; call it as {usage}", line, col)
    question = given["question"]
    if isinstance(question, ast.Constant) and not isinstance(question.value, str):
        raise ProgramError(f"the question of {name} must be a string, got {question.value!r}", line, col)
    if isinstance(question, ast.Constant) and not question.value.strip():
        raise ProgramError(f"the question of {name} is empty", line, col)


def call_arguments(call: ast.Call, name: str) -> list[ast.expr]:
    """The call's arguments in positional order (keywords placed), optional ones as ``None``."""
    params, _ = _SIGNATURES[name]
    given: dict[str, ast.expr] = dict(zip(params, call.args))
    for k in call.keywords:
        given[k.arg] = k.value  # type: ignore[index]
    return [given.get(p, ast.Constant(value=None)) for p in params]
