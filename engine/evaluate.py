"""Static evaluation, in centipawns from the side to move's point of view.

Today this is PeSTO's tapered material + piece-square evaluation: the
middlegame and endgame sums (kept incrementally by position.py) blended by the
game phase. ``evaluate`` recomputes it from scratch for tools and tests; the
search calls ``evaluate_sums`` on the incremental terms. This module must not
search, and must not be called per node with a board (that is the slow path).
"""

from __future__ import annotations

import chess

from engine.position import full_state
from engine.psqt import MAX_PHASE


def evaluate_sums(mg: int, eg: int, phase: int, white_to_move: bool) -> int:
    """Blend the middlegame and endgame sums by phase; side to move's view."""
    if phase > MAX_PHASE:
        phase = MAX_PHASE
    blended = mg * phase + eg * (MAX_PHASE - phase)
    # Round toward zero, so that a position and its colour-flipped mirror score the same.
    score = blended // MAX_PHASE if blended >= 0 else -(-blended // MAX_PHASE)
    return score if white_to_move else -score


def evaluate(board: chess.Board) -> int:
    """Evaluation of ``board`` from scratch (side to move's view)."""
    _, mg, eg, phase = full_state(board)
    return evaluate_sums(mg, eg, phase, board.turn)
