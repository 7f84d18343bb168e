"""Match statistics for engine-vs-engine results: Elo, 95 % intervals, LOS and the SPRT.

Responsible for turning result counts into numbers:

* ``elo_from_score`` / ``score_from_elo``: the logistic Elo model,
  ``elo = -400 * log10(1 / score - 1)``.
* ``trinomial_elo``: Elo and its 95 % interval from W/D/L counts, treating every game
  as an independent sample (the cutechess-cli estimate).
* ``pentanomial_elo``: the same from game-pair counts ``[LL, LD, DD+WL, WD, WW]``,
  treating every colour-swapped pair as one sample (the fastchess / fishtest estimate;
  narrower and more honest when openings are played with both colours).
* ``los``: likelihood of superiority, ``Phi((W - L) / sqrt(W + L))``.
* ``rating_on_scale``: one rating from matches against opponents of known ratings
  (a ladder of calibrated levels), with its 95 % interval.
* ``sprt_bounds`` and ``llr_trinomial`` / ``llr_pentanomial``: the generalised SPRT
  used by fishtest and fastchess. The hypotheses are in **logistic Elo** (the model
  fishtest and fastchess call "logistic"; not "normalized" Elo, not BayesElo): H0 says
  the expected score is ``score_from_elo(elo0)``, H1 says ``score_from_elo(elo1)``.
  The log-likelihood ratio compares the maximum-likelihood outcome distributions
  that have exactly those expected scores (M. Van den Bergh, "Comments on Normalized
  Elo", proposition 1.1). Empty outcome bins are regularised to 1e-3, as fishtest and
  fastchess do, so the LLR is defined from the first game.

Everything here is pure computation on numbers (numpy). It must not run games, read
files or print; the match runner (``scripts.matches``) owns all of that.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

# Two-sided 95 % quantile of the standard normal distribution.
Z95 = 1.959963984540054
# Pseudo-count for empty outcome bins in the LLR (fishtest's and fastchess's value).
LLR_REGULARISATION = 1e-3

TRINOMIAL_SCORES = np.array([0.0, 0.5, 1.0])
PENTANOMIAL_SCORES = np.array([0.0, 0.25, 0.5, 0.75, 1.0])

FloatArray = npt.NDArray[np.float64]


def elo_from_score(score: float) -> float:
    """Logistic Elo difference that predicts ``score`` (0..1) for the first player.

    A score of 0 or 1 (or beyond, as the edge of a wide interval can be) gives -inf or
    +inf: no finite Elo difference predicts it.
    """
    if score <= 0.0:
        return -math.inf
    if score >= 1.0:
        return math.inf
    # Adding 0.0 turns the -0.0 of an even score into 0.0 for display.
    return -400.0 * math.log10(1.0 / score - 1.0) + 0.0


def score_from_elo(elo: float) -> float:
    """Expected score of a player ``elo`` logistic Elo points stronger than its opponent."""
    return 1.0 / (1.0 + math.pow(10.0, -elo / 400.0))


def normal_cdf(x: float) -> float:
    """Standard normal distribution function Phi(x)."""
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


def los(wins: int, losses: int) -> float:
    """Likelihood of superiority, Phi((W - L) / sqrt(W + L)); 0.5 with no decisive game."""
    decisive = wins + losses
    if decisive == 0:
        return 0.5
    return normal_cdf((wins - losses) / math.sqrt(decisive))


@dataclass(frozen=True)
class EloEstimate:
    """A score, the Elo it implies and the 95 % confidence interval around it."""

    samples: int
    score: float
    elo: float
    elo_lower: float
    elo_upper: float

    @property
    def error(self) -> float:
        """Half-width of the 95 % interval in Elo (the "+/-" cutechess prints)."""
        return (self.elo_upper - self.elo_lower) / 2.0


def _estimate(counts: Sequence[int], scores: FloatArray) -> EloEstimate:
    """Mean score, its standard error over the samples, and the mapped Elo interval."""
    n = np.asarray(counts, dtype=np.float64)
    total = float(n.sum())
    if total <= 0:
        return EloEstimate(0, 0.5, 0.0, -math.inf, math.inf)
    freq = n / total
    mean = float(freq @ scores)
    variance = float(freq @ (scores - mean) ** 2)
    stderr = math.sqrt(variance / total)
    if stderr == 0.0:
        # Identical outcomes (all draws, all wins, ...) say nothing about the spread:
        # report an unbounded interval rather than a false "+/- 0".
        return EloEstimate(int(total), mean, elo_from_score(mean), -math.inf, math.inf)
    lower = mean - Z95 * stderr
    upper = mean + Z95 * stderr
    return EloEstimate(
        samples=int(total),
        score=mean,
        elo=elo_from_score(mean),
        elo_lower=elo_from_score(lower),
        elo_upper=elo_from_score(upper),
    )


def trinomial_elo(wins: int, draws: int, losses: int) -> EloEstimate:
    """Elo with a 95 % interval from game counts, each game an independent sample."""
    return _estimate([losses, draws, wins], TRINOMIAL_SCORES)


def pentanomial_elo(pairs: Sequence[int]) -> EloEstimate:
    """Elo with a 95 % interval from pair counts ``[LL, LD, DD+WL, WD, WW]``."""
    if len(pairs) != 5:
        raise ValueError("pentanomial counts need 5 entries [LL, LD, DD+WL, WD, WW]")
    return _estimate(pairs, PENTANOMIAL_SCORES)


@dataclass(frozen=True)
class LevelResult:
    """A match against an opponent of known rating, from the rated player's side."""

    rating: float
    wins: int
    draws: int
    losses: int

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    @property
    def points(self) -> float:
        return self.wins + 0.5 * self.draws

    @property
    def score_variance(self) -> float:
        """The observed variance of one game's score (0, 1/2 or 1); 0 without games."""
        if not self.games:
            return 0.0
        mean = self.points / self.games
        spread = self.wins * (1.0 - mean) ** 2 + self.draws * (0.5 - mean) ** 2
        return (spread + self.losses * mean**2) / self.games


def rating_on_scale(levels: Sequence[LevelResult]) -> tuple[float, float]:
    """The rating that best explains the scores against opponents of known ratings.

    The maximum-likelihood rating R of the logistic model solves
    ``sum(points_i) = sum(games_i * score_from_elo(R - rating_i))`` (one equation
    however many levels, and finite even when one level was all wins or all
    losses). Its 95 % half-width is by the delta method: the variance of the points
    (each level's observed per-game variance, draws included) divided by the square
    of the expected points' slope in R. Returns (R, half-width); R is -inf or +inf
    when every game was lost or won, and the half-width inf when it cannot be told.
    """
    played = [level for level in levels if level.games]
    games = sum(level.games for level in played)
    if not games:
        return math.nan, math.inf
    points = sum(level.points for level in played)
    if points <= 0.0:
        return -math.inf, math.inf
    if points >= games:
        return math.inf, math.inf

    def expected(rating: float) -> float:
        return sum(level.games * score_from_elo(rating - level.rating) for level in played)

    # expected() rises strictly with the rating: bisection between far bounds.
    lo = min(level.rating for level in played) - 4000.0
    hi = max(level.rating for level in played) + 4000.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if expected(mid) < points:
            lo = mid
        else:
            hi = mid
    rating = 0.5 * (lo + hi)
    variance = 0.0
    slope = 0.0
    for level in played:
        variance += level.games * level.score_variance
        p = score_from_elo(rating - level.rating)
        slope += level.games * p * (1.0 - p) * math.log(10.0) / 400.0
    if variance <= 0.0 or slope <= 0.0:
        return rating, math.inf
    return rating, Z95 * math.sqrt(variance) / slope


def sprt_bounds(alpha: float, beta: float) -> tuple[float, float]:
    """Wald's LLR stopping bounds: (accept H0 below, accept H1 above)."""
    if not (0.0 < alpha < 1.0 and 0.0 < beta < 1.0 and alpha + beta < 1.0):
        raise ValueError("alpha and beta must be in (0, 1) with alpha + beta < 1")
    return math.log(beta / (1.0 - alpha)), math.log((1.0 - beta) / alpha)


def _mle_with_mean(freq: FloatArray, scores: FloatArray, target: float) -> FloatArray:
    """The distribution on ``scores`` closest in likelihood to ``freq`` with mean ``target``.

    It is ``freq / (1 + theta * (scores - target))`` where theta solves
    ``sum(freq * d / (1 + theta * d)) = 0`` with ``d = scores - target``. The left side
    falls strictly in theta on the interval where every denominator is positive, so
    bisection finds the root to machine precision.
    """
    d = scores - target
    lo = -1.0 / float(d.max())
    hi = -1.0 / float(d.min())
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        value = float(np.sum(freq * d / (1.0 + mid * d)))
        if value > 0.0:
            lo = mid
        else:
            hi = mid
    theta = 0.5 * (lo + hi)
    result: FloatArray = freq / (1.0 + theta * d)
    normalised: FloatArray = result / result.sum()
    return normalised


def _llr_logistic(counts: Sequence[float], scores: FloatArray, elo0: float, elo1: float) -> float:
    n = np.asarray(counts, dtype=np.float64)
    if float(n.sum()) <= 0:
        return 0.0
    n = np.where(n > 0, n, LLR_REGULARISATION)
    total = float(n.sum())
    freq = n / total
    p0 = _mle_with_mean(freq, scores, score_from_elo(elo0))
    p1 = _mle_with_mean(freq, scores, score_from_elo(elo1))
    return total * float(freq @ (np.log(p1) - np.log(p0)))


def llr_trinomial(wins: int, draws: int, losses: int, elo0: float, elo1: float) -> float:
    """Generalised-SPRT log-likelihood ratio of H1 (elo1) over H0 (elo0) from W/D/L."""
    return _llr_logistic([losses, draws, wins], TRINOMIAL_SCORES, elo0, elo1)


def llr_pentanomial(pairs: Sequence[int], elo0: float, elo1: float) -> float:
    """Generalised-SPRT log-likelihood ratio from pair counts ``[LL, LD, DD+WL, WD, WW]``."""
    if len(pairs) != 5:
        raise ValueError("pentanomial counts need 5 entries [LL, LD, DD+WL, WD, WW]")
    return _llr_logistic(list(pairs), PENTANOMIAL_SCORES, elo0, elo1)
