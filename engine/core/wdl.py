"""Win/draw/loss: what a score means in games, by Cutoff's own model or lichess's formula.

Cutoff's model has Stockfish's shape, fitted to Cutoff's own games
(``python -m scripts.tuning.fit_wdl``, documented in docs/analysis.md):

* ``material``: the pieces on the board counted 1/3/3/5/9 for pawn, knight,
  bishop, rook and queen, both sides, clamped to ``MATERIAL_MIN..MATERIAL_MAX``
  (the start position has 78);
* ``a(m)`` and ``b(m)``: polynomials in ``m = material / 78``, with the fitted
  coefficients below (lowest power first);
* the side to move wins with probability ``1 / (1 + exp((a - cp) / b))`` and
  loses with ``1 / (1 + exp((a + cp) / b))``; a draw is the rest. ``a`` is the
  score at which a win is as likely as not, ``b`` how quickly that changes.

Mate scores are certain results. lichess's winning chances,
``2 / (1 + exp(-0.00368208 * cp)) - 1`` with centipawns capped at +-1000, are
kept for comparing with lichess.

This module is pure arithmetic on scores and boards: it does not search, print
or read files, and it is not on the search's hot path (only reports use it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import chess

from engine.core.score import is_mate_score

if TYPE_CHECKING:  # uci_text imports this module before the handshake: keep it light
    import chess.engine

MATERIAL_MIN: Final = 17
"""Below this little material the model's polynomials are clamped (few games reach it)."""
MATERIAL_MAX: Final = 78
"""The start position's material; more (after promotions) is clamped to it."""
PIECE_MATERIAL: Final = {
    chess.PAWN: 1,
    chess.KNIGHT: 3,
    chess.BISHOP: 3,
    chess.ROOK: 5,
    chess.QUEEN: 9,
}

LICHESS_SLOPE: Final = 0.00368208
"""lichess's logistic slope from centipawns to winning chances."""
LICHESS_CP_CEILING: Final = 1000
"""lichess caps centipawn scores here before its formula."""


def material(board: chess.Board) -> int:
    """Both sides' material, 1/3/3/5/9, clamped to the model's range."""
    total = sum(
        value
        * chess.popcount(
            board.pieces_mask(piece, chess.WHITE) | board.pieces_mask(piece, chess.BLACK)
        )
        for piece, value in PIECE_MATERIAL.items()
    )
    return max(MATERIAL_MIN, min(MATERIAL_MAX, total))


@dataclass(frozen=True)
class WdlModel:
    """A fitted model: ``a`` and ``b`` as polynomials in ``material / 78``."""

    a: tuple[float, ...]
    b: tuple[float, ...]
    games: int = 0
    """How many games the fit used (0 for a hand-made model)."""
    positions: int = 0
    """How many scored positions of those games."""

    def parameters(self, material_count: int) -> tuple[float, float]:
        """``(a, b)`` at this material (clamped to the model's range)."""
        m = max(MATERIAL_MIN, min(MATERIAL_MAX, material_count)) / MATERIAL_MAX
        a = sum(c * m**i for i, c in enumerate(self.a))
        b = sum(c * m**i for i, c in enumerate(self.b))
        return a, max(b, 1.0)

    def probabilities(self, cp: float, material_count: int) -> tuple[float, float, float]:
        """(win, draw, loss) probabilities of the side whose score ``cp`` is."""
        a, b = self.parameters(material_count)
        win = _logistic((cp - a) / b)
        loss = _logistic((-cp - a) / b)
        return win, max(0.0, 1.0 - win - loss), loss

    def wdl(self, cp: int, material_count: int) -> tuple[int, int, int]:
        """Per mille, summing to 1000, as UCI's ``info ... wdl W D L`` wants."""
        win, _, loss = self.probabilities(cp, material_count)
        w, lo = round(1000 * win), round(1000 * loss)
        return w, 1000 - w - lo, lo


def _logistic(x: float) -> float:
    if x < -500:  # exp overflows past ~709; the answer is 0 to double precision
        return 0.0
    return 1.0 / (1.0 + math.exp(-x))


# Fitted by `python -m scripts.tuning.fit_wdl` (docs/analysis.md, "Win/draw/loss"):
# the figures are replaced by the fit's output, never edited by hand.
CUTOFF_MODEL: Final = WdlModel(
    a=(581.989, -1264.985, 906.586), b=(282.285, -369.787, 400.973), games=174, positions=19825
)


def search_wdl(
    score: int, board: chess.Board, model: WdlModel = CUTOFF_MODEL
) -> tuple[int, int, int]:
    """Win/draw/loss per mille of a search score (engine.core.score units, side to move)."""
    if is_mate_score(score):
        return (1000, 0, 0) if score > 0 else (0, 0, 1000)
    return model.wdl(score, material(board))


def score_wdl(
    score: chess.engine.Score, board: chess.Board, model: WdlModel = CUTOFF_MODEL
) -> chess.engine.Wdl:
    """The win/draw/loss per mille of the side whose ``score`` it is, in ``board``."""
    import chess.engine

    if score.is_mate():
        certain = (1000, 0, 0) if score > chess.engine.Cp(0) else (0, 0, 1000)
        return chess.engine.Wdl(*certain)
    return chess.engine.Wdl(*model.wdl(score.score() or 0, material(board)))


def lichess_winning_chances(score: chess.engine.Score) -> float:
    """lichess's winning chances of the side whose score it is, from -1 to +1."""
    if score.is_mate():
        # Mate(0) (mated) and MateGiven both have mate() == 0: the sign is the score's.
        return 1.0 if (score.score(mate_score=LICHESS_CP_CEILING) or 0) > 0 else -1.0
    cp = max(-LICHESS_CP_CEILING, min(LICHESS_CP_CEILING, score.score() or 0))
    return 2.0 / (1.0 + math.exp(-LICHESS_SLOPE * cp)) - 1.0


def model_winning_chances(
    score: chess.engine.Score, board: chess.Board, model: WdlModel = CUTOFF_MODEL
) -> float:
    """Cutoff's model on lichess's scale: win minus loss probability, -1 to +1."""
    wdl = score_wdl(score, board, model)
    return (wdl.wins - wdl.losses) / 1000
