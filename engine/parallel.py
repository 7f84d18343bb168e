"""Run independent tasks in this process or in worker processes, results in input order.

The one execution layer behind batch analysis (and the match runner's games):
``run_ordered(function, items, jobs=N)`` calls ``function(chunk)`` on consecutive
chunks of ``items`` and yields each item's result in input order as soon as it and
all before it are done, so that a caller can write results as they finish and an
interrupted run keeps what it did. With ``jobs`` 1 the chunks run here, one after
the other; with more they run in that many worker processes (started with
``spawn``, so they are clean whatever threads this process has), with at most two
chunks per worker in flight so that a huge input is never read ahead all at once.

``function`` must be a module-level function (worker processes import it by name)
taking a list of items and returning one result per item. Per-process state a
worker should keep between chunks (an ``Analyser`` with its hash table) is the
function's business: ``worker_state`` gives each process one cache for it.

This module knows nothing about chess; it must not print.
"""

from __future__ import annotations

import itertools
import multiprocessing
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")

_WORKER_STATE: dict[str, Any] = {}
"""One cache per process for what a task function keeps between chunks (never the
search's own state, which lives in the objects stored here)."""


def worker_state() -> dict[str, Any]:
    """This process's cache for objects a task function reuses across chunks."""
    return _WORKER_STATE


def chunked(items: Iterable[T], size: int) -> Iterator[list[T]]:
    """``items`` in lists of ``size`` (the last may be shorter)."""
    iterator = iter(items)
    while chunk := list(itertools.islice(iterator, size)):
        yield chunk


def run_ordered(
    function: Callable[[list[T]], list[R]],
    items: Iterable[T],
    *,
    jobs: int = 1,
    chunk_size: int = 1,
) -> Iterator[R]:
    """``function``'s result for every item, in input order (see the module docstring)."""
    chunks = chunked(items, max(1, chunk_size))
    if jobs <= 1:
        for chunk in chunks:
            yield from function(chunk)
        return
    context = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(max_workers=jobs, mp_context=context)
    pending: deque[Future[list[R]]] = deque()
    try:
        for chunk in chunks:
            pending.append(pool.submit(function, chunk))
            while len(pending) >= 2 * jobs:
                yield from pending.popleft().result()
        while pending:
            yield from pending.popleft().result()
    finally:
        for future in pending:
            future.cancel()
        pool.shutdown(wait=True, cancel_futures=True)
