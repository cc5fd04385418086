"""binder-py: answer questions about tables with LM-written pandas programs that call the LM back.

    from binder_py import Binder
    answer = Binder(lm="openai:gpt-4o-mini").ask(df, "which shirt sold best in North America?")
    answer.value, answer.confidence, print(answer.explain())

Importing the package registers the DataFrame accessor ``df.binder.ask(...)``.
"""

from binder_py.cli.early import start_sandbox_early

start_sandbox_early()  # `binder-py exec`: its sandbox starts now, importing while this process imports

from binder_py.accessor import BinderAccessor, set_default_binder  # noqa: E402 - after the early start
from binder_py.errors import BinderError, ProgramError, TableError  # noqa: E402
from binder_py.lazy import lazy_exports  # noqa: E402

_EXPORTS = {"Answer": "binder_py.answer", "Candidate": "binder_py.answer", "AskSettings": "binder_py.ask",
            "Binder": "binder_py.ask"}
__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)  # imported on first use

__version__ = "0.2.0"
__all__ = ["Answer", "AskSettings", "Binder", "BinderAccessor", "BinderError", "Candidate", "ProgramError",
           "TableError", "set_default_binder", "__version__"]
