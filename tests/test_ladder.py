"""The rating ladder (``python -m scripts.matches.ladder``) and the rating it reports.

The ladder runs as users start it, between the tiny stub engine (tests/engines) at
"levels" that only change its name, and Cutoff against the stub: what is checked is
the plumbing (one match per level, files written per level, ``--resume``, bad input)
and the statistics (``stats.rating_on_scale``), not anyone's strength.
"""

from __future__ import annotations

import importlib.util
import json
import math
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import chess.pgn
import pytest

from scripts.matches.elo import LevelResult, rating_on_scale, score_from_elo
from tests.conftest import REPO, default_sigint

STUB = f"cmd='{sys.executable} {REPO / 'tests' / 'engines' / 'uci_stub.py'}'"
HAS_MATPLOTLIB = importlib.util.find_spec("matplotlib") is not None
LADDER = [sys.executable, "-m", "scripts.matches.ladder"]


def run_ladder(*args: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([*LADDER, *args], capture_output=True, text=True, timeout=300, cwd=REPO)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def test_rating_at_one_level_is_that_level_plus_the_elo_difference() -> None:
    rating, error = rating_on_scale([LevelResult(2000, 10, 0, 10)])
    assert rating == pytest.approx(2000.0)
    assert 100 < error < 200
    # 75 % against 1800 is the logistic model's +191 Elo.
    rating, _ = rating_on_scale([LevelResult(1800, 30, 0, 10)])
    assert rating == pytest.approx(1800 + 400 * math.log10(3), abs=0.01)


def test_rating_explains_all_levels_at_once() -> None:
    # The round-one ladder: 1800 62.5 %, 2000 17.5 %, 2200 5 %.
    levels = [
        LevelResult(1800, 24, 2, 14),
        LevelResult(2000, 6, 2, 32),
        LevelResult(2200, 1, 2, 37),
    ]
    rating, error = rating_on_scale(levels)
    expected = sum(level.games * score_from_elo(rating - level.rating) for level in levels)
    assert expected == pytest.approx(24 + 1 + 6 + 1 + 1 + 1)
    assert 1750 < rating < 1900 and 0 < error < 100
    # Four times the games, the same scores: half the error bar.
    more = [LevelResult(x.rating, 4 * x.wins, 4 * x.draws, 4 * x.losses) for x in levels]
    rating_more, error_more = rating_on_scale(more)
    assert rating_more == pytest.approx(rating)
    assert error_more == pytest.approx(error / 2)


def test_rating_of_all_wins_or_all_losses_is_not_finite() -> None:
    assert rating_on_scale([LevelResult(1800, 5, 0, 0)]) == (math.inf, math.inf)
    assert rating_on_scale([LevelResult(1800, 0, 0, 5)]) == (-math.inf, math.inf)
    # One perfect level does not make the ladder infinite when another is not.
    rating, _ = rating_on_scale([LevelResult(1800, 5, 0, 0), LevelResult(2200, 1, 0, 4)])
    assert math.isfinite(rating)


def test_ladder_plays_each_level_writes_results_and_resumes(tmp_path: Path) -> None:
    out = tmp_path / "ladder"
    args = [
        "--engine", f"{STUB} name=Rated",
        "--opponent", f"{STUB} name=Level{{elo}}",
        "--levels", "1500", "1700",
        "--depth", "1", "--rounds", "1", "--maxmoves", "12", "--quiet",
        "--out", str(out),
    ]  # fmt: skip
    if HAS_MATPLOTLIB:
        args += ["--plot", str(tmp_path / "ladder.png")]
    proc = run_ladder(*args)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((out / "ladder.json").read_text())
    assert [row["level"] for row in summary["levels"]] == [1500, 1700]
    assert summary["games"] == 4
    for level in (1500, 1700):
        level_summary = json.loads((out / f"{level}.json").read_text())
        assert level_summary["engines"][1]["name"] == f"Level{level}"
        with open(out / f"{level}.pgn", encoding="utf-8") as handle:
            games = [chess.pgn.read_game(handle) for _ in range(2)]
        assert all(game is not None and not game.errors for game in games)
    table = (out / "ladder.md").read_text()
    assert "| 1500 |" in table and "| 1700 |" in table
    assert "Rating on the opponent's scale" in proc.stdout
    # The host's yardstick, measured since no --perft-rate was given, is printed and kept.
    measured = re.search(
        r"yardstick: python-chess perft ([\d,]+) leaves/s on this host", proc.stderr
    )
    assert measured, proc.stderr
    rate = int(measured.group(1).replace(",", ""))
    assert rate > 0
    assert summary["yardstick"]["perft_leaves_per_second"] == rate
    assert summary["yardstick"]["tc"] is None and not summary["yardstick"]["scaled"]
    assert f"python-chess perft {rate:,} leaves/s; tc not set" in table
    assert f"python-chess perft {rate:,} leaves/s" in proc.stdout
    if HAS_MATPLOTLIB:
        assert (tmp_path / "ladder.png").read_bytes().startswith(b"\x89PNG")

    # --resume keeps finished levels and plays again the one whose summary is gone.
    (out / "1700.json").unlink()
    kept = (out / "1500.pgn").read_text()
    proc = run_ladder(*args, "--resume")
    assert proc.returncode == 0, proc.stderr
    assert "level 1500" not in proc.stderr and "level 1700" in proc.stderr
    assert "measuring" not in proc.stderr
    assert f"perft {rate:,} leaves/s recorded in" in proc.stderr
    assert (out / "1500.pgn").read_text() == kept
    assert json.loads((out / "1700.json").read_text())["games"] == 2
    assert json.loads((out / "ladder.json").read_text())["games"] == 4


def test_ladder_scales_its_clock_by_the_perft_rate(tmp_path: Path) -> None:
    # At 480,000 leaves/s, twice the reference host, 10+0.1 is played as 5+0.05.
    out = tmp_path / "ladder"
    args = [
        "--engine", f"{STUB} name=Rated",
        "--opponent", f"{STUB} name=Level{{elo}}",
        "--levels", "1500", "--rounds", "1", "--maxmoves", "12", "--quiet",
        "--tc", "10+0.1", "--scale-by-perft", "--out", str(out),
    ]  # fmt: skip
    proc = run_ladder(*args, "--perft-rate", "480000")
    assert proc.returncode == 0, proc.stderr
    assert "measuring" not in proc.stderr
    assert "perft 480,000 leaves/s given by --perft-rate: 10+0.1 scaled by 0.500 to 5+0.05" in (
        proc.stderr
    )
    with open(out / "1500.pgn", encoding="utf-8") as handle:
        game = chess.pgn.read_game(handle)
    assert game is not None and game.headers["TimeControl"] == "5+0.05"
    level = json.loads((out / "1500.json").read_text())
    assert [side["limits"] for side in level["engines"]] == ["tc 5+0.05", "tc 5+0.05"]
    record = json.loads((out / "ladder.json").read_text())["yardstick"]
    assert record["perft_leaves_per_second"] == 480000
    assert (record["tc_given"], record["scaled"], record["tc"]) == ("10+0.1", True, "5+0.05")
    line = "python-chess perft 480,000 leaves/s; tc 5+0.05 (10+0.1 scaled by 0.500)"
    assert line in (out / "ladder.md").read_text() and line in proc.stdout

    # --resume plays the unfinished level at the recorded figure's clock, not a new one's.
    (out / "1500.json").unlink()
    proc = run_ladder(*args, "--resume")
    assert proc.returncode == 0, proc.stderr
    assert "measuring" not in proc.stderr and "480,000 leaves/s recorded in" in proc.stderr
    with open(out / "1500.pgn", encoding="utf-8") as handle:
        game = chess.pgn.read_game(handle)
    assert game is not None and game.headers["TimeControl"] == "5+0.05"
    assert json.loads((out / "ladder.json").read_text())["yardstick"] == record
    # Without --tc, it keeps the recorded clock too.
    (out / "1500.json").unlink()
    proc = run_ladder(*args[:-5], "--out", str(out), "--resume")
    assert proc.returncode == 0, proc.stderr
    with open(out / "1500.pgn", encoding="utf-8") as handle:
        game = chess.pgn.read_game(handle)
    assert game is not None and game.headers["TimeControl"] == "5+0.05"

    # A resumed ladder whose clock would change is refused, its files left as they were.
    kept = (out / "ladder.json").read_text()
    proc = run_ladder(*args, "--resume", "--perft-rate", "240000")
    assert proc.returncode == 1
    assert "was played at python-chess perft 480,000 leaves/s; tc 5+0.05" in proc.stderr
    assert "not tc 10+0.1" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert (out / "ladder.json").read_text() == kept


def test_ladder_rates_cutoff(tmp_path: Path) -> None:
    out = tmp_path / "ladder"
    proc = run_ladder(
        "--engine", f"cmd='{sys.executable} -m engine' name=Cutoff",
        "--opponent", f"{STUB} name=Stub{{elo}}",
        "--levels", "1000",
        "--depth", "2", "--rounds", "1", "--maxmoves", "60", "--quiet",
        "--resign", "2", "500", "--perft-rate", "240000",
        "--out", str(out),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    row = json.loads((out / "ladder.json").read_text())["levels"][0]
    assert row["wins"] + row["draws"] + row["losses"] == 2
    assert row["wins"] >= 1  # a depth-2 search beats a move picker
    assert row["faults"] == {}


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--pgn", "x.pgn"], "--pgn is set per level"),
        (["--opponent", "cmd=stockfish"], "--opponent needs {elo}"),
        (["--scale-by-perft", "--depth", "1"], "--scale-by-perft scales the clock of --tc"),
        (["--perft-rate", "fast"], "bad --perft-rate 'fast': not a number"),
        (["--perft-rate", "0"], "bad --perft-rate '0': must be positive"),
    ],
)
def test_ladder_bad_input_is_one_line(tmp_path: Path, extra: list[str], message: str) -> None:
    proc = run_ladder("--engine", STUB, "--out", str(tmp_path / "out"), *extra)
    assert proc.returncode == 1
    assert message in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_ladder_stops_on_a_level_that_cannot_start(tmp_path: Path) -> None:
    proc = run_ladder(
        "--engine", STUB,
        "--opponent", "cmd=/nonexistent/engine name=L{elo}",
        "--levels", "1500", "--depth", "1", "--rounds", "1", "--perft-rate", "240000",
        "--out", str(tmp_path / "out"),
    )  # fmt: skip
    assert proc.returncode == 1
    assert "level 1500 could not be played" in proc.stderr


def test_ctrl_c_keeps_the_finished_levels(tmp_path: Path) -> None:
    # Level 1000's stub never thinks (5 moves a game); level 3's thinks for an hour on
    # its 4th move, which is where the ladder gets Ctrl-C.
    out = tmp_path / "ladder"
    thinking = tmp_path / "thinking"
    opponent = (
        f"cmd='{sys.executable} {REPO / 'tests' / 'engines' / 'uci_stub.py'} --fault think "
        f"--after {{elo}} --think-file {thinking}' name=L{{elo}}"
    )
    proc = subprocess.Popen(
        [*LADDER, "--engine", f"{STUB} name=Rated", "--opponent", opponent,
         "--levels", "1000", "3", "--depth", "1", "--rounds", "1", "--maxmoves", "5",
         "--quiet", "--perft-rate", "240000", "--out", str(out)],
        cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        preexec_fn=default_sigint,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not thinking.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert thinking.exists()
        proc.send_signal(signal.SIGINT)
        out_text, err_text = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 130, err_text
    assert "Traceback" not in err_text
    summary = json.loads((out / "ladder.json").read_text())
    assert [row["level"] for row in summary["levels"]] == [1000]
    assert summary["games"] == 2
    assert "| 1000 |" in out_text and "| 3 |" not in out_text
