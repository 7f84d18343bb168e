"""Run independent tasks here, in local worker processes, or on a Dask cluster.

The one execution layer behind batch analysis and the match runner. ``run`` calls
``function(chunk)`` on consecutive chunks of ``items`` and yields ``(index,
result)`` for every item as its chunk finishes: in input order (``ordered``, for
output files written as results arrive) or in completion order (for statistics
that only count). Where the chunks run:

* ``jobs`` 1 and no scheduler: in this process, one after the other;
* ``jobs`` N: in N local worker processes, started with ``spawn`` so that they are
  clean whatever threads this process has;
* ``scheduler``: on Dask (``dask.distributed``, the optional ``dask`` extra):
  ``tcp://host:8786`` for a running scheduler and its workers, or ``local:N`` for
  a ``LocalCluster`` of N single-threaded worker processes on this machine.

At most a few chunks per worker are in flight, so a huge input is never read
ahead all at once, and stopping the iteration (an SPRT decided, Ctrl-C) cancels
what has not run. On Dask a worker that dies mid-task has its task re-run
elsewhere; a task that raises is retried ``retries`` times; a task that still
fails is handed to ``on_failure`` (which turns it into results, so nothing is
silently dropped) or raises ``TaskFailedError``; a lost scheduler raises
``SchedulerLostError`` after the results that arrived were yielded.

``function`` must be importable by name in every worker (a module-level function,
or a ``functools.partial`` of one): workers need the same ``cutoff-chess``
installed. Per-process state a worker keeps between chunks (an ``Analyser`` with
its hash table) goes in ``worker_state()``. This module knows nothing about chess
and must not print.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import multiprocessing
import signal
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import CancelledError, Future, ProcessPoolExecutor
from typing import Any, Optional, TypeVar

T = TypeVar("T")
R = TypeVar("R")

DEFAULT_RETRIES = 2
"""Extra attempts for a task that raises (or whose worker dies) on Dask."""
IN_FLIGHT_PER_WORKER = 2
"""Chunks submitted ahead per worker: enough to keep it busy, few enough to stop early."""
SCHEDULER_TIMEOUT_S = 10.0
"""How long to wait for a Dask scheduler to answer before giving up."""
INSTALL_HINT = "pip install 'cutoff-chess[dask]'"

_WORKER_STATE: dict[str, Any] = {}
"""One cache per process for what a task function keeps between chunks (never the
search's own state, which lives in the objects stored here)."""


class TaskFailedError(RuntimeError):
    """A chunk failed on every attempt and no ``on_failure`` was given."""


class SchedulerLostError(RuntimeError):
    """The Dask scheduler went away (or never answered) during the run."""


class SchedulerUnavailableError(RuntimeError):
    """``scheduler`` was given but Dask is not installed, or the address is unusable."""


def worker_state() -> dict[str, Any]:
    """This process's cache for objects a task function reuses across chunks."""
    return _WORKER_STATE


def chunked(items: Iterable[T], size: int) -> Iterator[list[T]]:
    """``items`` in lists of ``size`` (the last may be shorter)."""
    iterator = iter(items)
    while chunk := list(itertools.islice(iterator, size)):
        yield chunk


FailureHandler = Callable[[list[Any], BaseException], list[Any]]


def run(
    function: Callable[[list[T]], list[R]],
    items: Iterable[T],
    *,
    jobs: int = 1,
    chunk_size: int = 1,
    scheduler: Optional[str] = None,
    retries: int = DEFAULT_RETRIES,
    ordered: bool = True,
    on_failure: Optional[FailureHandler] = None,
) -> Iterator[tuple[int, R]]:
    """``(index, result)`` for every item (see the module docstring)."""
    chunks = enumerate(chunked(items, max(1, chunk_size)))
    if scheduler is not None:
        backend = _dask(function, chunks, scheduler, retries, ordered, on_failure)
    elif jobs > 1:
        backend = _processes(function, chunks, jobs, ordered, on_failure)
    else:
        backend = _here(function, chunks, on_failure)
    for (number, size), results in backend:
        base = number * max(1, chunk_size)
        if len(results) != size:
            raise TaskFailedError(f"chunk {number} gave {len(results)} results for {size} items")
        for offset, result in enumerate(results):
            yield base + offset, result


def run_ordered(
    function: Callable[[list[T]], list[R]],
    items: Iterable[T],
    **options: Any,
) -> Iterator[R]:
    """``run`` in input order, results only."""
    for _, result in run(function, items, ordered=True, **options):
        yield result


_ChunkResults = tuple[tuple[int, int], list[Any]]
"""((chunk number, chunk size), results)"""


def _failed(
    chunk: list[Any], error: BaseException, on_failure: Optional[FailureHandler]
) -> list[Any]:
    if on_failure is None:
        raise TaskFailedError(f"a task failed: {type(error).__name__}: {error}") from error
    return on_failure(chunk, error)


def _here(
    function: Callable[[list[T]], list[R]],
    chunks: Iterator[tuple[int, list[T]]],
    on_failure: Optional[FailureHandler],
) -> Iterator[_ChunkResults]:
    for number, chunk in chunks:
        try:
            results = function(chunk)
        except Exception as error:
            results = _failed(chunk, error, on_failure)
        yield (number, len(chunk)), results


def _take(
    chunks: Iterator[tuple[int, list[T]]], wanted: int, exhausted: bool
) -> tuple[list[tuple[int, list[T]]], bool]:
    """Up to ``wanted`` more chunks to submit, and whether the input has run out."""
    if exhausted or wanted <= 0:
        return [], exhausted
    fresh = list(itertools.islice(chunks, wanted))
    return fresh, len(fresh) < wanted


class _Reorder:
    """Finished chunks, handed out in chunk order or as they finish."""

    def __init__(self, ordered: bool) -> None:
        self.ordered = ordered
        self.next = 0
        self.done: dict[int, _ChunkResults] = {}

    def add(self, number: int, result: _ChunkResults) -> Iterator[_ChunkResults]:
        if not self.ordered:
            yield result
            return
        self.done[number] = result
        while self.next in self.done:
            yield self.done.pop(self.next)
            self.next += 1


def _processes(
    function: Callable[[list[T]], list[R]],
    chunks: Iterator[tuple[int, list[T]]],
    jobs: int,
    ordered: bool,
    on_failure: Optional[FailureHandler],
) -> Iterator[_ChunkResults]:
    context = multiprocessing.get_context("spawn")
    pool = ProcessPoolExecutor(max_workers=jobs, mp_context=context)
    pending: deque[tuple[int, list[T], Future[list[R]]]] = deque()
    reorder = _Reorder(ordered)
    try:
        exhausted = False
        while pending or not exhausted:
            fresh, exhausted = _take(chunks, IN_FLIGHT_PER_WORKER * jobs - len(pending), exhausted)
            for number, chunk in fresh:
                pending.append((number, chunk, pool.submit(function, chunk)))
            if not pending:
                break
            # In order: wait for the oldest. Otherwise: whichever finishes first.
            index = 0 if ordered else _first_done([f for _, _, f in pending])
            number, chunk, future = pending[index]
            del pending[index]
            try:
                results = future.result()
            except Exception as error:
                results = _failed(chunk, error, on_failure)
            yield from reorder.add(number, ((number, len(chunk)), results))
    finally:
        for _, _, future in pending:
            future.cancel()
        pool.shutdown(wait=True, cancel_futures=True)


def _first_done(futures: list[Future[Any]]) -> int:
    """Index of the first of ``futures`` to finish (waiting for one if none has)."""
    from concurrent.futures import FIRST_COMPLETED, wait

    wait(futures, return_when=FIRST_COMPLETED)
    return next(i for i, future in enumerate(futures) if future.done())


def dask_setup(worker: object) -> None:
    """Dask's preload hook, run in each worker process of a ``local:N`` cluster.

    Those workers share the caller's terminal, so a Ctrl-C reaches them too: they
    ignore it (instead of printing a KeyboardInterrupt traceback each) and let the
    caller stop the run and close the cluster.
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _dask_client(scheduler: str) -> Any:
    try:
        import dask
        from distributed import Client, LocalCluster
    except ImportError:
        raise SchedulerUnavailableError(f"--scheduler needs Dask: {INSTALL_HINT}") from None
    # Dask logs every reconnection attempt with a traceback; the run reports a lost
    # scheduler itself, in one line.
    for name in [n for n in logging.root.manager.loggerDict if n.startswith("distributed")]:
        logging.getLogger(name).setLevel(logging.CRITICAL + 1)
    logging.getLogger("distributed").setLevel(logging.CRITICAL + 1)
    if scheduler.startswith("local:"):
        try:
            workers = int(scheduler[len("local:") :])
        except ValueError:
            workers = 0
        if workers < 1:
            raise SchedulerUnavailableError(f"local:N needs a number of workers, not {scheduler!r}")
        dask.config.set(
            {
                # A task whose worker dies is re-run, up to this many deaths.
                "distributed.scheduler.allowed-failures": DEFAULT_RETRIES + 1,
                # The workers share this terminal: they leave Ctrl-C to us (dask_setup).
                "distributed.worker.preload": [__name__],
            }
        )
        cluster = LocalCluster(  # type: ignore[no-untyped-call]
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            silence_logs=50,
        )
        return Client(cluster)  # type: ignore[no-untyped-call]
    if not scheduler.startswith(("tcp://", "tls://", "inproc://")):
        raise SchedulerUnavailableError(
            f"a scheduler is tcp://HOST:PORT or local:N, not {scheduler!r}"
        )
    try:
        return Client(scheduler, timeout=f"{SCHEDULER_TIMEOUT_S}s")  # type: ignore[no-untyped-call]
    except OSError as error:
        raise SchedulerLostError(f"no Dask scheduler at {scheduler}: {error}") from None


def _dask(
    function: Callable[[list[T]], list[R]],
    chunks: Iterator[tuple[int, list[T]]],
    scheduler: str,
    retries: int,
    ordered: bool,
    on_failure: Optional[FailureHandler],
) -> Iterator[_ChunkResults]:
    # The client first: without Dask installed it raises the one-line install hint.
    client = _dask_client(scheduler)
    from distributed import wait

    cluster = getattr(client, "cluster", None) if scheduler.startswith("local:") else None
    pending: dict[Any, tuple[int, list[T]]] = {}
    reorder = _Reorder(ordered)
    try:
        workers = max(1, len(client.scheduler_info().get("workers", {})))
        exhausted = False
        while pending or not exhausted:
            wanted = IN_FLIGHT_PER_WORKER * workers - len(pending)
            fresh, exhausted = _take(chunks, wanted, exhausted)
            for number, chunk in fresh:
                future = client.submit(function, chunk, retries=retries, pure=False)
                pending[future] = (number, chunk)
            if not pending:
                break
            try:
                done, _ = wait(  # type: ignore[no-untyped-call]
                    list(pending), timeout=1.0, return_when="FIRST_COMPLETED"
                )
            except TimeoutError:  # nothing finished within the second (asyncio's, too)
                done = set()
            except (CancelledError, OSError) as error:
                raise SchedulerLostError(f"the Dask scheduler went away ({error})") from None
            except Exception as error:
                # Newer Dask raises FuturesCancelledError (not a CancelledError) when
                # the connection to the scheduler is lost.
                if "cancel" not in type(error).__name__.lower():
                    raise
                raise SchedulerLostError("the Dask scheduler went away") from None
            if not done:
                if client.status not in ("running", "connecting"):
                    raise SchedulerLostError("the Dask scheduler went away")
                workers = max(1, len(client.scheduler_info().get("workers", {})))
                continue
            for future in done:
                number, chunk = pending.pop(future)
                if future.status == "cancelled":
                    raise SchedulerLostError("the Dask scheduler cancelled the run's tasks")
                try:
                    # Fetching a finished task's result (or error) goes to the
                    # scheduler too, which may have gone away since it reported.
                    if future.status == "finished":
                        results = future.result()
                    else:
                        results = _failed(chunk, future.exception(), on_failure)
                except (CancelledError, OSError) as error:
                    raise SchedulerLostError(
                        f"the Dask scheduler went away ({type(error).__name__})"
                    ) from None
                yield from reorder.add(number, ((number, len(chunk)), results))
    finally:
        if pending:
            # The scheduler may be gone already: then there is nothing left to cancel.
            with contextlib.suppress(Exception):
                client.cancel(list(pending))
        _close(client, cluster)


def _close(client: Any, cluster: Any) -> None:
    deadline = time.monotonic() + SCHEDULER_TIMEOUT_S
    # Closing a client whose scheduler is gone raises; it is closed all the same.
    with contextlib.suppress(Exception):
        client.close(timeout=SCHEDULER_TIMEOUT_S)
    if cluster is not None and time.monotonic() < deadline:
        with contextlib.suppress(Exception):
            cluster.close(timeout=SCHEDULER_TIMEOUT_S)
