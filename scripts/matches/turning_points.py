"""Where the games of a match were decided, read from the engines' own scores.

Responsible for finding, in each decisive game of a match PGN, its turning point:
the first move of the winner after which the winner's reported score (from its own
point of view, as the runner writes it in every move comment: ``+1.23/7 0.250s``)
stayed at or above a margin (``--margin``, default 2.00 pawns) to the end of the
game. Per losing engine it counts where the turning points fell (in the first
moves after the game's start position, or by the pieces left on the board), and
whether the loser saw the loss coming: whether its own score on its last move
before the turning point was already at or below minus half the margin. A loser
that did not see it was out-searched or misjudged the position; one that saw it
lost earlier than its scores suggest. It also counts, per engine, the games in
which its opponent's score conceded it an advantage (at or below minus half the
margin at some point) and how those games ended: advantages not converted.
``--json`` lists every turning point: the game's round, the loser and the winner,
the ply and phase, the winner's score at its turning move and the loser's on its
last move before it (each from its own side), and the position the winner moved
from (FEN), which ``turning_evals`` gives to engines.

Usage: ``python -m scripts.matches.turning_points MATCH.pgn [MORE.pgn ...]
[--margin PAWNS] [--json]``.

It must not play or analyse positions (no engine runs: the scores are those the
engines reported while playing, so their quality is the engines'), and it must not
judge results (the runner and ``tally`` do). Games without scores in their
comments, and decisive games whose winner's score never settled above the margin
(a loss on time, a late blunder), are counted, not guessed.
"""

from __future__ import annotations

import itertools
import json
import re
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Optional

import chess
import chess.pgn

from ..common import EXIT_FAILED, ToolParser
from .match_pgn import ErrorReport, LineReport, first_missing, games_of

PROG = "turning_points"
_SCORE_RE = re.compile(r"([+-])(?:M(\d+)|(\d+(?:\.\d+)?))/(\d+)")
"""The runner's ``score/depth`` (``+1.23/7``, ``-M4/6``): sign, mate, pawns, depth."""
MATE_PAWNS = 100.0
"""A reported mate counts as this many pawns."""
OPENING_MOVES = 15
"""A turning point within this many moves of the game's start position is "opening"."""
PHASES = ("opening", "middlegame", "late middlegame", "endgame")
"""Where a turning point fell: within ``OPENING_MOVES`` moves of the start position,
else by the knights, bishops, rooks and queens of both sides on the board then: six or
more, three to five, at most two."""


def comment_score(comment: str) -> Optional[float]:
    """The mover's score in pawns from a runner's move comment, or None if it has none."""
    match = _SCORE_RE.search(comment)
    if match is None:
        return None
    sign = 1.0 if match.group(1) == "+" else -1.0
    return sign * (MATE_PAWNS if match.group(2) is not None else float(match.group(3)))


def comment_depth(comment: str) -> Optional[int]:
    """The depth from a runner's move comment, or None if it has none."""
    match = _SCORE_RE.search(comment)
    return None if match is None else int(match.group(4))


def phase_of(board: chess.Board, moves_played: int) -> str:
    """The phase of ``board``, ``moves_played`` full moves after the start position."""
    if moves_played <= OPENING_MOVES:
        return "opening"
    pieces = (board.occupied & ~board.pawns & ~board.kings).bit_count()
    if pieces >= 6:
        return "middlegame"
    return "late middlegame" if pieces >= 3 else "endgame"


@dataclass
class EngineRecord:
    """One engine's figures over the games it played."""

    name: str
    games: int = 0
    losses: int = 0
    phases: dict[str, int] = field(default_factory=lambda: dict.fromkeys(PHASES, 0))
    """Losses by the phase of their turning point."""
    seen: int = 0
    """Losses whose turning point the loser's own score had already seen."""
    unclear: int = 0
    """Losses without a turning point (the winner's score never settled above it)."""
    conceded: list[int] = field(default_factory=lambda: [0, 0, 0])
    """Games where the opponent's score conceded this engine an advantage: W, D, L."""

    def summary(self) -> dict[str, Any]:
        return {
            "engine": self.name,
            "games": self.games,
            "losses": self.losses,
            "turning_points": dict(self.phases),
            "seen_by_loser": self.seen,
            "no_turning_point": self.unclear,
            "advantage_conceded": dict(zip(("wins", "draws", "losses"), self.conceded)),
        }


@dataclass
class Report:
    """Every engine's figures, every decisive game's turning point, the skipped games."""

    margin: float
    engines: dict[str, EngineRecord] = field(default_factory=dict)
    points: list[dict[str, Any]] = field(default_factory=list)
    games: int = 0
    skipped: int = 0

    def engine(self, name: str) -> EngineRecord:
        if name not in self.engines:
            self.engines[name] = EngineRecord(name)
        return self.engines[name]


def add_game(report: Report, game: chess.pgn.Game) -> None:
    """Count one game; one without any reported score, or unfinished, is skipped."""
    report.games += 1
    headers = game.headers
    result = headers.get("Result", "*")
    if result not in ("1-0", "0-1", "1/2-1/2"):
        report.skipped += 1
        return
    board = game.board()
    start_move = board.fullmove_number
    # Per colour: (ply, score from the mover's view, phase after the move) per scored move.
    scored: dict[chess.Color, list[tuple[int, float, str]]] = {chess.WHITE: [], chess.BLACK: []}
    for ply, node in enumerate(game.mainline(), start=1):
        mover = board.turn
        board.push(node.move)
        score = comment_score(node.comment)
        if score is not None:
            phase = phase_of(board, board.fullmove_number - start_move)
            scored[mover].append((ply, score, phase))
    if not scored[chess.WHITE] and not scored[chess.BLACK]:
        report.skipped += 1
        return
    names = {chess.WHITE: headers.get("White", "?"), chess.BLACK: headers.get("Black", "?")}
    # Each side's result as an index into EngineRecord.conceded (win, draw, loss).
    white_index, black_index = {"1-0": (0, 2), "0-1": (2, 0), "1/2-1/2": (1, 1)}[result]
    result_index = {chess.WHITE: white_index, chess.BLACK: black_index}
    half = report.margin / 2
    for color in (chess.WHITE, chess.BLACK):
        record = report.engine(names[color])
        record.games += 1
        if any(score <= -half for _, score, _ in scored[not color]):
            record.conceded[result_index[color]] += 1
    if result == "1/2-1/2":
        return
    winner = chess.WHITE if result == "1-0" else chess.BLACK
    loser_record = report.engine(names[not winner])
    loser_record.losses += 1
    turn: Optional[tuple[int, float, str]] = None
    for ply, score, phase in reversed(scored[winner]):
        if score < report.margin:
            break
        turn = (ply, score, phase)
    if turn is None:
        loser_record.unclear += 1
        return
    ply, winner_score, phase = turn
    before = [score for loser_ply, score, _ in scored[not winner] if loser_ply < ply]
    seen = bool(before) and before[-1] <= -half
    loser_record.phases[phase] += 1
    loser_record.seen += seen
    report.points.append(
        {
            "round": headers.get("Round", "?"),
            "loser": names[not winner],
            "ply": ply,
            "phase": phase,
            "loser_score": before[-1] if before else None,
            "seen": seen,
            "winner": names[winner],
            "winner_score": winner_score,
            "fen": position_before(game, ply).fen(),
        }
    )


def position_before(game: chess.pgn.Game, ply: int) -> chess.Board:
    """The position of ``game`` before its move ``ply`` (1: the first move)."""
    board = game.board()
    for move in itertools.islice(game.mainline_moves(), ply - 1):
        board.push(move)
    return board


def read_files(paths: Sequence[str], margin: float, on_error: ErrorReport) -> Report:
    """Every game of every file (one that cannot be replayed goes to ``on_error``); a
    file that cannot be read raises ``OSError``."""
    report = Report(margin)
    for game in games_of(paths, on_error):
        add_game(report, game)
    return report


def format_report(report: Report) -> str:
    """The per-engine tables as text."""
    half = report.margin / 2
    lines = [
        f"{report.games} games, {report.skipped} skipped (unfinished or without scores)",
        f"turning point: the winner's first move after which its own score stayed at or "
        f"above +{report.margin:.2f}; seen: the loser's score before it was at or below "
        f"-{half:.2f}",
        f"{'engine':<20} {'losses':>6} {'opening':>8} {'middle':>7} {'late mg':>8}"
        f" {'endgame':>8} {'none':>5} {'seen':>5}",
    ]
    for record in report.engines.values():
        p = record.phases
        lines.append(
            f"{record.name:<20} {record.losses:>6} {p['opening']:>8} {p['middlegame']:>7}"
            f" {p['late middlegame']:>8} {p['endgame']:>8} {record.unclear:>5} {record.seen:>5}"
        )
    lines.append(
        f"games where the opponent's score conceded the engine {half:.2f} or more, "
        "and their results (W / D / L)"
    )
    for record in report.engines.values():
        wins, draws, losses = record.conceded
        lines.append(f"{record.name:<20} {sum(record.conceded):>6}   {wins} / {draws} / {losses}")
    return "\n".join(lines)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = ToolParser(
        prog=PROG,
        description="Where the games of a match were decided, from the engines' own "
        "scores: each loss's turning point by phase, whether the loser saw it, and the "
        "advantages the engines did not convert.",
    )
    parser.add_argument("pgn", nargs="+", help="match PGN files (as cutoff-match writes them)")
    parser.add_argument(
        "--margin",
        type=float,
        default=2.0,
        help="pawns the winner's score must stay at or above (default 2.0)",
    )
    parser.add_argument(
        "--json", action="store_true", help="print JSON (with every turning point) instead"
    )
    args = parser.parse_args(argv)
    if not args.margin > 0:
        parser.error(f"--margin must be positive, not {args.margin}")
    missing = first_missing(args.pgn)
    if missing is not None:
        print(f"{PROG}: error: {missing}: no such file", file=sys.stderr)
        return EXIT_FAILED
    on_error = LineReport(PROG)

    try:
        report = read_files(args.pgn, args.margin, on_error)
    except OSError as err:
        print(f"{PROG}: error: {err}", file=sys.stderr)
        return EXIT_FAILED
    if args.json:
        out = {
            "games": report.games,
            "skipped": report.skipped,
            "margin": report.margin,
            "engines": [r.summary() for r in report.engines.values()],
            "turning_points": report.points,
        }
        print(json.dumps(out, indent=2))
    else:
        print(format_report(report))
    return EXIT_FAILED if on_error.count else 0


if __name__ == "__main__":
    sys.exit(main())
