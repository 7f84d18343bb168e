"""engine.core.timeman: budgets for every kind of clock, their edge cases, and the stop rules."""

from __future__ import annotations

import pytest

from engine.core.limits import parse_go
from engine.core.timeman import (
    DEFAULT_HORIZON_MOVES,
    ENGINE_MOVE_COST_MS,
    INCREMENT_HORIZON_MOVES,
    MIDDLEGAME_SHARE,
    OPENING_SHARE,
    PANIC_MIN_HARD_MS,
    SHARE_RAMP_MOVES,
    StabilityTracker,
    TimeBudget,
    move_share,
    plan,
    reserve_ms,
    scaled_soft_ms,
)

OVERHEAD = 50
PER_MOVE = OVERHEAD + ENGINE_MOVE_COST_MS
"""What the reserve sets aside per move: Move Overhead and the engine's own cost."""


def budget(line: str, white: bool = True, ponder: bool = False, move: int = 1) -> TimeBudget:
    return plan(parse_go(line.split())[0], white, OVERHEAD, ponder, move)


@pytest.mark.parametrize(
    "line", ["wtime 0 btime 60000", "wtime -300 btime 60000 winc 1000 binc 1000", "btime 100"]
)
def test_zero_negative_missing_clock_panics(line: str) -> None:
    b = budget(line)
    assert b.panic and b.soft_ms == 0.0
    assert b.hard_ms is not None and 0 < b.hard_ms <= 20


def test_tiny_clock_fastchess_compliance() -> None:
    b = budget("wtime 100")
    assert b.panic and b.hard_ms is not None and b.hard_ms < 100 - OVERHEAD


def test_sudden_death_shape() -> None:
    b = budget("wtime 60000 btime 60000")
    assert b.soft_ms is not None and b.hard_ms is not None
    # 1/40 of the clock less the overheads, at the opening's share.
    assert b.soft_ms == pytest.approx((60000 - 42 * PER_MOVE) / 40 * OPENING_SHARE)
    assert b.hard_ms <= 0.5 * (60000 - OVERHEAD)
    assert b.hard_ms == pytest.approx(5 * b.soft_ms)
    assert b.scalable and not b.panic


def test_an_increment_shortens_the_horizon() -> None:
    # 10+0.1: the pool (clock, the horizon's increments, less its overheads) over 20.
    b = budget("wtime 10000 btime 10000 winc 100 binc 100")
    horizon = INCREMENT_HORIZON_MOVES
    pool = 10000 + (horizon - 1) * 100 - (horizon + 2) * PER_MOVE
    assert b.soft_ms == pytest.approx(pool / horizon * OPENING_SHARE)
    no_increment = budget("wtime 10000 btime 10000", move=40)
    expected = (10000 - (DEFAULT_HORIZON_MOVES + 2) * PER_MOVE) / 40 * MIDDLEGAME_SHARE
    assert no_increment.soft_ms == pytest.approx(expected)


def test_time_moves_from_the_opening_to_the_middlegame() -> None:
    assert move_share(1) == OPENING_SHARE
    assert move_share(1 + SHARE_RAMP_MOVES) == move_share(200) == MIDDLEGAME_SHARE
    shares = [move_share(n) for n in range(0, 2 + SHARE_RAMP_MOVES)]
    assert shares == sorted(shares) and shares[0] == OPENING_SHARE  # move 0 from a bad FEN
    line = "wtime 10000 btime 10000 winc 100 binc 100"
    opening, middlegame = budget(line, move=1), budget(line, move=25)
    assert opening.soft_ms is not None and middlegame.soft_ms is not None
    assert middlegame.soft_ms > 1.5 * opening.soft_ms
    # movestogo divides a known pool: no shift.
    assert budget("wtime 10000 movestogo 10", move=1) == budget("wtime 10000 movestogo 10", move=30)


@pytest.mark.parametrize(("clock", "inc"), [(10000, 100), (180000, 2000), (60000, 1000)])
def test_long_games_with_an_increment_keep_a_clock(clock: int, inc: int) -> None:
    # 300 moves, each spending twice the optimum (the stability scale's most) and the
    # full overhead on top: the increment keeps the clock above zero.
    remaining = clock
    for move in range(1, 301):
        b = budget(f"wtime {remaining} btime {remaining} winc {inc} binc {inc}", move=move)
        assert b.soft_ms is not None and b.hard_ms is not None
        spent = b.hard_ms if b.panic else min(b.hard_ms, 2 * b.soft_ms)
        remaining = int(remaining - spent - OVERHEAD + inc)
        assert remaining > 0


def test_movestogo_one_spends_more_but_keeps_a_margin() -> None:
    normal = budget("wtime 60000 btime 60000")
    last = budget("wtime 60000 btime 60000 movestogo 1")
    assert last.soft_ms is not None and normal.soft_ms is not None and last.hard_ms is not None
    assert last.soft_ms > 10 * normal.soft_ms
    assert last.hard_ms < 0.85 * (60000 - OVERHEAD) + 1


@pytest.mark.parametrize("mtg", ["0", "-5"])
def test_bad_movestogo_is_sudden_death(mtg: str) -> None:
    assert budget(f"wtime 60000 btime 60000 movestogo {mtg}") == budget("wtime 60000 btime 60000")


def test_big_increment_small_clock() -> None:
    b = budget("wtime 1000 btime 1000 winc 5000 binc 5000")
    assert b.hard_ms is not None and b.hard_ms <= 0.5 * (1000 - OVERHEAD)


def test_black_uses_its_own_clock() -> None:
    assert budget("wtime 100 btime 60000", white=False) == budget("wtime 60000 btime 100")


def test_movetime_is_an_upper_bound() -> None:
    b = budget("movetime 1000")
    assert b.hard_ms == b.soft_ms == 1000 - OVERHEAD and not b.scalable
    small = budget("movetime 50")
    assert small.hard_ms is not None and 0 < small.hard_ms <= 50
    assert budget("movetime 0").panic


def test_first_limit_wins_and_unlimited_modes() -> None:
    both = budget("movetime 5000 wtime 1000 btime 1000")
    assert both.hard_ms == budget("wtime 1000 btime 1000").hard_ms
    for line in ("infinite wtime 1000", "ponder wtime 1000", "depth 5", "nodes 100", ""):
        assert budget(line).hard_ms is None and budget(line).soft_ms is None


def test_ponder_option_adds_time_and_limits_never_negative() -> None:
    plain = budget("wtime 60000")
    more = budget("wtime 60000", ponder=True)
    assert plain.soft_ms is not None and more.soft_ms is not None
    assert more.soft_ms == pytest.approx(1.25 * plain.soft_ms)
    for clock in range(-1000, 3000, 37):
        b = budget(f"wtime {clock} winc 30")
        assert b.soft_ms is not None and b.hard_ms is not None
        assert 0 <= b.soft_ms <= b.hard_ms
        assert b.hard_ms <= max(clock - OVERHEAD, 0) * 0.5 + 20


def test_stability_scale() -> None:
    tracker = StabilityTracker()
    assert tracker.update(796, 20) < 1.0  # first iteration: nothing learnt, stable
    stable = tracker.update(796, 25)
    changed = tracker.update(795, 25)
    assert changed > stable
    dropped = tracker.update(795, -100)
    assert dropped > changed or dropped == 2.0
    assert 0.5 <= dropped <= 2.0
    b = budget("wtime 60000")
    assert b.soft_ms is not None and b.hard_ms is not None
    assert scaled_soft_ms(b, 2.0) == pytest.approx(2 * b.soft_ms)
    assert scaled_soft_ms(b, 100.0) == b.hard_ms
    fixed = budget("movetime 500")
    assert scaled_soft_ms(fixed, 2.0) == fixed.soft_ms


def test_deadlines_decide_when_to_stop_deepening() -> None:
    """The soft limit: stop after an iteration once 60 % of it is spent, unless the
    best move just changed; at once with one legal move; never without a soft limit."""
    from engine.core.timeman import SOFT_LIMIT_NEXT_ITERATION, Deadlines

    b = budget("wtime 60000")
    assert b.soft_ms is not None and b.hard_ms is not None
    deadlines = Deadlines(b, 100.0)
    assert deadlines.hard == pytest.approx(100.0 + b.hard_ms / 1000)
    assert not deadlines.iteration_done(100.0, 796, 20, 20)  # early, and a new best move
    soft = deadlines.soft()
    assert soft is not None
    share = (soft - 100.0) * SOFT_LIMIT_NEXT_ITERATION
    assert not deadlines.iteration_done(100.0 + share * 0.9, 796, 20, 20)
    late = 100.0 + (deadlines.soft() - 100.0) * SOFT_LIMIT_NEXT_ITERATION * 1.01  # type: ignore[operator]
    assert deadlines.iteration_done(late, 796, 20, 20)
    # The best move changed: the whole soft limit may be used before stopping.
    assert not deadlines.iteration_done(late, 795, 20, 20)
    assert Deadlines(b, 100.0).iteration_done(100.0, 796, 20, 1)  # one legal move
    # ponderhit: a new budget from a new start; the stability seen so far is kept.
    pondering = Deadlines(budget("infinite"), 50.0)
    assert not pondering.iteration_done(1000.0, 796, 20, 20) and pondering.hard is None
    assert not pondering.iteration_done(1000.0, 795, 20, 20)  # a best-move change
    pondering.restart(b, 200.0)
    assert pondering.hard == pytest.approx(200.0 + b.hard_ms / 1000)
    assert pondering.tracker.changes == 1.0


def test_repeating_controls_never_stake_half_the_clock() -> None:
    """With moves to go, the hard limit shrinks with them (1.5 + 0.11 x moves left times
    the optimum) and no move may take half the clock while another move is due."""
    for clock in (500, 2000, 5000, 10000, 60000, 120000):
        for movestogo in range(1, 51):
            b = budget(f"wtime {clock} btime {clock} movestogo {movestogo}")
            assert b.soft_ms is not None and b.hard_ms is not None
            if b.panic:
                continue
            if movestogo > 1:
                assert b.hard_ms <= 0.5 * clock, (clock, movestogo, b)
            # (or the few milliseconds depth 1 is always given)
            ratio_limit = max((1.5 + 0.11 * movestogo) * b.soft_ms, PANIC_MIN_HARD_MS)
            assert b.hard_ms <= ratio_limit + 1e-6, (clock, movestogo)
    five = budget("wtime 5000 btime 5000 movestogo 5")
    assert five.hard_ms is not None and five.hard_ms < 2000  # was 4,185 ms


def test_the_reserve_grows_as_the_clock_shrinks() -> None:
    """Sudden death: the share of the clock one move may stake (its hard limit) falls
    with the clock, down to the few milliseconds depth 1 is always given. The old plan
    shrank the horizon below 2 s instead: 8 moves assumed at 1 s, 390 ms staked."""
    clocks = [120000, 60000, 30000, 15000, 8000, 5000, 3000, 2500, 2000, 1500, 1000]
    for move in (1, 30, 60):
        shares = []
        for clock in clocks:
            b = budget(f"wtime {clock} btime {clock}", move=move)
            assert b.hard_ms is not None and not b.panic
            shares.append(b.hard_ms / clock)
        assert shares == sorted(shares, reverse=True), (move, shares)
    one_second = budget("wtime 1000 btime 1000", move=30)
    assert one_second.hard_ms is not None and one_second.hard_ms <= max(PANIC_MIN_HARD_MS, 20)
    assert reserve_ms(DEFAULT_HORIZON_MOVES, OVERHEAD) == 42 * PER_MOVE


@pytest.mark.parametrize(
    ("clock", "latency", "moves"),
    [
        (60000, 50, 110),
        (60000, 20, 170),
        (15000, 50, 90),
        (15000, 20, 150),
        (3000, 10, 150),
        (1000, 5, 100),
        (1000, 10, 70),
    ],
)
def test_sudden_death_games_keep_a_clock(clock: int, latency: int, moves: int) -> None:
    """1+0, 15+0 and shorter: every move spends twice its optimum (the stability
    scale's most; the search stops there) or, in panic, its hard limit, plus a fixed
    latency the plan does not know of; the clock lasts the game's moves. ``latency`` is
    what a move costs beyond the search: a depth-1 answer measured 5-6 ms through the
    pipes on an idle machine, Move Overhead assumes 50 ms. No sudden-death plan
    survives every game length: with 50 ms a move, a 60 s clock is gone after 1,200
    moves even without a search."""
    remaining = float(clock)
    for move in range(1, moves + 1):
        b = budget(f"wtime {int(remaining)} btime {clock}", move=move)
        assert b.soft_ms is not None and b.hard_ms is not None
        spent = b.hard_ms if b.panic else min(b.hard_ms, 2 * b.soft_ms)
        remaining -= spent + latency
        assert remaining > 0, (move, b)


def test_sudden_death_still_spends_a_long_clock() -> None:
    """The reserve costs a long game little: at 1+0 the first move's optimum is within
    2 % of an even split of the clock less 42 overheads, at the opening's share."""
    b = budget("wtime 60000 btime 60000")
    assert b.soft_ms is not None
    assert b.soft_ms >= 0.98 * (60000 - 42 * OVERHEAD) / 40 * OPENING_SHARE


def test_the_lag_the_clocks_show_is_kept_for_a_while() -> None:
    """The GUI took 900 ms off our clock for an answer we measured at 300 ms: 600 ms of
    lag, planned with until the measurements stay lower for a few moves."""
    from engine.core.timeman import LAG_DECAY, MAX_LAG_MS, next_lag_estimate, observed_lag_ms

    assert observed_lag_ms(15000, 0, 14100, 300.0) == 600.0
    assert observed_lag_ms(15000, 100, 14200, 300.0) == 600.0  # the increment came back
    estimate = next_lag_estimate(0.0, 600.0)
    assert estimate == 600.0
    assert next_lag_estimate(estimate, 20.0) == 600.0 * LAG_DECAY
    assert next_lag_estimate(estimate, 800.0) == 800.0
    # a clock that rose (a refill) is no lag; one that fell absurdly claims the most
    assert next_lag_estimate(0.0, -5000.0) == 0.0
    assert next_lag_estimate(0.0, 100 * MAX_LAG_MS) == MAX_LAG_MS
    # planned with, the lag takes its place in the reserve: less to spend per move
    slow = plan(parse_go(["wtime", "15000", "btime", "15000"])[0], True, 600, False, 30)
    fast = budget("wtime 15000 btime 15000", move=30)
    assert slow.hard_ms is not None and fast.hard_ms is not None
    assert slow.hard_ms < fast.hard_ms / 4
