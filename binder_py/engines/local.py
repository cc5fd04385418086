"""The local engine: the questions run on threads of this process, sharing one binder
(one model client, one sandbox pool, one neural cache)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any

from binder_py.engines import top_up
from binder_py.engines.neural_share import cache_counts

_SKIPPED = object()


class LocalEngine:
    """Run ``work(binder, item)`` for each item, ``concurrency`` at a time, yielding
    ``(index, result)`` as each finishes. Closing the iterator early (an error, Ctrl-C)
    cancels the items not started; the ones running finish on their own."""

    name = "local"

    def __init__(self, binder: Any, concurrency: int):
        self.binder = binder
        self.concurrency = max(1, concurrency)
        self.startup_seconds = 0.0
        self.overheads: list[float] = []  # threads in this process add nothing measured per question

    def run(self, work: Callable[[Any, Any], Any], items: Iterable[Any]) -> Iterator[tuple[int, Any]]:
        stop = threading.Event()

        def call(item: Any) -> Any:
            return _SKIPPED if stop.is_set() else work(self.binder, item)

        pool = ThreadPoolExecutor(max_workers=self.concurrency, thread_name_prefix="binder-engine")
        inflight: dict[Future, int] = {}
        pending = iter(enumerate(items))
        try:
            while True:
                top_up(inflight, pending, self.concurrency, lambda index, item: (pool.submit(call, item), index))
                if not inflight:
                    break
                done, _ = wait(list(inflight), timeout=0.5, return_when=FIRST_COMPLETED)
                for future in done:
                    index = inflight.pop(future)
                    result = future.result()
                    if result is not _SKIPPED:
                        yield index, result
        except BaseException:
            stop.set()
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown(wait=True)

    def neural_counts(self) -> dict[str, int]:
        """The neural cache's hits and misses so far."""
        return cache_counts(self.binder.neural_cache)

    def close(self) -> None:
        pass


__all__ = ["LocalEngine"]
