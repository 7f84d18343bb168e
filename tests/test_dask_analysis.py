"""``cutoff analyse --scheduler``: batch analysis on Dask, through the real command.

A LocalCluster (``local:2``) gives the serial results; on a real scheduler with two
workers started here, a worker killed mid-run loses no result, and a scheduler
that goes away ends the run with what was finished written; a local run killed
with its whole process group leaves no semaphore in /dev/shm. Skipped without the
``dask`` extra.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from uci_harness import REPO, engine_command

from tests.conftest import child_pids, dask_cluster, still_running

pytest.importorskip("distributed")

EPD = (REPO / "tests" / "data" / "bk12.epd").read_text()


def run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*engine_command(), *args],
        cwd=str(tmp_path),
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )


def records(text: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in text.splitlines() if line]


def stable(record: dict[str, object]) -> dict[str, object]:
    return {key: value for key, value in record.items() if key not in ("time", "nps")}


@pytest.fixture
def cluster() -> Iterator[tuple[str, subprocess.Popen[bytes], list[subprocess.Popen[bytes]]]]:
    """A scheduler and two single-threaded workers without nannies, on loopback."""
    with dask_cluster() as parts:
        yield parts


def _serial(tmp_path: Path, epd: Path) -> list[dict[str, object]]:
    done = run(tmp_path, "analyse", str(epd), "--depth", "4", "--json", "--quiet")
    assert done.returncode == 0, done.stderr
    return [stable(r) for r in records(done.stdout)]


def test_local_cluster_gives_the_serial_results(tmp_path: Path) -> None:
    epd = tmp_path / "bk.epd"
    epd.write_text(EPD)
    done = run(tmp_path, "analyse", str(epd), "--depth", "4", "--json", "--scheduler", "local:2")
    assert done.returncode == 0, done.stderr
    assert [stable(r) for r in records(done.stdout)] == _serial(tmp_path, epd)


def _start(tmp_path: Path, epd: Path, address: str, out: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*engine_command(), "analyse", str(epd), "--depth", "4", "--json", "-o", str(out),
         "--scheduler", address, "--quiet"],
        cwd=str(tmp_path),
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip


def _wait_for_records(path: Path, count: int) -> None:
    deadline = time.monotonic() + 120
    while not (path.exists() and path.read_text().count("\n") >= count):
        assert time.monotonic() < deadline, "no records"
        time.sleep(0.05)


def test_a_killed_worker_loses_no_result(
    tmp_path: Path, cluster: tuple[str, subprocess.Popen[bytes], list[subprocess.Popen[bytes]]]
) -> None:
    address, _, workers = cluster
    epd = tmp_path / "bk.epd"
    epd.write_text(EPD)
    out = tmp_path / "out.jsonl"
    process = _start(tmp_path, epd, address, out)
    _wait_for_records(out, 1)
    os.killpg(workers[0].pid, signal.SIGKILL)  # mid-run: it holds a chunk by now
    _, stderr = process.communicate(timeout=180)
    assert process.returncode == 0, stderr
    got = [stable(r) for r in records(out.read_text())]
    assert got == _serial(tmp_path, epd)  # every position once, in order


def test_a_lost_scheduler_ends_the_run_with_what_was_done(
    tmp_path: Path, cluster: tuple[str, subprocess.Popen[bytes], list[subprocess.Popen[bytes]]]
) -> None:
    address, scheduler, _ = cluster
    epd = tmp_path / "bk.epd"
    epd.write_text(EPD * 3)
    out = tmp_path / "out.jsonl"
    process = _start(tmp_path, epd, address, out)
    _wait_for_records(out, 1)
    os.killpg(scheduler.pid, signal.SIGKILL)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 1, stderr
    assert "scheduler" in stderr and "Traceback" not in stderr
    written = records(out.read_text())
    assert 1 <= len(written) < 36
    # In input order, each once, from the first; a chunk that finished before an
    # earlier one is written too when the run stops (a busy machine makes gaps).
    indexes = [int(str(r["index"])) for r in written]
    assert indexes[0] == 1 and indexes == sorted(set(indexes))


def test_a_local_cluster_that_cannot_start_is_one_line(tmp_path: Path) -> None:
    # Dask's workers need a temporary directory; a plain file there stops them all.
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")
    epd = tmp_path / "bk.epd"
    epd.write_text(EPD)
    done = subprocess.run(
        [*engine_command(), "analyse", str(epd), "--depth", "2", "--scheduler", "local:2"],
        cwd=str(tmp_path),
        capture_output=True,
        text=True,
        timeout=180,
        env={**os.environ, "PYTHONPATH": str(REPO), "DASK_TEMPORARY_DIRECTORY": str(blocker)},
    )
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith("cutoff analyse: the local Dask cluster did not start")


# Imported first by every Python process on the test's PYTHONPATH: it marks the
# ``cutoff`` process, and in the processes that one starts (Dask's workers) it
# refuses every socket connection, so no worker ever reaches the scheduler.
REFUSING_SITECUSTOMIZE = """
import os
import socket

if os.environ.get("CUTOFF_TEST_CHILD"):
    def _refuse(self, address):
        raise ConnectionRefusedError(111, "refused by the test's sitecustomize")

    socket.socket.connect = _refuse
    socket.socket.connect_ex = lambda self, address: 111
else:
    os.environ["CUTOFF_TEST_CHILD"] = "1"
"""


def test_a_local_cluster_whose_workers_never_start_is_one_line(tmp_path: Path) -> None:
    # Dask used to wait for such workers forever: this run hung before its first task.
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(REFUSING_SITECUSTOMIZE)
    epd = tmp_path / "bk.epd"
    epd.write_text(EPD)
    done = subprocess.run(
        [*engine_command(), "analyse", str(epd), "--depth", "2", "--scheduler", "local:2"],
        cwd=str(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
        env={
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(site), str(REPO)]),
            # The workers' time to start and reach the scheduler (30 s by default).
            "DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT": "5s",
        },
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip().splitlines() == [
        "cutoff analyse: the local Dask cluster did not start: "
        "its workers were not ready within 5 s"
    ]


# ------------------------------------------------ issue 103.20: /dev/shm after a kill

SHM = Path("/dev/shm")
DEEP = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"


def _tree(pid: int) -> list[int]:
    """``pid`` and all its descendants, from /proc alone."""
    return [pid, *(grandchild for child in child_pids(pid) for grandchild in _tree(child))]


def _semaphores(pids: list[int]) -> set[str]:
    """The multiprocessing semaphores (``sem.mp-*``) in /dev/shm that ``pids`` have
    open: this test's own, whatever other programs on the machine make."""
    names = set()
    for pid in pids:
        try:
            maps = Path(f"/proc/{pid}/maps").read_text()
        except OSError:
            continue  # ended while we looked
        for line in maps.splitlines():
            path = line.split(maxsplit=5)[-1]
            if path.startswith(f"{SHM}/sem.mp-") and not path.endswith("(deleted)"):
                names.add(Path(path).name)
    return names


@pytest.mark.skipif(not SHM.is_dir(), reason="needs /dev/shm")
def test_a_killed_process_group_leaves_no_semaphore_behind(tmp_path: Path) -> None:
    # The local cluster's spawned workers share named semaphores made by the `cutoff`
    # process; killed whole, with multiprocessing's resource tracker in its group,
    # the run used to leave a dozen of them in /dev/shm for good.
    epd = tmp_path / "deep.epd"
    epd.write_text(f"{DEEP}\n" * 4)
    process = subprocess.Popen(
        [*engine_command(), "analyse", str(epd), "--depth", "60", "--scheduler", "local:2"],
        cwd=str(tmp_path),
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    made: set[str] = set()
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and process.poll() is None:
            tree = _tree(process.pid)
            workers = [pid for pid in tree if b"multiprocessing" in _cmdline(pid)]
            made |= _semaphores(tree)
            if len(workers) >= 2 and made:
                break
            time.sleep(0.2)
        assert process.poll() is None and made, "the local cluster never started"
        tree = _tree(process.pid)  # its workers and multiprocessing's resource tracker
        os.killpg(process.pid, signal.SIGKILL)  # as tests/conftest.py ends a run
        process.wait(timeout=60)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and any((SHM / name).exists() for name in made):
            time.sleep(0.2)
        left = sorted(name for name in made if (SHM / name).exists())
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        for name in made:  # a failing run leaves nothing behind either
            (SHM / name).unlink(missing_ok=True)
    assert left == []
    # The tracker, out of the group, ends once it has removed them.
    assert still_running(tree) == []


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""
