"""Where the games were decided (``python -m scripts.matches.turning_points``), run as
users run it.

The games are written here with known scores in the runner's comment format, so each
turning point, its phase, whether the loser saw it and the conceded advantages can be
worked out by hand.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any, Optional

import chess
import chess.pgn

from tests.conftest import REPO

TOOL = [sys.executable, "-m", "scripts.matches.turning_points"]
# Knights shuffle back and forth, so any number of moves is legal.
SHUFFLE = ["g1f3", "g8f6", "f3g1", "f6g8"]
ENDGAME = "6n1/4k3/8/8/8/8/4K3/6N1 w - - 0 1"  # two pieces
LATE = "r5n1/4k3/8/8/8/8/4K3/R5N1 w - - 0 1"  # four pieces


def write_game(
    path: Path,
    scores: list[Optional[str]],
    result: str,
    fen: Optional[str] = None,
    white: str = "A",
    black: str = "B",
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


def run(*args: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([*TOOL, *args], capture_output=True, text=True, timeout=60, cwd=REPO)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def report(*args: str) -> dict[str, Any]:
    proc = run(*args, "--json")
    assert proc.returncode == 0, proc.stderr
    out: dict[str, Any] = json.loads(proc.stdout)
    return out


def by_engine(out: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {e["engine"]: e for e in out["engines"]}


def test_the_turning_point_is_where_the_winners_score_settles(tmp_path: Path) -> None:
    pgn = tmp_path / "m.pgn"
    # White's scores by move: +0.50 +2.50 +1.50 +2.20 +3.00 (then 1-0): it settles at
    # or above +2.00 from its 4th move (ply 7) on. Black's move before that (ply 6)
    # said -0.30: it did not see the loss coming. 4 moves in: the opening.
    write_game(
        pgn,
        ["+0.50", "-0.20", "+2.50", "-0.10", "+1.50", "-0.30", "+2.20", "-2.50", "+3.00"],
        "1-0",
    )
    out = report(str(pgn))
    assert out["games"] == 1 and out["skipped"] == 0
    (point,) = out["turning_points"]
    assert point["ply"] == 7 and point["phase"] == "opening"
    assert point["loser"] == "B" and point["loser_score"] == -0.30 and not point["seen"]
    # The winner, its score at the turning move, and the position it moved from: after
    # six plies of knight shuffles, the start position with White to move.
    assert point["winner"] == "A" and point["winner_score"] == 2.20
    board = chess.Board()
    for move in SHUFFLE + SHUFFLE[:2]:
        board.push_uci(move)
    assert point["fen"] == board.fen()
    assert point["fen"].split()[1] == "w"
    engines = by_engine(out)
    assert engines["B"]["losses"] == 1 and engines["B"]["seen_by_loser"] == 0
    assert engines["B"]["turning_points"]["opening"] == 1
    assert engines["A"]["losses"] == 0
    # Black's -2.50 conceded White an advantage (at least half the margin) in a win.
    assert engines["A"]["advantage_conceded"] == {"wins": 1, "draws": 0, "losses": 0}
    assert engines["B"]["advantage_conceded"] == {"wins": 0, "draws": 0, "losses": 0}


def test_phases_seen_losses_mates_and_the_margin(tmp_path: Path) -> None:
    pgn = tmp_path / "m.pgn"
    quiet = ["+0.10", "-0.10"] * 16  # 16 moves each: past the opening
    # Endgame (two pieces): Black wins with a mate score; White had seen it (-1.20).
    write_game(pgn, [*quiet, "-1.20", "+M4", "-M3", "+M2"], "0-1", fen=ENDGAME)
    # Four pieces: late middlegame. White wins; Black saw it (-5.00 before).
    write_game(pgn, [*quiet, "+0.30", "-5.00", "+4.00"], "1-0", fen=LATE)
    # The start position after 16 moves each: 14 pieces, the middlegame.
    write_game(pgn, [*quiet, "+2.00", "-0.90", "+2.00"], "1-0")
    out = report(str(pgn))
    engines = by_engine(out)
    a, b = engines["A"], engines["B"]
    # Black's mate score is its turning point, from a position with Black to move.
    mate = out["turning_points"][0]
    assert mate["winner"] == "B" and mate["winner_score"] == 100.0
    assert mate["fen"].split()[1] == "b" and mate["ply"] == 34
    assert a["losses"] == 1 and a["turning_points"]["endgame"] == 1 and a["seen_by_loser"] == 1
    assert b["losses"] == 2 and b["seen_by_loser"] == 1
    assert b["turning_points"]["late middlegame"] == 1 and b["turning_points"]["middlegame"] == 1
    # A larger margin: +2.00 no longer counts (the middlegame win has no turning point)
    # and +4.00 alone does, and the mate score is at any margin.
    wide = by_engine(report(str(pgn), "--margin", "3"))
    assert wide["B"]["no_turning_point"] == 1 and wide["B"]["turning_points"]["middlegame"] == 0
    assert wide["B"]["turning_points"]["late middlegame"] == 1
    assert wide["A"]["turning_points"]["endgame"] == 1


def test_unconverted_advantages_and_skipped_games(tmp_path: Path) -> None:
    pgn = tmp_path / "m.pgn"
    # B conceded A an advantage (-1.50) but the game was drawn; then A lost a game in
    # which B had conceded it one, with no settled score for B (a loss on time).
    write_game(pgn, ["+0.20", "-1.50", "+1.00", "-0.40"], "1/2-1/2")
    write_game(pgn, ["+0.20", "-1.10", "+0.40", "+0.50"], "0-1")
    write_game(pgn, [None, None, None], "1-0")  # no scores: skipped
    write_game(pgn, ["+0.10", "-0.10"], "*")  # unfinished: skipped
    out = report(str(pgn))
    assert out["games"] == 4 and out["skipped"] == 2
    a = by_engine(out)["A"]
    assert a["advantage_conceded"] == {"wins": 0, "draws": 1, "losses": 1}
    assert a["losses"] == 1 and a["no_turning_point"] == 1
    text = run(str(pgn))
    assert text.returncode == 0
    assert "4 games, 2 skipped" in text.stdout
    assert "A" in text.stdout and "0 / 1 / 1" in text.stdout


def test_bad_input_is_one_line(tmp_path: Path) -> None:
    missing = run(str(tmp_path / "none.pgn"))
    assert missing.returncode == 1
    assert missing.stderr.strip() == f"turning_points: error: {tmp_path / 'none.pgn'}: no such file"
    pgn = tmp_path / "m.pgn"
    write_game(pgn, ["+0.10"], "1-0")
    bad = run(str(pgn), "--margin", "0")
    assert bad.returncode == 2
    assert len(bad.stderr.strip().splitlines()) == 1 and "--margin" in bad.stderr


def test_a_game_that_cannot_be_replayed_is_one_line_and_the_rest_counts(
    tmp_path: Path,
) -> None:
    pgn = tmp_path / "m.pgn"
    write_game(pgn, ["+0.10", "-0.10"], "1/2-1/2")
    with pgn.open("a", encoding="utf-8") as handle:
        handle.write('[White "A"]\n[Black "B"]\n[Result "1-0"]\n\n1. Nf3 Qxh7 1-0\n\n')
        handle.write(
            '[White "A"]\n[Black "B"]\n[Result "1-0"]\n[FEN "not a fen"]\n\n1. Nf3 1-0\n\n'
        )
    write_game(pgn, ["+0.10", "-0.10"], "1/2-1/2")
    proc = run(str(pgn), "--json")
    assert proc.returncode == 1  # the report, and a status that says games were left out
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 2, proc.stderr
    assert lines[0].startswith(f"turning_points: {pgn}: game 2: illegal san: 'Qxh7'")
    assert lines[1].startswith(f"turning_points: {pgn}: game 3: bad FEN header")
    out = json.loads(proc.stdout)
    assert (out["games"], out["skipped"]) == (2, 0)
