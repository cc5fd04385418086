"""Compile a program under RestrictedPython plus the sandbox's own AST rules.

* syntax errors are reported as ``syntax`` failures;
* RestrictedPython violations and disallowed imports as ``policy`` failures;
* every top-level expression statement (except ``print(...)``) stores its
  value in ``_binder_result_`` so the answer is the last one executed;
* ``a ** b`` becomes ``_binder_pow_(a, b)`` (refuses enormous integers);
* every call ``f(x)`` becomes ``_binder_call_(f, x)``, which applies the value
  check to the result (``f(*a, **k)`` already goes through ``_apply_``);
* every function and lambda the program defines starts with
  ``_binder_args_(<its parameters>)``, which applies the value check to what it
  was called with (library code calls program functions with elements of
  containers: ``s.apply(f)``, ``np.vectorize`` ...);
* a decorated definition ``@d1 @d2 def f`` becomes ``def f`` followed by
  ``f = _binder_call_(d1, _binder_call_(d2, f))``, so what a decorator returns is
  checked like any call's result (classes too);
* the body of ``with x as name:`` starts with ``_binder_args_(name)``: what
  ``__enter__`` returned is checked before the body can use it;
* ``x[k] += v`` / ``obj.attr += v`` (refused by RestrictedPython) is rewritten
  to the guarded ``x[k] = x[k] + v`` when ``x`` and ``k`` are simple names or
  constants.
"""
from __future__ import annotations

import ast
import copy
import re
from dataclasses import dataclass
from types import CodeType

from RestrictedPython import compile_restricted_exec
from RestrictedPython.transformer import RestrictingNodeTransformer

from .facades import ALLOWED_MODULES, facade_members

RESULT_NAME = "_binder_result_"
POW_NAME = "_binder_pow_"
CALL_NAME = "_binder_call_"
ARGS_NAME = "_binder_args_"

#: rich comparisons, which RestrictedPython lets a class define. numpy's C loops over object arrays
#: call them while holding the array's pointers without a reference (the pivot of an in-place
#: ``a.sort()``, the running maximum of ``np.maximum`` and ``argmax``, pandas' hash tables): one
#: that replaced the array's items freed objects the loop then wrote back (a use after free)
COMPARISON_METHODS = frozenset({"__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"})


@dataclass(frozen=True)
class CompileFailure:
    kind: str  # "syntax" | "policy"
    message: str
    line: int | None


class _Transformer(RestrictingNodeTransformer):
    def visit_Module(self, node: ast.Module) -> ast.AST:
        node = super().visit_Module(node)
        if self.errors:
            return node
        body: list[ast.stmt] = []
        for stmt in node.body:
            if isinstance(stmt, ast.Expr) and not _is_print_call(stmt.value):
                if (isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str) and not body
                        and stmt is not node.body[-1]):
                    body.append(stmt)  # module docstring (a lone string is the answer: '"Canada"')
                    continue
                new = ast.Assign(targets=[ast.Name(RESULT_NAME, ast.Store())], value=stmt.value)
                ast.copy_location(new, stmt)
                body.append(new)
            else:
                body.append(stmt)
        node.body = body
        ast.fix_missing_locations(node)
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        node = super().visit_Call(node)
        if not isinstance(node, ast.Call) or _is_print_func(node.func) or (
            isinstance(node.func, ast.Name) and node.func.id in ("_apply_", POW_NAME)
        ):
            return node  # _apply_ (calls with *args/**kwargs) checks its result itself
        node.args.insert(0, node.func)
        node.func = ast.Name(CALL_NAME, ast.Load())
        ast.copy_location(node.func, node.args[0])
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        if node.name in COMPARISON_METHODS:
            self.error(node, f'"{node.name}": a program class may not define comparisons (numpy calls them '
                             "in the middle of sorts and loops that hold the array's objects without a "
                             "reference); compare a key instead, e.g. sorted(items, key=lambda o: o.v)")
        node = super().visit_FunctionDef(node)
        check = _arguments_check(node.args)
        if isinstance(node, ast.FunctionDef):
            stmt = ast.Expr(check)
            first = node.body[0] if node.body else None
            at = 1 if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str) else 0
            node.body.insert(at, stmt)
            _locate(stmt, node)
        return _undecorated(node)

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.AST:
        return _undecorated(super().visit_ClassDef(node))

    def visit_With(self, node: ast.With) -> ast.AST:
        node = super().visit_With(node)
        if isinstance(node, ast.With):
            names = [sub.id for item in node.items if item.optional_vars is not None
                     for sub in ast.walk(item.optional_vars) if isinstance(sub, ast.Name)]
            if names:
                stmt = ast.Expr(ast.Call(func=ast.Name(ARGS_NAME, ast.Load()),
                                         args=[ast.Name(n, ast.Load()) for n in names], keywords=[]))
                node.body.insert(0, stmt)
                _locate(stmt, node)
        return node

    def visit_Lambda(self, node: ast.Lambda) -> ast.AST:
        node = super().visit_Lambda(node)
        check = _arguments_check(node.args)
        if isinstance(node, ast.Lambda):
            node.body = ast.BoolOp(op=ast.And(), values=[check, node.body])  # the check returns True
            _locate(node.body, node)
        return node

    def visit_BinOp(self, node: ast.BinOp) -> ast.AST:
        node = super().visit_BinOp(node)
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
            call = ast.Call(func=ast.Name(POW_NAME, ast.Load()), args=[node.left, node.right], keywords=[])
            ast.copy_location(call, node)
            ast.copy_location(call.func, node)
            return call
        return node

    def visit_AugAssign(self, node: ast.AugAssign) -> ast.AST:
        target = node.target
        simple = (ast.Name, ast.Constant)
        if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) and isinstance(target.slice, simple):
            load = ast.Subscript(value=copy.deepcopy(target.value), slice=copy.deepcopy(target.slice), ctx=ast.Load())
        elif isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name):
            load = ast.Attribute(value=copy.deepcopy(target.value), attr=target.attr, ctx=ast.Load())
        else:
            return super().visit_AugAssign(node)
        assign = ast.Assign(targets=[target], value=ast.BinOp(left=load, op=node.op, right=node.value))
        ast.copy_location(assign, node)
        ast.fix_missing_locations(assign)
        for sub in ast.walk(assign):
            if hasattr(sub, "lineno"):
                ast.copy_location(sub, node)
        return self.visit(assign)


def _undecorated(node: ast.AST) -> ast.AST | list[ast.stmt]:
    """A decorated function or class as its plain definition followed by
    ``name = _binder_call_(d1, _binder_call_(d2, name))``: Python would apply the decorators
    itself and hand the program their results unchecked."""
    if not isinstance(node, (ast.FunctionDef, ast.ClassDef)) or not node.decorator_list:
        return node
    value: ast.expr = ast.Name(node.name, ast.Load())
    for decorator in reversed(node.decorator_list):
        value = ast.Call(func=ast.Name(CALL_NAME, ast.Load()), args=[decorator, value], keywords=[])
    node.decorator_list = []
    assign = ast.Assign(targets=[ast.Name(node.name, ast.Store())], value=value)
    _locate(assign, node)
    return [node, assign]


def _arguments_check(args: ast.arguments) -> ast.Call:
    """``_binder_args_(a, b, *rest, **kw)`` for a function's parameters; ``_binder_args_()`` for one that
    has none, which still checks that program code may run now (:mod:`sandbox.reentry`)."""
    names = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
    values: list[ast.expr] = [ast.Name(n, ast.Load()) for n in names]
    if args.vararg is not None:
        values.append(ast.Starred(ast.Name(args.vararg.arg, ast.Load()), ast.Load()))
    keywords = [ast.keyword(arg=None, value=ast.Name(args.kwarg.arg, ast.Load()))] if args.kwarg else []
    return ast.Call(func=ast.Name(ARGS_NAME, ast.Load()), args=values, keywords=keywords)


def _locate(new: ast.AST, where: ast.AST) -> None:
    for sub in ast.walk(new):
        if "lineno" in sub._attributes:
            ast.copy_location(sub, where)


def _is_print_func(func: ast.AST) -> bool:
    return isinstance(func, ast.Attribute) and func.attr == "_call_print"


def _is_print_call(value: ast.AST) -> bool:
    return isinstance(value, ast.Call) and _is_print_func(value.func)


class _ImportChecker(ast.NodeVisitor):
    def __init__(self) -> None:
        self.problem: CompileFailure | None = None

    def _fail(self, node: ast.AST, message: str) -> None:
        if self.problem is None:
            self.problem = CompileFailure("policy", message, getattr(node, "lineno", None))

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.name not in ALLOWED_MODULES:
                self._fail(node, f"import of module {alias.name!r} is not allowed "
                                 f"(allowed: {', '.join(ALLOWED_MODULES)})")

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level or node.module not in ALLOWED_MODULES:
            self._fail(node, f"import of module {node.module!r} is not allowed "
                             f"(allowed: {', '.join(ALLOWED_MODULES)})")
            return
        members = facade_members(node.module)
        for alias in node.names:
            if alias.name != "*" and alias.name not in members:
                self._fail(node, f"{node.module}.{alias.name} is not available in the sandbox")


_LINE_RE = re.compile(r"^Line (\d+):")


def compile_program(program: str | ast.Module, filename: str = "<program>") -> CodeType | CompileFailure:
    """Return a code object, or a CompileFailure. Never raises for bad input."""
    if isinstance(program, ast.Module):
        tree = copy.deepcopy(program)
        ast.fix_missing_locations(tree)
    elif isinstance(program, str):
        try:
            tree = ast.parse(program, filename=filename, mode="exec")
        except SyntaxError as exc:
            return CompileFailure("syntax", f"{type(exc).__name__}: {exc.msg}", exc.lineno)
        except (ValueError, MemoryError, RecursionError) as exc:
            return CompileFailure("syntax", f"{type(exc).__name__}: {exc}", None)
    else:
        return CompileFailure("policy", f"program must be a str or ast.Module, not {type(program).__name__}", None)

    checker = _ImportChecker()
    checker.visit(tree)
    if checker.problem is not None:
        return checker.problem
    try:
        result = compile_restricted_exec(tree, filename=filename, policy=_Transformer)
    except SyntaxError as exc:
        return CompileFailure("syntax", f"{type(exc).__name__}: {exc.msg}", exc.lineno)
    except (ValueError, TypeError, RecursionError, MemoryError) as exc:
        return CompileFailure("syntax", f"{type(exc).__name__}: {exc}", None)
    if result.errors or result.code is None:
        errors = list(result.errors) or ["program could not be compiled"]
        m = _LINE_RE.match(errors[0])
        line = int(m.group(1)) if m else None
        kind = "syntax" if any("SyntaxError" in e for e in errors) else "policy"
        return CompileFailure(kind, "; ".join(errors), line)
    return result.code
