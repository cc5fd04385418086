"""TRUSTED ``worker_globals`` entry point for the guard fuzzer: reports to the parent every
module the worker starts to import while the program runs (CPython raises the ``import``
audit event only for a module that is not loaded yet)."""
import sys

CALLBACK = "fuzz_imported"


def install(callbacks, namespace):
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
