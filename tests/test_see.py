"""The search board's static exchange evaluation (engine.core.exchange's ``see_ge`` and
``see``) against a slow reference on python-chess's board that plays the exchange out
(tests/references.py), in random middlegames and in known exchanges."""

from __future__ import annotations

import random
from pathlib import Path

import chess
import pytest

from engine.core.board import Board
from engine.core.exchange import SEE_VALUES, see, see_ge
from engine.core.movegen import noisy_moves
from tests.references import EXCHANGE_VALUES, see_value

OPENINGS = (
    Path(__file__).resolve().parents[1] / "scripts" / "matches" / "openings" / "noob3_500.epd"
)


def _positions(count: int) -> list[chess.Board]:
    """Middlegame positions: balanced openings plus 10-30 random plies."""
    rng = random.Random(7)
    lines = [line for line in OPENINGS.read_text().splitlines() if line.strip()]
    boards = []
    while len(boards) < count:
        board = chess.Board(rng.choice(lines))
        for _ in range(rng.randint(10, 30)):
            moves = list(board.legal_moves)
            if not moves:
                break
            board.push(rng.choice(moves))
        if not board.is_game_over():
            boards.append(board)
    return boards


def test_reference_values_are_the_engines() -> None:
    assert [EXCHANGE_VALUES[piece] for piece in chess.PIECE_TYPES] == list(SEE_VALUES[1:])


def test_see_equals_played_out_exchange() -> None:
    checked = 0
    for board in _positions(300):
        native = Board.from_chess(board)
        for code in noisy_moves(native):
            move = native.to_chess_move(code)
            want = see_value(board, move)
            assert see_ge(native, code, want), (board.fen(), move.uci())
            assert not see_ge(native, code, want + 1), (board.fen(), move.uci())
            assert see(native, code) == want, (board.fen(), move.uci())
            checked += 1
    assert checked > 500


@pytest.mark.parametrize(
    ("fen", "move", "value"),
    [
        # A rook takes a defended pawn; the rook behind the defender x-rays nothing.
        ("1k1r4/1pp4p/p7/4p3/8/P5P1/1PP4P/2K1R3 w - - 0 1", "e1e5", 100),
        # Knight takes pawn, queen and rook wait behind: loses the knight for a pawn.
        ("1k1r3q/1ppn3p/p4b2/4p3/8/P2N2P1/1PP1R1BP/2K1Q3 w - - 0 1", "d3e5", -220),
        # A rook behind the capturing rook joins in (x-ray): the exchange is even.
        ("7r/5qpk/p1Qp1b1p/3r3n/BB3p2/5p2/P1P2P2/4RK1R w - - 0 1", "e1e8", 0),
        # En passant takes a pawn.
        ("4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 1", "e5d6", 100),
        # Promotions count as the pawn's move: a rook taken, then the pawn lost.
        ("r3k3/1P6/1n6/8/8/8/8/4K3 w - - 0 1", "b7a8q", 400),
        ("4k3/1P6/8/8/8/8/8/4K3 w - - 0 1", "b7b8q", 0),
        # A king may not capture a defended piece.
        ("4k3/8/8/8/8/2b5/3p4/4K3 w - - 0 1", "e1d2", -20000 + 100),
    ],
)
def test_see_known_exchanges(fen: str, move: str, value: int) -> None:
    board = chess.Board(fen)
    native = Board.from_chess(board)
    code = native.from_chess_move(chess.Move.from_uci(move))
    # The exchange is worth ``value`` exactly: at least that, and not a centipawn more.
    assert see_ge(native, code, value) and not see_ge(native, code, value + 1)
    assert see(native, code) == value == see_value(board, chess.Move.from_uci(move))
