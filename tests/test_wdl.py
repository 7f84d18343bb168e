"""Cutoff's win/draw/loss model (engine/core/wdl.py) and its fit
(``python -m scripts.tuning.fit_wdl``), on games whose results are drawn from a
known model."""

from __future__ import annotations

import json
import os
import random
import subprocess
from pathlib import Path

import chess
import chess.engine
import chess.pgn
import pytest
from conftest import run_repo_script
from uci_harness import REPO, engine_command

from engine.analysis.api import Analyser
from engine.core.wdl import CUTOFF_MODEL, WdlModel, material, score_wdl, search_wdl

OPERA = REPO / "tests" / "data" / "opera.pgn"


def test_the_model_is_a_distribution_symmetric_in_the_score() -> None:
    for cp in (-900, -150, 0, 35, 400):
        for count in (10, 40, 78, 90):
            w, d, lo = CUTOFF_MODEL.wdl(cp, count)
            assert w + d + lo == 1000 and min(w, d, lo) >= 0
            assert CUTOFF_MODEL.wdl(-cp, count) == (lo, d, w)
    wins = [CUTOFF_MODEL.wdl(cp, 40)[0] for cp in range(0, 1000, 50)]
    assert wins == sorted(wins) and wins[-1] > 900
    board = chess.Board()
    assert material(board) == 78
    assert score_wdl(chess.engine.Mate(3), board) == chess.engine.Wdl(1000, 0, 0)
    assert score_wdl(chess.engine.Mate(-2), board) == chess.engine.Wdl(0, 0, 1000)


def _synthetic_games(path: Path, model: WdlModel, games: int) -> None:
    """The moves of a real game, each comment a random score, the result drawn from
    ``model`` at the score of one position (so the fit has something to find)."""
    with OPERA.open() as handle:
        game = chess.pgn.read_game(handle)
    assert game is not None
    moves = list(game.mainline_moves())
    rng = random.Random(7)
    with path.open("w") as out:
        for number in range(games):
            record = chess.pgn.Game()
            record.headers["Event"] = f"synthetic {number}"
            board = chess.Board()
            node: chess.pgn.GameNode = record
            level = rng.gauss(0, 250)  # White's true advantage in this game
            for move in moves:
                mover_cp = level if board.turn == chess.WHITE else -level
                node = node.add_variation(move)
                node.comment = f"{mover_cp / 100:+.2f}/10 0.100s"
                board.push(move)
            win, draw, _ = model.probabilities(level, 40)
            draw_or_win = rng.random()
            result = (
                "1-0" if draw_or_win < win else "1/2-1/2" if draw_or_win < win + draw else "0-1"
            )
            record.headers["Result"] = result
            out.write(str(record) + "\n\n")


def test_fit_finds_the_model_the_games_were_drawn_from(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    true = WdlModel(a=(180.0,), b=(110.0,))
    games = tmp_path / "games.pgn"
    _synthetic_games(games, true, 400)
    report, plot = tmp_path / "fit.json", tmp_path / "fit.png"
    done = run_repo_script(
        "tuning.fit_wdl", str(games), "--json", str(report), "--plot", str(plot), timeout=300
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("CUTOFF_MODEL: Final = WdlModel(")
    data = json.loads(report.read_text())
    fitted = WdlModel(tuple(data["model"]["a"]), tuple(data["model"]["b"]))
    assert data["model"]["games"] == 300  # every 4th of the 400 is held out
    for cp in (-300, -100, 0, 100, 300):
        expected = sum(p * v for p, v in zip(true.probabilities(cp, 40), (1, 0.5, 0)))
        found = sum(p * v for p, v in zip(fitted.probabilities(cp, 40), (1, 0.5, 0)))
        assert found == pytest.approx(expected, abs=0.06)
    check = data["check"]
    assert check["games"] == 100 and check["bins"]
    assert plot.stat().st_size > 10_000


def test_fit_refuses_games_without_scores(tmp_path: Path) -> None:
    games = tmp_path / "bare.pgn"
    games.write_text("1. e4 e5 2. Nf3 Nc6 1-0\n")
    done = run_repo_script("tuning.fit_wdl", str(games))
    assert done.returncode == 2
    assert "too few to fit" in done.stderr and "Traceback" not in done.stderr


def test_uci_show_wdl_through_python_chess() -> None:
    """``UCI_ShowWDL``: ``wdl W D L`` on every info line, as python-chess reads it."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    board = chess.Board("4k3/8/8/8/8/8/4P3/3QK3 w - - 0 1")  # White is a queen up
    with chess.engine.SimpleEngine.popen_uci(engine_command(), env=env) as uci:
        plain = uci.analyse(board, chess.engine.Limit(depth=3))
        assert "wdl" not in plain  # off by default, as in Stockfish
        uci.configure({"UCI_ShowWDL": True})
        info = uci.analyse(board, chess.engine.Limit(depth=3))
    wdl = info["wdl"]
    assert sum(wdl.relative) == 1000 and wdl.white().wins > 900
    assert tuple(wdl.relative) == search_wdl(info["score"].relative.score() or 0, board)


def test_analyser_and_json_give_wdl(tmp_path: Path) -> None:
    board = chess.Board("3qk3/4p3/8/8/8/8/8/4K3 w - - 0 1")  # Black is a queen up
    with Analyser() as analyser:
        info = analyser.analyse(board, chess.engine.Limit(depth=3))
    assert info["wdl"].turn == chess.WHITE and info["wdl"].black().wins > 900
    done = subprocess.run(
        [*engine_command(), "analyse", board.fen(), "--depth", "3", "--json"],
        cwd=str(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert record["wdl"] == list(info["wdl"].relative)
