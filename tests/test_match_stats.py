"""Tests for scripts/matches/elo.py against known values and independent computations.

Known values come from the formulas themselves (Elo of a 75 % score, LOS from W and L)
and from the published unit tests of fastchess (Disservin/fastchess,
app/tests/elo_test.cpp and app/tests/sprt_test.cpp), which print two decimals. The
GSPRT log-likelihood ratio is also checked against a brute-force maximisation written
here independently. These tests must not play games.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from scripts.matches import elo as ms


def _penta(ll: int, ld: int, wl: int, dd: int, wd: int, ww: int) -> list[int]:
    """fastchess's six pair counts folded into our [LL, LD, DD+WL, WD, WW]."""
    return [ll, ld, wl + dd, wd, ww]


def test_elo_from_score_known_values() -> None:
    assert ms.elo_from_score(0.75) == pytest.approx(190.848, abs=1e-3)
    assert ms.elo_from_score(0.25) == pytest.approx(-190.848, abs=1e-3)
    assert ms.elo_from_score(0.5) == 0.0
    assert ms.elo_from_score(1.0) == math.inf
    assert ms.elo_from_score(0.0) == -math.inf


def test_score_from_elo_inverts_elo_from_score() -> None:
    for score in (0.01, 0.3, 0.5, 0.64, 0.99):
        assert ms.score_from_elo(ms.elo_from_score(score)) == pytest.approx(score, rel=1e-12)
    # 400 Elo means ten times the odds: 10/11.
    assert ms.score_from_elo(400.0) == pytest.approx(10.0 / 11.0)


def test_los_known_values() -> None:
    assert ms.los(0, 0) == 0.5
    assert ms.los(7, 7) == 0.5
    # Phi(sqrt(10)) = 0.9992173...
    assert ms.los(10, 0) == pytest.approx(0.9992173, abs=1e-7)
    # Phi((136 - 96) / sqrt(232)) written out with erf.
    expected = 0.5 * (1 + math.erf((136 - 96) / math.sqrt(232) / math.sqrt(2)))
    assert ms.los(136, 96) == pytest.approx(expected, rel=1e-12)
    assert ms.los(96, 136) == pytest.approx(1 - expected, rel=1e-12)


def test_trinomial_elo_matches_fastchess() -> None:
    # fastchess EloWDL 2: 136 wins, 96 losses, 111 draws -> 40.70 +/- 30.43.
    est = ms.trinomial_elo(136, 111, 96)
    assert est.elo == pytest.approx(40.70, abs=0.01)
    assert est.error == pytest.approx(30.43, abs=0.01)
    assert est.samples == 343
    assert est.elo_lower < est.elo < est.elo_upper


def test_trinomial_interval_by_hand() -> None:
    # 6 wins, 2 draws, 2 losses: mean 0.7,
    # per-game variance 0.6 * 0.3^2 + 0.2 * 0.2^2 + 0.2 * 0.7^2 = 0.16.
    est = ms.trinomial_elo(6, 2, 2)
    half = ms.Z95 * math.sqrt(0.16 / 10)
    assert est.score == pytest.approx(0.7)
    assert est.elo_lower == pytest.approx(ms.elo_from_score(0.7 - half))
    assert est.elo_upper == pytest.approx(ms.elo_from_score(0.7 + half))


@pytest.mark.parametrize(
    ("counts", "elo", "error"),
    [
        (_penta(34, 54, 31, 32, 64, 75), 55.58, 27.65),
        (_penta(332, 433, 457, 41, 333, 334), -8.64, 10.33),
        (_penta(7895, 8757, 5485, 200, 568, 9999), -21.04, 2.95),
    ],
)
def test_pentanomial_elo_matches_fastchess(counts: list[int], elo: float, error: float) -> None:
    est = ms.pentanomial_elo(counts)
    assert est.elo == pytest.approx(elo, abs=0.01)
    assert est.error == pytest.approx(error, abs=0.01)


def test_degenerate_results_give_unbounded_intervals() -> None:
    all_draws = ms.trinomial_elo(0, 10, 0)
    assert all_draws.elo == 0.0
    assert all_draws.elo_lower == -math.inf and all_draws.elo_upper == math.inf
    all_wins = ms.pentanomial_elo([0, 0, 0, 0, 5])
    assert all_wins.elo == math.inf
    nothing = ms.trinomial_elo(0, 0, 0)
    assert nothing.samples == 0 and math.isinf(nothing.error)
    with pytest.raises(ValueError):
        ms.pentanomial_elo([1, 2, 3])


def test_sprt_bounds() -> None:
    lower, upper = ms.sprt_bounds(0.05, 0.05)
    assert lower == pytest.approx(-2.944439, abs=1e-6)
    assert upper == pytest.approx(2.944439, abs=1e-6)
    lower, upper = ms.sprt_bounds(0.05, 0.10)
    assert lower == pytest.approx(math.log(0.10 / 0.95))
    assert upper == pytest.approx(math.log(0.90 / 0.05))
    for alpha, beta in ((0.0, 0.05), (0.05, 1.0), (0.6, 0.5)):
        with pytest.raises(ValueError):
            ms.sprt_bounds(alpha, beta)


@pytest.mark.parametrize(
    ("wins", "losses", "draws", "elo0", "elo1", "llr"),
    [
        (21404, 21184, 40708, 0.5, 2.5, -1.57),
        (57433, 57030, 106593, 0.0, 2.0, -2.59),
    ],
)
def test_llr_trinomial_matches_fastchess(
    wins: int, losses: int, draws: int, elo0: float, elo1: float, llr: float
) -> None:
    assert ms.llr_trinomial(wins, draws, losses, elo0, elo1) == pytest.approx(llr, abs=0.006)


@pytest.mark.parametrize(
    ("counts", "elo0", "elo1", "llr"),
    [
        (_penta(223, 9863, 20279, 1000, 10037, 246), 0.5, 2.5, -3.07),
        (_penta(871, 26175, 55003, 980, 26678, 821), 0.0, 2.0, -4.98),
    ],
)
def test_llr_pentanomial_matches_fastchess(
    counts: list[int], elo0: float, elo1: float, llr: float
) -> None:
    assert ms.llr_pentanomial(counts, elo0, elo1) == pytest.approx(llr, abs=0.006)


def _max_loglik_trinomial(wins: int, draws: int, losses: int, mean: float) -> float:
    """Brute force: the best W/D/L log-likelihood among distributions with this mean.

    With p_win = mean - p_draw / 2 and p_loss = 1 - mean - p_draw / 2 the only free
    parameter is p_draw; scan it on a fine grid, then refine around the best point.
    """
    lo, hi = 0.0, min(2 * mean, 2 * (1 - mean))
    best = 0.0
    for _ in range(6):
        p_draw = np.linspace(lo, hi, 20001)[1:-1]
        p_win = mean - p_draw / 2
        p_loss = 1 - mean - p_draw / 2
        loglik = wins * np.log(p_win) + draws * np.log(p_draw) + losses * np.log(p_loss)
        i = int(np.argmax(loglik))
        best = float(loglik[i])
        step = (hi - lo) / 20000
        lo, hi = max(0.0, float(p_draw[i]) - 2 * step), float(p_draw[i]) + 2 * step
    return best


@pytest.mark.parametrize(
    ("wins", "draws", "losses", "elo0", "elo1"),
    [(120, 200, 100, 0.0, 10.0), (30, 10, 45, -5.0, 5.0), (500, 900, 480, 0.0, 5.0)],
)
def test_llr_trinomial_matches_brute_force(
    wins: int, draws: int, losses: int, elo0: float, elo1: float
) -> None:
    expected = _max_loglik_trinomial(
        wins, draws, losses, ms.score_from_elo(elo1)
    ) - _max_loglik_trinomial(wins, draws, losses, ms.score_from_elo(elo0))
    assert ms.llr_trinomial(wins, draws, losses, elo0, elo1) == pytest.approx(expected, abs=1e-6)


def test_llr_is_antisymmetric_and_grows_with_evidence() -> None:
    counts = [3, 20, 50, 25, 6]
    assert ms.llr_pentanomial(counts, 0, 10) == pytest.approx(-ms.llr_pentanomial(counts, 10, 0))
    assert ms.llr_pentanomial([0, 0, 0, 0, 0], 0, 10) == 0.0
    # Only double wins: evidence for H1 grows with every pair.
    llrs = [ms.llr_pentanomial([0, 0, 0, 0, k], 0, 200) for k in range(1, 6)]
    assert all(b > a > 0 for a, b in zip(llrs, llrs[1:]))
