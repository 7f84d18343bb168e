"""Slow references on python-chess's board that the engine's search board is tested
against: static exchange played out capture by capture, the squares a piece would
check the enemy king from, and the material and piece-square sums from scratch; and
``evaluate``, the tests' shorthand for the evaluation's entry point on a python-chess
board (converted at the edge, as the tools do).

Test helpers only: nothing in engine/, perft/ or scripts/ may import them.
"""

from __future__ import annotations

import chess

from engine.core.board import Board
from engine.core.evaluate import Evaluator
from engine.core.features import PHASE_WEIGHT
from engine.core.psqt import EG_TABLE, MG_TABLE

EXCHANGE_VALUES = {
    chess.PAWN: 100,
    chess.KNIGHT: 320,
    chess.BISHOP: 330,
    chess.ROOK: 500,
    chess.QUEEN: 950,
    chess.KING: 20000,
}
"""Piece values of the exchange, as the engine's SEE uses them (its SEE_VALUES)."""


def _swap(board: chess.Board, square: int) -> int:
    """Best the side to move gains by capturing on ``square`` (or 0 by stopping):
    least valuable attacker first (the lowest square among equals), pins ignored, a
    king only onto a square the other side no longer attacks."""
    attackers = board.attackers_mask(board.turn, square)
    if not attackers:
        return 0
    from_sq = min(
        chess.scan_forward(attackers),
        key=lambda sq: EXCHANGE_VALUES[board.piece_type_at(sq) or chess.PAWN],
    )
    if board.piece_type_at(from_sq) == chess.KING and board.attackers_mask(
        not board.turn, square, board.occupied ^ chess.BB_SQUARES[from_sq]
    ):
        return 0
    victim = EXCHANGE_VALUES[board.piece_type_at(square) or chess.PAWN]
    board.push(chess.Move(from_sq, square))
    gain = victim - _swap(board, square)
    board.pop()
    return max(0, gain)


def see_value(board: chess.Board, move: chess.Move) -> int:
    """The exchange value of ``move`` played out: what it takes (a pawn for en
    passant, nothing for a quiet move) less the best the other side then gains on
    the square. A promotion is played out as the pawn's move, as the engine's SEE
    counts it."""
    if board.is_en_passant(move):
        victim = EXCHANGE_VALUES[chess.PAWN]
    else:
        taken = board.piece_type_at(move.to_square)
        victim = EXCHANGE_VALUES[taken] if taken else 0
    board.push(chess.Move(move.from_square, move.to_square))
    value = victim - _swap(board, move.to_square)
    board.pop()
    return value


def checking_squares(board: chess.Board) -> dict[chess.PieceType, int]:
    """By piece type (knight, bishop, rook): the squares from which such a piece of
    the side to move would give check to the other king, through the current
    occupancy."""
    king = board.king(not board.turn)
    assert king is not None
    occupied = board.occupied
    diagonal = chess.BB_DIAG_ATTACKS[king][chess.BB_DIAG_MASKS[king] & occupied]
    straight = (
        chess.BB_RANK_ATTACKS[king][chess.BB_RANK_MASKS[king] & occupied]
        | chess.BB_FILE_ATTACKS[king][chess.BB_FILE_MASKS[king] & occupied]
    )
    return {
        chess.KNIGHT: chess.BB_KNIGHT_ATTACKS[king],
        chess.BISHOP: diagonal,
        chess.ROOK: straight,
    }


def psqt_sums(board: chess.Board) -> tuple[int, int, int]:
    """(mg, eg, phase): material and piece-square sums (White's view) and the phase
    weight, from scratch over python-chess's pieces (engine.core.psqt's tables)."""
    mg = eg = phase = 0
    for square, piece in board.piece_map().items():
        index = (2 * (piece.piece_type - 1) + int(piece.color)) * 64 + square
        mg += MG_TABLE[index]
        eg += EG_TABLE[index]
        phase += PHASE_WEIGHT[piece.piece_type]
    return mg, eg, phase


def evaluate(board: chess.Board) -> int:
    """The hand-written evaluation of ``board`` (side to move's view) by the entry
    point, ``Evaluator.evaluate`` on the native board, from empty caches."""
    return Evaluator(cache_bits=0).evaluate(Board.from_chess(board))
