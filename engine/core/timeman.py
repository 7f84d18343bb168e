"""Time management: a parsed ``go`` plus the clock situation -> time budgets,
and the rules for when a search stops deepening.

Times in budgets are milliseconds relative to the moment ``go`` was read (or
``ponderhit``, for a ponder search); ``Deadlines`` turns them into
``time.monotonic()`` instants for one search. The rules, all in this module:

* soft limit (the optimum): checked between iterations. No new iteration
  starts once ``SOFT_LIMIT_NEXT_ITERATION`` of it is spent (it would not
  finish), unless the best move just changed; with one legal move the search
  stops after the first iteration. The soft limit is rescaled after every
  iteration by best-move stability and score drops (``StabilityTracker``).
* hard limit: the search checks it inside the tree and aborts when it passes.
* Move Overhead (time lost outside the engine: the GUI, the pipes, the OS not
  running us) is subtracted once from this move's clock. Every move also costs
  the engine a little outside the search (``ENGINE_MOVE_COST_MS``: reading
  ``go``, starting the search, the nodes before the clock is read again,
  writing ``bestmove``).
* the reserve: the overhead and the engine's cost of every move of the horizon
  (and two more) are never planned with. It is a fixed amount of time, so its
  share of the clock grows as the clock shrinks; the horizon itself never
  shrinks (a short clock does not make the game shorter: a plan that assumed 8
  moves left at one second lost on time in 8 of 8 games). Once the clock is
  inside the reserve, each move gets a small share of what is left
  (``LOW_CLOCK_SHARE``), so the clock decays slowly instead of running out;
  tiny, zero or negative clocks switch to panic mode (depth 1, answer at once).
* the lag the GUI's clocks show (the clock fell by more than our own measure of
  the previous move) raises Move Overhead for the plan, when it is more
  (``observed_lag_ms``, ``next_lag_estimate``; the controller keeps the estimate):
  a niced engine beside busy cores lost 150-500 ms a move outside its search.
* sudden death assumes 40 moves to go, 20 with an increment (which refills the
  clock, so it can be spent faster); ``movestogo`` replaces that horizon.
* sudden death also shifts time from the opening to the middlegame: the
  optimum is scaled from ``OPENING_SHARE`` at move 1 up to ``MIDDLEGAME_SHARE``
  at move ``1 + SHARE_RAMP_MOVES``. Without it, Cutoff spent half its clock by
  move 15 and searched a ply less in the middlegame, where games are decided.
* pondering spends a little more per move, since the ponder search often
  saves the whole move.

The constants read through ``int_value``/``value`` are tunable without a rebuild
(engine/core/tunables.py holds their defaults and ranges).

This module must not read the clock (callers pass the current time), touch a
board, or do any I/O.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from engine.core.limits import SearchLimits
from engine.core.tunables import int_value, value

DEFAULT_HORIZON_MOVES = 40
"""Moves assumed left in a sudden-death game without increment."""
INCREMENT_HORIZON_MOVES = int_value("INCREMENT_HORIZON_MOVES")
"""Moves assumed left in a sudden-death game with an increment. The increment refills
what each move spends, so a long game never drains the clock: with a horizon of 40,
games at 10+0.1 ended with half the base time unused (median)."""
MAX_HORIZON_MOVES = 50
"""movestogo is clamped to 1..this (GUIs have sent 0 and negative values)."""

SUDDEN_DEATH_SOFT_CAP = value("SUDDEN_DEATH_SOFT_CAP")
"""Sudden death: the optimum is at most this share of the usable clock."""
SUDDEN_DEATH_HARD_CAP = 0.5
"""Sudden death: the hard limit is at most this share of the usable clock."""
MOVESTOGO_SOFT_SHARE = 0.9
"""With movestogo: the optimum is this share of an even split of the pool."""
MOVESTOGO_SOFT_CAP = 0.8
MOVESTOGO_HARD_CAP = 0.5
"""With movestogo > 1: no move may take more than half of the usable clock."""
MOVESTOGO_LAST_HARD_CAP = 0.85
"""The last move before the time control may use most of what is left."""
HARD_RATIO_BASE = 1.5
HARD_RATIO_PER_MOVE = 0.11
"""With movestogo: the hard limit is at most ``1.5 + 0.11 x moves left`` times the
optimum (Stockfish's rule: 1.6x with one move to go, up to the sudden-death 5x)."""
ENGINE_MOVE_COST_MS = 10
"""What a move costs the engine outside the search, beyond Move Overhead (ms)."""
RESERVE_EXTRA_MOVES = 2
"""The reserve covers the horizon's moves and this many more."""
LOW_CLOCK_SHARE = 0.0025
"""The optimum is at least this share of the clock (the hard limit then at most 5x
it): inside the reserve the clock decays by about 1 % a move, not to zero."""
HARD_TO_OPTIMUM_RATIO = 5.0
"""The hard limit may be up to this multiple of the optimum (when the caps allow)."""
OPENING_SHARE = value("OPENING_SHARE")
MIDDLEGAME_SHARE = value("MIDDLEGAME_SHARE")
SHARE_RAMP_MOVES = 28
"""Sudden death: the optimum's scale rises linearly from ``OPENING_SHARE`` at move 1
to ``MIDDLEGAME_SHARE`` at move 29 and stays there (the clock's own shrinking then
lowers the time per move)."""
PONDER_BONUS = 1.25
"""Pondering saves time on average, so spend a little more per move."""

PANIC_MIN_AVAIL_MS = 20
"""Below this much usable clock (or 2 x overhead) we panic."""
PANIC_HARD_FRACTION = 0.1
"""In panic the hard limit is this share of the usable clock (at least the minimum)."""
PANIC_MIN_HARD_MS = 10.0
"""Even in panic, give depth 1 this long before the hard abort."""

MIN_SCALE = 0.5
MAX_SCALE = 2.0
STABLE_SCALE = value("STABLE_SCALE")
"""Soft-limit scale when the best move has not changed for a while."""
CHANGE_SCALE = value("CHANGE_SCALE")
"""Added per (decayed) best-move change."""
CHANGE_DECAY = 0.5
"""Best-move changes count half as much each further iteration."""
SCORE_DROP_CP_FOR_MAX = 100
"""A root-score drop of this many cp earns the full panic extension."""
SCORE_DROP_MAX_EXTRA = value("SCORE_DROP_MAX_EXTRA")
SOFT_LIMIT_NEXT_ITERATION = value("SOFT_LIMIT_NEXT_ITERATION")
"""No new iteration once this share of the soft limit is spent: it would not finish."""


LAG_DECAY = 0.75
"""The observed lag: each move's measurement, or the last estimate times this if more."""
MAX_LAG_MS = 2000.0
"""The most lag one measurement may claim (a GUI's odd clock must not freeze us)."""


def observed_lag_ms(
    previous_clock_ms: int, inc_ms: int, clock_ms: int, answered_ms: float
) -> float:
    """What the GUI charged for our previous move beyond what we meant to spend.

    Our clock went from ``previous_clock_ms`` (plus the increment) to ``clock_ms``;
    ``answered_ms`` is our own measure of the answer (reading ``go`` to writing
    ``bestmove``), at most its hard limit: the rest is the pipes, the GUI and the OS
    not running us (what Move Overhead covers).
    """
    return float(previous_clock_ms + inc_ms - clock_ms) - answered_ms


def next_lag_estimate(estimate_ms: float, lag_ms: float) -> float:
    """The lag to plan with: the newest measurement, or the decayed estimate if more.

    A loaded machine (a niced engine beside busy cores) lags for many moves, so one
    quick move must not make it forgotten. A negative lag (a clock that rose) counts
    as none; one measurement claims at most ``MAX_LAG_MS``.
    """
    return max(min(max(0.0, lag_ms), MAX_LAG_MS), estimate_ms * LAG_DECAY)


@dataclass(frozen=True)
class TimeBudget:
    """Milliseconds from the start of the move; None = no limit of that kind."""

    soft_ms: Optional[float]
    hard_ms: Optional[float]
    panic: bool = False
    """Search depth 1 only: the clock is (nearly) gone."""
    scalable: bool = True
    """Whether the soft limit follows the search's stability (not for movetime)."""


UNLIMITED = TimeBudget(None, None, panic=False, scalable=False)


def move_share(move_number: int) -> float:
    """The sudden-death optimum's scale at this move of the game (see the module doc)."""
    progress = min(1.0, max(0, move_number - 1) / SHARE_RAMP_MOVES)
    return OPENING_SHARE + (MIDDLEGAME_SHARE - OPENING_SHARE) * progress


def reserve_ms(horizon: int, overhead_ms: int) -> float:
    """The part of the clock (and of the horizon's increments) no plan spends.

    The fixed costs (Move Overhead and ``ENGINE_MOVE_COST_MS``) of the horizon's
    moves and ``RESERVE_EXTRA_MOVES`` more: a fixed amount, so its share of the
    clock grows as the clock shrinks.
    """
    return float((horizon + RESERVE_EXTRA_MOVES) * (max(0, overhead_ms) + ENGINE_MOVE_COST_MS))


def _clock_budget(
    time_ms: int,
    inc_ms: int,
    movestogo: Optional[int],
    overhead_ms: int,
    ponder: bool,
    move_number: int,
) -> TimeBudget:
    """The budget of a running game clock (panic mode when it is nearly gone)."""
    time_ms = max(0, time_ms)
    avail = max(0.0, float(time_ms - overhead_ms))
    if time_ms <= 0 or avail <= max(2.0 * overhead_ms, PANIC_MIN_AVAIL_MS):
        hard = max(PANIC_MIN_HARD_MS, PANIC_HARD_FRACTION * avail)
        return TimeBudget(0.0, hard, panic=True, scalable=False)

    repeating = movestogo is not None and movestogo > 0
    horizon = INCREMENT_HORIZON_MOVES if inc_ms > 0 else DEFAULT_HORIZON_MOVES
    if movestogo is not None and movestogo > 0:
        horizon = min(MAX_HORIZON_MOVES, movestogo)
    pool = max(0.0, time_ms + (horizon - 1) * inc_ms - reserve_ms(horizon, overhead_ms))
    # Inside the reserve the pool is (nearly) gone: a small share of the clock keeps
    # the engine moving while the clock decays instead of running out.
    low_clock = LOW_CLOCK_SHARE * avail
    ratio = HARD_TO_OPTIMUM_RATIO
    if repeating:
        optimum = min(MOVESTOGO_SOFT_SHARE * pool / horizon, MOVESTOGO_SOFT_CAP * avail)
        # With few moves to the next time control, overrunning the optimum leaves too
        # little for the others: the hard limit shrinks with the moves left.
        ratio = min(HARD_TO_OPTIMUM_RATIO, HARD_RATIO_BASE + HARD_RATIO_PER_MOVE * horizon)
        hard_cap = (MOVESTOGO_LAST_HARD_CAP if horizon == 1 else MOVESTOGO_HARD_CAP) * avail
    else:
        optimum = min(pool / horizon * move_share(move_number), SUDDEN_DEATH_SOFT_CAP * avail)
        hard_cap = SUDDEN_DEATH_HARD_CAP * avail
    optimum = max(optimum, low_clock)
    if ponder:
        optimum *= PONDER_BONUS
    # Depth 1 is worth its few milliseconds: the panic threshold keeps it affordable.
    hard = max(min(ratio * optimum, hard_cap), min(PANIC_MIN_HARD_MS, hard_cap))
    optimum = min(optimum, hard)
    return TimeBudget(optimum, max(1.0, hard))


def _movetime_budget(movetime_ms: int, overhead_ms: int) -> TimeBudget:
    """``movetime`` is an upper bound as the GUI measures it.

    The overhead is subtracted, but at least half of the movetime is kept, so a
    tiny ``movetime`` with the default overhead still completes depth 1.
    """
    if movetime_ms <= 0:
        return TimeBudget(0.0, PANIC_MIN_HARD_MS, panic=True, scalable=False)
    hard = max(1.0, float(movetime_ms - overhead_ms), movetime_ms / 2.0)
    return TimeBudget(hard, hard, panic=False, scalable=False)


def plan(
    limits: SearchLimits,
    white_to_move: bool,
    overhead_ms: int,
    ponder_enabled: bool = False,
    move_number: int = 1,
) -> TimeBudget:
    """Budget for a search; UNLIMITED for infinite, ponder and clockless searches.

    ``move_number`` is the game's full-move number (the FEN's), which spreads a
    sudden-death clock over the game.

    For ``go ponder`` the controller calls this again at ``ponderhit`` with
    ``limits.ponder`` cleared, measuring from that moment.
    """
    if limits.infinite or limits.ponder:
        return UNLIMITED
    overhead_ms = max(0, overhead_ms)
    budgets = []
    own_time = limits.own_time_ms(white_to_move)
    if own_time is not None:
        budgets.append(
            _clock_budget(
                own_time,
                limits.own_inc_ms(white_to_move),
                limits.movestogo,
                overhead_ms,
                ponder_enabled,
                move_number,
            )
        )
    if limits.movetime_ms is not None:
        budgets.append(_movetime_budget(limits.movetime_ms, overhead_ms))
    if not budgets:
        return UNLIMITED
    # Several limits: the first one reached wins.
    soft = min(b.soft_ms for b in budgets if b.soft_ms is not None)
    hard = min(b.hard_ms for b in budgets if b.hard_ms is not None)
    return TimeBudget(
        min(soft, hard),
        hard,
        panic=any(b.panic for b in budgets),
        scalable=all(b.scalable for b in budgets),
    )


def scaled_soft_ms(budget: TimeBudget, scale: float) -> Optional[float]:
    """The soft limit after the stability scale, never past the hard limit."""
    if budget.soft_ms is None:
        return None
    soft = budget.soft_ms * scale if budget.scalable else budget.soft_ms
    if budget.hard_ms is not None:
        soft = min(soft, budget.hard_ms)
    return max(0.0, soft)


class StabilityTracker:
    """Follows the root's best move and score across iterations.

    Feed it the exact multipv-1 result of each completed iteration; ``scale``
    is the factor for the soft limit: below 1 when the best move is stable,
    above 1 after best-move changes or a score drop.
    """

    def __init__(self) -> None:
        self.changes = 0.0
        self._best: Optional[int] = None
        self._score: Optional[int] = None
        self._drop_cp = 0

    def update(self, best_move: int, score: int) -> float:
        """Record an iteration's best move (its code) and score; returns the new scale."""
        self.changes *= CHANGE_DECAY
        if self._best is not None and best_move != self._best:
            self.changes += 1.0
        self._drop_cp = 0 if self._score is None else self._score - score
        self._best = best_move
        self._score = score
        return self.scale()

    def scale(self) -> float:
        stability = STABLE_SCALE + CHANGE_SCALE * self.changes
        drop = max(0, min(self._drop_cp, SCORE_DROP_CP_FOR_MAX))
        panic = 1.0 + SCORE_DROP_MAX_EXTRA * drop / SCORE_DROP_CP_FOR_MAX
        return max(MIN_SCALE, min(MAX_SCALE, stability * panic))


class Deadlines:
    """One search's time limits as ``time.monotonic()`` instants, and when to stop.

    Built from a budget and the instant it began (``go``, or ``ponderhit`` through
    ``restart``); the stability of the root across iterations carries over a
    restart. The hard deadline is a plain attribute, read in the tree.
    """

    def __init__(self, budget: TimeBudget, start: float) -> None:
        self.tracker = StabilityTracker()
        self._last_best = 0
        self.budget = budget
        self.start = start
        self.hard: Optional[float] = None
        self.restart(budget, start)

    def restart(self, budget: TimeBudget, start: float) -> None:
        """A new budget measured from ``start`` (ponderhit)."""
        self.budget = budget
        self.start = start
        self.hard = None if budget.hard_ms is None else start + budget.hard_ms / 1000.0

    def soft(self) -> Optional[float]:
        """The soft deadline as it stands after the iterations so far."""
        soft_ms = scaled_soft_ms(self.budget, self.tracker.scale())
        return None if soft_ms is None else self.start + soft_ms / 1000.0

    def iteration_done(self, now: float, best_move: int, score: int, legal_moves: int) -> bool:
        """Record a completed iteration; True when no further iteration should start."""
        changed = best_move != self._last_best
        self._last_best = best_move
        self.tracker.update(best_move, score)
        soft = self.soft()
        if soft is None:
            return False
        if legal_moves == 1:
            return True
        # A best move that just changed is worth confirming with the whole budget.
        share = 1.0 if changed else SOFT_LIMIT_NEXT_ITERATION
        return now - self.start >= (soft - self.start) * share
