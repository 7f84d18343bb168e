"""Check detection for the search: is a king attacked, on python-chess's bitboards.

The search asks at every node whether the side to move is in check, and after
risky moves whether the side that moved left its king attacked. python-chess
answers through several method calls (``is_check`` -> ``checkers_mask`` ->
``king`` and ``attackers_mask``, which looks up every slider attack whatever
the position); ``king_attacked`` answers the same question in one call, testing
the cheap attackers first and looking up a slider's attacks only when an enemy
rook, bishop or queen stands on one of the king's lines at all.

Before a quiet move is made, ``checking_squares`` and ``gives_check`` tell whether it
would check: the search prunes most quiet moves at its frontier unless they check,
and making a move only to ask costs far more than these two bitboard tests.

``king_attacked(board, board.turn)`` equals ``Board.is_check()`` and
``king_attacked(board, not board.turn)`` equals ``Board.was_into_check()`` for every
position, a side without a king included (never in check), and ``gives_check``
equals ``Board.gives_check`` for every move it is asked about (see there);
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
_BB_SQUARES: Final = chess.BB_SQUARES
_RAYS: Final = chess.BB_RAYS
_BETWEEN: Final = [[chess.between(a, b) for b in chess.SQUARES] for a in chess.SQUARES]

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


CheckSquares = tuple[int, int, int, int, int, int, int, int]
"""``checking_squares``'s answer: by index, 0 the discoverers, 1-6 the squares from
which a pawn, knight, bishop, rook, queen, king would check (a king's
check is an illegal move, but ``king_attacked`` would see it), 7 the enemy king's
square."""

_NO_CHECKS: Final[CheckSquares] = (0, 0, 0, 0, 0, 0, 0, 0)


def checking_squares(board: chess.Board) -> CheckSquares:
    """Where the side to move checks the enemy king from, in the current occupancy.

    A slider checks from a square whose line to the king is empty. The moving
    piece cannot itself be on that line: it would be checking already, which the
    side to move cannot be. Discoverers are the side to move's pieces that stand
    alone between the enemy king and one of its own sliders.
    """
    us = board.turn
    ours = board.occupied_co[us]
    king_mask = board.occupied_co[not us] & board.kings & ~board.promoted
    if not king_mask:
        return _NO_CHECKS
    square = king_mask.bit_length() - 1
    occupied = board.occupied
    queens = board.queens
    diagonal = _DIAG_ATTACKS[square][_DIAG_MASKS[square] & occupied]
    straight = (
        _RANK_ATTACKS[square][_RANK_MASKS[square] & occupied]
        | _FILE_ATTACKS[square][_FILE_MASKS[square] & occupied]
    )
    discoverers = 0
    snipers = (
        (board.rooks | queens) & STRAIGHT_LINES[square]
        | (board.bishops | queens) & DIAGONAL_LINES[square]
    ) & ours
    between = _BETWEEN[square]
    while snipers:
        sniper = snipers.bit_length() - 1
        snipers ^= 1 << sniper
        blockers = between[sniper] & occupied
        if blockers and not blockers & (blockers - 1):
            discoverers |= blockers
    return (
        discoverers & ours,
        _PAWN_ATTACKS[not us][square],
        _KNIGHT_ATTACKS[square],
        diagonal,
        straight,
        diagonal | straight,
        _KING_ATTACKS[square],
        square,
    )


def gives_check(board: chess.Board, move: chess.Move, squares: CheckSquares) -> bool:
    """True if ``move`` (by the side to move) checks the enemy king; ``squares`` is
    ``checking_squares(board)``. Exact for every move but castling, promotions and
    en passant, which the caller must not ask about."""
    from_sq = move.from_square
    to_bb = _BB_SQUARES[move.to_square]
    piece_type = board.piece_type_at(from_sq)
    if piece_type and squares[piece_type] & to_bb:
        return True
    # A discoverer that leaves the line through it and the king uncovers its slider.
    return bool(squares[0] & _BB_SQUARES[from_sq] and not _RAYS[from_sq][squares[7]] & to_bb)
