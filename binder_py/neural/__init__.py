"""Neural calls: what answers an ``f_col``/``f_val`` request.

* :mod:`~binder_py.neural.requests` — a request (question, context columns, distinct rows) and row keys;
* :mod:`~binder_py.neural.backends` — the :class:`NeuralBackend` protocol, oracle and callable backends;
* :mod:`~binder_py.neural.cache` — answers shared by the candidate programs of a question;
* :mod:`~binder_py.neural.render` — the prompts (tables, demonstrations, chat turns);
* :mod:`~binder_py.neural.parse` — reading the model's output back, row by row_id;
* :mod:`~binder_py.neural.lm_backend` — the prompted LM ("QA map" / "QA ans"), batched to its context;
* :mod:`~binder_py.neural.plan` — a question's predictable calls answered before its programs run;
* :mod:`~binder_py.neural.build` — a backend from a spec (``oracle:FILE``, ``lm``, ``lm:SPEC``, a callable).
"""

from binder_py.lazy import lazy_exports

_EXPORTS = {
    **dict.fromkeys(("CallableBackend", "NeuralAnswer", "NeuralBackend", "OracleBackend", "PlanningBackend"),
                    "binder_py.neural.backends"),
    "NeuralCache": "binder_py.neural.cache",
    "LMNeuralBackend": "binder_py.neural.lm_backend",
    **dict.fromkeys(("NeuralRequest", "row_key", "type_column", "type_value"), "binder_py.neural.requests"),
}
__getattr__, __dir__ = lazy_exports(__name__, globals(), _EXPORTS)  # imported on first use

__all__ = ["CallableBackend", "LMNeuralBackend", "NeuralAnswer", "NeuralBackend", "NeuralCache", "NeuralRequest",
           "OracleBackend", "PlanningBackend", "row_key", "type_column", "type_value"]
