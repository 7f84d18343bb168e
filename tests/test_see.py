"""Static exchange evaluation against a slow reference that plays the exchange out."""

from __future__ import annotations

import random
from pathlib import Path

import chess
import pytest

from engine.core.see import SEE_VALUES, see_ge

OPENINGS = (
    Path(__file__).resolve().parents[1] / "scripts" / "matches" / "openings" / "noob3_500.epd"
)


def _swap_ref(board: chess.Board, square: int) -> int:
    """Best the side to move gains by capturing on ``square`` (or 0 by stopping):
    least valuable attacker first, pins ignored, a king only onto an undefended square."""
    attackers = board.attackers_mask(board.turn, square)
    if not attackers:
        return 0
    from_sq = min(
        chess.scan_forward(attackers), key=lambda sq: SEE_VALUES[board.piece_type_at(sq) or 0]
    )
    if board.piece_type_at(from_sq) == chess.KING and board.attackers_mask(
        not board.turn, square, board.occupied ^ chess.BB_SQUARES[from_sq]
    ):
        return 0
    victim = SEE_VALUES[board.piece_type_at(square) or 0]
    board.push(chess.Move(from_sq, square))
    gain = victim - _swap_ref(board, square)
    board.pop()
    return max(0, gain)


def _see_ref(board: chess.Board, move: chess.Move) -> int:
    victim = SEE_VALUES[board.piece_type_at(move.to_square) or chess.PAWN]
    board.push(chess.Move(move.from_square, move.to_square))
    value = victim - _swap_ref(board, move.to_square)
    board.pop()
    return value


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


def test_see_equals_played_out_exchange() -> None:
    checked = 0
    for board in _positions(300):
        for move in board.generate_legal_captures():
            if move.promotion or board.is_en_passant(move):
                continue
            want = _see_ref(board, move)
            assert see_ge(board, move, want), (board.fen(), move.uci())
            assert not see_ge(board, move, want + 1), (board.fen(), move.uci())
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
        # A king may not capture a defended piece.
        ("4k3/8/8/8/8/2b5/3p4/4K3 w - - 0 1", "e1d2", -20000 + 100),
    ],
)
def test_see_known_exchanges(fen: str, move: str, value: int) -> None:
    board = chess.Board(fen)
    move_ = chess.Move.from_uci(move)
    # The exchange is worth ``value`` exactly: at least that, and not a centipawn more.
    assert see_ge(board, move_, value) and not see_ge(board, move_, value + 1)
