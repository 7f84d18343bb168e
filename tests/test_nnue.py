"""engine/core/nnue.py: the network's score is colour-symmetric exactly, the search's
incremental accumulators give the from-scratch score through every kind of move (on both of the
output layer's paths, numpy's and the compiled loop's), files round-trip."""

from __future__ import annotations

import random
from pathlib import Path

import chess
import numpy as np
import pytest

from engine.core import nnue, nnue_eval
from engine.core.board import Board
from engine.core.nnue_eval import NetworkEvaluator
from tests.networks import random_network

POSITIONS = [
    chess.STARTING_FEN,
    "r3k2r/pppq1ppp/2npbn2/2b1p3/2B1P3/2NPBN2/PPPQ1PPP/R3K2R w KQkq - 4 8",  # castling
    "r3k2r/pppq1ppp/2npbn2/2b1p3/2B1P3/2NPBN2/PPPQ1PPP/R3K2R b KQkq - 4 8",
    "rnbqkbnr/ppp2ppp/8/3pP3/8/8/PPPP1PPP/RNBQKBNR w KQkq d6 0 3",  # en passant
    "rnbqkbnr/pp1ppppp/8/8/2pPP3/8/PPP2PPP/RNBQKBNR b KQkq d3 0 3",
    "r1bq1bnr/pP1kpppp/8/8/8/8/1PPP1PPP/RNBQKBNR w KQ - 1 7",  # promotions, with capture
    "rnbqkbnr/1ppppppp/8/8/8/8/p1PPPPPP/1NBQKBNR b Kkq - 0 5",
    "8/8/4k3/8/8/3K4/8/8 w - - 0 1",
]


def test_mirror_scores_the_same_exactly() -> None:
    for hidden in (16, 64):
        net = random_network(hidden, seed=hidden)
        rng = random.Random(hidden)
        boards = [chess.Board(fen) for fen in POSITIONS]
        board = chess.Board()
        for _ in range(60):
            moves = list(board.legal_moves)
            if not moves:
                break
            board.push(rng.choice(moves))
            boards.append(board.copy(stack=False))
        scores = set()
        for board in boards:
            score = net.evaluate(board)
            assert net.evaluate(board.mirror()) == score, board.fen()
            scores.add(score)
        assert len(scores) > len(boards) // 2


def check_line(net: nnue.Network, board: chess.Board, moves: list[chess.Move]) -> None:
    """The search's incremental form (the native board's make and unmake read by
    NetworkEvaluator) gives the from-scratch score after every move, after a null move
    after each, and back."""
    start = net.evaluate(board)
    board = board.copy()
    evaluator = NetworkEvaluator(net, cache_bits=0)
    native = Board.from_chess(board)
    native.use_network(evaluator.incremental)
    for move in moves:
        native.make(native.from_chess_move(move))
        board.push(move)
        assert not native.state_errors(), (board.fen(), move.uci())
        assert evaluator.evaluate(native) == net.evaluate(board), (board.fen(), move.uci())
        if not board.is_check():
            native.make_null()
            board.push(chess.Move.null())
            assert evaluator.evaluate(native) == net.evaluate(board)
            native.unmake()
            board.pop()
    for _ in moves:
        native.unmake()
        board.pop()
    assert not native.state_errors()
    assert evaluator.evaluate(native) == start


def test_incremental_matches_scratch_through_every_kind_of_move() -> None:
    net = random_network(32, seed=7)
    for fen in POSITIONS:
        board = chess.Board(fen)
        for move in list(board.legal_moves):
            check_line(net, board, [move])
    rng = random.Random(5)
    for _ in range(8):
        board = chess.Board()
        line = []
        for _ in range(80):
            moves = list(board.legal_moves)
            if not moves:
                break
            line.append(rng.choice(moves))
            board.push(line[-1])
        check_line(net, chess.Board(), line)


def test_both_output_paths_give_the_same_scores(monkeypatch: pytest.MonkeyPatch) -> None:
    # The compiled build takes output_dot's loop, the interpreted numpy's table and
    # dot product. Interpreted, the module's flag switches the path (a compiled
    # module inlines it: there the test above already runs the loop).
    net = random_network(32, seed=11)
    rng = random.Random(11)
    board, line = chess.Board(), []
    for _ in range(60):
        moves = list(board.legal_moves)
        if not moves:
            break
        line.append(rng.choice(moves))
        board.push(line[-1])
    for compiled in (False, True):
        monkeypatch.setattr(nnue_eval, "COMPILED", compiled)
        check_line(net, chess.Board(), line)
    # Every kind of lane: negative (0), inside [0, qa], and above qa (clamped).
    evaluator = NetworkEvaluator(net, cache_bits=0)
    weights = evaluator._weights_white
    lanes = np.array([rng.randrange(1 << nnue.LANE_BITS) for _ in range(64 * 64)])
    lanes[:64] = nnue.LANE_OFFSET + np.arange(-32, 32) * net.qa // 16
    for row in lanes.reshape(64, 64):
        packed = nnue.pack([int(v) for v in row])  # lanes already offset
        expected = int(np.dot(np.clip(row - nnue.LANE_OFFSET, 0, net.qa), weights))
        assert nnue_eval.output_dot(packed, 128, weights.tolist(), net.qa) == expected


def test_chess960_castling() -> None:
    net = random_network(16, seed=3)
    board = chess.Board("1r2k1r1/pppppppp/8/8/8/8/PPPPPPPP/1R2K1R1 w GBgb - 0 1", chess960=True)
    castles = [move for move in board.legal_moves if board.is_castling(move)]
    assert len(castles) == 2
    for move in castles:
        check_line(net, board, [move])


def test_file_round_trip(tmp_path: Path) -> None:
    net = random_network(24, seed=11)
    path = tmp_path / "n.bin"
    net.write(path)
    again = nnue.load(path)
    assert again.hidden == 24 and again.out_bias == net.out_bias
    assert np.array_equal(again.ft_weights, net.ft_weights)
    assert np.array_equal(again.out_weights, net.out_weights)
    board = chess.Board(POSITIONS[1])
    assert again.evaluate(board) == net.evaluate(board)


def test_weights_too_wide_for_lanes_are_refused() -> None:
    net = random_network(8, seed=1)
    net.ft_weights[3, 2] = 2000
    try:
        NetworkEvaluator(net, cache_bits=0)
    except nnue.NetworkError as exc:
        assert "16-bit lanes" in str(exc)
    else:
        raise AssertionError("a network whose accumulators overflow 16 bits was accepted")
