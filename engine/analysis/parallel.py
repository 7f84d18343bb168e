"""Run independent tasks here, in local worker processes, or on a Dask cluster.

The one execution layer behind batch analysis and the match runner. ``run`` calls
``function(chunk)`` on consecutive chunks of ``items`` and yields ``(index,
result)`` for every item as its chunk finishes: in input order (``ordered``, for
output files written as results arrive) or in completion order (for statistics
that only count). Where the chunks run:

* ``jobs`` 1 and no scheduler: in this process, one after the other;
* ``jobs`` N: in N local worker processes, started fresh (engine.processes: clean
  whatever threads this process has, and without running the caller's main script
  again, so that a script without a main guard works), one chunk each at a time
  over a pipe of their own (no named semaphores to leak). They die with this process however
  it ends (Linux's parent-death signal, and a watchdog on the parent's pid; the
  thread that iterates must be the one that started them, the main thread in
  the ``cutoff`` process), leave Ctrl-C to it, and when the iteration stops early
  they are stopped at once, a search in flight included; a worker that dies is
  replaced and its chunk run again (``retries`` times);
* ``scheduler``: on Dask (``dask.distributed``, the optional ``dask`` extra):
  ``tcp://host:8786`` for a running scheduler and its workers, or ``local:N`` for
  a ``LocalCluster`` of N single-threaded worker processes on this machine.

At most a few chunks per worker are in flight, so a huge input is never read
ahead all at once, and stopping the iteration (``close()``: an SPRT decided,
Ctrl-C) cancels what has not run. On Dask a worker that dies mid-task has its task re-run
elsewhere; a task that raises is retried ``retries`` times; a task that still
fails is handed to ``on_failure`` (which turns it into results, so nothing is
silently dropped) or raises ``TaskFailedError``; a lost scheduler raises
``SchedulerLostError`` after the results that arrived were yielded.

``function`` must be importable by name in every worker (a module-level function,
or a ``functools.partial`` of one; one defined in the main script has the workers
run that script, which then needs its main guard): workers need the same
``cutoff-chess`` installed. Per-process state a worker keeps between chunks (an ``Analyser`` with
its hash table) goes in ``worker_state()``. This module knows nothing about chess
and must not print.
"""

from __future__ import annotations

import contextlib
import ctypes
import itertools
import logging
import os
import pickle
import signal
import sys
import threading
import time
from collections.abc import Callable, Generator, Iterable, Iterator
from concurrent.futures import CancelledError
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from types import FrameType
from typing import Any, Optional, TypeVar

from engine import processes
from engine.extras import install_hint

T = TypeVar("T")
R = TypeVar("R")

DEFAULT_RETRIES = 2
"""Extra attempts for a task that raises (or whose worker dies) on Dask."""
IN_FLIGHT_PER_WORKER = 2
"""Chunks submitted ahead per worker: enough to keep it busy, few enough to stop early."""
SCHEDULER_TIMEOUT_S = 10.0
"""How long to wait for a Dask scheduler to answer before giving up."""
INSTALL_HINT = install_hint("dask")
"""What a missing Dask says to run (``engine.extras``)."""

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
) -> Generator[tuple[int, R], None, None]:
    """``(index, result)`` for every item (see the module docstring); ``close()``
    stops the workers at once."""
    chunks = enumerate(chunked(items, max(1, chunk_size)))
    if scheduler is not None:
        backend = _dask(function, chunks, scheduler, retries, ordered, on_failure)
    elif jobs > 1:
        backend = _processes(function, chunks, jobs, ordered, retries, on_failure)
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
    retries: int,
    on_failure: Optional[FailureHandler],
) -> Iterator[_ChunkResults]:
    reorder = _Reorder(ordered)
    pool = _LocalPool(function, jobs, retries)
    try:
        exhausted = False
        while True:
            while not exhausted and pool.has_idle_worker():
                fresh = next(chunks, None)
                if fresh is None:
                    exhausted = True
                else:
                    pool.submit(*fresh)
            if not pool.busy():
                return
            for number, chunk, outcome in pool.finished():
                if isinstance(outcome, BaseException):
                    results = _failed(chunk, outcome, on_failure)
                else:
                    results = outcome
                yield from reorder.add(number, ((number, len(chunk)), results))
    finally:
        pool.close()


class WorkerDiedError(RuntimeError):
    """A local worker process ended (killed, out of memory) while it ran a chunk."""


class WorkersFailToStartError(TaskFailedError):
    """Local worker processes end before finishing any chunk, again and again."""


_START_FAILURES = 3
"""Workers in a row that may die before finishing a chunk before the run gives up."""
STOP_GRACE_S = 3.0
"""How long a stopped worker may take to end its search before it is killed."""
WATCHDOG_PERIOD_S = 1.0
"""How often a worker checks that its parent is alive (where prctl cannot tell it)."""
_PR_SET_PDEATHSIG = 1


@dataclass
class _Worker:
    """One local worker process, its end of the pipe and the chunk it runs."""

    process: processes.Child
    connection: Connection
    task: Optional[tuple[int, list[Any]]] = None
    attempts: int = 0
    done: int = 0


class _LocalPool:
    """``jobs`` worker processes, one chunk each at a time, over one pipe each.

    Not ``ProcessPoolExecutor``: its queues hold named POSIX semaphores (leaked in
    /dev/shm when the parent is killed), its workers outlive a killed parent, and
    its shutdown waits for every search in flight. Here each worker has a plain
    pipe (no semaphore), dies with its parent (``_worker_main``), and is stopped at
    once when the run ends early: SIGTERM makes it stop its search and exit.
    """

    def __init__(self, function: Callable[[list[Any]], list[Any]], jobs: int, retries: int):
        self._function = function
        self._retries = retries
        self._start_failures = 0
        self._workers: list[_Worker] = []
        for _ in range(jobs):
            self._workers.append(self._start())

    def _start(self) -> _Worker:
        child = processes.start(
            "engine.analysis.parallel:_worker_main",
            (self._function, os.getpid()),
            name="cutoff-worker",
        )
        return _Worker(child, child.connection)

    def has_idle_worker(self) -> bool:
        return any(worker.task is None for worker in self._workers)

    def busy(self) -> bool:
        return any(worker.task is not None for worker in self._workers)

    def submit(self, number: int, chunk: list[Any], attempts: int = 0) -> None:
        worker = next(worker for worker in self._workers if worker.task is None)
        worker.task, worker.attempts = (number, chunk), attempts
        # If it died, finished() sees the closed pipe and deals with the chunk.
        with contextlib.suppress(OSError):
            worker.connection.send((number, chunk))

    def finished(self) -> Iterator[tuple[int, list[Any], Any]]:
        """(number, chunk, results or the exception) of chunks that ended, once some have."""
        by_connection = {id(worker.connection): worker for worker in self._workers}
        ready = wait([worker.connection for worker in self._workers])
        for connection in ready:
            worker = by_connection[id(connection)]
            try:
                number, ok, value = worker.connection.recv()
            except (EOFError, OSError):
                yield from self._died(worker)
                continue
            task = worker.task
            assert task is not None and task[0] == number
            worker.task = None
            worker.done += 1
            self._start_failures = 0
            yield number, task[1], value if ok else _as_error(value)

    def _died(self, worker: _Worker) -> Iterator[tuple[int, list[Any], Any]]:
        """Replace a worker that ended; run its chunk again or report it failed."""
        worker.process.join(STOP_GRACE_S)
        code = worker.process.exitcode
        worker.connection.close()
        self._workers.remove(worker)
        if worker.done == 0:
            self._start_failures += 1
            if self._start_failures >= _START_FAILURES:
                raise WorkersFailToStartError(
                    f"{self._start_failures} worker processes in a row ended before finishing "
                    f"a task (the last with exit code {code})"
                )
        replacement = self._start()
        self._workers.append(replacement)
        if worker.task is None:
            return
        number, chunk = worker.task
        if worker.attempts < self._retries:
            self.submit(number, chunk, worker.attempts + 1)
            return
        yield number, chunk, WorkerDiedError(f"its worker process died (exit code {code})")

    def close(self) -> None:
        """Stop every worker: idle ones exit, busy ones end their search first."""
        for worker in self._workers:
            with contextlib.suppress(OSError):
                if worker.task is None:
                    worker.connection.send(None)
                else:
                    worker.process.terminate()
        deadline = time.monotonic() + STOP_GRACE_S
        for worker in self._workers:
            worker.process.join(max(0.0, deadline - time.monotonic()))
            if worker.process.exitcode is None:
                worker.process.kill()
                worker.process.join()
            worker.connection.close()
        self._workers = []


def _as_error(value: object) -> BaseException:
    return value if isinstance(value, BaseException) else RuntimeError(str(value))


def _picklable(error: BaseException) -> object:
    """The exception if it survives pickling, else its text."""
    try:
        pickle.loads(pickle.dumps(error))
    except Exception:
        return f"{type(error).__name__}: {error}"
    return error


def _raise_interrupt(signum: int, frame: Optional[FrameType]) -> None:
    raise KeyboardInterrupt


def _die_with_parent(parent_pid: int) -> None:
    """End this worker when its parent ends, however it ends (even ``kill -9``).

    Linux sends SIGTERM the moment the parent goes (prctl PR_SET_PDEATHSIG); on
    every system a daemon thread notices the parent's absence within a second.
    """
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)

    def watch() -> None:
        while os.getppid() == parent_pid:
            time.sleep(WATCHDOG_PERIOD_S)
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(STOP_GRACE_S)
        os._exit(1)

    threading.Thread(target=watch, name="parent-watchdog", daemon=True).start()
    if os.getppid() != parent_pid:  # it ended before the prctl above
        os._exit(1)


def _worker_main(
    connection: Connection, function: Callable[[list[Any]], list[Any]], parent_pid: int
) -> None:
    """A local worker (started by engine.processes, which leaves Ctrl-C to the
    parent): run chunks from the pipe until told to stop, or stopped."""
    # SIGTERM (from the parent, or the kernel when the parent dies) stops the search
    # as Ctrl-C would, so the worker ends cleanly.
    signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        _die_with_parent(parent_pid)
        while True:
            message = connection.recv()
            if message is None:
                return
            number, chunk = message
            reply: tuple[int, bool, object]
            try:
                reply = (number, True, function(chunk))
            except Exception as error:
                reply = (number, False, _picklable(error))
            connection.send(reply)
    except (KeyboardInterrupt, EOFError, OSError):
        return


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
        from dask.utils import parse_timedelta
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
        start_timeout = float(
            parse_timedelta(dask.config.get("distributed.comm.timeouts.connect"), default="s")
        )
        # The cluster's workers are spawned: their named semaphores, made here, must
        # be removed even if this whole process group is killed (engine.processes).
        processes.detach_resource_tracker()
        try:
            cluster = LocalCluster(  # type: ignore[no-untyped-call]
                n_workers=workers,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
                silence_logs=50,
                # Without it a worker that cannot start or reach the scheduler is
                # waited for, and retried, forever: the run hangs before its first task.
                # Dask's own connect timeout (30 s unless configured) bounds it instead.
                death_timeout=start_timeout,
            )
        except Exception as error:
            # Dask wraps whatever stopped its workers (an unusable temporary directory,
            # no memory, no ports) in RuntimeError("Cluster failed to start: ...");
            # a start that timed out surfaces as an internal assertion instead.
            import asyncio

            chain = (error, error.__cause__, error.__context__)
            reason = (
                f"its workers were not ready within {start_timeout:g} s"
                if any(isinstance(e, (TimeoutError, asyncio.TimeoutError)) for e in chain)
                else str(error)
            )
            raise SchedulerUnavailableError(
                f"the local Dask cluster did not start: {reason}"
            ) from None
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
