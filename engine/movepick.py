"""Move ordering: which move to try first, so that cutoffs come early.

Order at an interior node, in stages so that a cutoff saves the generation of
the rest: the TT move (tried by the search before any move generation), then
captures by MVV-LVA, then the two killer moves of the ply, then quiet moves
(queen promotions first) by the history heuristic. Moves are handled
as python-chess ``Move`` objects but compared through integer codes
(``from | to << 6 | promotion << 12``), which are cheap to build, to hash and to
store in the TT; ``Move.__eq__`` is slow. This module holds the history table
(owned by the searcher, passed in) but no other search state, and never pushes
moves on the board.
"""

from __future__ import annotations

from collections.abc import Sequence

import chess

_BB_SQUARES = chess.BB_SQUARES

CAPTURE_BASE = 1 << 24
"""Ordering score of captures and promotions, above every killer and quiet."""

KILLER_1_SCORE = (1 << 23) + 2
KILLER_2_SCORE = (1 << 23) + 1
HISTORY_MAX = 1 << 22
"""History values are halved when one reaches this, so quiets stay below killers."""

_ORDER_SHIFT = 8
"""Sort keys are ``score << 8 | (255 - index)``: ints sort fast and ties keep generation order."""

_MVV = (0, 100, 300, 310, 500, 900, 10000)


def move_code(move: chess.Move) -> int:
    """The move's integer code (0 is never a real move: from == to)."""
    return move.from_square | (move.to_square << 6) | ((move.promotion or 0) << 12)


def decode(code: int) -> chess.Move:
    """The ``Move`` with this code."""
    return chess.Move(code & 63, (code >> 6) & 63, (code >> 12) or None)


def new_history() -> list[int]:
    return [0] * 8192


def age_history(history: list[int]) -> None:
    """Halve every entry: recent searches count more than old ones."""
    for i in range(len(history)):
        history[i] >>= 1


def order_moves(
    board: chess.Board,
    moves: Sequence[chess.Move],
    skip_code: int,
    killer_1: int,
    killer_2: int,
    history: list[int],
) -> list[chess.Move]:
    """``moves`` sorted best first, without the move coded ``skip_code``."""
    them = board.occupied_co[not board.turn]
    piece_type_at = board.piece_type_at
    ep_square = board.ep_square
    hist_base = 4096 if board.turn else 0
    keys = []
    index = 0
    for move in moves:
        from_sq = move.from_square
        to_sq = move.to_square
        promotion = move.promotion
        code = from_sq | (to_sq << 6) | ((promotion or 0) << 12)
        if code == skip_code:
            index += 1
            continue
        if _BB_SQUARES[to_sq] & them:
            score = (
                CAPTURE_BASE + _MVV[piece_type_at(to_sq) or 1] * 8 - (piece_type_at(from_sq) or 1)
            )
            if promotion:
                score += _MVV[promotion]
        elif promotion:
            # Under-promotions go to the back; a queen promotion is worth a capture.
            score = CAPTURE_BASE + _MVV[promotion] if promotion == chess.QUEEN else 0
        elif to_sq == ep_square and piece_type_at(from_sq) == chess.PAWN:
            score = CAPTURE_BASE + _MVV[1] * 8 - 1
        elif code == killer_1:
            score = KILLER_1_SCORE
        elif code == killer_2:
            score = KILLER_2_SCORE
        else:
            score = history[hist_base + from_sq * 64 + to_sq]
        keys.append((score << _ORDER_SHIFT) | (255 - index))
        index += 1
    keys.sort(reverse=True)
    return [moves[255 - (k & 255)] for k in keys]


def order_captures(
    board: chess.Board, moves: Sequence[chess.Move], skip_code: int = -1
) -> list[chess.Move]:
    """Captures (and capture-promotions) by MVV-LVA, without ``skip_code``."""
    piece_type_at = board.piece_type_at
    keys = []
    for index, move in enumerate(moves):
        to_sq = move.to_square
        promotion = move.promotion
        if (
            skip_code >= 0
            and (move.from_square | (to_sq << 6) | ((promotion or 0) << 12)) == skip_code
        ):
            continue
        # An empty target square means en passant: a pawn takes a pawn.
        score = _MVV[piece_type_at(to_sq) or 1] * 8 - (piece_type_at(move.from_square) or 1)
        if promotion:
            score += _MVV[promotion] * 8
        keys.append((score << _ORDER_SHIFT) | (255 - index))
    keys.sort(reverse=True)
    return [moves[255 - (k & 255)] for k in keys]


def order_quiets(
    board: chess.Board,
    moves: Sequence[chess.Move],
    skip_1: int,
    skip_2: int,
    skip_3: int,
    history: list[int],
) -> list[chess.Move]:
    """Non-captures by history (queen promotions first), without the skipped codes.

    The generator's non-capture set also holds en passant captures (their target
    is empty); they were searched with the captures and are dropped here.
    """
    ep_square = board.ep_square
    hist_base = 4096 if board.turn else 0
    keys = []
    for index, move in enumerate(moves):
        from_sq = move.from_square
        to_sq = move.to_square
        promotion = move.promotion
        code = from_sq | (to_sq << 6) | ((promotion or 0) << 12)
        if code in (skip_1, skip_2, skip_3):
            continue
        if promotion:
            score = HISTORY_MAX + 1 if promotion == chess.QUEEN else 0
        elif (
            to_sq == ep_square
            and (to_sq - from_sq) % 8
            and board.piece_type_at(from_sq) == chess.PAWN
        ):
            continue
        else:
            score = history[hist_base + from_sq * 64 + to_sq]
        keys.append((score << _ORDER_SHIFT) | (255 - index))
    keys.sort(reverse=True)
    return [moves[255 - (k & 255)] for k in keys]
