"""engine.analysis.parallel: the execution layer, here, in local processes and on a Dask
LocalCluster.

The task functions below live at module level so that worker processes can import
them by name (they do, as ``test_parallel``, since pytest puts tests/ on the path).
"""

from __future__ import annotations

import importlib.util
import os
import time
from functools import partial
from pathlib import Path

import pytest

from engine.analysis.parallel import (
    SchedulerUnavailableError,
    TaskFailedError,
    run,
    run_ordered,
    worker_state,
)


def square(chunk: list[int]) -> list[int]:
    return [x * x for x in chunk]


def slow_first(chunk: list[int]) -> list[int]:
    """The first item's chunk finishes last: completion order differs from input order."""
    if chunk[0] == 0:
        time.sleep(0.5)
    return chunk


def failing(chunk: list[int]) -> list[int]:
    if 3 in chunk:
        raise ValueError("three is bad")
    return chunk


def pid_and_count(chunk: list[int]) -> list[tuple[int, int]]:
    """Which process ran the item, and how many chunks that process had run before."""
    state = worker_state()
    state["chunks"] = state.get("chunks", 0) + 1
    return [(os.getpid(), state["chunks"]) for _ in chunk]


def touch(directory: str, chunk: list[int]) -> list[int]:
    """Leaves a file per item run, then takes its time (so that stopping early shows)."""
    for item in chunk:
        Path(directory, str(item)).write_text("ran")
    time.sleep(0.2)
    return chunk


@pytest.mark.parametrize("jobs", [1, 2])
def test_results_in_input_order(jobs: int) -> None:
    assert list(run_ordered(square, range(10), jobs=jobs, chunk_size=3)) == [
        x * x for x in range(10)
    ]
    got = list(run(slow_first, range(6), jobs=jobs, chunk_size=1, ordered=False))
    assert sorted(got) == [(i, i) for i in range(6)]
    if jobs == 2:
        assert got[-1] == (0, 0)  # completion order: the slow first item came last


def test_failures_become_results_or_raise() -> None:
    def report(chunk: list[int], error: BaseException) -> list[int]:
        return [-x for x in chunk]

    assert list(run_ordered(failing, range(6), chunk_size=2, on_failure=report)) == [
        0, 1, -2, -3, 4, 5,
    ]  # fmt: skip
    with pytest.raises(TaskFailedError, match="three is bad"):
        list(run_ordered(failing, range(6), chunk_size=2))
    assert list(run_ordered(failing, range(6), jobs=2, chunk_size=2, on_failure=report))[2:4] == [
        -2, -3,
    ]  # fmt: skip


def test_worker_state_lives_across_chunks() -> None:
    here = list(run_ordered(pid_and_count, range(4), chunk_size=1))
    assert {pid for pid, _ in here} == {os.getpid()}
    assert [count for _, count in here][-1] >= 4
    spawned = list(run_ordered(pid_and_count, range(8), jobs=2, chunk_size=1))
    assert os.getpid() not in {pid for pid, _ in spawned}
    assert max(count for _, count in spawned) >= 2  # a worker ran several chunks


def test_stopping_early_cancels_the_rest(tmp_path: Path) -> None:
    results = run(partial(touch, str(tmp_path)), range(40), jobs=2, chunk_size=1)
    for index, _ in results:
        if index >= 1:
            break
    results.close()  # type: ignore[attr-defined]
    assert len(list(tmp_path.iterdir())) < 10


def test_bad_scheduler_addresses() -> None:
    for address in ("bogus", "local:0", "local:x"):
        with pytest.raises(SchedulerUnavailableError):
            list(run_ordered(square, range(3), scheduler=address))


dask_only = pytest.mark.skipif(
    importlib.util.find_spec("distributed") is None,
    reason="Dask (the 'dask' extra) is not installed",
)


@dask_only
def test_on_a_local_dask_cluster(tmp_path: Path) -> None:
    assert list(run_ordered(square, range(10), chunk_size=3, scheduler="local:2")) == [
        x * x for x in range(10)
    ]

    def report(chunk: list[int], error: BaseException) -> list[int]:
        return [-x for x in chunk]

    got = list(run_ordered(failing, range(6), chunk_size=2, scheduler="local:2", on_failure=report))
    assert got == [0, 1, -2, -3, 4, 5]
    results = run(partial(touch, str(tmp_path)), range(40), chunk_size=1, scheduler="local:2")
    for index, _ in results:
        if index >= 1:
            break
    results.close()  # type: ignore[attr-defined]
    assert len(list(tmp_path.iterdir())) < 12
