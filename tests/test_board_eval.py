"""The evaluations of the native search board: ``evaluate_board`` equals ``evaluate``.

``Evaluator.evaluate_board`` and ``NetworkEvaluator.evaluate_board`` read the native
board (engine.core.board: its bitboards, key, psqt sums and, with a network, its
accumulator); they must score every position exactly as ``evaluate`` scores the
``Position`` of the same python-chess board, or the search on the native board would
search another tree. Compared along seeded random games (standard and Chess960, with
captures, promotions, castling, en passant and null moves) and in endings where the
scale factors apply, for the hand-written evaluation, the shipped network (its output
added to the hand-written score) and a random network scored alone; the hand-written
evaluation both by the body ``evaluate_board`` runs in this build and by the native
body (the compiled build's). The evaluators compared are separate objects: neither
answers from the other's cache.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Optional

import chess
import pytest

from engine.core import features
from engine.core.board import Board
from engine.core.evaluate import Evaluator
from engine.core.nnue import BASE_HAND, BASE_NONE, SHIPPED_NETWORK, Incremental, load
from engine.core.nnue_eval import NetworkEvaluator
from engine.core.position import Position
from tests.networks import random_network

ENDING_FENS = [
    # Opposite-coloured bishops alone, with pawns, and with a knight (no scaling).
    "8/5k2/4b3/1p3p2/1P3P2/2B5/5K2/8 w - - 0 1",
    "8/5k2/4b3/8/8/2B5/5K2/8 b - - 0 1",
    "8/5k2/4b3/1p6/8/2B1N3/5K2/8 w - - 0 1",
    # No pawns for one side or both: small edges, a rook up, bare kings.
    "8/8/4k3/8/8/3BK3/8/5r2 w - - 0 1",
    "8/8/4k3/8/2N5/4K3/8/8 b - - 0 1",
    "8/8/4k3/8/8/4K3/8/8 w - - 0 1",
    "8/8/4k3/8/8/4K3/8/R7 b - - 0 1",
    "8/pp6/4k3/8/8/4K3/8/R7 w - - 0 1",
    "8/8/4k3/8/8/4KQ2/8/q7 w - - 0 1",
    "4k3/8/8/8/8/8/PPPP4/4K3 b - - 0 1",
    # Phase above MAX_PHASE: promoted queens.
    "QQQQk3/8/8/8/8/8/8/4K2q w - - 0 1",
]


@pytest.fixture(scope="module")
def evaluator_pairs() -> list[tuple[str, Callable[[], Evaluator]]]:
    """Makers of the evaluators compared: hand-written, shipped network, random one."""
    shipped = load(SHIPPED_NETWORK)
    assert shipped.base == BASE_HAND
    alone = random_network(16, seed=9)
    assert alone.base == BASE_NONE
    return [
        ("hand", Evaluator),
        ("shipped", lambda: NetworkEvaluator(shipped)),
        ("random", lambda: NetworkEvaluator(alone)),
    ]


def network_of(evaluator: Evaluator) -> Optional[Incremental]:
    return evaluator.incremental if isinstance(evaluator, NetworkEvaluator) else None


class Pair:
    """One evaluator for the native board, another for Positions of the same board."""

    def __init__(self, make: Callable[[], Evaluator]) -> None:
        self.native_eval = make()
        self.reference = make()
        self.network = network_of(self.reference)
        # The native body (the compiled build's), run here in either build, with a
        # pawn-king table of 16 slots, so that entries are replaced and re-checked.
        self.native_body = Evaluator(cache_bits=4) if type(self.native_eval) is Evaluator else None

    def board(self, board: chess.Board) -> Board:
        native = Board.from_chess(board)
        native.use_network(network_of(self.native_eval))
        return native

    def check(self, native: Board, board: chess.Board) -> None:
        expected = self.reference.evaluate(Position(board.copy(), self.network))
        assert self.native_eval.evaluate_board(native) == expected, board.fen()
        if self.native_body is not None:
            assert self.native_body._evaluate_native(native) == expected, board.fen()
        # Cached under the board's key, as given: the second answer is the cache's.
        slot = native.key & self.native_eval._mask
        assert self.native_eval._keys[slot] == native.key
        assert self.native_eval.evaluate_board(native) == expected


def play_and_compare(pair: Pair, board: chess.Board, rng: random.Random, plies: int) -> None:
    """Random moves (captures and promotions preferred, null moves and moves taken
    back sometimes), comparing the two evaluations after every make and unmake."""
    native = pair.board(board)
    pair.check(native, board)
    for _ in range(plies):
        if rng.random() < 0.1 and not board.is_check():
            native.make_null()
            board.push(chess.Move.null())
            pair.check(native, board)
            native.unmake()
            board.pop()
            pair.check(native, board)
        moves = list(board.legal_moves)
        if not moves:
            break
        captures = [m for m in moves if board.is_capture(m) or m.promotion]
        move = rng.choice(captures if captures and rng.random() < 0.5 else moves)
        rare = [m for m in moves if board.is_castling(m) or board.is_en_passant(m)]
        if rare and rng.random() < 0.8:
            move = rng.choice(rare)
        native.make(native.from_chess_move(move))
        board.push(move)
        pair.check(native, board)
        if rng.random() < 0.2:
            native.unmake()
            board.pop()
            pair.check(native, board)
            native.make(native.from_chess_move(move))
            board.push(move)
    while board.move_stack:
        native.unmake()
        board.pop()
        pair.check(native, board)


@pytest.mark.parametrize("which", range(3))
def test_evaluate_board_equals_evaluate_along_games(
    evaluator_pairs: list[tuple[str, Callable[[], Evaluator]]], which: int
) -> None:
    _, make = evaluator_pairs[which]
    pair = Pair(make)
    rng = random.Random(40 + which)
    for _ in range(2):
        play_and_compare(pair, chess.Board(), rng, 120)
    board = chess.Board.from_chess960_pos(rng.randrange(960))
    board.chess960 = True
    play_and_compare(pair, board, rng, 80)


@pytest.mark.parametrize("fen", ENDING_FENS)
def test_evaluate_board_equals_evaluate_in_endings(
    evaluator_pairs: list[tuple[str, Callable[[], Evaluator]]], fen: str
) -> None:
    rng = random.Random(fen)
    for _, make in evaluator_pairs:
        play_and_compare(Pair(make), chess.Board(fen), rng, 6)


def test_endings_reach_every_scale_factor() -> None:
    """The endings above are the ones the scale factors' bitboard form must get right."""
    seen: set[int] = set()
    for fen in ENDING_FENS:
        scales = features.scale_factors(chess.Board(fen))
        seen.update(scales)
    assert seen == {
        features.SCALE_NORMAL,
        features.SCALE_OPPOSITE_BISHOPS,
        features.SCALE_NO_PAWNS_SMALL_EDGE,
    }


def test_a_board_without_a_king_uses_the_definition() -> None:
    board = chess.Board("8/8/8/3k4/8/8/2Q5/8 w - - 0 1")
    expected = Evaluator().evaluate(Position(board.copy()))
    assert Evaluator().evaluate_board(Board.from_chess(board)) == expected


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(12))
def test_evaluate_board_equals_evaluate_many(
    evaluator_pairs: list[tuple[str, Callable[[], Evaluator]]], seed: int
) -> None:
    rng = random.Random(4000 + seed)
    for _, make in evaluator_pairs:
        board = chess.Board()
        if seed % 2:
            board = chess.Board.from_chess960_pos(rng.randrange(960))
            board.chess960 = True
        play_and_compare(Pair(make), board, rng, 200)
