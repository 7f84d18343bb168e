"""Score constants and mate helpers, and the UCI form of a score.

Scores are integers in centipawns from the side to move's point of view. A mate
found ``n`` plies from the root scores ``MATE - n`` (or ``-(MATE - n)`` when the
side to move is mated). This module holds no search state and does no I/O.
"""

from __future__ import annotations

from typing import Final

MAX_PLY: Final = 128
"""Deepest ply the search may reach (arrays indexed by ply are this long)."""

MATE: Final = 32000
"""Score of delivering mate at the root (mate in 0 plies)."""

MATE_BOUND: Final = MATE - MAX_PLY
"""Scores with an absolute value at or above this are mate scores."""

INFINITE: Final = MATE + 1
"""Bigger than any score; the initial window is (-INFINITE, INFINITE)."""


def is_mate_score(score: int) -> bool:
    """True when ``score`` encodes a forced mate for either side."""
    return abs(score) >= MATE_BOUND


def mate_in_moves(score: int) -> int:
    """Moves (not plies) to mate: positive when the side to move mates.

    ``MATE - 1`` (mate next ply) is mate in 1; ``-(MATE - 2)`` is mated in 1;
    ``-MATE`` (already mated) is 0.
    """
    if score > 0:
        return (MATE - score + 1) // 2
    return -((MATE + score) // 2)


def uci_score(score: int) -> str:
    """The UCI ``score`` field: ``cp N`` or ``mate N``."""
    if is_mate_score(score):
        return f"mate {mate_in_moves(score)}"
    return f"cp {score}"


def score_to_tt(score: int, ply: int) -> int:
    """Store mate scores relative to the node, not the root."""
    if score >= MATE_BOUND:
        return score + ply
    if score <= -MATE_BOUND:
        return score - ply
    return score


def score_from_tt(score: int, ply: int) -> int:
    """Turn a node-relative mate score back into a root-relative one."""
    if score >= MATE_BOUND:
        return score - ply
    if score <= -MATE_BOUND:
        return score + ply
    return score
