"""The score of a match so far and its summary (text or JSON).

Responsible for counting finished games from the first engine's point of view (W/D/L,
pentanomial pair counts, identical pairs, game ends, faults per engine) and for the
summary built from those counts: the dictionary written as JSON and its text form,
and the running Elo of the progress line, and how a summary file is known
(``SUMMARY``, so that ``--json`` replaces only one). All strength numbers come from
``elo``; this module must not compute statistics of its own, play games or print.
"""

from __future__ import annotations

import math
import shlex
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Optional, Protocol

from engine.analysis.outputs import json_kind

from . import elo
from .games import GameRecord

if TYPE_CHECKING:
    from .config import Config


@dataclass
class Tally:
    """Everything counted so far, from engine 0's point of view."""

    wins: int = 0
    draws: int = 0
    losses: int = 0
    pair_scores: dict[int, list[float]] = field(default_factory=dict)
    pentanomial: list[int] = field(default_factory=lambda: [0, 0, 0, 0, 0])
    pair_dd: int = 0
    pair_wl: int = 0
    # Pairs whose two games have the same moves: the engines chose alike at every
    # turn, so the pair measures nothing (many such pairs shrink the variance and
    # hurry an SPRT towards H0; raise the nodes or the time).
    pair_identical: int = 0
    pair_moves: dict[int, str] = field(default_factory=dict)
    reasons: dict[str, int] = field(default_factory=dict)
    faults: dict[int, dict[str, int]] = field(default_factory=lambda: {0: {}, 1: {}})

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    def add(self, record: GameRecord) -> None:
        score = record.first_score
        if score == 1.0:
            self.wins += 1
        elif score == 0.0:
            self.losses += 1
        else:
            self.draws += 1
        self.reasons[record.category] = self.reasons.get(record.category, 0) + 1
        if record.fault_slot is not None and record.fault_kind is not None:
            counts = self.faults[record.fault_slot]
            counts[record.fault_kind] = counts.get(record.fault_kind, 0) + 1
        moves = " ".join(record.moves)
        scores = self.pair_scores.setdefault(record.job.pair, [])
        scores.append(score)
        if len(scores) == 1:
            self.pair_moves[record.job.pair] = moves
        else:
            if self.pair_moves.pop(record.job.pair, None) == moves:
                self.pair_identical += 1
            total = scores[0] + scores[1]
            self.pentanomial[round(total * 2)] += 1
            if total == 1.0:
                if scores[0] == 0.5:
                    self.pair_dd += 1
                else:
                    self.pair_wl += 1

    @property
    def pairs(self) -> int:
        return sum(self.pentanomial)


def fmt_error(error: float) -> str:
    """An Elo error bar for display ("inf" when the interval is unbounded)."""
    return f"{error:.1f}" if math.isfinite(error) else "inf"


def progress_elo(tally: Tally) -> Optional[str]:
    """The running Elo for the progress line, from the complete pairs and saying how
    many ("Elo +12.3 +/- 45.6 after 3 pairs"); None before the first pair is complete.

    A pair (two colour-swapped games on one opening) is the match's unit: one game
    alone gives an Elo of +/-inf or 0 and an unbounded interval that looks like a
    result, and the games of an unfinished pair are not in the pentanomial estimate.
    """
    if not tally.pairs:
        return None
    estimate = elo.pentanomial_elo(tally.pentanomial)
    pairs = f"{tally.pairs} pair{'s' if tally.pairs != 1 else ''}"
    return f"Elo {estimate.elo:+.1f} +/- {fmt_error(estimate.error)} after {pairs}"


class MatchState(Protocol):
    """What the summary reads of a match (the runner's ``Match``); a protocol, so that
    this module does not import the runner, which imports it to keep its tally."""

    cfg: Config
    names: list[str]
    tally: Tally
    sprt_result: Optional[str]
    failed_pairs: list[dict[str, Any]]
    stop_reason: Optional[str]
    aborted: bool
    interrupted: Optional[str]
    started: float

    def llr(self) -> float: ...


SUMMARY = json_kind("a cutoff-match summary", ("engines", "games", "games_planned"))
"""A file ``summary_dict`` was written to, known by its keys."""


def summary_dict(match: MatchState) -> dict[str, Any]:
    cfg, t = match.cfg, match.tally
    tri = elo.trinomial_elo(t.wins, t.draws, t.losses)
    penta = elo.pentanomial_elo(t.pentanomial) if t.pairs else None
    best = penta or tri

    def estimate(e: Optional[elo.EloEstimate]) -> Optional[dict[str, Any]]:
        if e is None:
            return None
        return {
            "elo": _finite(e.elo),
            "lower": _finite(e.elo_lower),
            "upper": _finite(e.elo_upper),
            "error": _finite(e.error),
            "score": e.score,
            "samples": e.samples,
        }

    engines = []
    for slot in (0, 1):
        wins, losses = (t.wins, t.losses) if slot == 0 else (t.losses, t.wins)
        engines.append(
            {
                "name": match.names[slot],
                "command": shlex.join(cfg.specs[slot].command),
                "limits": cfg.specs[slot].limits.describe(),
                "wins": wins,
                "draws": t.draws,
                "losses": losses,
                "score": (wins + 0.5 * t.draws) / t.games if t.games else None,
                "faults": dict(t.faults[slot]),
            }
        )
    sprt: Optional[dict[str, Any]] = None
    if cfg.sprt:
        lower, upper = elo.sprt_bounds(cfg.alpha, cfg.beta)
        sprt = {
            "elo0": cfg.sprt[0],
            "elo1": cfg.sprt[1],
            "alpha": cfg.alpha,
            "beta": cfg.beta,
            "llr": match.llr(),
            "lower": lower,
            "upper": upper,
            "result": match.sprt_result or "continue",
            "model": "logistic Elo, GSPRT on pentanomial pair counts",
        }
    return {
        "engines": engines,
        "games": t.games,
        "games_planned": cfg.games,
        "pairs": t.pairs,
        "elo": estimate(best),
        "elo_model": "pentanomial" if penta else "trinomial",
        "elo_trinomial": estimate(tri),
        "elo_pentanomial": estimate(penta),
        "los": elo.los(t.wins, t.losses),
        "pentanomial": list(t.pentanomial),
        "pentanomial_dd": t.pair_dd,
        "pentanomial_wl": t.pair_wl,
        "pairs_identical": t.pair_identical,
        "sprt": sprt,
        "reasons": dict(sorted(t.reasons.items())),
        "faults": {match.names[slot]: dict(t.faults[slot]) for slot in (0, 1)},
        "scheduler": cfg.scheduler,
        "failed_pairs": list(match.failed_pairs),
        "stopped": match.stop_reason,
        "aborted": match.aborted,
        "interrupted": match.interrupted,
        "openings": cfg.openings_path,
        # Which openings the planned pairs play, in order (the Nth opening of the
        # file, from 1): two matches with these equal met the same openings.
        "opening_numbers": [
            cfg.opening_order[pair % len(cfg.opening_order)] + 1
            for pair in range((cfg.games + 1) // 2)
        ]
        if cfg.openings_path and cfg.opening_order
        else None,
        "pgn": cfg.pgn_path,
        "seconds": round(time.monotonic() - match.started, 3),
    }


def _finite(value: float) -> Optional[float]:
    return value if math.isfinite(value) else None


def format_summary(s: dict[str, Any]) -> str:
    e0, e1 = s["engines"]
    lines = [
        f"Match {e0['name']} vs {e1['name']}: {s['games']} of {s['games_planned']} games, "
        f"{s['pairs']} complete pairs, {s['seconds']:.1f}s"
    ]
    width = max(len(e0["name"]), len(e1["name"]), 6)
    lines.append(f"  {'engine':<{width}}  {'W':>5} {'D':>5} {'L':>5}  score   limits")
    for e in (e0, e1):
        score = f"{100 * e['score']:5.1f}%" if e["score"] is not None else "    -"
        lines.append(
            f"  {e['name']:<{width}}  {e['wins']:>5} {e['draws']:>5} {e['losses']:>5}"
            f"  {score}  {e['limits']}"
        )
    elo = s["elo"]
    if elo and elo["elo"] is None:
        # A score of 0 % or 100 %: no finite Elo difference predicts it.
        sign = "+" if elo["score"] > 0.5 else "-"
        lines.append(
            f"Elo {e0['name']} - {e1['name']}: {sign}inf (score {100 * elo['score']:.0f}%)"
        )
    elif elo:
        err = f"{elo['error']:.1f}" if elo["error"] is not None else "inf"
        lines.append(
            f"Elo {e0['name']} - {e1['name']}: {elo['elo']:+.1f} +/- {err} (95%, {s['elo_model']})"
        )
    lines.append(f"LOS: {100 * s['los']:.1f}%")
    lines.append(
        f"Pentanomial [LL, LD, DD/WL, WD, WW]: {s['pentanomial']} "
        f"(DD {s['pentanomial_dd']}, WL {s['pentanomial_wl']}); "
        f"pairs of identical games: {s['pairs_identical']}"
    )
    sprt = s["sprt"]
    if sprt:
        lines.append(
            f"SPRT elo0={sprt['elo0']:g} elo1={sprt['elo1']:g} alpha={sprt['alpha']:g} "
            f"beta={sprt['beta']:g} ({sprt['model']}): LLR {sprt['llr']:.2f} "
            f"[{sprt['lower']:.2f}, {sprt['upper']:.2f}] -> {sprt['result']}"
        )
    reasons = ", ".join(f"{k} {v}" for k, v in s["reasons"].items()) or "none"
    lines.append(f"Game ends: {reasons}")
    fault_parts = [
        f"{name}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
        for name, counts in s["faults"].items()
        if counts
    ]
    lines.append("Faults: " + ("; ".join(fault_parts) if fault_parts else "none"))
    failed = s["failed_pairs"]
    if failed:
        lines.append(
            f"Failed pairs (not counted): {len(failed)}: "
            + "; ".join(f"pair {f['pair']}: {f['error']}" for f in failed)
        )
    if s["pgn"]:
        lines.append(f"PGN: {s['pgn']}")
    if s["stopped"]:
        lines.append(f"Stopped: {s['stopped']}")
    return "\n".join(lines)
