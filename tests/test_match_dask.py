"""Matches on Dask (``--scheduler``), through the real command ``python -m scripts.matches.match``.

A LocalCluster of two workers (``local:2``) plays the same games as the local runner
(Cutoff at fixed nodes: deterministic, it clears its hash on ucinewgame); an SPRT
decides after a few pairs and the rest are cancelled; a worker killed mid-run loses no
pair and counts none twice; a pair whose worker dies on every attempt is reported, not
dropped; SIGTERM, or a Ctrl-C to the whole process group, ends the run with a summary;
and a scheduler that goes away (a real one, started here) ends the run with what was
finished written. Skipped without the ``dask`` extra. Small matches only: the machine
is shared.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import child_pids, dask_cluster, still_running
from tests.test_match import (
    OPENINGS,
    ROOT,
    RUNNER,
    check_match,
    cutoff,  # noqa: F401  (the fixture that skips when Cutoff cannot start)
    cutoff_spec,
    read_pgn,
    run_match,
    stub,
)

pytest.importorskip("distributed")


def games(pgn: Path) -> dict[str, tuple[Any, ...]]:
    """Each game by its Round: everything but the per-move times in the comments."""
    found = {}
    for game in read_pgn(pgn):
        headers = dict(game.headers)
        found[headers["Round"]] = (headers, [move.uci() for move in game.mainline_moves()])
    return found


def outcome(summary: dict[str, Any]) -> tuple[Any, ...]:
    first = summary["engines"][0]
    return (
        first["wins"],
        first["draws"],
        first["losses"],
        summary["pentanomial"],
        summary["reasons"],
        summary["pairs_identical"],
    )


@pytest.mark.usefixtures("cutoff")
def test_local_cluster_plays_the_local_games(tmp_path: Path) -> None:
    args = ["--engine", cutoff_spec("big") + " nodes=300",
            "--engine", cutoff_spec("small") + " nodes=150",
            "--rounds", "2", "--maxmoves", "30",
            "--openings", str(OPENINGS), "--order", "random", "--seed", "7"]  # fmt: skip
    local_pgn, dask_pgn = tmp_path / "local.pgn", tmp_path / "dask.pgn"
    code, local, err = run_match(*args, "--pgn", str(local_pgn))
    assert code == 0, err
    code, dask, err = run_match(*args, "--pgn", str(dask_pgn), "--scheduler", "local:2")
    assert code == 0, err
    check_match(dask, dask_pgn)
    assert dask["games"] == 4 and dask["scheduler"] == "local:2" and dask["failed_pairs"] == []
    assert outcome(dask) == outcome(local)
    assert games(dask_pgn) == games(local_pgn)
    assert [e["name"] for e in dask["engines"]] == ["big", "small"]


def test_sprt_decides_early_and_cancels_the_rest(tmp_path: Path) -> None:
    # As in test_match: the second engine resigns every game, the SPRT accepts H1
    # after a few pairs, and the 200 requested pairs are not played.
    pgn = tmp_path / "sprt.pgn"
    started = time.monotonic()
    code, summary, err = run_match(
        "--engine", stub("uci_stub.py", "--score", "500", name="strong"),
        "--engine", stub("uci_stub.py", "--score", "-500", name="weak"),
        "--depth", "1", "--resign", "2", "400", "--rounds", "200",
        "--sprt", "0", "200", "--alpha", "0.1", "--beta", "0.1",
        "--openings", str(OPENINGS), "--pgn", str(pgn), "--scheduler", "local:2",
    )  # fmt: skip
    took = time.monotonic() - started
    assert code == 0, err
    check_match(summary, pgn)
    assert summary["sprt"]["result"] == "H1 accepted"
    assert summary["stopped"] == "SPRT: H1 accepted" and not summary["aborted"]
    assert summary["games_planned"] == 400
    assert summary["games"] == 2 * summary["pairs"] and summary["pairs"] <= 10
    assert summary["pentanomial"] == [0, 0, 0, 0, summary["pairs"]]
    assert "LLR" in err  # the progress lines show it as pairs complete
    assert took < 40  # nothing waited for the cancelled pairs


def _worker_with_engines(runner: int) -> int:
    """A LocalCluster worker of ``runner`` that is playing a pair (has engine children)."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        for pid in child_pids(runner):
            try:
                command = Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:
                continue
            if b"multiprocessing" in command and child_pids(pid):
                return pid
        time.sleep(0.05)
    raise AssertionError("no worker is playing a pair")


@pytest.mark.slow
def test_a_killed_worker_loses_no_pair(tmp_path: Path) -> None:
    pgn = tmp_path / "killed.pgn"
    pids = tmp_path / "engines.pid"
    slow = ["--sleep", "0.04", "--pid-file", str(pids)]
    proc = subprocess.Popen(
        [*RUNNER, "--json", "-",
         "--engine", stub("uci_stub.py", *slow, name="a"),
         "--engine", stub("uci_stub.py", *slow, name="b"),
         "--depth", "1", "--rounds", "6", "--maxmoves", "12",
         "--openings", str(OPENINGS), "--pgn", str(pgn), "--scheduler", "local:2"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stderr is not None
        seen = []
        for line in proc.stderr:
            seen.append(line)
            if line.startswith("[2/12]"):  # the first pair is in
                break
        else:
            raise AssertionError("".join(seen))
        victim = _worker_with_engines(proc.pid)
        os.kill(victim, signal.SIGKILL)
        out, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, "".join(seen) + err
    assert "Traceback" not in err
    summary = json.loads(out)
    # Every pair once: the killed worker's pair was played again elsewhere.
    assert summary["games"] == 12 and summary["pairs"] == 6
    played = check_match(summary, pgn)
    rounds = sorted(game.headers["Round"] for game in played)
    assert rounds == sorted(f"{pair}.{game}" for pair in range(1, 7) for game in (1, 2))
    assert summary["failed_pairs"] == [] and not summary["aborted"]
    assert still_running([int(pid) for pid in pids.read_text().split()]) == []


@pytest.mark.slow
def test_a_pair_whose_worker_always_dies_is_reported(tmp_path: Path) -> None:
    pgn = tmp_path / "failed.pgn"
    code, summary, err = run_match(
        "--engine", stub("kill_worker.py", name="killer"), "--engine", stub(name="good"),
        "--depth", "1", "--rounds", "1", "--pgn", str(pgn), "--scheduler", "local:2",
    )  # fmt: skip
    assert code == 2, err
    assert summary["games"] == 0 and summary["pairs"] == 0
    (failed,) = summary["failed_pairs"]
    assert failed["pair"] == 1 and failed["error"].startswith("KilledWorker:")
    assert "pair 1 failed on every attempt and is not counted" in err
    assert "Failed pairs (not counted): 1" in err  # the text summary (JSON on stdout)


@pytest.mark.parametrize(
    ("signum", "group", "status"),
    [(signal.SIGTERM, False, 143), (signal.SIGINT, True, 130)],
    ids=["SIGTERM to the runner", "Ctrl-C to the terminal's process group"],
)
@pytest.mark.slow
def test_a_signal_ends_a_dask_match_with_its_summary(
    tmp_path: Path, signum: int, group: bool, status: int
) -> None:
    # A Ctrl-C in a terminal reaches the local cluster's workers too: they must leave
    # it to the runner instead of printing tracebacks.
    pgn = tmp_path / "stopped.pgn"
    pids = tmp_path / "engines.pid"
    slow = ["--sleep", "0.05", "--pid-file", str(pids)]
    proc = subprocess.Popen(
        [*RUNNER, "--json", "-",
         "--engine", stub("uci_stub.py", *slow, name="a"),
         "--engine", stub("uci_stub.py", *slow, name="b"),
         "--depth", "1", "--rounds", "20", "--maxmoves", "10",
         "--openings", str(OPENINGS), "--pgn", str(pgn), "--scheduler", "local:2"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
    )  # fmt: skip
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            if line.startswith("[2/40]"):
                break
        if group:
            os.killpg(proc.pid, signum)
        else:
            proc.send_signal(signum)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
    assert proc.returncode == status, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    summary = json.loads(out)
    name = signal.Signals(signum).name
    assert summary["interrupted"] == name and 2 <= summary["games"] < 40
    assert summary["stopped"] == f"interrupted by {name} (running pairs not counted)"
    check_match(summary, pgn)
    assert still_running([int(pid) for pid in pids.read_text().split()]) == []


# --------------------------------------------------------------------------- a real scheduler


@pytest.fixture
def cluster() -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """A scheduler and two single-threaded workers, on loopback; the scheduler's process."""
    with dask_cluster() as (address, scheduler, _):
        yield address, scheduler


def test_a_lost_scheduler_ends_the_match_with_what_was_finished(
    tmp_path: Path, cluster: tuple[str, subprocess.Popen[bytes]]
) -> None:
    address, scheduler = cluster
    pgn = tmp_path / "lost.pgn"
    proc = subprocess.Popen(
        [*RUNNER, "--json", "-",
         "--engine", stub("uci_stub.py", "--sleep", "0.03", name="a"),
         "--engine", stub("uci_stub.py", "--sleep", "0.03", name="b"),
         "--depth", "1", "--rounds", "20", "--maxmoves", "10",
         "--openings", str(OPENINGS), "--pgn", str(pgn), "--scheduler", address],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            if line.startswith("[2/40]"):
                break
        os.killpg(scheduler.pid, signal.SIGKILL)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 2, err
    assert "Traceback" not in err
    summary = json.loads(out)
    assert summary["aborted"] and "scheduler" in summary["stopped"]
    assert 2 <= summary["games"] < 40 and summary["games"] == 2 * summary["pairs"]
    check_match(summary, pgn)  # what was finished is in the PGN, complete
