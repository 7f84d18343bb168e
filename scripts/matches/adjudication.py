"""Adjudication: ending a game early by the engines' own scores.

Responsible for the rules (draw by small scores after a move number, resignation when
both engines agree, a maximum number of moves) applied to the scores reported so far.
Pure: it must not talk to engines or decide anything the rules of chess decide.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Optional

import chess

# Stand-in for a mate score in centipawns, for adjudication.
MATE_CP = 100_000


@dataclass(frozen=True)
class Adjudication:
    """Draw: after move ``draw_movenumber``, |score| <= ``draw_score_cp`` for
    ``draw_movecount`` moves of each engine. Resign: the loser's scores <= -R and the
    winner's >= R for ``resign_movecount`` moves each. ``max_moves``: draw after N moves."""

    draw_movenumber: Optional[int] = None
    draw_movecount: int = 0
    draw_score_cp: int = 0
    resign_movecount: Optional[int] = None
    resign_score_cp: int = 0
    max_moves: Optional[int] = None


def adjudicate(
    board: chess.Board, evals: Sequence[tuple[chess.Color, Optional[int]]], adj: Adjudication
) -> Optional[tuple[str, str]]:
    """Result and reason if the scores so far (mover, cp from the mover's view) end the game."""
    if adj.resign_movecount:
        window = list(evals[-2 * adj.resign_movecount :])
        if len(window) == 2 * adj.resign_movecount and all(cp is not None for _, cp in window):
            for loser in (chess.WHITE, chess.BLACK):
                loser_says = [cp for colour, cp in window if colour == loser]
                winner_says = [cp for colour, cp in window if colour != loser]
                if all(cp is not None and cp <= -adj.resign_score_cp for cp in loser_says) and all(
                    cp is not None and cp >= adj.resign_score_cp for cp in winner_says
                ):
                    result = "0-1" if loser == chess.WHITE else "1-0"
                    side = "White" if loser == chess.WHITE else "Black"
                    return result, f"adjudication: {side} resigns"
    if adj.draw_movenumber is not None and board.fullmove_number >= adj.draw_movenumber:
        window = list(evals[-2 * adj.draw_movecount :])
        if len(window) == 2 * adj.draw_movecount and all(
            cp is not None and abs(cp) <= adj.draw_score_cp for _, cp in window
        ):
            return "1/2-1/2", "adjudication: draw"
    if adj.max_moves is not None and len(evals) >= 2 * adj.max_moves:
        return "1/2-1/2", "adjudication: max moves"
    return None
