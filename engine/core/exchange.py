"""Static exchange: what a capture sequence on one square wins, by piece values alone.

This module owns ``see_ge`` (does a move win at least a threshold when both sides
take back on its target square, least valuable attacker first?) and ``see`` (the
exchange's value), on the search board (engine.core.board), and the values it
counts with (``SEE_VALUES``). It reads the board and never changes it: no move is
made, the exchange is played out on a copy of the occupancy. It knows nothing of
pins, checks or the evaluation; the move picker and the search decide what a result
means.
"""

from __future__ import annotations

from typing import Final

from mypy_extensions import i64

from engine.core.bitboards import (
    _KING,
    _KNIGHT,
    _ONE,
    _PAWN,
    BISHOP,
    KING,
    KNIGHT,
    PAWN,
    QUEEN,
    ROOK,
    WHITE,
    bishop_attacks,
    rook_attacks,
)
from engine.core.board import Board

SEE_VALUES: Final = (0, 100, 320, 330, 500, 950, 20000)
"""Exchange values by piece type (index 0: no piece), the king last and above any
sum of the others, so that taking it ends an exchange."""


def see_ge(board: Board, move: i64, threshold: i64 = 0) -> bool:
    """Does ``move`` win at least ``threshold`` (cp, ``SEE_VALUES``) when both sides
    take back on its target square, least valuable attacker first, each free to stop?"""
    frm = move & 63
    to = (move >> 6) & 63
    mailbox = board.mailbox
    attacker = mailbox[frm] & 7
    if not attacker:
        attacker = PAWN
    victim = mailbox[to] & 7
    occupied = (board.white | board.black) ^ (_ONE << frm)
    own = board.white if board.turn == WHITE else board.black
    if not victim:
        if attacker == PAWN and to == board.ep_square and (to - frm) % 8 != 0:
            victim = PAWN
            occupied ^= _ONE << (to - 8 if board.turn == WHITE else to + 8)
    elif own & (_ONE << to):
        return threshold <= 0
    swap: i64 = SEE_VALUES[victim] - threshold
    if swap < 0:
        return False
    swap = SEE_VALUES[attacker] - swap
    if swap <= 0:
        return True
    occupied |= _ONE << to
    queens = board.queens
    bishops_queens = board.bishops | queens
    rooks_queens = board.rooks | queens
    white = board.white
    black = board.black
    pawns = board.pawns
    knights = board.knights
    bishops = board.bishops
    rooks = board.rooks
    attackers = (
        (_KNIGHT[to] & knights)
        | (_KING[to] & board.kings)
        | (_PAWN[to] & pawns & black)
        | (_PAWN[64 + to] & pawns & white)
        | (bishop_attacks(to, occupied) & bishops_queens)
        | (rook_attacks(to, occupied) & rooks_queens)
    )
    side = board.turn
    result: i64 = 1
    while True:
        side ^= 1
        attackers &= occupied
        ours = attackers & (white if side == WHITE else black)
        if not ours:
            break
        result ^= 1
        # The least valuable attacker (the king, not listed, only captures last).
        piece: i64 = ours & pawns
        if piece:
            swap = SEE_VALUES[PAWN] - swap
        else:
            piece = ours & knights
            if piece:
                swap = SEE_VALUES[KNIGHT] - swap
            else:
                piece = ours & bishops
                if piece:
                    swap = SEE_VALUES[BISHOP] - swap
                else:
                    piece = ours & rooks
                    if piece:
                        swap = SEE_VALUES[ROOK] - swap
                    else:
                        piece = ours & queens
                        if piece:
                            swap = SEE_VALUES[QUEEN] - swap
        if not piece:
            theirs = attackers & (black if side == WHITE else white)
            return bool(result ^ 1) if theirs else bool(result)
        if swap < result:
            break
        occupied ^= piece & -piece
        attackers |= (bishop_attacks(to, occupied) & bishops_queens) | (
            rook_attacks(to, occupied) & rooks_queens
        )
    return bool(result)


def see(board: Board, move: i64) -> i64:
    """The exchange value of ``move``: the largest ``t`` with ``see_ge(move, t)``."""
    low: i64 = -SEE_VALUES[KING] * 2
    high: i64 = SEE_VALUES[KING] * 2
    # see_ge is monotone in the threshold: bisect for the last threshold it accepts.
    while low < high:
        middle = (low + high + 1) >> 1
        if see_ge(board, move, middle):
            low = middle
        else:
            high = middle - 1
    return low
