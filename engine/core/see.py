"""Static exchange evaluation: what a capture sequence on one square wins or loses.

``see_ge(board, move, threshold)`` answers "does ``move`` win at least
``threshold`` centipawns once both sides have exchanged on its target square,
each recapturing with its least valuable piece and free to stop?" It is the
swap algorithm on python-chess's bitboards: attackers of the square are
recomputed from the board's attack tables as pieces leave it, so x-rays
(a rook behind a rook, a bishop behind a queen or pawn) join in. Pins are
ignored, and a king may only capture last. This module reads the board and
never changes it; the search decides what to do with the answer.
"""

from __future__ import annotations

from typing import Final

import chess

SEE_VALUES: Final = (0, 100, 320, 330, 500, 950, 20000)
"""Exchange values by piece type (index 0 unused, king last so it captures last)."""

_BB_SQUARES: Final = chess.BB_SQUARES
_RANK_MASKS: Final = chess.BB_RANK_MASKS
_FILE_MASKS: Final = chess.BB_FILE_MASKS
_DIAG_MASKS: Final = chess.BB_DIAG_MASKS
_RANK_ATTACKS: Final = chess.BB_RANK_ATTACKS
_FILE_ATTACKS: Final = chess.BB_FILE_ATTACKS
_DIAG_ATTACKS: Final = chess.BB_DIAG_ATTACKS
_KNIGHT_ATTACKS: Final = chess.BB_KNIGHT_ATTACKS
_KING_ATTACKS: Final = chess.BB_KING_ATTACKS
_WHITE_PAWN_ATTACKS: Final = chess.BB_PAWN_ATTACKS[chess.WHITE]
_BLACK_PAWN_ATTACKS: Final = chess.BB_PAWN_ATTACKS[chess.BLACK]


def see_ge(board: chess.Board, move: chess.Move, threshold: int = 0) -> bool:
    """True if ``move`` gains at least ``threshold`` by static exchange (side to move's view).

    Promotions and castling count as gaining nothing beyond what they capture; a
    capture of an empty target by a pawn on the en passant square takes a pawn.
    """
    from_sq = move.from_square
    to_sq = move.to_square
    piece_type_at = board.piece_type_at
    attacker = piece_type_at(from_sq) or chess.PAWN
    victim = piece_type_at(to_sq)
    occupied = board.occupied ^ _BB_SQUARES[from_sq]
    if victim is None:
        if attacker == chess.PAWN and to_sq == board.ep_square and (to_sq - from_sq) % 8:
            victim = chess.PAWN
            occupied ^= _BB_SQUARES[to_sq - 8 if board.turn else to_sq + 8]
        else:
            victim = 0
    elif board.occupied_co[board.turn] & _BB_SQUARES[to_sq]:
        return threshold <= 0  # castling encoded as king-takes-rook
    swap = SEE_VALUES[victim] - threshold
    if swap < 0:
        return False
    swap = SEE_VALUES[attacker] - swap
    if swap <= 0:
        return True

    occupied |= _BB_SQUARES[to_sq]
    bishops_queens = board.bishops | board.queens
    rooks_queens = board.rooks | board.queens
    rank_attacks = _RANK_ATTACKS[to_sq]
    file_attacks = _FILE_ATTACKS[to_sq]
    diag_attacks = _DIAG_ATTACKS[to_sq]
    rank_mask = _RANK_MASKS[to_sq]
    file_mask = _FILE_MASKS[to_sq]
    diag_mask = _DIAG_MASKS[to_sq]
    pawns = board.pawns
    white = board.occupied_co[chess.WHITE]
    black = board.occupied_co[chess.BLACK]
    attackers = (
        (_KING_ATTACKS[to_sq] & board.kings)
        | (_KNIGHT_ATTACKS[to_sq] & board.knights)
        | (rank_attacks[rank_mask & occupied] & rooks_queens)
        | (file_attacks[file_mask & occupied] & rooks_queens)
        | (diag_attacks[diag_mask & occupied] & bishops_queens)
        | (_BLACK_PAWN_ATTACKS[to_sq] & pawns & white)
        | (_WHITE_PAWN_ATTACKS[to_sq] & pawns & black)
    )
    side = board.turn
    result = 1
    # Least valuable first; the king (not listed) only captures last.
    capturers = (pawns, board.knights, board.bishops, board.rooks, board.queens)
    while True:
        side = not side
        attackers &= occupied
        ours = attackers & (white if side else black)
        if not ours:
            break
        result ^= 1
        for index, pieces in enumerate(capturers):
            piece = ours & pieces
            if piece:
                swap = SEE_VALUES[index + 1] - swap
                break
        else:
            # Only the king is left: it may capture only if nothing recaptures.
            theirs = attackers & (black if side else white)
            return bool(result ^ 1) if theirs else bool(result)
        if swap < result:
            break
        occupied ^= piece & -piece
        # The piece that left may have uncovered a slider behind it (an x-ray).
        attackers |= (diag_attacks[diag_mask & occupied] & bishops_queens) | (
            (rank_attacks[rank_mask & occupied] | file_attacks[file_mask & occupied]) & rooks_queens
        )
    return bool(result)
