"""Shared pytest helpers: where the repository and ../shared are, its pyproject.toml,
running its scripts, checking that a process they started is gone, a real Dask cluster
on loopback, and the marks of tests that need two CPUs."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from uci_harness import Engine

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"


CPUS = os.cpu_count() or 1
two_cpus = pytest.mark.skipif(CPUS < 2, reason="needs two CPUs (Threads is at most one a CPU)")
"""Marks a test that sets Threads 2 (or runs two searchers): the Threads option's
maximum is the number of CPUs, so on one CPU the engine sets Threads 2 to 1."""


def shared_file(name: str) -> Path:
    """A file of ../shared/data, or skip the test when the checkout has none."""
    path = SHARED / "data" / name
    if not path.exists():
        pytest.skip(f"../shared/data/{name} not present (user checkout)")
    return path


def pyproject() -> dict[str, Any]:
    """The repository's pyproject.toml, parsed (tomllib; on Python 3.10, which has no
    tomllib, tomli: the [test] extra installs it there)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:
        import tomli as tomllib
    with open(REPO / "pyproject.toml", "rb") as handle:
        data: dict[str, Any] = tomllib.load(handle)
    return data


def default_sigint() -> None:
    """``Popen(preexec_fn=default_sigint)``: a child that Ctrl-C (SIGINT) can interrupt.

    A shell without job control starts background commands with SIGINT ignored, and
    Python keeps an ignored SIGINT ignored; a test run started that way (``pytest &``)
    would pass the ignore on to the programs whose Ctrl-C handling it tests."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def run_repo_script(
    module: str, *args: str, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """``python -m scripts.MODULE ARGS`` from the repository root (MODULE e.g.
    ``matches.epd_suite``), its output captured as text."""
    return subprocess.run(
        [sys.executable, "-m", f"scripts.{module}", *args],
        cwd=str(REPO),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def run_perft(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """``python -m perft ARGS`` from the repository root, its output captured as text
    (stdin closed)."""
    return subprocess.run(
        [sys.executable, "-m", "perft", *args],
        cwd=str(REPO),
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=timeout,
        check=False,
    )


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _listening(process: subprocess.Popen[bytes], port: int, wait_s: float = 60.0) -> bool:
    """Whether ``process`` accepts connections on ``port`` within ``wait_s`` (False at
    once if it has exited)."""
    deadline = time.monotonic() + wait_s
    while process.poll() is None and time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return True
        except OSError:
            time.sleep(0.2)
    return False


def _dask(*args: str) -> subprocess.Popen[bytes]:
    """``dask scheduler|worker ARGS`` in a process group of its own (killed whole)."""
    return subprocess.Popen(
        [sys.executable, "-m", "distributed.cli.dask_" + args[0], *args[1:]],
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


@contextlib.contextmanager
def dask_cluster() -> Iterator[tuple[str, subprocess.Popen[bytes], list[subprocess.Popen[bytes]]]]:
    """A real scheduler and two single-threaded workers without nannies, on loopback:
    (address, scheduler process, worker processes), all killed on exit. Tests kill
    one of them to show what a lost worker or scheduler does to a run."""
    # Nothing connects before the scheduler listens: once a scheduler died at start
    # (why is unknown: its output is discarded; a port taken between _free_port and
    # the bind is one way), and the Client waiting for it never returned.
    for _attempt in range(3):
        port = _free_port()
        address = f"tcp://127.0.0.1:{port}"
        scheduler = _dask("scheduler", "--host", "127.0.0.1", "--port", str(port),
                          "--dashboard-address", ":0")  # fmt: skip
        if _listening(scheduler, port):
            break
        if scheduler.poll() is None:
            os.killpg(scheduler.pid, signal.SIGKILL)
        scheduler.wait()
    else:
        raise RuntimeError("the dask scheduler did not start in three attempts")
    workers = [
        _dask("worker", address, "--nthreads", "1", "--no-nanny", "--host", "127.0.0.1")
        for _ in range(2)
    ]
    from distributed import Client

    try:
        with Client(address, timeout="30s") as client:
            client.wait_for_workers(2, timeout=60)
        yield address, scheduler, workers
    finally:
        for process in (scheduler, *workers):
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def process_gone(pid: int, wait_s: float = 5.0) -> bool:
    """Whether process ``pid`` has ended (within ``wait_s`` seconds), from /proc alone.

    A zombie counts as ended: it runs no more, and whether it is reaped at once
    depends on what the container runs as process 1.
    """
    deadline = time.monotonic() + wait_s
    while True:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            return True
        # The state follows the command name, which is in parentheses.
        if stat.rpartition(")")[2].split()[0] == "Z":
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)


def child_pids(pid: int) -> list[int]:
    """The processes whose parent is ``pid``, from /proc alone (no psutil)."""
    children = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue  # ended while we looked
        # Fields after the parenthesised command name: state, ppid, ...
        if int(stat.rpartition(")")[2].split()[1]) == pid:
            children.append(int(entry.name))
    return children


def named_children(pid: int, name: str = "cutoff-helper") -> list[int]:
    """The live children of ``pid`` that engine.processes started as ``name``...
    (Lazy SMP helpers by default: ``cutoff-helper-0``...), from /proc alone."""
    found = []
    for child in child_pids(pid):
        try:
            if name.encode() in Path(f"/proc/{child}/cmdline").read_bytes():
                found.append(child)
        except OSError:
            continue  # ended while we looked
    return found


def still_running(pids: list[int]) -> list[int]:
    """Those of ``pids`` that have not ended within a few seconds, killed now.

    A test asserts the result is empty; killing them first keeps a failing test
    from leaving engines running on a shared machine.
    """
    left = [pid for pid in pids if not process_gone(pid)]
    for pid in left:
        with contextlib.suppress(OSError):  # it ended after all
            os.kill(pid, signal.SIGKILL)
    return left


SHM = Path("/dev/shm")


def shm_segments() -> set[str]:
    """Shared memory segments (``psm_`` is SharedMemory's prefix). Other entries,
    such as the ``sem.mp-`` semaphores of any multiprocessing program running beside
    the tests, come and go on their own and must not fail a leak check."""
    if not SHM.is_dir():
        return set()
    return {p.name for p in SHM.iterdir() if p.name.startswith("psm_")}


def shm_mapped(name: str) -> bool:
    """Whether a live process maps the segment (a test running beside this one)."""
    needle = f"/dev/shm/{name}".encode()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if needle in (entry / "maps").read_bytes():
                    return True
            except OSError:
                continue
    return False


def shm_leaked(before: set[str]) -> set[str]:
    """The segments made since ``before`` that no live process maps: left behind.
    (A segment of a test running beside this one is mapped by its engine.)"""
    return {name for name in shm_segments() - before if not shm_mapped(name)}


def shm_named_by(pid: int) -> set[str]:
    """The segments process ``pid`` maps whose names still exist in /dev/shm (a
    segment unlinked once its helpers attached shows as ``(deleted)``)."""
    try:
        maps = Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return set()
    names = {
        line.split("/dev/shm/", 1)[1].split()[0]
        for line in maps.splitlines()
        if "/dev/shm/psm_" in line and not line.endswith("(deleted)")
    }
    return {name for name in names if (SHM / name).exists()}


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    """Cutoff through its real process, after the ``uci`` handshake."""
    eng = Engine(tmp_path)
    eng.handshake()
    yield eng
    eng.close()


def skip_in_compiled_build(why: str) -> None:
    """Skip a test that patches a compiled module's internals (compiled callers call
    the compiled function directly and never see the patch), saying ``why``."""
    from engine.compiled import build_description

    if not build_description().startswith("interpreted"):
        pytest.skip(f"needs the interpreted build (cutoff compile --remove): {why}")


def pytest_report_header() -> str:
    """Which build the tests import: tests that patch a compiled module's internals
    cannot run against a compiled build (``cutoff compile --remove`` first)."""
    from engine.compiled import build_description

    return f"engine build: {build_description()}"
