"""A GBNF grammar per table for Binder-Python programs whose column names are the table's own.

:func:`build_program_grammar` returns llama.cpp GBNF text. The language is a
permissive token stream of Python (words, numbers, strings, operators, comments,
balanced brackets, several lines), so ordinary pandas stays writable; only
**column positions** are closed to the table's columns:

* a subscript of a table name (``df`` by default): ``df["col"]``, ``df['col']``,
  ``df[["a", "b"]]`` — a subscript holding anything else (a mask, a slice, a
  call) is free; a statement that assigns a new column, ``df["new"] = ...`` at the
  start of a line with spaces around ``=``, may name any column (later reads of it
  may not: bind the values to a variable instead);
* the same subscripts further along a chain that is still the table (or one of its
  rows): after ``df[mask]``, ``df[["a"]]``, ``.loc[rows]``, ``.iloc[i]``, ``.head(…)``,
  ``.tail``, ``.nlargest``, ``.nsmallest``, ``.dropna``, ``.fillna``, ``.copy``,
  ``.sort_index``, ``.sample``, ``.astype``, ``.sort_values(…)``, ``.groupby(…)``,
  ``.drop_duplicates(…)``;
* the column part of ``.loc[rows, "col"]`` / ``.at[row, "col"]`` (a name or list);
* a first argument of ``sort_values``/``groupby``/``drop_duplicates`` that is a string
  or a list of strings;
* the context of ``f_col``/``f_val``/``f`` and the third argument of ``qa_map``/``qa_ans``
  when it is a string or a list literal of strings.

After a single-column subscript the value is a Series, and later subscripts are
free (``df["team"].value_counts()["fc nordby"]`` indexes values). A chain that leaves
the table through any other attribute or method (``df.apply(...)``, ``df.columns``)
is free too. A table bound to another name (``d = df[...]``) is not tracked.

The neural-call names ``f_col``, ``f_val``, ``f``, ``qa_map``, ``qa_ans`` can only be
called (they are not ordinary names in the grammar), so a program cannot bypass the
column check by spelling a call some other way; string prefixes (``f"…"``, ``r'…'``)
stay available.

**Unfenced.** The grammar generates the program itself, as the parse prompt's
demonstrations show it (completion models and chat models given the exemplars as
turns). ``fenced=True`` wraps it as a chat model's markdown answer, ```` ```python````
newline, program, newline, ```` ``` ````; :func:`binder_py.prompting.chat.extract_program`
reads both.
"""

from __future__ import annotations

from collections.abc import Sequence

from binder_py.grammar.gbnf import (GbnfError, gbnf_char_class, gbnf_literal, identifier_except,
                                    python_string_literal)

__all__ = ["COLUMN_ARG_METHODS", "NEURAL_CALL_NAMES", "TABLE_METHODS", "build_program_grammar"]

#: neural-call names: only callable in a constrained program
NEURAL_CALL_NAMES = ("f_col", "f_val", "f", "qa_map", "qa_ans")
#: methods that keep the table's columns (later string subscripts are still columns)
TABLE_METHODS = ("head", "tail", "nlargest", "nsmallest", "dropna", "fillna", "copy", "sort_index", "sample",
                 "astype")
#: table methods whose first argument, when a string or list of strings, names columns
COLUMN_ARG_METHODS = ("sort_values", "groupby", "drop_duplicates")
#: indexers with a column part after the comma
_LABEL_INDEXERS = ("loc", "at")
_POSITION_INDEXERS = ("iloc", "iat")

_OPERATORS = "+-*/%<>=!&|^~@:;."


def _column_rules(columns: Sequence[str]) -> list[str]:
    names = list(dict.fromkeys(columns))
    dq = " | ".join(gbnf_literal(python_string_literal(c, '"')) for c in names)
    sq = " | ".join(gbnf_literal(python_string_literal(c, "'")) for c in names)
    return [
        "col-lit ::= col-dq | col-sq",
        f"col-dq ::= {dq}",
        f"col-sq ::= {sq}",
        'col-list ::= "[" gap col-lit (gap "," gap col-lit)* (gap ",")? gap "]"',
    ]


def _stream_rules(k: str) -> list[str]:
    """The token-stream states for context ``k``: ``t`` (top level: statements), ``c`` (inside
    brackets) or ``nc`` (an argument: no top-level comma).

    States name what was just written: ``a`` anything/operator/bracket, ``aw`` a word
    (no word, string or call may follow directly), ``as`` spaces, ``at`` a table chain
    (no ``[``, ``(``, ``.``: those are the chain's own trailers), ``ats`` a table chain and
    spaces, ``ac`` a comment (a newline must follow). A newline leads to ``ls``
    (a line start, after optional indentation): never a blank line, and at top level the
    only place where a new column may be assigned (``df["new"] = ...``).
    """
    op = f"op-{k}"
    op_nodot = f"opnd-{k}"
    nl = f"nl ls-{k}"
    starts = f'w aw-{k} | tname df-{k} | ncall a-{k} | str a-{k}'
    comma = "," if k in ("t", "c") else ""
    rules = [
        f'a-{k} ::= "" | {starts} | {op} a-{k} | sp as-{k} | {nl} | brk a-{k} | cmt ac-{k}',
        f'as-{k} ::= "" | {starts} | {op} a-{k} | {nl} | brk a-{k} | cmt ac-{k}',
        f'aw-{k} ::= "" | {op} a-{k} | sp as-{k} | {nl} | brk a-{k} | cmt ac-{k}',
        f'at-{k} ::= "" | {op_nodot} a-{k} | sp ats-{k} | {nl} | cmt ac-{k}',
        f'ats-{k} ::= "" | {starts} | {op_nodot} a-{k} | {nl} | cmt ac-{k}',
        f'ac-{k} ::= {nl}',
        # a table chain: DF state, then more table trailers or the end of the chain
        f'df-{k} ::= at-{k} | dft df-{k} | dff a-{k} | "." attr aw-{k}',
        # a stream that does not START with a string, a space or a list of strings (a free subscript)
        f'ns-{k} ::= w aw-{k} | tname df-{k} | ncall a-{k} | {op} a-{k} | "(" a-c ")" a-{k} | '
        f'"{{" a-c "}}" a-{k} | "[" ns-c "]" a-{k}',
        f'{op} ::= {gbnf_char_class(_OPERATORS + comma)}',
        f'{op_nodot} ::= {gbnf_char_class(_OPERATORS.replace(".", "") + comma)}',
    ]
    # a line start: no blank line (programs have none; a blank line ends an unfenced program)
    line = f'"" | {starts} | {op} a-{k} | brk a-{k} | cmt ac-{k}' + (f" | assign as-{k}" if k == "t" else "")
    rules += [f"ls-{k} ::= {line} | sp lsi-{k}", f"lsi-{k} ::= {line}"]
    return rules


def _literal_alternatives(words: Sequence[str]) -> str:
    return " | ".join(gbnf_literal(w) for w in words)


def build_program_grammar(columns: Sequence[str], *, table_names: Sequence[str] = ("df",),
                          fenced: bool = False) -> str:
    """GBNF text for programs over a table with ``columns`` bound to ``table_names``.

    Raises :class:`ValueError` (a :class:`~binder_py.grammar.gbnf.GbnfError`) for a table
    without columns, a column name that is not a string, or a table name that is not an
    ASCII identifier or is a neural-call name.
    """
    if isinstance(columns, str):
        raise GbnfError("columns must be a sequence of column names, not one string")
    columns = list(columns)
    if not columns:
        raise GbnfError("the table has no columns: a program grammar needs at least one column name")
    bad = [c for c in columns if not isinstance(c, str)]
    if bad:
        raise GbnfError(f"column names must be strings, got {bad[0]!r}; convert the table's header with str()")
    table_names = list(dict.fromkeys(table_names))
    if not table_names:
        raise GbnfError("table_names is empty: name the variable the table is bound to (usually df)")
    clash = [t for t in table_names if t in NEURAL_CALL_NAMES]
    if clash:
        raise GbnfError(f"{clash[0]!r} cannot name the table: it is a neural-call name")
    reserved = [*table_names, *NEURAL_CALL_NAMES]
    attr_reserved = [*_LABEL_INDEXERS, *_POSITION_INDEXERS, *TABLE_METHODS, *COLUMN_ARG_METHODS]

    body = "(cmt nl)* (assign as-t | ns-t | str a-t)"  # not empty, not starting with a blank
    program = body if not fenced else f'"```python\\n" {body} "\\n```"'
    rules = [
        f"root ::= {program}",
        f"tname ::= {_literal_alternatives(table_names)}",
        # words: identifiers other than the table / neural-call names, and numbers
        "w ::= ident | [0-9] [a-zA-Z0-9_]*",
        *identifier_except("ident", reserved),
        *identifier_except("attr", attr_reserved),
        "sp ::= [ \\t]+",
        'nl ::= "\\n"',
        "gap ::= [ \\t\\n]*",
        'cmt ::= "#" [^\\n]*',
        # generic strings, with an optional prefix (f"..", r'..', rb"..")
        'str ::= ([rRbBuUfF] [rRbBfF]?)? (["] dqc* ["] | [\'] sqc* [\'])',
        'dqc ::= [^"\\\\\\n] | "\\\\" [^\\n]',
        "sqc ::= [^'\\\\\\n] | \"\\\\\" [^\\n]",
        'brk ::= "(" a-c ")" | "[" a-c "]" | "{" a-c "}"',
        *_stream_rules("t"),
        *_stream_rules("c"),
        *_stream_rules("nc"),
        *_column_rules(columns),
        # table trailers that keep the table (dft) or leave it (dff)
        'dft ::= "[" gap col-list gap "]" | "[" gap ns-c "]" | loc-rows | ".iloc[" a-nc "]" | '
        '"." tmeth "(" a-c ")" | "." cmeth "(" gap cmeth-args ")"',
        'dff ::= "[" gap col-lit gap "]" | loc-cell | ".iloc[" a-nc "," a-c "]" | ".iat[" a-c "]"',
        'assign ::= tname "[" gap str gap "]" sp "=" sp',
        f"tmeth ::= {_literal_alternatives(TABLE_METHODS)}",
        f"cmeth ::= {_literal_alternatives(COLUMN_ARG_METHODS)}",
        'cmeth-args ::= "" | col-lit gap ("," a-c)? | col-list gap ("," a-c)? | ns-c',
        'loc-rows ::= ".loc[" a-nc ("," gap (col-list gap | ns-nc))? "]"',
        'loc-cell ::= ("." "loc[" | ".at[") a-nc "," gap col-lit gap "]"',
        # neural calls
        'ncall ::= ("f_col" | "f_val" | "f") "(" gap a-nc "," gap ctx ")" | '
        '("qa_map" | "qa_ans") "(" gap a-nc "," gap a-nc ("," gap ctx)? ")"',
        "ctx ::= col-lit gap | col-list gap | ns-nc",
    ]
    return "\n".join(rules) + "\n"
