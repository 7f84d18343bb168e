"""Weakened play: ``UCI_LimitStrength`` with ``UCI_Elo``, or ``Skill Level``.

A weakened Cutoff searches fewer nodes and, like a human, sometimes prefers a
move that is nearly as good as its best: it searches several lines (MultiPV)
and picks one at random among those within a margin of the best score, the
better ones more often. Two rules keep its mistakes human: it never picks a line
more than the margin below the best, and when it is winning (the best line at
least ``WINNING_CP``) it only picks lines that still win, so it does not throw a
won game away with a random move. It plays legal moves on the clock like the
full engine (the node limit only shortens searches).

``weakness(elo)`` maps an Elo to the settings, interpolated between ``ANCHORS``:
settings whose Elo was measured against Stockfish's ``UCI_Elo`` levels at 10+0.1
scaled by the host's python-chess perft, kept as data in ``calibration.json`` beside
this module and remade by ``python -m scripts.matches.calibrate`` (docs/strength.md
has the table). The weakened anchors were measured with the hand-written evaluation,
so the controller searches weakened play with it even when a network is loaded; the
strongest anchor is full strength as shipped (the network, no limit), ``ELO_MAX``.
``Skill Level`` 0..20 maps onto the same scale. This module must not search; the
controller applies the settings.
"""

from __future__ import annotations

import json
import math
import os
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Optional

import chess

from engine.core.score import MATE_BOUND
from engine.play.options import ELO_MAX, ELO_MIN

# ELO_MIN is Stockfish's own UCI_Elo minimum, the lowest level we can calibrate;
# ELO_MAX is the full-strength anchor's measured Elo (tests/test_calibrate.py holds
# options.py's copy equal to the data).
SKILL_MAX = 20
WINNING_CP = 200
"""From this score on, only lines that still win may be picked."""

DATA_FILE: Final = Path(__file__).with_name("calibration.json")
"""The measured anchors, remade by ``python -m scripts.matches.calibrate`` (its docstring
says how each is measured)."""


def load_anchors(path: Path = DATA_FILE) -> tuple[tuple[int, int, int, int], ...]:
    """The measured anchors of ``path`` as (Elo, nodes per move, MultiPV lines, margin in
    cp), weakest first; a full-strength anchor has nodes 0 (no limit), lines 1, margin 0.
    An anchor not measured yet (a calibration under way) is left out.

    Raises ValueError naming the file when the Elos do not rise in the order listed:
    the interpolation below needs a rising scale.
    """
    data = json.loads(path.read_text(encoding="utf-8"))
    anchors: list[tuple[int, int, int, int]] = []
    for entry in data["anchors"]:
        if entry.get("elo") is None:
            continue
        if entry.get("full_strength"):
            anchors.append((int(entry["elo"]), 0, 1, 0))
        else:
            setting = (int(entry["nodes"]), int(entry["lines"]), int(entry["margin_cp"]))
            anchors.append((int(entry["elo"]), *setting))
        if len(anchors) > 1 and anchors[-1][0] <= anchors[-2][0]:
            raise ValueError(
                f"{path}: anchor {entry.get('name')!r} does not measure above the one before"
            )
    return tuple(anchors)


ANCHORS: Final = load_anchors()
"""Settings by the Elo they measured; between two anchors nodes interpolate
geometrically, the rest linearly. Nodes 0 means no node limit. The weakest anchors
may lie below ELO_MIN (Stockfish's weakest level), so ELO_MIN falls between anchors;
the strongest is full strength, ELO_MAX."""


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


def override() -> Optional[Weakness]:
    """The settings ``CUTOFF_WEAKNESS`` names, None when unset.

    Raises ValueError naming the variable when it is set but not three integers
    ``NODES,LINES,MARGIN`` (nodes >= 0, 0 meaning no limit; lines >= 1; margin >= 0).
    """
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
