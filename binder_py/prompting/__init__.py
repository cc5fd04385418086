"""Parsing-stage prompts: exemplars, table text, exemplar choice, prompt assembly and fitting,
repair prompts, end-to-end prompts, and reading the program out of a model's answer.

Prompt text lives in the package ``prompts`` (``prompts/parse/<task>/`` and ``prompts/templates/``).
"""

from binder_py.prompting.builder import BuiltPrompt, build_parse_prompt
from binder_py.prompting.chat import as_chat_messages, extract_program
from binder_py.prompting.defaults import E2E_DEFAULTS, MARKERS, e2e_request, parse_request
from binder_py.prompting.e2e import build_e2e_prompt, parse_e2e_answer
from binder_py.prompting.exemplars import Exemplar, available_tasks, load_exemplars, load_instruction
from binder_py.prompting.repair import build_repair_prompt
from binder_py.prompting.retrieval import select_exemplars
from binder_py.prompting.table_format import format_table

__all__ = [
    "BuiltPrompt", "build_parse_prompt", "as_chat_messages", "extract_program", "E2E_DEFAULTS", "MARKERS",
    "e2e_request", "parse_request", "build_e2e_prompt",
    "parse_e2e_answer", "Exemplar", "available_tasks", "load_exemplars", "load_instruction",
    "build_repair_prompt", "select_exemplars", "format_table",
]
