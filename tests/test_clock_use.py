"""Where the clock goes (``python -m scripts.matches.clock_use``), run as users run it.

The games are written here with known move times, so every figure the tool prints
can be worked out by hand: the clock replay (increment, repeating controls, the
runner's clamp at zero), the skipped games and the one-line errors.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import chess.pgn
import pytest

from tests.conftest import REPO

TOOL = [sys.executable, "-m", "scripts.matches.clock_use"]


def write_game(
    path: Path,
    white_s: list[float],
    black_s: list[float],
    tc: str = "10+0.1",
    depths: list[int] | None = None,
) -> None:
    """Append a game of alternating knight moves with the given move times (and depths
    per ply; 5 when not given)."""
    game = chess.pgn.Game()
    game.headers["White"] = "A"
    game.headers["Black"] = "B"
    game.headers["TimeControl"] = tc
    node: chess.pgn.GameNode = game
    shuffle = ["g1f3", "g8f6", "f3g1", "f6g8"]
    times = [t for pair in zip(white_s, black_s) for t in pair]
    for ply, seconds in enumerate(times):
        move = chess.Move.from_uci(shuffle[ply % 4])
        depth = 5 if depths is None else depths[ply]
        node = node.add_variation(move, comment=f"+0.10/{depth} {seconds:.3f}s")
    with path.open("a", encoding="utf-8") as handle:
        print(game, file=handle, end="\n\n")


def run(*args: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([*TOOL, *args], capture_output=True, text=True, timeout=60, cwd=REPO)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def engines(proc: subprocess.CompletedProcess[str]) -> dict[str, dict[str, Any]]:
    assert proc.returncode == 0, proc.stderr
    return {e["engine"]: e for e in json.loads(proc.stdout)["engines"]}


def test_clocks_are_replayed_with_the_increment(tmp_path: Path) -> None:
    pgn = tmp_path / "m.pgn"
    # A: 4 moves of 1 s at 10+0.1 -> 10 - 4 + 0.4 = 6.4 s left (64 %); lowest 7.3 s
    # before its 4th move. B: 4 moves of 0.5 s -> 8.4 s left (84 %).
    write_game(pgn, [1.0] * 4, [0.5] * 4)
    # A second game: A leaves 10 - 2 * 4.5 + 0.2 = 1.2 s (12 %), lowest 5.6 s.
    write_game(pgn, [4.5, 4.5], [0.1, 0.1])
    found = engines(run(str(pgn), "--json"))
    a, b = found["A"], found["B"]
    assert a["games"] == b["games"] == 2
    assert a["left_share_quartiles"][0] == pytest.approx(0.12 + (0.64 - 0.12) * 0.25)
    assert a["left_share_quartiles"][1] == pytest.approx((0.64 + 0.12) / 2)
    assert a["lowest_clock_s"] == pytest.approx(5.6)
    assert b["lowest_clock_s"] == pytest.approx(8.8)
    assert b["moves_median"] == 3
    table = run(str(pgn))
    assert table.returncode == 0
    assert "2 games, 0 skipped" in table.stdout
    assert "38 %" in table.stdout  # A's median share of the base left


def test_phases_give_the_median_depth_and_seconds_by_the_position_before_the_move(
    tmp_path: Path,
) -> None:
    pgn = tmp_path / "m.pgn"
    # 20 moves each; moves 1-16 are the opening (0-15 moves played before them), 17-20
    # the middlegame (all pieces still on the board). A spends 0.4 s at depth 6 in the
    # opening, 0.2 s at depth 4 after it; B always 0.1 s at depth 9.
    white = [0.4] * 16 + [0.2] * 4
    depths = [d for move in range(20) for d in ((6 if move < 16 else 4), 9)]
    write_game(pgn, white, [0.1] * 20, depths=depths)
    a = engines(run(str(pgn), "--json", "--phases"))["A"]
    assert a["phases"] == [
        {"phase": "opening", "moves": 16, "depth_median": 6, "seconds_median": 0.4},
        {"phase": "middlegame", "moves": 4, "depth_median": 4, "seconds_median": 0.2},
    ]
    assert "phases" not in engines(run(str(pgn), "--json"))["A"]
    table = run(str(pgn), "--phases").stdout.splitlines()
    assert any(line.split() == ["A", "middlegame", "4", "4", "0.200"] for line in table), table
    assert any(line.split() == ["B", "opening", "16", "9", "0.100"] for line in table), table


def test_a_repeating_control_refills_the_clock_and_overruns_are_clamped(tmp_path: Path) -> None:
    pgn = tmp_path / "m.pgn"
    # 2 moves in 1 s: A spends 0.75 s twice (clamped at 0 after the 2nd move, then
    # the base comes back): 0 + 1 = 1.0 s left, 100 %.
    write_game(pgn, [0.75, 0.75], [0.1, 0.1], tc="2/1")
    a = engines(run(str(pgn), "--json"))["A"]
    assert a["left_share_quartiles"][1] == pytest.approx(1.0)
    assert a["lowest_clock_s"] == pytest.approx(0.25)


def test_games_without_a_clock_or_move_times_are_skipped(tmp_path: Path) -> None:
    pgn = tmp_path / "m.pgn"
    write_game(pgn, [1.0], [1.0], tc="-")
    write_game(pgn, [1.0], [1.0], tc="1/0.5")
    bare = chess.pgn.Game()
    bare.headers["TimeControl"] = "10+0.1"
    bare.add_main_variation(chess.Move.from_uci("e2e4"))
    with pgn.open("a", encoding="utf-8") as handle:
        print(bare, file=handle, end="\n\n")
    write_game(pgn, [1.0], [1.0])
    out = json.loads(run(str(pgn), "--json").stdout)
    assert (out["games"], out["skipped"]) == (4, 3)
    assert [e["games"] for e in out["engines"]] == [1, 1]


def test_a_missing_file_is_a_one_line_error(tmp_path: Path) -> None:
    proc = run(str(tmp_path / "nope.pgn"))
    assert proc.returncode == 1
    assert proc.stderr.strip() == f"clock_use: error: {tmp_path / 'nope.pgn'}: no such file"


def test_a_game_that_cannot_be_replayed_is_one_line_and_the_rest_counts(
    tmp_path: Path,
) -> None:
    pgn = tmp_path / "m.pgn"
    write_game(pgn, [1.0], [1.0])
    with pgn.open("a", encoding="utf-8") as handle:
        handle.write('[White "A"]\n[Black "B"]\n[TimeControl "10+0.1"]\n\n1. Nf3 Qxh7 *\n\n')
        handle.write('[White "A"]\n[Black "B"]\n[FEN "not a fen"]\n\n1. Nf3 *\n\n')
    write_game(pgn, [2.0], [2.0])
    proc = run(str(pgn), "--json")
    assert proc.returncode == 1  # the report, and a status that says games were left out
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 2, proc.stderr
    assert lines[0].startswith(f"clock_use: {pgn}: game 2: illegal san: 'Qxh7'")
    assert lines[1].startswith(f"clock_use: {pgn}: game 3: bad FEN header")
    out = json.loads(proc.stdout)
    assert (out["games"], out["skipped"]) == (2, 0)
