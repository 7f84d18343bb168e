"""Check detection for the search: is a king attacked, on python-chess's bitboards.

The search asks at every node whether the side to move is in check, and after
risky moves whether the side that moved left its king attacked. python-chess
answers through several method calls (``is_check`` -> ``checkers_mask`` ->
``king`` and ``attackers_mask``, which looks up every slider attack whatever
the position); ``king_attacked`` answers the same question in one call, testing
the cheap attackers first and looking up a slider's attacks only when an enemy
rook, bishop or queen stands on one of the king's lines at all.

``king_attacked(board, board.turn)`` equals ``Board.is_check()`` and
``king_attacked(board, not board.turn)`` equals ``Board.was_into_check()`` for every
position, a side without a king included (never in check);
tests/test_attacks.py holds them to it. This module only reads the board: it
must not change it, generate moves or know about the search.
"""

from __future__ import annotations

from typing import Final

import chess

_KNIGHT_ATTACKS: Final = chess.BB_KNIGHT_ATTACKS
_KING_ATTACKS: Final = chess.BB_KING_ATTACKS
_PAWN_ATTACKS: Final = chess.BB_PAWN_ATTACKS
_RANK_ATTACKS: Final = chess.BB_RANK_ATTACKS
_FILE_ATTACKS: Final = chess.BB_FILE_ATTACKS
_DIAG_ATTACKS: Final = chess.BB_DIAG_ATTACKS
_RANK_MASKS: Final = chess.BB_RANK_MASKS
_FILE_MASKS: Final = chess.BB_FILE_MASKS
_DIAG_MASKS: Final = chess.BB_DIAG_MASKS

STRAIGHT_LINES: Final = [
    chess.BB_RANK_ATTACKS[sq][0] | chess.BB_FILE_ATTACKS[sq][0] for sq in chess.SQUARES
]
"""Squares a rook on an empty board reaches from each square."""
DIAGONAL_LINES: Final = [chess.BB_DIAG_ATTACKS[sq][0] for sq in chess.SQUARES]
"""Squares a bishop on an empty board reaches from each square."""


def king_attacked(board: chess.Board, color: chess.Color) -> bool:
    """True if ``color``'s king is attacked by the other side (False without a king)."""
    king_mask = board.occupied_co[color] & board.kings & ~board.promoted
    if not king_mask:
        return False
    square = king_mask.bit_length() - 1
    them = board.occupied_co[not color]
    if _KNIGHT_ATTACKS[square] & board.knights & them:
        return True
    if _PAWN_ATTACKS[color][square] & board.pawns & them:
        return True
    if _KING_ATTACKS[square] & board.kings & them:
        return True
    queens = board.queens
    straight = (board.rooks | queens) & them
    if straight & STRAIGHT_LINES[square]:
        occupied = board.occupied
        if (
            _RANK_ATTACKS[square][_RANK_MASKS[square] & occupied]
            | _FILE_ATTACKS[square][_FILE_MASKS[square] & occupied]
        ) & straight:
            return True
    diagonal = (board.bishops | queens) & them
    if diagonal & DIAGONAL_LINES[square]:
        return bool(_DIAG_ATTACKS[square][_DIAG_MASKS[square] & board.occupied] & diagonal)
    return False
