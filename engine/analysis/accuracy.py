"""Accuracy and average centipawn loss of each side of a game, overall and by phase.

The formulas are lichess's published ones (lichess.org/page/accuracy):

* win % of a position, from White's view: ``50 + 50 * chances``, the chances on
  the -1..+1 scale of engine/core/wdl.py (lichess's own formula, or Cutoff's model);
* a move's accuracy, from the win % of its mover before and after it:
  ``103.1668100711649 * exp(-0.04354415386753951 * drop) - 3.166924740191411``
  plus lichess's one-point "uncertainty bonus", clamped to 0..100, and exactly
  100 when the mover lost nothing;
* a side's game accuracy: the mean of a volatility-weighted mean and the
  harmonic mean of its moves' accuracies. The weight of move ``i`` is the
  standard deviation (population) of the win % in a window of
  ``clamp(moves / 10, 2, 8)`` positions, clamped to 0.5..12; the first windows
  repeat the game's first window, as lichess does, so there is one per move. The
  harmonic mean counts an accuracy under 1 as 1 (a 0 would make it 0 whatever
  else was played).

Phases follow lichess's division of a game: the middlegame starts at the first
position with at most 10 knights, bishops, rooks and queens on the board, or with
fewer than 4 pieces of a side on its back rank; the endgame at the first with at
most 6. (lichess's third middlegame trigger, "mixedness", is left out.)

Pure arithmetic on figures and boards: no search, no I/O.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Optional

import chess

PHASES = ("opening", "middlegame", "endgame")
MIDDLEGAME_PIECES = 10
ENDGAME_PIECES = 6
BACK_RANK_PIECES = 4


def win_percent(chances: float) -> float:
    """lichess's win % (0..100) from winning chances on the -1..+1 scale."""
    return 50.0 + 50.0 * chances


def move_accuracy(before: float, after: float) -> float:
    """A move's accuracy from its mover's win % before and after it."""
    if after >= before:
        return 100.0
    raw = 103.1668100711649 * math.exp(-0.04354415386753951 * (before - after))
    return max(0.0, min(100.0, raw - 3.166924740191411 + 1.0))


def volatility_weights(white_win_percents: Sequence[float]) -> list[float]:
    """One weight per move: how much the win % moved around it (0.5..12)."""
    moves = len(white_win_percents) - 1
    if moves < 1:
        return []
    size = max(2, min(8, moves // 10))
    values = list(white_win_percents)
    first = values[:size]
    windows = [first] * (min(size, len(values)) - 2)
    windows += [values[i : i + size] for i in range(len(values) - size + 1)]
    return [max(0.5, min(12.0, statistics.pstdev(window))) for window in windows[:moves]]


def aggregate(accuracies: Sequence[float], weights: Sequence[float]) -> Optional[float]:
    """lichess's game accuracy of one side's moves: (weighted mean + harmonic mean) / 2."""
    if not accuracies:
        return None
    weighted = sum(a * w for a, w in zip(accuracies, weights)) / sum(weights)
    harmonic = len(accuracies) / sum(1.0 / max(1.0, a) for a in accuracies)
    return (weighted + harmonic) / 2


def phases(boards: Sequence[chess.Board]) -> list[str]:
    """The phase of each position of a game (positions in order from the start)."""
    out = []
    middlegame = endgame = False
    for board in boards:
        pieces = chess.popcount(board.occupied & ~board.pawns & ~board.kings)
        sparse = (
            chess.popcount(board.occupied_co[chess.WHITE] & chess.BB_RANK_1) < BACK_RANK_PIECES
            or chess.popcount(board.occupied_co[chess.BLACK] & chess.BB_RANK_8) < BACK_RANK_PIECES
        )
        middlegame = middlegame or pieces <= MIDDLEGAME_PIECES or sparse
        endgame = endgame or pieces <= ENDGAME_PIECES
        out.append("endgame" if endgame else "middlegame" if middlegame else "opening")
    return out


@dataclass(frozen=True)
class SideFigures:
    """One side's figures over some of its moves."""

    moves: int
    accuracy: Optional[float]
    """lichess's game accuracy (0..100), None without moves."""
    acpl: Optional[float]
    """Average centipawn loss, None without moves."""

    def as_dict(self) -> dict[str, object]:
        return {
            "moves": self.moves,
            "accuracy": None if self.accuracy is None else round(self.accuracy, 1),
            "acpl": None if self.acpl is None else round(self.acpl, 1),
        }


def game_figures(
    white_win_percents: Sequence[float],
    centipawn_losses: Sequence[int],
    movers: Sequence[chess.Color],
    move_phases: Sequence[str],
) -> dict[chess.Color, dict[str, SideFigures]]:
    """Each side's figures for the whole game (``"game"``) and for each phase.

    ``white_win_percents`` has one entry per position (the start included), the
    other sequences one per move: its centipawn loss, its mover and the phase of
    the position it was played from.
    """
    weights = volatility_weights(white_win_percents)
    accuracies = []
    for i, mover in enumerate(movers):
        before, after = white_win_percents[i], white_win_percents[i + 1]
        if mover == chess.BLACK:
            before, after = 100.0 - before, 100.0 - after
        accuracies.append(move_accuracy(before, after))
    figures: dict[chess.Color, dict[str, SideFigures]] = {}
    for side in (chess.WHITE, chess.BLACK):
        figures[side] = {}
        for part in ("game", *PHASES):
            chosen = [
                i
                for i, mover in enumerate(movers)
                if mover == side and (part == "game" or move_phases[i] == part)
            ]
            losses = [centipawn_losses[i] for i in chosen]
            figures[side][part] = SideFigures(
                len(chosen),
                aggregate([accuracies[i] for i in chosen], [weights[i] for i in chosen]),
                sum(losses) / len(losses) if losses else None,
            )
    return figures
