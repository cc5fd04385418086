"""Measure what the program grammar does on the embedded model: parse / real-column / run rates.

``python -m binder_py.bench.grammar_validity --model GGUF [--questions 10] [--samples 5] [--seed 7]``
samples candidate programs for a seeded random sample of WikiTQ dev questions with the
project's parse prompt (:func:`binder_py.prompting.build_parse_prompt`, the exemplars as
chat turns, as the pipeline gives a chat model), once freely and once constrained by
:func:`build_program_grammar`, and counts per condition the programs that

* **parse** (:func:`binder_py.language.program.parse_program` accepts them),
* **name only real columns** (every column literal the project's column checker sees —
  :func:`unknown_column_literals` — is a column of the table, exactly), and
* **run** (:func:`binder_py.language.execute.execute` in the sandbox succeeds, with a
  neural backend that answers "unknown" to every ``f_col``/``f_val`` request).

It needs ``xllamacpp`` (the prebuilt llama.cpp server) and a GGUF file; it prints one JSON
line per question and condition, then a summary. It is an experiment, not a test.
"""

from __future__ import annotations

import argparse
import ast
import json
import random
import sys
import time
from collections.abc import Sequence
from typing import Any

from binder_py.grammar.program import build_program_grammar
from binder_py.pipeline.literal_hints import literal_texts

__all__ = ["unknown_column_literals"]

_COLUMN_ARG_METHODS = frozenset({"sort_values", "groupby", "set_index", "drop_duplicates"})
_NEURAL = frozenset({"f_col", "f_val", "f"})


def _roots_at_table(node: ast.AST, table_names: frozenset[str]) -> bool:
    """The expression is the table, a row/sub-table of it or a method chain on it (not one column of it)."""
    while True:
        if isinstance(node, ast.Name):
            return node.id in table_names
        if isinstance(node, ast.Subscript):
            if isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
                return False  # one column: a Series, whose subscripts are values
            node = node.value
        elif isinstance(node, ast.Attribute):
            node = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            node = node.func.value
        else:
            return False


def unknown_column_literals(program: str, columns: Sequence[str],
                            table_names: Sequence[str] = ("df", "table")) -> list[str]:
    """String literals in column positions of ``program`` that are not columns (exact spelling).

    Column positions: subscripts of expressions rooted at a table name (``df["c"]``,
    ``df[df.x > 1][["a", "b"]]``, ``df.loc[i, "c"]``) unless assigned to, the first argument
    of ``sort_values``/``groupby``/``set_index``/``drop_duplicates`` on such an expression,
    and the context of ``f_col``/``f_val``/``f`` and the columns of ``qa_map``/``qa_ans``.
    Raises :class:`SyntaxError` when the program does not parse.
    """
    tree = ast.parse(program)
    names = frozenset(table_names)
    real = set(columns)
    stores = {id(n) for n in ast.walk(tree) if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store)}
    found: list[str] = []
    for node in ast.walk(tree):
        literals: list[str] = []
        if isinstance(node, ast.Subscript) and id(node) not in stores and _roots_at_table(node.value, names):
            index = node.slice
            if isinstance(node.value, ast.Attribute) and node.value.attr in ("loc", "at") \
                    and isinstance(index, ast.Tuple) and len(index.elts) == 2:
                index = index.elts[1]
            if not (isinstance(node.value, ast.Attribute) and node.value.attr in ("iloc", "iat")):
                literals = literal_texts(index)
        elif isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Attribute) and func.attr in _COLUMN_ARG_METHODS and node.args \
                    and _roots_at_table(func.value, names):
                literals = literal_texts(node.args[0])
            elif isinstance(func, ast.Name) and func.id in _NEURAL and len(node.args) >= 2:
                literals = literal_texts(node.args[1])
            elif isinstance(func, ast.Name) and func.id in ("qa_map", "qa_ans") and len(node.args) >= 3:
                literals = literal_texts(node.args[2])
        found.extend(s for s in literals if s not in real)
    return found


def _null_backend() -> Any:
    from binder_py.neural.backends import CallableBackend

    return CallableBackend(lambda request: {} if request.kind == "col" else None, name="unknown")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m binder_py.bench.grammar_validity", description=__doc__.split("\n")[0])
    parser.add_argument("--model", required=True, help="the GGUF file (e.g. the embedded Qwen2.5-Coder 0.5B)")
    parser.add_argument("--questions", type=int, default=10)
    parser.add_argument("--samples", type=int, default=5)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--temperature", type=float, default=0.4)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--shots", type=int, default=None, help="exemplars in the prompt (default: the task's)")
    parser.add_argument("--max-tokens", type=int, default=256)
    parser.add_argument("--conditions", default="free,grammar", help="comma-separated: free, grammar")
    args = parser.parse_args(argv)
    try:
        import xllamacpp
    except ImportError:
        print("this experiment needs xllamacpp: pip install xllamacpp", file=sys.stderr)
        return 2
    from binder_py.datasets.wikitq import load_wikitq
    from binder_py.language.execute import execute
    from binder_py.language.program import parse_program
    from binder_py.prompting.builder import build_parse_prompt
    from binder_py.prompting.chat import extract_program
    from binder_py.prompting.defaults import CHAT_STOP

    params = xllamacpp.CommonParams()
    params.model.path = args.model
    params.n_ctx = 8192
    params.n_parallel = 1
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    server = xllamacpp.Server(params)

    examples = random.Random(args.seed).sample(load_wikitq("dev"), args.questions)
    totals: dict[str, dict[str, int]] = {}
    backend = _null_backend()
    for example in examples:
        table = example.load_table()
        columns = [str(c) for c in table.columns]
        prompt = build_parse_prompt("wikitq", table, example.question, title=example.title,
                                    count_tokens=lambda text: len(text) // 3 + 1, context_window=8192,
                                    num_shots=args.shots)
        messages = [{"role": role, "content": content} for role, content in prompt.messages]
        grammar = build_program_grammar(columns)
        for condition in args.conditions.split(","):
            counts = totals.setdefault(condition, {"samples": 0, "parse": 0, "real_columns": 0, "run": 0,
                                                   "errors": 0})
            rows = []
            for i in range(args.samples):
                body: dict[str, Any] = {"messages": messages, "max_tokens": args.max_tokens, "temperature": args.temperature,
                                        "top_p": 1.0, "seed": args.seed * 1000 + i, "stop": list(CHAT_STOP)}
                if condition == "grammar":
                    body["grammar"] = grammar
                started = time.perf_counter()
                reply = server.handle_chat_completions(body)
                seconds = time.perf_counter() - started
                counts["samples"] += 1
                if "error" in reply:
                    counts["errors"] += 1
                    rows.append({"error": reply["error"]})
                    continue
                text = reply["choices"][0]["message"]["content"] or ""
                program = extract_program(text)
                try:
                    parse_program(program)
                    parsed = True
                except Exception:  # noqa: BLE001 - any refusal counts as "does not parse"
                    parsed = False
                unknown = unknown_column_literals(program, columns) if parsed else None
                real = parsed and not unknown
                ran = execute(program, table, neural=backend).ok if parsed else False
                counts["parse"] += parsed
                counts["real_columns"] += real
                counts["run"] += ran
                rows.append({"program": program, "parse": parsed, "unknown_columns": unknown, "run": ran,
                             "seconds": round(seconds, 1)})
            print(json.dumps({"id": example.id, "question": example.question, "columns": columns,
                              "condition": condition, "samples": rows}, ensure_ascii=False), flush=True)
    print(json.dumps({"summary": totals, "model": args.model, "questions": args.questions, "samples": args.samples,
                      "seed": args.seed, "temperature": args.temperature}), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
