"""The evaluations of the native search board equal their definitions.

``Evaluator.evaluate`` (the search's one entry point) must score every position of the
native board (engine.core.board: its bitboards, key, psqt sums) exactly as the tuner's
definition, ``features.evaluate_features`` (weights x features) scores the python-chess
board, and ``NetworkEvaluator.evaluate`` (the board's accumulator) exactly as the
network's from-scratch ``Network.evaluate``, plus the definition when the network is a
correction (BASE_HAND). Compared along seeded random games (standard and Chess960,
with captures, promotions, castling, en passant and null moves, the evaluators' caches
and pawn-king tables kept: a table of 16 slots, so that entries are replaced and
re-checked) and in endings where the scale factors apply, for the hand-written
evaluation, the shipped network and a random network scored alone. Whichever build
the guard loads (compiled or source) is the one tested.
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
from engine.core.nnue_eval import MAX_NETWORK_SCORE, NetworkEvaluator
from engine.core.weights import EG_WEIGHTS, MG_WEIGHTS
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


def definition(board: chess.Board) -> int:
    """The tuner's definition of the hand-written evaluation (side to move's view)."""
    return features.evaluate_features(board, MG_WEIGHTS, EG_WEIGHTS)


@pytest.fixture(scope="module")
def evaluator_pairs() -> list[tuple[str, Callable[[], Evaluator]]]:
    """Makers of the evaluators compared: hand-written, shipped network, random one."""
    shipped = load(SHIPPED_NETWORK)
    assert shipped.base == BASE_HAND
    alone = random_network(16, seed=9)
    assert alone.base == BASE_NONE
    return [
        ("hand", lambda: Evaluator(cache_bits=4)),
        ("shipped", lambda: NetworkEvaluator(shipped, cache_bits=4)),
        ("random", lambda: NetworkEvaluator(alone, cache_bits=4)),
    ]


def network_of(evaluator: Evaluator) -> Optional[Incremental]:
    return evaluator.incremental if isinstance(evaluator, NetworkEvaluator) else None


class Pair:
    """An evaluator of the native board and the definition it must equal."""

    def __init__(self, make: Callable[[], Evaluator]) -> None:
        self.evaluator = make()

    def expected(self, board: chess.Board) -> int:
        evaluator = self.evaluator
        if not isinstance(evaluator, NetworkEvaluator):
            return definition(board)
        score = evaluator.net.evaluate(board)
        if evaluator.net.base == BASE_HAND:
            score += definition(board)
        return max(-MAX_NETWORK_SCORE, min(MAX_NETWORK_SCORE, score))

    def board(self, board: chess.Board) -> Board:
        native = Board.from_chess(board)
        native.use_network(network_of(self.evaluator))
        return native

    def check(self, native: Board, board: chess.Board) -> None:
        expected = self.expected(board)
        assert self.evaluator.evaluate(native) == expected, board.fen()
        # Cached under the board's key, as given: the second answer is the cache's.
        slot = native.key & self.evaluator._mask
        assert self.evaluator._keys[slot] == native.key
        assert self.evaluator.evaluate(native) == expected


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
def test_evaluate_equals_the_definition_along_games(
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
def test_evaluate_equals_the_definition_in_endings(
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
    assert Evaluator().evaluate(Board.from_chess(board)) == definition(board)


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(12))
def test_evaluate_equals_the_definition_many(
    evaluator_pairs: list[tuple[str, Callable[[], Evaluator]]], seed: int
) -> None:
    rng = random.Random(4000 + seed)
    for _, make in evaluator_pairs:
        board = chess.Board()
        if seed % 2:
            board = chess.Board.from_chess960_pos(rng.randrange(960))
            board.chess960 = True
        play_and_compare(Pair(make), board, rng, 200)
