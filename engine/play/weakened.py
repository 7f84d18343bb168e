"""Weakened play: ``UCI_LimitStrength`` with ``UCI_Elo``, or ``Skill Level``.

A weakened Cutoff searches fewer nodes and, like a human, sometimes prefers a
move that is nearly as good as its best: it searches several lines (MultiPV)
and picks one at random among those within a margin of the best score, the
better ones more often. Two rules keep its mistakes human: it never picks a line
more than the margin below the best, and when it is winning (the best line at
least ``WINNING_CP``) it only picks lines that still win, so it does not throw a
won game away with a random move. It plays legal moves on the clock like the
full engine (the node limit only shortens searches).

``weakness(elo)`` maps an Elo to the settings, interpolated between ``ANCHORS``,
which were calibrated by matches against Stockfish's ``UCI_Elo`` levels at 10+0.1
(docs/strength.md has the table) with the hand-written evaluation, so the controller
searches weakened play with it even when a network is loaded. ``Skill Level`` 0..20
maps onto the same scale. This module must not search; the controller applies the
settings.
"""

from __future__ import annotations

import math
import os
import random
from dataclasses import dataclass
from typing import Final, Optional

import chess

from engine.core.score import MATE_BOUND
from engine.play.options import ELO_MAX, ELO_MIN

# ELO_MIN is Stockfish's own UCI_Elo minimum, the lowest level we can calibrate;
# ELO_MAX is Cutoff's measured strength at 10+0.1 on the project machine.
SKILL_MAX = 20
WINNING_CP = 200
"""From this score on, only lines that still win may be picked."""

ANCHORS: tuple[tuple[int, int, int, int], ...] = (
    # (Elo measured against Stockfish at 10+0.1, nodes per move, MultiPV lines,
    # margin in cp); 50 games each, 95 % error bars 120, 110, 90 and 70 Elo.
    (1130, 100, 4, 150),
    (1225, 300, 4, 100),
    (1629, 1000, 3, 60),
    (1800, 4000, 2, 25),
    (1850, 0, 1, 0),
)
"""Settings by the Elo they measured; between two anchors nodes interpolate
geometrically, the rest linearly. Nodes 0 means no node limit. The first two lie
below ELO_MIN: the weakest settings tried play below Stockfish's weakest level, so
ELO_MIN falls between anchors."""


@dataclass(frozen=True)
class Weakness:
    elo: int
    nodes: int
    """Node limit per move (0: none)."""
    multipv: int
    margin_cp: int
    """Lines up to this far below the best may be picked."""


OVERRIDE_ENV: Final = "CUTOFF_WEAKNESS"
"""``CUTOFF_WEAKNESS=NODES,LINES,MARGIN`` replaces the mapped settings of weakened play
(``UCI_LimitStrength`` on, or ``Skill Level`` below 20): how a calibration measures a
setting before it has an Elo. Not a user option: GUIs never see it."""


def override(text: Optional[str] = None) -> Optional[Weakness]:
    """The settings ``CUTOFF_WEAKNESS`` (or ``text``) names, None when unset.

    Raises ValueError naming the variable when it is set but not three integers
    ``NODES,LINES,MARGIN`` (nodes >= 0, 0 meaning no limit; lines >= 1; margin >= 0).
    """
    if text is None:
        text = os.environ.get(OVERRIDE_ENV)
    if text is None or not text.strip():
        return None
    try:
        nodes, lines, margin = (int(part) for part in text.split(","))
    except ValueError:
        raise ValueError(f"{OVERRIDE_ENV}={text!r}: expected NODES,LINES,MARGIN") from None
    if nodes < 0 or lines < 1 or margin < 0:
        raise ValueError(f"{OVERRIDE_ENV}={text!r}: nodes >= 0, lines >= 1, margin >= 0")
    return Weakness(0, nodes, lines, margin)


def elo_for_skill(level: int) -> int:
    """``Skill Level`` 0..20 on the Elo scale (20 is full strength)."""
    level = max(0, min(SKILL_MAX, level))
    return ELO_MIN + (ELO_MAX - ELO_MIN) * level // SKILL_MAX


def weakness(elo: int) -> Optional[Weakness]:
    """The settings for ``elo`` (clamped to the calibrated range); None at full strength."""
    elo = max(ELO_MIN, min(ELO_MAX, elo))
    if elo >= ELO_MAX:
        return None
    for (low, low_nodes, low_pv, low_margin), (high, high_nodes, high_pv, high_margin) in zip(
        ANCHORS, ANCHORS[1:]
    ):
        if low <= elo <= high:
            share = (elo - low) / (high - low)
            if high_nodes:
                nodes = round(low_nodes * (high_nodes / low_nodes) ** share)
            else:
                nodes = round(low_nodes * 2 ** (8 * share)) if share < 1 else 0
            multipv = round(low_pv + (high_pv - low_pv) * share)
            margin = round(low_margin + (high_margin - low_margin) * share)
            return Weakness(elo, nodes, max(1, multipv), margin)
    return None


def pick(lines: list[tuple[chess.Move, int]], settings: Weakness, rng: random.Random) -> chess.Move:
    """A move among ``lines`` ((move, score), best first) by the rules above."""
    best = lines[0][1]
    floor = best - settings.margin_cp
    if best >= WINNING_CP:
        floor = max(floor, WINNING_CP)
    if best >= MATE_BOUND:
        floor = best  # a mate is never passed over
    candidates = [(move, score) for move, score in lines if score >= floor]
    if len(candidates) == 1 or settings.margin_cp <= 0:
        return candidates[0][0]
    # Weights fall off with the loss: half as likely per third of the margin lost.
    scale = max(1.0, settings.margin_cp / 3)
    weights = [math.pow(0.5, (best - score) / scale) for _, score in candidates]
    return rng.choices([move for move, _ in candidates], weights)[0]
