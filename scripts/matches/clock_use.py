"""Where the clock goes: how the engines of a match spent their time.

Responsible for replaying each game's clocks from the match PGN (the ``TimeControl``
tags and the ``1.234s`` every move comment carries, as the match runner writes them)
and summing up, per engine: the share of the base time left when the game ended,
the time spent per move, and the lowest clock an engine was left with before a
move (how close it came to the flag). An engine that ends its games with much of
its clock unused may gain from spending it; one whose lowest clock is tiny risks
losses on time. ``--phases`` adds, per engine and game phase (the phases of
``turning_points``, by the position before the move), the median depth reached and
seconds spent per move: where the time goes against where games are decided.

Usage: ``python -m scripts.matches.clock_use MATCH.pgn [MORE.pgn ...] [--phases] [--json]``.

It must not play games or judge results (the runner and ``tally`` do); games
without a clock (``movetime``, depth or node limits) or without move times are
counted as skipped, not guessed.
"""

from __future__ import annotations

import json
import re
import statistics
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

import chess.pgn

from ..common import EXIT_FAILED, ToolParser
from .errors import MatchError
from .match_pgn import ErrorReport, LineReport, first_missing, games_of
from .time_controls import TimeControl, parse_tc
from .turning_points import PHASES, comment_depth, phase_of

PROG = "clock_use"
_TIME_RE = re.compile(r"(\d+(?:\.\d+)?)s\b")


@dataclass
class EngineClock:
    """One engine's clock figures over the games it played."""

    name: str
    left_share: list[float] = field(default_factory=list)
    """Per game: the clock left at the end, as a share of the base time."""
    move_seconds: list[float] = field(default_factory=list)
    lowest_s: Optional[float] = None
    """The lowest clock the engine was given before a move."""
    moves: list[int] = field(default_factory=list)
    """Per game: the moves it made."""
    phase_seconds: dict[str, list[float]] = field(default_factory=dict)
    """Per phase of the position before the move: the seconds of each move."""
    phase_depths: dict[str, list[int]] = field(default_factory=dict)
    """Per phase: the depth of each move whose comment gives one."""

    def phases(self) -> list[dict[str, Any]]:
        """Per phase with moves: the move count and the median depth and seconds."""
        rows = []
        for phase in PHASES:
            seconds = self.phase_seconds.get(phase, [])
            if not seconds:
                continue
            depths = self.phase_depths.get(phase, [])
            rows.append(
                {
                    "phase": phase,
                    "moves": len(seconds),
                    "depth_median": statistics.median(depths) if depths else None,
                    "seconds_median": round(statistics.median(seconds), 3),
                }
            )
        return rows

    def summary(self) -> dict[str, Any]:
        def quartiles(values: list[float]) -> list[float]:
            if len(values) < 2:
                return [values[0]] * 3 if values else []
            low, mid, high = statistics.quantiles(values, n=4, method="inclusive")
            return [round(low, 3), round(mid, 3), round(high, 3)]

        return {
            "engine": self.name,
            "games": len(self.left_share),
            "moves_median": statistics.median(self.moves) if self.moves else None,
            "left_share_quartiles": quartiles(self.left_share),
            "move_seconds_quartiles": quartiles(self.move_seconds),
            "lowest_clock_s": None if self.lowest_s is None else round(self.lowest_s, 3),
        }


@dataclass
class ClockReport:
    """Every engine's figures, and the games that could not be replayed."""

    engines: dict[str, EngineClock] = field(default_factory=dict)
    games: int = 0
    skipped: int = 0

    def engine(self, name: str) -> EngineClock:
        if name not in self.engines:
            self.engines[name] = EngineClock(name)
        return self.engines[name]


def _control(headers: chess.pgn.Headers, color: chess.Color) -> Optional[TimeControl]:
    """The clock of one side, or None when the game had none (or an unreadable one)."""
    text = headers.get("WhiteTimeControl" if color else "BlackTimeControl") or headers.get(
        "TimeControl", ""
    )
    if not text or text == "-" or text.startswith("1/"):
        return None  # no clock, or a fixed time per move
    try:
        return parse_tc(text)
    except MatchError:
        return None


def add_game(report: ClockReport, game: chess.pgn.Game) -> None:
    """Replay one game's clocks into ``report``; one that cannot be is counted as skipped."""
    report.games += 1
    headers = game.headers
    controls = {color: _control(headers, color) for color in (chess.WHITE, chess.BLACK)}
    board = game.board()
    start_move = board.fullmove_number
    spent: dict[chess.Color, list[float]] = {chess.WHITE: [], chess.BLACK: []}
    phased: dict[chess.Color, list[tuple[str, Optional[int]]]] = {chess.WHITE: [], chess.BLACK: []}
    for node in game.mainline():
        found = _TIME_RE.findall(node.comment)
        if not found:
            report.skipped += 1
            return
        turn = board.turn
        spent[turn].append(float(found[-1]))
        phase = phase_of(board, board.fullmove_number - start_move)
        phased[turn].append((phase, comment_depth(node.comment)))
        board.push(node.move)
    if any(control is None for control in controls.values()) or not any(spent.values()):
        report.skipped += 1
        return
    for color, name in (
        (chess.WHITE, headers.get("White", "?")),
        (chess.BLACK, headers.get("Black", "?")),
    ):
        control = controls[color]
        assert control is not None
        clock = control.base_s
        lowest = clock
        for made, seconds in enumerate(spent[color], start=1):
            lowest = min(lowest, clock)
            clock = control.clock_after_move(clock - seconds, made)  # as the runner keeps it
        record = report.engine(name)
        record.left_share.append(clock / control.base_s)
        record.move_seconds.extend(spent[color])
        record.moves.append(len(spent[color]))
        for (phase, depth), seconds in zip(phased[color], spent[color]):
            record.phase_seconds.setdefault(phase, []).append(seconds)
            if depth is not None:
                record.phase_depths.setdefault(phase, []).append(depth)
        if record.lowest_s is None or lowest < record.lowest_s:
            record.lowest_s = lowest


def read_files(paths: Sequence[str], on_error: ErrorReport) -> ClockReport:
    """Every game of every file (one that cannot be replayed goes to ``on_error``); a
    file that cannot be read raises ``OSError``."""
    report = ClockReport()
    for game in games_of(paths, on_error):
        add_game(report, game)
    return report


def format_report(report: ClockReport) -> str:
    """The per-engine table as text."""
    lines = [
        f"{report.games} games, {report.skipped} skipped (no clock or no move times)",
        "quartiles (q1 / median / q3) of the clock left at the end and of the seconds per move",
        f"{'engine':<24} {'games':>5} {'moves':>5}  {'clock left at the end':<24}"
        f" {'seconds per move':<24} lowest clock",
    ]
    for record in report.engines.values():
        s = record.summary()
        left = " / ".join(f"{100 * v:.0f} %" for v in s["left_share_quartiles"])
        per_move = " / ".join(f"{v:.3f}" for v in s["move_seconds_quartiles"])
        lowest = "-" if s["lowest_clock_s"] is None else f"{s['lowest_clock_s']:.3f} s"
        lines.append(
            f"{record.name:<24} {s['games']:>5} {s['moves_median'] or 0:>5g}  {left:<24}"
            f" {per_move:<24} {lowest}"
        )
    return "\n".join(lines)


def format_phases(report: ClockReport) -> str:
    """The per-engine, per-phase table of depth and seconds per move as text."""
    lines = [
        "per phase of the position before the move: moves, median depth, median seconds",
        f"{'engine':<24} {'phase':<16} {'moves':>6} {'depth':>6} {'seconds':>8}",
    ]
    for record in report.engines.values():
        for row in record.phases():
            depth = "-" if row["depth_median"] is None else f"{row['depth_median']:g}"
            lines.append(
                f"{record.name:<24} {row['phase']:<16} {row['moves']:>6} {depth:>6}"
                f" {row['seconds_median']:>8.3f}"
            )
    return "\n".join(lines)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = ToolParser(
        prog=PROG,
        description="How the engines of a match spent their clocks: the share of the base "
        "time left at the end of each game, seconds per move, the lowest clock.",
    )
    parser.add_argument("pgn", nargs="+", help="match PGN files (as cutoff-match writes them)")
    parser.add_argument(
        "--phases",
        action="store_true",
        help="also the median depth and seconds per move by game phase",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    args = parser.parse_args(argv)
    missing = first_missing(args.pgn)
    if missing is not None:
        print(f"{PROG}: error: {missing}: no such file", file=sys.stderr)
        return EXIT_FAILED
    on_error = LineReport(PROG)

    try:
        report = read_files(args.pgn, on_error)
    except OSError as err:
        print(f"{PROG}: error: {err}", file=sys.stderr)
        return EXIT_FAILED
    if args.json:
        out = {
            "games": report.games,
            "skipped": report.skipped,
            "engines": [
                {**r.summary(), "phases": r.phases()} if args.phases else r.summary()
                for r in report.engines.values()
            ],
        }
        print(json.dumps(out, indent=2))
    else:
        print(format_report(report))
        if args.phases:
            print()
            print(format_phases(report))
    return EXIT_FAILED if on_error.count else 0


if __name__ == "__main__":
    sys.exit(main())
