"""TRUSTED code that runs inside the sandbox worker, next to the untrusted program.

The sandbox imports :mod:`binder_py.language.worker.bridge` before the program starts and
binds the bridge function every neural call site was rewritten to. Nothing else of
binder-py runs in the worker. Code here must assume that the program can call the bridge
with any arguments: it validates them and sends only plain data to the parent.
"""

#: what a worker of every binder-py program imports (the bridge): a sandbox's zygote preloads it
PRELOAD = ("binder_py.language.worker.bridge",)
#: the pool size of the sandbox :func:`binder_py.language.execute.execute` makes when given none
DEFAULT_POOL_SIZE = 2
