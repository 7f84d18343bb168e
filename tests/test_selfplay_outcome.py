"""scripts.training.engines' ``Game``: the self-play loop's end-of-game test, kept
incrementally, against python-chess's ``board.outcome(claim_draw=True)`` (what the
loop called before) at every ply of seeded random games that repeat positions, reach
the fifty- and seventy-five-move rules, mate, stalemate and run out of material."""

from __future__ import annotations

import random

import chess

from scripts.training.engines import Game

STARTS = [
    chess.STARTING_FEN,
    # Few moves from each position: repetitions.
    "4k3/8/8/8/8/8/8/R3K2R w KQ - 0 1",
    "r3k3/8/8/8/8/8/8/4K2R w Kq - 80 60",
    # The fifty- and seventy-five-move rules near.
    "4k3/8/8/8/8/8/4R3/4K3 w - - 96 80",
    "4k3/8/3n4/8/8/8/4R3/4K3 b - - 150 90",
    # En passant rights (legal and not), mates and stalemates, material running out.
    "4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 2",
    "4k3/8/8/8/3pP3/8/8/4K3 b - e3 0 2",
    "7k/5Q2/6K1/8/8/8/8/8 w - - 0 1",
    "k7/2Q5/1K6/8/8/8/8/8 w - - 0 1",
    "4k3/8/8/8/8/8/3nb3/4K3 w - - 0 1",
]


def test_game_outcome_is_python_chess_outcome() -> None:
    rng = random.Random(105)
    endings = set()
    for game_number in range(240):
        start = STARTS[game_number % len(STARTS)]
        game = Game(chess.Board(start))
        board = game.board
        # Mostly reversible moves (no pawn moves or captures), to repeat positions.
        quiet_bias = game_number % 3 != 0
        for _ in range(300):
            expected = board.outcome(claim_draw=True)
            found = game.outcome()
            assert found == expected, (start, [m.uci() for m in board.move_stack])
            if expected is not None:
                endings.add(expected.termination)
                break
            moves = list(board.legal_moves)
            reversible = [m for m in moves if not board.is_zeroing(m)]
            pool = reversible if quiet_bias and reversible and rng.random() < 0.9 else moves
            game.push(rng.choice(pool))
    assert endings >= {
        chess.Termination.CHECKMATE,
        chess.Termination.STALEMATE,
        chess.Termination.INSUFFICIENT_MATERIAL,
        chess.Termination.SEVENTYFIVE_MOVES,
        chess.Termination.FIFTY_MOVES,
        chess.Termination.THREEFOLD_REPETITION,
    }, endings
