"""The language-model layer: every prompt to a model goes through here.

Build a model from an ``--lm`` spec with :func:`lm_from_spec`; it is a
:class:`LanguageModel` (see :mod:`binder_py.lm.types`). Tests of other layers
use :class:`ScriptedLM`; tests of this layer use the loopback server in
:mod:`binder_py.lm.testserver`. Syntax, environment variables, caching and
replay: docs/LM.md.
"""

from binder_py.lm.accounting import DEFAULT_PRICES, PriceTable, UsageLedger, estimate_tokens
from binder_py.lm.client import LMClient, ReplayLM
from binder_py.lm.reliability import Limiter, RetryPolicy
from binder_py.lm.scripted import ScriptedLM
from binder_py.lm.spec import ACCEPTED_FORMS, LMSpec, default_spec, is_local_spec, lm_from_spec, parse_spec
from binder_py.lm.store import LMStore, default_cache_path
from binder_py.lm.types import (Choice, Completion, LanguageModel, LMAuthError, LMConfigError, LMContextTooLong,
                                LMError, LMModelNotFound, LMReplayMiss, LMRequest, LMUnavailable, LMUnreachable,
                                Usage)

__all__ = [
    "ACCEPTED_FORMS", "DEFAULT_PRICES", "Choice", "Completion", "LMAuthError", "LMClient", "LMConfigError",
    "LMContextTooLong", "LMError", "LMModelNotFound", "LMReplayMiss", "LMRequest", "LMSpec", "LMStore",
    "LMUnavailable", "LMUnreachable", "LanguageModel", "Limiter", "PriceTable", "ReplayLM", "RetryPolicy",
    "ScriptedLM", "Usage",
    "UsageLedger", "default_cache_path", "default_spec", "estimate_tokens", "is_local_spec", "lm_from_spec",
    "parse_spec",
]
