"""TRUSTED ``worker_globals`` entry points for the guard fuzzer.

``plant_secret`` hides the secret in a private attribute of the program's table and in its
``attrs`` (which pandas copies to every derived object, and which the fuzz grammar never
names), where only a private or dunder look-up (``__dict__``, ``__getstate__``,
``__reduce_ex__`` ...) reaches it: a secret in the output then means a name got past the
attribute rule. ``install`` also
reports to the parent every module the worker starts to import while the program runs
(CPython raises the ``import`` audit event only for a module that is not loaded yet).
"""
import os
import sys

CALLBACK = "fuzz_imported"
SECRET_VARIABLE = "BINDER_FUZZ_API_KEY"


def plant_secret(callbacks, namespace):
    secret = os.environ[SECRET_VARIABLE]
    table = namespace["df"]
    object.__setattr__(table, "_fuzz_secret", secret)
    # pandas copies ``attrs`` to every object derived from the table (columns, groups, results),
    # whose ``__dict__`` holds it as ``_attrs``; the fuzz grammar never names ``attrs`` itself
    table.attrs["fuzz_secret"] = secret
    return {}


def install(callbacks, namespace):
    plant_secret(callbacks, namespace)
    report = callbacks[CALLBACK]
    busy = [False]

    def hook(event, args):
        if event == "import" and not busy[0]:
            busy[0] = True
            try:
                report(str(args[0]))
            except Exception:  # noqa: BLE001 - the report must not change the program's outcome
                pass
            finally:
                busy[0] = False

    sys.addaudithook(hook)
    return {}
