"""The engines' evaluations at the turning points (``python -m
scripts.matches.turning_evals``), run as users run it, and its pure parts.

The games are written here in the runner's comment format with known scores, from
positions where the winner is a queen up, so each turning point, the position it was
played from and the sign of every figure are known by hand. The engines search to
depth 1.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Optional

import chess
import chess.engine
import chess.pgn
import pytest

from scripts.matches.turning_evals import (
    FIGURES,
    cutoff_static,
    format_report,
    main,
    pawns,
    summarise,
)
from scripts.training.engines import stockfish_static_pawns
from tests.conftest import REPO

TOOL = [sys.executable, "-m", "scripts.matches.turning_evals"]
STOCKFISH = shutil.which("stockfish") or "/usr/games/stockfish"
needs_stockfish = pytest.mark.skipif(
    not os.access(STOCKFISH, os.X_OK), reason=f"Stockfish not found ({STOCKFISH})"
)
NO_STOCKFISH = "/nonexistent/stockfish"
"""For runs that must not start Stockfish: starting it would fail."""
# Knights shuffle back and forth, so any number of moves is legal.
SHUFFLE = ["g1f3", "g8f6", "f3g1", "f6g8"]
WHITE_QUEEN_UP = "4k1n1/pppppppp/8/8/8/8/PPPPPPPP/3QK1N1 w - - 0 1"
BLACK_QUEEN_UP = "3qk1n1/pppppppp/8/8/8/8/PPPPPPPP/4K1N1 w - - 0 1"


def write_game(
    path: Path,
    scores: list[Optional[str]],
    result: str,
    white: str,
    black: str,
    fen: Optional[str] = None,
) -> None:
    """Append a game of knight moves; ``scores[i]`` is ply i's score text (None: no score)."""
    game = chess.pgn.Game()
    if fen is not None:
        game.setup(chess.Board(fen))
    game.headers["White"] = white
    game.headers["Black"] = black
    game.headers["Result"] = result
    node: chess.pgn.GameNode = game
    for ply, score in enumerate(scores):
        comment = f"{score}/6 0.200s" if score is not None else "0.200s"
        node = node.add_variation(chess.Move.from_uci(SHUFFLE[ply % 4]), comment=comment)
    with path.open("a", encoding="utf-8") as handle:
        print(game, file=handle, end="\n\n")


def after(fen: str, plies: int) -> str:
    board = chess.Board(fen)
    for ply in range(plies):
        board.push_uci(SHUFFLE[ply % 4])
    return board.fen()


def run(*args: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([*TOOL, *args], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


@needs_stockfish
def test_the_figures_at_known_turning_points(tmp_path: Path) -> None:
    """One run (the engines' start is most of its time; a module fixture would run once
    per xdist worker) for the counts, the positions, the signs and the summary."""
    pgn = tmp_path / "m.pgn"
    # White (SF) settles at or above +1.50 from its 2nd move (ply 3) on; L's move
    # before said -0.20.
    write_game(
        pgn,
        ["+0.50", "-0.20", "+2.50", "-0.10", "+1.60", "-0.30", "+2.20", "-2.50", "+3.00"],
        "1-0",
        "SF",
        "L",
        WHITE_QUEEN_UP,
    )
    # Black (SF) settles from its 1st move (ply 2); L (White) said -0.10 before.
    write_game(pgn, ["-0.10", "+2.00", "-1.00", "+2.50"], "0-1", "L", "SF", BLACK_QUEEN_UP)
    # SF's score never reached the margin: a loss without a turning point.
    write_game(pgn, ["+0.20", "-0.20", "+1.00"], "1-0", "SF", "L")
    # L's win and a draw: not L's losses.
    write_game(pgn, ["+0.20", "-0.20", "+2.00"], "1-0", "L", "SF", WHITE_QUEEN_UP)
    write_game(pgn, ["+0.20", "-0.20"], "1/2-1/2", "SF", "L")
    proc = run(str(pgn), "--loser", "L", "--stockfish", STOCKFISH, "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)

    # The counts: L's three losses, two with a turning point.
    assert (out["games"], out["skipped"], out["margin"]) == (5, 0, 1.5)
    assert (out["loser"], out["lost"], out["with_turning_point"]) == ("L", 3, 2)
    positions = out["positions"]
    first, second = positions
    # The position the winner moved from at its turning move, with the winner to move.
    assert (first["ply"], first["fen"]) == (3, after(WHITE_QUEEN_UP, 2))
    assert (second["ply"], second["fen"]) == (2, after(BLACK_QUEEN_UP, 1))
    assert first["winner"] == second["winner"] == "SF"
    assert first["loser"] == second["loser"] == "L"
    # The players' own scores, from the winner's side: the loser's negated.
    assert (first["winner_search"], first["loser_search"]) == (2.50, 0.20)
    assert (second["winner_search"], second["loser_search"]) == (2.00, 0.10)

    # The winner is a queen up, as White and as Black: every engine says so.
    for position in positions:
        for key in ("stockfish_depth1", "cutoff_depth1", "stockfish_static", "cutoff_static"):
            assert position[key] > 3.0, (position["fen"], key, position[key])
    # The shipped network, as the default build evaluates.
    assert out["cutoff_evaluation"].startswith("the network ")
    assert out["cutoff_evaluation"].endswith("cutoff.nnue")

    # The summary: the positions' medians and counts, and as text.
    for key, _ in FIGURES:
        figure = out["summary"][key]
        values = [p[key] for p in positions]
        assert figure["median"] == pytest.approx(statistics.median(values), abs=1e-3)
        assert figure["positions"] == 2
        assert figure["clear"] == sum(v >= 1.0 for v in values)
    assert out["summary"]["stockfish_static"]["clear"] == 2
    assert out["summary"]["loser_search"]["clear"] == 0
    text = format_report(out)
    assert text.startswith("3 games lost by L, 2 with a turning point")
    assert "+1.00 or more: 2 of 2" in text
    assert "the loser's search on its move before" in text and "+0.15" in text


def test_a_missing_file_and_an_unknown_loser_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = run(str(tmp_path / "none.pgn"), "--loser", "L", "--stockfish", NO_STOCKFISH)
    assert missing.returncode == 1
    assert missing.stderr.strip() == f"turning_evals: error: {tmp_path / 'none.pgn'}: no such file"
    # The rest in this process: no engine starts for them.
    pgn = tmp_path / "m.pgn"
    write_game(pgn, ["+0.20", "-0.20"], "1/2-1/2", "SF", "L")
    assert main([str(pgn), "--loser", "X", "--stockfish", NO_STOCKFISH]) == 1
    err = capsys.readouterr().err
    assert err.strip() == "turning_evals: error: no games of 'X' (players: L, SF)"
    for args in (["--loser", "L", "--cutoff-option", "EvalFile"], []):
        with pytest.raises(SystemExit) as usage:
            main([str(pgn), "--stockfish", NO_STOCKFISH, *args])
        assert usage.value.code == 2
        (line,) = capsys.readouterr().err.strip().splitlines()
        assert ("NAME=VALUE" if args else "--loser") in line


def test_an_unreadable_game_is_one_line_and_the_rest_is_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # No turning point to measure: no engine starts (Stockfish's path is wrong).
    pgn = tmp_path / "m.pgn"
    write_game(pgn, ["+0.20", "-0.20", "+1.00"], "1-0", "SF", "L")
    with pgn.open("a", encoding="utf-8") as handle:
        handle.write('[White "SF"]\n[Black "L"]\n[Result "1-0"]\n\n1. Nf3 Qxh7 1-0\n\n')
    proc = run(str(pgn), "--loser", "L", "--stockfish", NO_STOCKFISH, "--json")
    assert proc.returncode == 1
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith(f"turning_evals: {pgn}: game 2: illegal san: 'Qxh7'")
    out = json.loads(proc.stdout)
    assert (out["games"], out["lost"], out["with_turning_point"], out["positions"]) == (1, 1, 0, [])
    assert main([str(pgn), "--loser", "L", "--stockfish", NO_STOCKFISH]) == 1
    assert capsys.readouterr().out.strip() == (
        "1 games lost by L, 0 with a turning point (the winner's score at or above +1.50"
        " from it to the end)"
    )


def test_a_bad_cutoff_option_is_one_line_before_stockfish_starts(tmp_path: Path) -> None:
    pgn = tmp_path / "m.pgn"
    write_game(pgn, ["+2.00", "-0.20", "+2.00"], "1-0", "SF", "L", WHITE_QUEEN_UP)
    # Cutoff starts first: had Stockfish been started, its wrong path would be the error.
    proc = run(str(pgn), "--loser", "L", "--stockfish", NO_STOCKFISH, "--cutoff-option", "Nope=1")
    assert proc.returncode == 2
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith("turning_evals: --cutoff-option: the engine has no option 'Nope'")
    # A network that cannot be loaded: Cutoff would evaluate by hand, which is not
    # the network's figure.
    net = tmp_path / "none.nnue"
    proc = run(
        *(str(pgn), "--loser", "L", "--stockfish", NO_STOCKFISH),
        *("--cutoff-option", f"EvalFile={net}"),
    )
    assert proc.returncode == 1 and proc.stdout == ""
    (line,) = proc.stderr.strip().splitlines()
    assert line.startswith("turning_evals: engine failed: cutoff: its network was not used")
    assert str(net) in line


def test_stockfish_static_reads_the_final_evaluation() -> None:
    lines = [
        "Classical evaluation   +34.89 (white side)",
        "NNUE evaluation        +6.64 (white side)",
        "Final evaluation       +6.47 (white side) [with scaled NNUE, hybrid, ...]",
    ]
    assert stockfish_static_pawns(lines) == 6.47
    assert stockfish_static_pawns(["Final evaluation       -0.72 (white side)"]) == -0.72
    assert stockfish_static_pawns(["Final evaluation: none (in check)"]) is None
    with pytest.raises(ValueError, match="no 'Final evaluation'"):
        stockfish_static_pawns(["readyok"])
    with pytest.raises(ValueError, match="cannot read"):
        stockfish_static_pawns(["Final evaluation       +0.72 (black side)"])
    with pytest.raises(ValueError, match="cannot read"):
        stockfish_static_pawns(["Final evaluation       nan (white side)"])


def test_cutoff_static_reads_what_the_search_uses() -> None:
    network = [
        "Evaluation: +887 cp from white's point of view",
        "NNUE evaluation: -25 cp from the side to move (black)",
        "NNUE evaluation: +25 cp from white's point of view",
        "Searching with: the network /x/cutoff.nnue",
    ]
    assert cutoff_static(network) == (0.25, "the network /x/cutoff.nnue")
    hand = ["Evaluation: -12 cp from white's point of view"]
    off = "the hand-written evaluation (Use NNUE is off)"
    assert cutoff_static([*hand, f"Searching with: {off}"]) == (-0.12, off)
    lost = "the hand-written evaluation (the network could not be loaded: no file)"
    with pytest.raises(ValueError, match="its network was not used"):
        cutoff_static([*hand, f"Searching with: {lost}"])
    with pytest.raises(ValueError, match="Searching with"):
        cutoff_static(hand)
    with pytest.raises(ValueError, match="NNUE evaluation"):
        cutoff_static([*hand, "Searching with: the network /x/cutoff.nnue"])


def test_scores_and_mates_from_a_side() -> None:
    score = chess.engine.PovScore(chess.engine.Cp(-72), chess.BLACK)
    assert pawns(score, chess.BLACK) == -0.72 and pawns(score, chess.WHITE) == 0.72
    mate = chess.engine.PovScore(chess.engine.Mate(3), chess.WHITE)
    assert pawns(mate, chess.WHITE) == 99.97 and pawns(mate, chess.BLACK) == -99.97
    assert pawns(None, chess.WHITE) is None
    summary = summarise(
        [
            {key: value for key, _ in FIGURES}
            for value in (1.0, -0.5, 3.0, None)  # None: missing (a static eval in check)
        ]
    )
    assert summary["cutoff_static"] == {"median": 1.0, "positions": 3, "clear": 2}
    assert summarise([])["winner_search"] == {"median": None, "positions": 0, "clear": 0}
