"""binder-py: answer questions about tables with LM-written pandas programs that call the LM back.

    from binder_py import Binder
    answer = Binder(lm="openai:gpt-4o-mini").ask(df, "which shirt sold best in North America?")
    answer.value, answer.confidence, print(answer.explain())

Importing the package registers the DataFrame accessor ``df.binder.ask(...)``.
"""

from binder_py.answer import Answer, Candidate
from binder_py.ask import AskSettings, Binder
from binder_py.errors import BinderError, ProgramError, TableError
from binder_py.accessor import BinderAccessor, set_default_binder

__version__ = "0.1.0"
__all__ = ["Answer", "AskSettings", "Binder", "BinderAccessor", "BinderError", "Candidate", "ProgramError",
           "TableError", "set_default_binder", "__version__"]
