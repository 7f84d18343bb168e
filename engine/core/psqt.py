"""The piece-square tables whose sums the search board (engine.core.board) keeps move by move.

Folds the ``psqt`` block of the tuned weights (``engine.core.weights``, layout in
``engine.core.features``: White's view, material included) into the two tables the
incremental sums index as ``[piece_index * 64 + square]``, with python-chess
squares (a1 = 0) and ``piece_index = 2 * (piece_type - 1) + colour`` (colour 1 =
White, the Polyglot order); Black's entries are mirrored and negated.

This module holds no numbers of its own and must not compute evaluations.
"""

from __future__ import annotations

from engine.core.features import OFFSET
from engine.core.weights import EG_WEIGHTS, MG_WEIGHTS


def _fold(weights: tuple[int, ...]) -> list[int]:
    """The 12 x 64 incremental table from the flat weight vector's psqt block."""
    base = OFFSET["psqt"]
    folded = [0] * (12 * 64)
    for piece_type in range(1, 7):
        for square in range(64):
            value = weights[base + (piece_type - 1) * 64 + square]
            folded[(2 * (piece_type - 1) + 1) * 64 + square] = value
            folded[2 * (piece_type - 1) * 64 + (square ^ 56)] = -value
    return folded


MG_TABLE: list[int] = _fold(MG_WEIGHTS)
EG_TABLE: list[int] = _fold(EG_WEIGHTS)
