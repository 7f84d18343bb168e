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
    weights = evaluator._rows_white[0]
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
    assert again.hidden == 24 and np.array_equal(again.out_bias, net.out_bias)
    assert np.array_equal(again.ft_weights, net.ft_weights)
    assert np.array_equal(again.out_weights, net.out_weights)
    board = chess.Board(POSITIONS[1])
    assert again.evaluate(board) == net.evaluate(board)
    assert again.describe() == "768 -> 24 -> 1, CReLU, 1 output bucket, the whole evaluation"


def test_weights_too_wide_for_lanes_are_refused() -> None:
    net = random_network(8, seed=1)
    net.ft_weights[3, 2] = 2000
    try:
        NetworkEvaluator(net, cache_bits=0)
    except nnue.NetworkError as exc:
        assert "16-bit lanes" in str(exc)
    else:
        raise AssertionError("a network whose accumulators overflow 16 bits was accepted")


# ------------------------------------------------ SCReLU, output buckets, version 2


def random_line(seed: int, plies: int = 120) -> list[chess.Move]:
    """A random game from the start, captures preferred so that material (and with it
    the output bucket) changes along it."""
    rng = random.Random(seed)
    board, line = chess.Board(), []
    for _ in range(plies):
        moves = list(board.legal_moves)
        if not moves:
            break
        captures = [move for move in moves if board.is_capture(move)]
        move = rng.choice(captures if captures and rng.random() < 0.7 else moves)
        line.append(move)
        board.push(move)
    return line


def test_buckets_follow_the_material() -> None:
    assert [nnue.bucket(n, 1) for n in (1, 2, 17, 32, 40)] == [0] * 5
    assert [nnue.bucket(n, 8) for n in (0, 2, 5, 6, 9, 10, 31, 32, 33)] == [
        0, 0, 0, 1, 1, 2, 7, 7, 7,
    ]  # fmt: skip
    # Three buckets: ceil(32 / 3) = 11 pieces a bucket, the last one holding the rest.
    assert [nnue.bucket(n, 3) for n in (12, 13, 23, 24, 32)] == [0, 1, 1, 2, 2]


def numpy_score(net: nnue.Network, board: chess.Board) -> int:
    """The module docstring's formulas, vectorised: an independent reference."""
    accs = []
    for perspective in (board.turn, not board.turn):
        active = nnue.features(board, perspective)
        acc = net.ft_bias.astype(np.int64) + net.ft_weights[active].astype(np.int64).sum(axis=0)
        accs.append(np.clip(acc, 0, net.qa))
    hidden_out = np.concatenate(accs)
    b = nnue.bucket(len(board.piece_map()), net.buckets)
    weights = net.out_weights[b].astype(np.int64)
    if net.activation == nnue.SCRELU:
        dot = int(hidden_out**2 @ weights) // net.qa
    else:
        dot = int(hidden_out @ weights)
    return (dot + int(net.out_bias[b])) * net.scale // (net.qa * net.qb)


@pytest.mark.parametrize("activation", [nnue.CRELU, nnue.SCRELU])
def test_the_reference_evaluation_follows_the_formulas(activation: int) -> None:
    net = random_network(16, seed=21, activation=activation, buckets=8)
    board, buckets, scores = chess.Board(), set(), set()
    for move in random_line(21):
        board.push(move)
        assert net.evaluate(board) == numpy_score(net, board), board.fen()
        assert net.evaluate(board.mirror()) == net.evaluate(board)
        buckets.add(nnue.bucket(len(board.piece_map()), 8))
        scores.add(net.evaluate(board))
    assert len(buckets) >= 4 and len(scores) > 40


def test_screlu_and_buckets_incrementally_on_both_output_paths(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    net = random_network(32, seed=5, activation=nnue.SCRELU, buckets=8)
    for compiled in (False, True):
        monkeypatch.setattr(nnue_eval, "COMPILED", compiled)
        for seed in (1, 2, 3):
            check_line(net, chess.Board(), random_line(seed))
        for fen in POSITIONS:
            board = chess.Board(fen)
            for move in list(board.legal_moves)[:12]:
                check_line(net, board, [move])


def test_squared_output_loop_is_numpys() -> None:
    net = random_network(32, seed=13, activation=nnue.SCRELU)
    weights = (np.arange(64) * 1021 % 65535 - 32767).astype(np.int64)  # the full int16 range
    rng = random.Random(13)
    lanes = np.array([rng.randrange(1 << nnue.LANE_BITS) for _ in range(64 * 64)])
    lanes[:64] = nnue.LANE_OFFSET + np.arange(-32, 32) * net.qa // 16
    lanes[64:128] = nnue.LANE_OFFSET + net.qa  # the largest sum: every lane at QA
    for row in lanes.reshape(64, 64):
        packed = nnue.pack([int(v) for v in row])
        clipped = np.clip(row - nnue.LANE_OFFSET, 0, net.qa)
        expected = int(np.dot(clipped * clipped, weights))
        assert nnue_eval.output_dot_squared(packed, 128, weights.tolist(), net.qa) == expected


def test_version_2_round_trip(tmp_path: Path) -> None:
    net = random_network(24, seed=3, activation=nnue.SCRELU, buckets=8)
    path = tmp_path / "n.nnue"
    net.write(path)
    data = path.read_bytes()
    assert data[:8] == b"CUTNNUE2" and data[:8] != nnue.MAGIC_V1
    again = nnue.load(path)
    assert (again.activation, again.buckets, again.hidden) == (nnue.SCRELU, 8, 24)
    for name in ("ft_weights", "ft_bias", "out_weights", "out_bias"):
        assert np.array_equal(getattr(again, name), getattr(net, name)), name
    board = chess.Board(POSITIONS[1])
    assert again.evaluate(board) == net.evaluate(board)
    assert again.describe() == "768 -> 24 -> 1, SCReLU, 8 output buckets, the whole evaluation"


def test_version_1_files_still_load(tmp_path: Path) -> None:
    """A file of the first format (no activation or bucket fields, one int32 bias) is a
    CReLU network with one bucket; the shipped network is one."""
    import struct

    net = random_network(16, seed=4)
    path = tmp_path / "v1.nnue"
    path.write_bytes(
        nnue.MAGIC_V1
        + struct.pack("<5Ii", 768, 16, net.qa, net.qb, net.scale, nnue.BASE_NONE)
        + net.ft_weights.astype("<i2").tobytes()
        + net.ft_bias.astype("<i2").tobytes()
        + net.out_weights.astype("<i2").tobytes()
        + struct.pack("<i", int(net.out_bias[0]))
    )
    old = nnue.load(path)
    assert (old.activation, old.buckets) == (nnue.CRELU, 1)
    for fen in POSITIONS:
        assert old.evaluate(chess.Board(fen)) == net.evaluate(chess.Board(fen))
    assert nnue.SHIPPED_NETWORK.read_bytes()[:8] == nnue.MAGIC_V1
    assert nnue.load(nnue.SHIPPED_NETWORK).buckets == 1


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda d: d[:7] + b"3" + d[8:], "network format version 3: this Cutoff reads"),
        (lambda d: b"NOTANNUE" + d[8:], "bad magic"),
        (lambda d: d[:32] + (7).to_bytes(4, "little") + d[36:], "unknown activation 7"),
        (lambda d: d[:36] + (0).to_bytes(4, "little") + d[40:], "0 output buckets"),
        (lambda d: d[:36] + (33).to_bytes(4, "little") + d[40:], "33 output buckets"),
        (lambda d: d[:-1], "bytes, expected"),
    ],
)
def test_bad_version_2_headers_are_named(tmp_path: Path, change: object, message: str) -> None:
    path = tmp_path / "n.nnue"
    random_network(8, seed=1, activation=nnue.SCRELU, buckets=2).write(path)
    path.write_bytes(change(path.read_bytes()))  # type: ignore[operator]
    with pytest.raises(nnue.NetworkError, match=message):
        nnue.load(path)
