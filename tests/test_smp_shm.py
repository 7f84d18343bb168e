"""Lazy SMP against its shared memory (engine.play.smp): a small /dev/shm, as in a
container (issue 65 item 4), and an engine killed while its helpers start (item 7).

The sizing decision is tested as a function and through a pool; the real thing
through the ``cutoff`` process in a private mount namespace whose /dev/shm is a
small tmpfs (``unshare -m``, as root; skipped where that is not permitted): there,
without the checks, ``Threads 2`` with ``Hash 256`` died of SIGBUS mid-search.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from multiprocessing import shared_memory
from pathlib import Path
from typing import Callable

import chess
import pytest
import uci_harness
from conftest import named_children, shm_leaked, shm_segments, two_cpus
from uci_harness import Engine, bestmove_of

from engine.play import smp
from engine.play.smp import (
    MB,
    HelperPool,
    SharedMemoryFullError,
    fit_shared_mb,
    make_pool,
    segment_bytes,
)

SHM = Path("/dev/shm")
ROOT = Path(__file__).resolve().parent.parent
TRACES = ("Traceback", "Exception ignored", "Error", "Warning", "resource_tracker")
"""What the stderr of an engine and its helpers must not hold."""


# ------------------------------------------------------------ the sizing decision


@pytest.mark.parametrize(
    ("wanted", "free", "expected"),
    [
        (256, None, 256),  # no /dev/shm to measure (macOS): as asked
        (256, 24 << 30, 256),  # plenty
        (16, 20 * MB, 16),  # fits beside the eighth left to others
        (16, 17 * MB, 14),  # fits, but not beside what is left to others
        (256, 64 * MB, 55),  # Docker's default /dev/shm
        (256, 16 * MB, 13),
        (256, 9 * MB, 0),  # 6 MB would fit: under MIN_SHARED_MB, one thread
        (4, 6 * MB, 4),  # a small Hash needs no more than itself
        (2, 3 * MB, 0),  # 1 MB kept free, the header: 1 MB left, under 2
        (256, 0, 0),
    ],
)
def test_the_shared_table_is_sized_to_the_free_shared_memory(
    wanted: int, free: int | None, expected: int
) -> None:
    assert fit_shared_mb(wanted, free) == expected
    if expected and free is not None:
        # What is left to others: an eighth of the free space, at least 1 MB.
        assert free - segment_bytes(expected) >= max(MB, free // 8)


def test_a_pool_shares_what_fits_and_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(smp, "shm_free_bytes", lambda: 20 * MB)
    notes: list[str] = []
    pool = HelperPool(2, 256, notes.append)
    try:
        assert pool.size_mb == 17
        assert len(pool.table_words) * 8 == 17 * MB
        assert pool.helpers == 1
        assert notes == ["Hash: /dev/shm has 20 MB free: the shared table is 17 MB, not 256"]
    finally:
        pool.close()


def test_no_room_to_share_means_searching_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(smp, "shm_free_bytes", lambda: 5 * MB)
    notes: list[str] = []
    with pytest.raises(SharedMemoryFullError):
        HelperPool(2, 64, notes.append)
    assert not named_children(os.getpid())  # nothing was started
    assert make_pool(2, 64, notes.append) is None
    assert notes == [
        "Threads: cannot start helpers (/dev/shm has 5 MB free, too little to share); "
        "searching alone"
    ]


@pytest.mark.skipif(
    not SHM.is_dir() or not hasattr(os, "posix_fallocate"), reason="needs /dev/shm, fallocate"
)
def test_a_new_segment_is_backed_at_once() -> None:
    # ftruncate alone leaves the pages to be found at the first write (or not: SIGBUS).
    size = 8 * MB
    segment = shared_memory.SharedMemory(create=True, size=size)
    try:
        path = SHM / segment.name.lstrip("/")
        assert path.stat().st_blocks * 512 < size
        smp._reserve(segment, size)
        assert path.stat().st_blocks * 512 >= size
    finally:
        segment.close()
        segment.unlink()


# -------------------------------------------------- a small /dev/shm, for real


def _small_shm_command(size: str) -> list[str]:
    """A command prefix that runs the rest in a mount namespace of its own with a
    tmpfs of ``size`` on /dev/shm; skips the test where that is not permitted."""
    prefix = [
        "unshare",
        "-m",
        "sh",
        "-c",
        'mount -t tmpfs -o size="$1" tmpfs /dev/shm && shift && exec "$@"',
        "sh",
        size,
    ]
    if not sys.platform.startswith("linux"):
        pytest.skip("mount namespaces are Linux's")
    try:
        probe = subprocess.run(
            [*prefix, "true"], capture_output=True, text=True, timeout=30, check=False
        )
    except OSError as error:
        pytest.skip(f"no unshare: {error}")
    if probe.returncode != 0:
        pytest.skip(f"cannot mount a private /dev/shm: {probe.stderr.strip()}")
    return prefix


def _engine_in(size: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Engine:
    prefix = _small_shm_command(size)
    command: Callable[[], list[str]] = uci_harness.engine_command
    monkeypatch.setattr(uci_harness, "engine_command", lambda: [*prefix, *command()])
    return Engine(tmp_path, protocol_only=False)


@two_cpus
def test_threads_two_in_a_16_mb_dev_shm_shares_what_fits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    eng = _engine_in("16m", tmp_path, monkeypatch)
    eng.handshake()
    eng.send("setoption name Hash value 256")
    eng.send("setoption name Threads value 2")
    eng.send("isready")
    _, _, seen = eng.expect("readyok", timeout=60)
    assert "info string Hash: /dev/shm has 16 MB free: the shared table is 13 MB, not 256" in seen
    board = chess.Board()
    eng.send("position startpos")
    # A 256 MB table in a 16 MB tmpfs died of SIGBUS within a second of search.
    lines, best, _ = eng.search("go movetime 3000", timeout=60)
    assert chess.Move.from_uci(bestmove_of(best)) in board.legal_moves
    assert not any("helper" in line for line in lines), lines
    # The same Hash again (a GUI sets every option before each game): the helpers
    # and their table stay, and the note is not repeated.
    eng.send("setoption name Hash value 256")
    eng.send("isready")
    _, _, seen = eng.expect("readyok", timeout=60)
    assert seen == ["readyok"]
    eng.send("quit")
    assert eng.proc.wait(20) == 0
    eng.close()
    assert not any(trace in eng.stderr.decode() for trace in TRACES), eng.stderr


@two_cpus
def test_threads_two_in_a_4_mb_dev_shm_searches_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    eng = _engine_in("4m", tmp_path, monkeypatch)
    eng.handshake()
    eng.send("setoption name Threads value 2")
    eng.send("isready")
    _, _, seen = eng.expect("readyok", timeout=60)
    assert (
        "info string Threads: cannot start helpers (/dev/shm has 4 MB free, too little to "
        "share); searching alone" in seen
    )
    eng.send("position startpos")
    _, best, _ = eng.search("go depth 4", timeout=60)
    assert bestmove_of(best) != "(none)"
    eng.send("quit")
    assert eng.proc.wait(20) == 0
    eng.close()


_NO_ROOM_SCRIPT = """
import os
from engine.play import smp
smp.shm_free_bytes = lambda path=smp.SHM_DIR: 1 << 30  # as if another took the room since
try:
    smp.HelperPool(2, 64, print)
except smp.SharedMemoryFullError as error:
    print("refused:", error.strerror)
children = open(f"/proc/{os.getpid()}/task/{os.getpid()}/children").read().split()
print("left:", os.listdir("/dev/shm"), children)
"""


def test_a_table_the_filesystem_cannot_back_is_refused_not_a_sigbus() -> None:
    # The free-space check passes (it is made to lie), the reservation must fail.
    prefix = _small_shm_command("16m")
    done = subprocess.run(
        [*prefix, sys.executable, "-c", _NO_ROOM_SCRIPT],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "refused: no room for a 64 MB shared table in /dev/shm" in done.stdout
    assert "left: [] []" in done.stdout
    assert not any(trace in done.stderr for trace in TRACES), done.stderr


# ------------------------------------------- killed while the helpers start up


def _marked(mark: str) -> list[int]:
    """Live processes whose environment holds ``mark`` (the engine, its helpers and
    multiprocessing's resource tracker inherit it); zombies have none left."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if mark.encode() in (entry / "environ").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue  # gone, or not ours to read
    return found


@two_cpus
@pytest.mark.parametrize(
    ("wait_for_helper", "delay"),
    [(False, 0.05), (True, 0.0), (True, 0.3), (True, 0.7)],
    ids=["after-setoption", "helper-spawned", "helper-importing", "helper-attaching"],
)
def test_killed_while_helpers_start_the_engine_leaves_nothing_and_no_trace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, wait_for_helper: bool, delay: float
) -> None:
    mark = f"CUTOFF_TEST_MARK={uuid.uuid4().hex}"
    monkeypatch.setenv("CUTOFF_TEST_MARK", mark.partition("=")[2])
    before = shm_segments()
    eng = Engine(tmp_path, protocol_only=False)
    eng.handshake()
    eng.send("setoption name Threads value 2")
    if wait_for_helper:
        deadline = time.monotonic() + 30
        while not named_children(eng.proc.pid):
            assert time.monotonic() < deadline, "no helper started"
            time.sleep(0.01)
    time.sleep(delay)
    os.kill(eng.proc.pid, signal.SIGKILL)
    eng.proc.wait(10)
    deadline = time.monotonic() + 20
    while _marked(mark):
        assert time.monotonic() < deadline, f"outlived the engine: {_marked(mark)}"
        time.sleep(0.1)
    eng._err_reader.join(10)  # stderr ends when the last process holding it does
    assert not any(trace in eng.stderr.decode() for trace in TRACES), eng.stderr.decode()
    assert not shm_leaked(before)
    eng.close(check=False)
