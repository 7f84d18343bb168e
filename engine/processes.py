"""Child processes that start clean: never by running the caller's main script.

multiprocessing's ``spawn`` starts a child by running the parent's main script again
(as ``__mp_main__``), so that what it defines can be unpickled there. A script, a
notebook or ``python -c`` code without an ``if __name__ == "__main__":`` guard then
does its work again in every child, which multiprocessing stops with a traceback about
the "bootstrapping phase"; and ``spawn`` starts its resource tracker, a process that
lives as long as the parent. The engine's own processes (Lazy SMP helpers, local
analysis workers) start here instead: ``start`` runs ``sys.executable`` on a few lines
that take the parent's ``sys.path`` over a pipe, import the target function by name
(``"module:function"``) and call it with the child's end of that pipe, a duplex
``multiprocessing.connection.Connection``, and the arguments sent after it.

The parent's main module is run (as ``__mp_main__``, as ``spawn`` would) only if
something the child unpickles is defined there, such as the task function of a
guarded script; while it runs, ``start`` refuses, as ``spawn`` does. Nothing else of
the caller's is imported.

Children leave Ctrl-C to the parent (they start with SIGINT blocked and then ignore
it), read nothing from stdin, and carry their name on their command line. The pipe is
handed over as a file descriptor, which needs POSIX: elsewhere (Windows) children
are started by ``spawn`` as before. This module must stay cheap to import and must
not print.
"""

from __future__ import annotations

import contextlib
import importlib
import multiprocessing
import os
import signal
import socket
import subprocess
import sys
import types
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from typing import Any, Callable, Optional

_BOOTSTRAP = """\
import sys
from multiprocessing.connection import Connection
connection = Connection(int(sys.argv[1]))
try:
    path, main = connection.recv()
except (EOFError, OSError):
    raise SystemExit(0)
sys.path[:] = path
from engine.processes import _child
_child(connection, main)
"""
"""What a child runs (``python -c``): the parent may be gone before it says anything,
and then the child ends quietly."""

_loading_main = False
"""Set in a child while it runs its parent's main module."""

_detached: list[subprocess.Popen[bytes]] = []
"""The resource tracker started by ``detach_resource_tracker``."""


class Child:
    """A started child process and the parent's end of its pipe."""

    def __init__(self, connection: Connection, name: str) -> None:
        self.connection = connection
        self.name = name

    @property
    def pid(self) -> Optional[int]:
        raise NotImplementedError

    @property
    def exitcode(self) -> Optional[int]:
        """None while it runs; else its exit code, or minus the signal that ended it."""
        raise NotImplementedError

    def is_alive(self) -> bool:
        return self.exitcode is None

    def join(self, timeout: Optional[float] = None) -> None:
        """Wait until it ends (at most ``timeout`` seconds), and reap it."""
        raise NotImplementedError

    def terminate(self) -> None:
        raise NotImplementedError

    def kill(self) -> None:
        raise NotImplementedError


class _Executed(Child):
    """A child that runs ``sys.executable`` on ``_BOOTSTRAP``."""

    def __init__(self, process: subprocess.Popen[bytes], connection: Connection, name: str) -> None:
        super().__init__(connection, name)
        self.process = process

    @property
    def pid(self) -> Optional[int]:
        return self.process.pid

    @property
    def exitcode(self) -> Optional[int]:
        return self.process.poll()

    def join(self, timeout: Optional[float] = None) -> None:
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout)

    def terminate(self) -> None:
        if self.is_alive():
            with contextlib.suppress(ProcessLookupError):
                self.process.terminate()

    def kill(self) -> None:
        if self.is_alive():
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()


class _Spawned(Child):
    """A child started by multiprocessing's ``spawn``, where no descriptor can be
    handed over (Windows): that runs the main script again, guards needed there."""

    def __init__(self, process: BaseProcess, connection: Connection, name: str) -> None:
        super().__init__(connection, name)
        self.process = process

    @property
    def pid(self) -> Optional[int]:
        return self.process.pid

    @property
    def exitcode(self) -> Optional[int]:
        return self.process.exitcode

    def join(self, timeout: Optional[float] = None) -> None:
        self.process.join(timeout)

    def terminate(self) -> None:
        self.process.terminate()

    def kill(self) -> None:
        self.process.kill()


def start(
    target: str,
    args: tuple[Any, ...] = (),
    *,
    name: str,
    stdout: Optional[int] = None,
    stderr: Optional[int] = None,
) -> Child:
    """Run ``target`` (``"module:function"``) in a new process as
    ``function(connection, *args)``; ``args`` are pickled. ``stdout`` and ``stderr``
    are file descriptors for the child's (None: this process's; POSIX only)."""
    if _loading_main:
        raise RuntimeError(
            "a process cannot be started while the main module is being run in a child "
            'process: guard the script\'s work with if __name__ == "__main__":'
        )
    if os.name != "posix":
        return _spawn(target, args, name)
    mine, theirs = socket.socketpair()
    # Blocked in the child until it ignores Ctrl-C (``_child``): no KeyboardInterrupt
    # traceback from a child still starting up.
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        process = subprocess.Popen(
            [sys.executable, "-c", _BOOTSTRAP, str(theirs.fileno()), name],
            pass_fds=(theirs.fileno(),),
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,
        )
    except BaseException:
        mine.close()
        raise
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)
        theirs.close()
    connection = Connection(mine.detach())
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    with contextlib.suppress(OSError):  # it died at once: the caller finds the pipe closed
        connection.send((list(sys.path), (getattr(main, "__file__", None), spec and spec.name)))
        connection.send((target, args))
    return _Executed(process, connection, name)


def detach_resource_tracker() -> None:
    """Start multiprocessing's resource tracker in a session of its own, if it is not
    running yet.

    Dask's ``LocalCluster`` starts its workers with ``spawn``, whose locks and queues
    are named POSIX semaphores (``/dev/shm/sem.mp-*``, a dozen for two workers) made
    in this process. They are removed when the cluster closes, or else by the
    resource tracker once this process and its workers have ended. The tracker that
    multiprocessing starts is in this process's group, so a kill of the whole group
    (``kill -9 -PGID``, as a test or a job runner ends a run, or a terminal's hangup)
    ended it too, and the semaphores stayed in /dev/shm until the machine restarted.
    Started here, out of the group and the terminal, it outlives such a kill and
    removes them. Where multiprocessing's internals differ (another Python), nothing
    is done: the tracker is then started as before.
    """
    if os.name != "posix":
        return
    from multiprocessing import resource_tracker, spawn

    tracker = getattr(resource_tracker, "_resource_tracker", None)
    if tracker is None or not hasattr(tracker, "_pid") or getattr(tracker, "_fd", 0) is not None:
        return  # running already (or unknown internals): leave it to multiprocessing
    reading, writing = os.pipe()
    try:
        process = subprocess.Popen(
            [
                spawn.get_executable(),
                "-c",
                f"from multiprocessing.resource_tracker import main; main({reading})",
            ],
            pass_fds=(reading,),
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError:
        os.close(writing)
        return
    finally:
        os.close(reading)
    # What ensure_running() would have set: later calls find it alive and use it.
    tracker._fd = writing
    tracker._pid = process.pid
    _detached.append(process)  # kept: a collected Popen would reap it behind multiprocessing


def _spawn(target: str, args: tuple[Any, ...], name: str) -> Child:
    context = multiprocessing.get_context("spawn")
    mine, theirs = context.Pipe()
    process = context.Process(target=_spawned, args=(theirs, target, args), name=name)
    process.start()
    theirs.close()
    return _Spawned(process, mine, name)


def _spawned(connection: Connection, target: str, args: tuple[Any, ...]) -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _call(target, connection, args)


def _call(target: str, connection: Connection, args: tuple[Any, ...]) -> None:
    module, _, function = target.partition(":")
    run: Callable[..., object] = getattr(importlib.import_module(module), function)
    run(connection, *args)


def _child(connection: Connection, main: tuple[Optional[str], Optional[str]]) -> None:
    """The child's side of ``start``, once it has its parent's ``sys.path``."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    sys.modules["__main__"] = _lazy_main(*main)
    try:
        target, args = connection.recv()
    except (EOFError, OSError):
        return  # the parent is gone
    _call(target, connection, args)


def _lazy_main(path: Optional[str], name: Optional[str]) -> types.ModuleType:
    """A ``__main__`` that runs the parent's main module at the first name asked of it
    (unpickling something defined there), as ``spawn`` runs it at every start."""
    lazy = types.ModuleType("__main__")

    def load(attribute: str) -> object:
        # Dunder names are the import machinery's and spawn's questions, not pickle's.
        module = None if attribute.startswith("__") or _loading_main else _run_main(path, name)
        if module is None:
            raise AttributeError(f"module '__main__' has no attribute {attribute!r}")
        return getattr(module, attribute)

    setattr(lazy, "__getattr__", load)  # noqa: B010 (a module's __getattr__, PEP 562)
    return lazy


def _run_main(path: Optional[str], name: Optional[str]) -> Optional[types.ModuleType]:
    """The parent's main module, run here as ``spawn`` runs it (None if there is none
    to run: ``python -c``, a notebook, a package's ``__main__``)."""
    global _loading_main
    import multiprocessing.spawn

    lazy = sys.modules["__main__"]
    data = {"init_main_from_name": name} if name else {"init_main_from_path": path}
    if not name and not path:
        return None
    _loading_main = True
    try:
        multiprocessing.spawn.prepare(data)
    finally:
        _loading_main = False
    module = sys.modules["__main__"]
    return None if module is lazy else module
