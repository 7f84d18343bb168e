"""Tests for the match runner's pair tasks (scripts/matches/pairs, dispatch) without Dask.

The pair task and the client that records its results run here through the execution
layer's in-process path (``dispatch.run_pairs`` with no scheduler), between the stub
engines of tests/engines: the same games as the local runner, the fault policy inside
a pair, odd game counts, an engine that cannot start, results that disagree or failed
on every attempt; and ``--scheduler`` without Dask, which must say how to install it.
The Dask cluster itself is tested in test_match_dask.py. Stub engines only: fast.
"""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import pytest

from engine.extras import install_hint
from scripts.matches import dispatch
from scripts.matches.config import Config
from scripts.matches.errors import MatchError
from scripts.matches.match_args import build_config, build_parser
from scripts.matches.pairs import PairResult, failed_pairs
from scripts.matches.runner import Match, run_match
from tests.test_match import OPENINGS, RUNNER, read_pgn, stub

ROOT = Path(__file__).resolve().parent.parent


def config(*args: str) -> Config:
    return build_config(build_parser().parse_args(["--quiet", *args]))


def games_by_round(pgn: Path) -> dict[str, tuple[str, str, str, list[str]]]:
    return {
        g.headers["Round"]: (
            g.headers["White"],
            g.headers["Result"],
            g.headers["Reason"],
            [m.uci() for m in g.mainline_moves()],
        )
        for g in read_pgn(pgn)
    }


def test_pairs_in_process_play_the_local_games(tmp_path: Path) -> None:
    args = ["--engine", stub(name="left"), "--engine", stub(name="right"),
            "--depth", "1", "--rounds", "3", "--maxmoves", "30",
            "--openings", str(OPENINGS), "--order", "random", "--seed", "3"]  # fmt: skip
    local = asyncio.run(run_match(config(*args, "--pgn", str(tmp_path / "local.pgn"))))
    pairs = dispatch.run_pairs(config(*args, "--pgn", str(tmp_path / "pairs.pgn")))
    assert pairs.names == local.names == ["left", "right"]
    assert pairs.tally == local.tally
    assert games_by_round(tmp_path / "pairs.pgn") == games_by_round(tmp_path / "local.pgn")
    assert pairs.stop_reason is None and not pairs.aborted and not pairs.failed_pairs


def test_an_odd_number_of_games_ends_with_a_single_game(tmp_path: Path) -> None:
    match = dispatch.run_pairs(
        config("--engine", stub(), "--engine", stub(), "--depth", "1", "--games", "3",
               "--maxmoves", "10", "--pgn", str(tmp_path / "odd.pgn"))
    )  # fmt: skip
    assert match.tally.games == 3 and match.tally.pairs == 1
    assert sorted(games_by_round(tmp_path / "odd.pgn")) == ["1.1", "1.2", "2.1"]


def test_a_crash_inside_a_pair_stops_the_match_without_recover(tmp_path: Path) -> None:
    crash = stub("exit_midgame.py", "--after", "2", name="quitter")
    match = dispatch.run_pairs(
        config("--engine", crash, "--engine", stub(name="good"), "--depth", "1",
               "--rounds", "3", "--pgn", str(tmp_path / "crash.pgn"))
    )  # fmt: skip
    # As locally: the crashed game counts, the pair's second game is not played.
    assert match.aborted and "--recover" in (match.stop_reason or "")
    assert match.tally.games == 1 and match.tally.faults[0] == {"crash": 1}

    match = dispatch.run_pairs(
        config("--engine", crash, "--engine", stub(name="good"), "--depth", "1",
               "--rounds", "2", "--recover")
    )  # fmt: skip
    assert not match.aborted and match.tally.games == 4
    assert match.tally.faults[0] == {"crash": 4} and match.tally.losses == 4


def test_an_engine_that_cannot_start_is_bad_input(tmp_path: Path) -> None:
    pgn = tmp_path / "none.pgn"
    with pytest.raises(MatchError, match="cannot be started"):
        dispatch.run_pairs(
            config("--engine", "/nonexistent/engine", "--engine", stub(), "--depth", "1",
                   "--pgn", str(pgn))
        )  # fmt: skip
    assert not pgn.exists()  # as in a local run: bad input leaves no file
    with pytest.raises(MatchError, match="no option 'Hash'"):
        dispatch.run_pairs(
            config("--engine", stub(), "--engine", stub() + " option.Hash=16", "--depth", "1")
        )


def _match() -> Match:
    return Match(config("--engine", stub(), "--engine", stub(), "--depth", "1"), ["a", "b"])


def test_a_pair_that_failed_on_every_attempt_is_reported(
    capsys: pytest.CaptureFixture[str],
) -> None:
    match = _match()
    tasks = list(dispatch.pair_tasks(match))
    error = RuntimeError("Attempted to run task 'x' on 4 different workers. More text.")
    (result,) = failed_pairs(tasks, error)
    assert result.failure == "RuntimeError: Attempted to run task 'x' on 4 different workers"
    dispatch._take(match, result)
    assert match.failed_pairs == [{"pair": 1, "error": result.failure}]
    assert match.tally.games == 0 and not match.aborted
    assert "pair 1 failed on every attempt" in capsys.readouterr().err


def test_workers_with_other_engines_stop_the_match() -> None:
    match = _match()
    dispatch._take(match, PairResult(0, names=("a", "b"), worker="w1:1"))
    assert match.names_from == "w1:1" and not match.aborted
    dispatch._take(match, PairResult(1, names=("a", "c"), worker="w2:2"))
    assert match.aborted and "every worker needs the same engines" in (match.stop_reason or "")


def test_scheduler_without_dask_says_how_to_install(tmp_path: Path) -> None:
    # A 'distributed' that cannot be imported stands for a missing Dask.
    (tmp_path / "distributed.py").write_text("raise ImportError('no Dask here')\n")
    pgn = tmp_path / "none.pgn"
    proc = subprocess.run(
        [*RUNNER, "--engine", stub(), "--engine", stub(), "--depth", "1",
         "--scheduler", "local:2", "--pgn", str(pgn)],
        capture_output=True, text=True, timeout=60, cwd=ROOT,
        env={"PYTHONPATH": f"{tmp_path}:{ROOT}", "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.strip() == (
        f"cutoff-match: error: --scheduler needs Dask: {install_hint('dask')}"
    )
    assert not pgn.exists()


@pytest.mark.parametrize("address", ["local:0", "local:x", "host:8786"])
def test_a_bad_scheduler_address_is_one_line(address: str) -> None:
    pytest.importorskip("distributed")
    proc = subprocess.run(
        [*RUNNER, "--engine", stub(), "--engine", stub(), "--depth", "1",
         "--scheduler", address],
        capture_output=True, text=True, timeout=60, cwd=ROOT,
    )  # fmt: skip
    assert proc.returncode == 1 and proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cutoff-match: error:"), proc.stderr
