"""Two versions of one engine against the same opponent from the same openings: the
difference of their scores paired by opening.

Responsible for reading pairs of match PGNs (``BEFORE.pgn AFTER.pgn``, one pair per
opponent, such as one ladder level), scoring the engine per opening (the mean of its
games from that starting position, usually one with each colour) in each file,
and summing up the differences ``after - before`` over the openings both files
played: their mean and 95 % interval, as a score and as Elo. Pairing by opening
takes the openings' own bias out of the comparison, so it is narrower than comparing
two ratings (how a tuned set of constants is judged on Stockfish's ladder against the
defaults' ladder of the same seeds).

Usage: ``python -m scripts.matches.paired BEFORE.pgn AFTER.pgn [BEFORE2.pgn AFTER2.pgn
...] [--engine NAME] [--after-engine NAME] [--json]``: ``--after-engine`` names the
engine in the AFTER files when it played there under another name (two networks
screened as ``c128`` and ``s128``, say).

It must not play games; a game without a result, or one the engine did not play, is
counted as skipped, and an opening played in only one file as unpaired.
"""

from __future__ import annotations

import json
import math
import statistics
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Optional

from ..common import EXIT_FAILED, EXIT_USAGE, ToolParser
from .elo import Z95, elo_from_score
from .match_pgn import ErrorReport, LineReport, first_missing, games_of

PROG = "paired"
_SCORES = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}


@dataclass
class FileScores:
    """The engine's scores in one file, by starting position."""

    by_opening: dict[str, list[float]]
    skipped: int


@dataclass
class PairResult:
    """One pair of files: the per-opening differences and what could not be paired."""

    before: str
    after: str
    differences: list[float]
    unpaired: int
    skipped: int


def engine_scores(path: str, engine: str, on_error: ErrorReport) -> FileScores:
    """``engine``'s score in every finished game of ``path``, keyed by the game's
    starting position (its FEN)."""
    by_opening: dict[str, list[float]] = {}
    skipped = 0
    for game in games_of([path], on_error):
        score = _SCORES.get(game.headers.get("Result", "*"))
        white, black = game.headers.get("White"), game.headers.get("Black")
        if score is None or engine not in (white, black) or white == black:
            skipped += 1
            continue
        mine = score if white == engine else 1.0 - score
        by_opening.setdefault(game.board().fen(), []).append(mine)
    return FileScores(by_opening, skipped)


def pair(before: FileScores, after: FileScores, names: tuple[str, str]) -> PairResult:
    """The differences ``after - before`` of the mean scores over the common openings."""
    common = [fen for fen in before.by_opening if fen in after.by_opening]
    differences = [
        statistics.fmean(after.by_opening[fen]) - statistics.fmean(before.by_opening[fen])
        for fen in common
    ]
    unpaired = len(before.by_opening) + len(after.by_opening) - 2 * len(common)
    return PairResult(*names, differences, unpaired, before.skipped + after.skipped)


def summary(differences: Sequence[float]) -> dict[str, Any]:
    """Mean difference a game and its 95 % interval, as score and as Elo (about the
    even score: a difference ``d`` is ``elo_from_score(0.5 + d)``)."""
    count = len(differences)
    mean = statistics.fmean(differences) if count else 0.0
    half = Z95 * statistics.stdev(differences) / math.sqrt(count) if count > 1 else math.inf
    elo_half = elo_from_score(0.5 + half) if half < 0.5 else math.inf
    return {
        "openings": count,
        "difference": round(mean, 4),
        "interval": round(half, 4),
        "elo": round(elo_from_score(0.5 + mean), 1),
        "elo_interval": round(elo_half, 1),
    }


def format_report(results: Sequence[PairResult], total: dict[str, Any]) -> str:
    lines = []
    for result in results:
        one = summary(result.differences)
        lines.append(
            f"{result.before} -> {result.after}: {one['openings']} openings, "
            f"{one['difference']:+.3f} a game ({result.unpaired} unpaired, "
            f"{result.skipped} skipped)"
        )
    lines.append(
        f"paired over {total['openings']} openings: {total['difference']:+.3f} "
        f"± {total['interval']:.3f} a game (about {total['elo']:+.0f} "
        f"± {total['elo_interval']:.0f} Elo, 95 %)"
    )
    return "\n".join(lines)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = ToolParser(
        prog=PROG,
        description="The score difference of two versions of an engine against the same "
        "opponent from the same openings, paired by opening, with its 95 % interval.",
    )
    parser.add_argument(
        "pgn",
        nargs="+",
        metavar="BEFORE AFTER",
        help="pairs of match PGN files: the first of each pair before, the second after",
    )
    parser.add_argument("--engine", default="Cutoff", help="the engine's name in the PGNs")
    parser.add_argument(
        "--after-engine", help="its name in the AFTER files, if not the same (default --engine)"
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")
    args = parser.parse_args(argv)
    if len(args.pgn) % 2:
        print(f"{PROG}: error: give the files in pairs, BEFORE AFTER", file=sys.stderr)
        return EXIT_USAGE
    missing = first_missing(args.pgn)
    if missing is not None:
        print(f"{PROG}: error: {missing}: no such file", file=sys.stderr)
        return EXIT_FAILED
    on_error = LineReport(PROG)

    results = []
    try:
        for before, after in zip(args.pgn[::2], args.pgn[1::2]):
            scores = (
                engine_scores(before, args.engine, on_error),
                engine_scores(after, args.after_engine or args.engine, on_error),
            )
            results.append(pair(*scores, (before, after)))
    except OSError as err:
        print(f"{PROG}: error: {err}", file=sys.stderr)
        return EXIT_FAILED
    total = summary([d for result in results for d in result.differences])
    if total["openings"] == 0:
        names = args.engine if args.after_engine is None else f"{args.engine}/{args.after_engine}"
        print(f"{PROG}: error: no opening played by {names} in both files", file=sys.stderr)
        return EXIT_FAILED
    if args.json:
        pairs = [
            {
                "before": r.before,
                "after": r.after,
                **summary(r.differences),
                "unpaired": r.unpaired,
                "skipped": r.skipped,
            }
            for r in results
        ]
        print(json.dumps({"pairs": pairs, "total": total}, indent=2))
    else:
        print(format_report(results, total))
    return EXIT_FAILED if on_error.count else 0


if __name__ == "__main__":
    sys.exit(main())
