"""python-chess drives Cutoff: options, analysis, play, pondering, Chess960.

Every test fails on any warning python-chess logs about our output
("Unexpected engine output", "Exception parsing ...", invalid ponder moves).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from pathlib import Path

import chess
import chess.engine
import pytest
from uci_harness import REPO, engine_command


@pytest.fixture
def engine(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> Iterator[chess.engine.SimpleEngine]:
    monkeypatch.setenv("PYTHONPATH", str(REPO))
    caplog.set_level(logging.WARNING, logger="chess.engine")
    eng = chess.engine.SimpleEngine.popen_uci(engine_command(), cwd=str(tmp_path), timeout=10)
    yield eng
    eng.quit()
    warnings = [r.getMessage() for r in caplog.records if r.name == "chess.engine"]
    assert warnings == []


def test_options_parse(engine: chess.engine.SimpleEngine) -> None:
    """every option is accepted with its declared type and range."""
    assert engine.id["name"].startswith("Cutoff")
    hash_option = engine.options["Hash"]
    assert (hash_option.type, hash_option.default, hash_option.min) == ("spin", 16, 1)
    # One searcher per core, at most 56 (engine.play.options.MAX_THREADS).
    assert engine.options["Threads"].max == min(os.cpu_count() or 1, 56)
    assert engine.options["Clear Hash"].type == "button"
    assert engine.options["Move Overhead"].default == 50
    engine.configure({"Hash": 32, "Clear Hash": None, "Move Overhead": 30})
    engine.ping()


def test_analyse_depth_time_multipv(engine: chess.engine.SimpleEngine) -> None:
    """depth, time and multipv analyses return complete info."""
    board = chess.Board()
    info = engine.analyse(board, chess.engine.Limit(depth=5))
    assert info["depth"] == 5
    assert info["pv"] and info["pv"][0] in board.legal_moves
    assert isinstance(info["score"], chess.engine.PovScore)
    for key in ("seldepth", "nodes", "nps", "time"):
        assert key in info
    info = engine.analyse(board, chess.engine.Limit(time=0.2))
    assert info["pv"][0] in board.legal_moves
    lines = engine.analyse(board, chess.engine.Limit(depth=3), multipv=3)
    assert [line["multipv"] for line in lines] == [1, 2, 3]
    assert len({line["pv"][0] for line in lines}) == 3


def test_mate_score_pov(engine: chess.engine.SimpleEngine) -> None:
    """python-chess reads our mate score from the right side."""
    board = chess.Board("7k/5Q2/6K1/8/8/8/8/8 w - - 0 1")
    info = engine.analyse(board, chess.engine.Limit(depth=3))
    assert info["score"].white() == chess.engine.Mate(1)
    board = chess.Board("7k/6Q1/6K1/8/8/8/8/8 b - - 0 1")
    result = engine.play(board, chess.engine.Limit(depth=3))
    assert result.move is None  # bestmove (none)


def test_play_time_and_clock(engine: chess.engine.SimpleEngine) -> None:
    board = chess.Board()
    result = engine.play(board, chess.engine.Limit(time=0.1))
    assert result.move in board.legal_moves
    board.push(result.move)
    limit = chess.engine.Limit(white_clock=5, black_clock=5, white_inc=0.1, black_inc=0.1)
    result = engine.play(board, limit)
    assert result.move in board.legal_moves


def test_analysis_and_stop(engine: chess.engine.SimpleEngine) -> None:
    """analysis() sends go infinite; stop() must produce the bestmove."""
    board = chess.Board()
    with engine.analysis(board) as analysis:
        for info in analysis:
            if info.get("depth", 0) >= 3:
                break
        analysis.stop()
        best = analysis.wait()
    assert best.move in board.legal_moves
    with engine.analysis(board, chess.engine.Limit(depth=2)) as analysis:
        best = analysis.wait()
    assert best.move in board.legal_moves


def test_play_game_with_ponder(engine: chess.engine.SimpleEngine) -> None:
    """a 12-ply self-play game with pondering (ponderhit and misses)."""
    board = chess.Board()
    clocks = {chess.WHITE: 2.0, chess.BLACK: 2.0}
    ponders = 0
    while not board.is_game_over() and board.ply() < 12:
        limit = chess.engine.Limit(
            white_clock=clocks[chess.WHITE], black_clock=clocks[chess.BLACK], white_inc=0.05
        )
        result = engine.play(board, limit, ponder=True)
        assert result.move in board.legal_moves
        if result.ponder is not None:
            ponders += 1
        board.push(result.move)
    assert ponders > 0


def test_chess960_board(engine: chess.engine.SimpleEngine) -> None:
    """a Chess960 board sets UCI_Chess960; castling comes back king-takes-rook."""
    fen = "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9"
    board = chess.Board(fen, chess960=True)
    result = engine.play(board, chess.engine.Limit(depth=2))
    assert result.move in board.legal_moves
    board = chess.Board("rk2r3/8/8/8/8/8/8/RK2R3 w AEae - 0 1", chess960=True)
    info = engine.analyse(board, chess.engine.Limit(depth=1), root_moves=[chess.Move(1, 0)])
    assert info["pv"][0] == chess.Move(chess.B1, chess.A1)
    assert board.is_castling(info["pv"][0])
