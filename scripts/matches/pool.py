"""Pooling matches: several match PGNs of one engine read as one match.

A change is often played in several matches (one per core, or over several
sessions); the decision rests on all of them together. Responsible for reading the
games' tags (the moves are not needed), counting each file's finished games from
one engine's point of view, pairing the two games of each opening, and the summary
of every file and of the pool: W/D/L, pentanomial pair counts ``[LL, LD, DD+WL, WD,
WW]``, Elo with its 95 % interval (pentanomial when there are pairs), LOS and the
SPRT's log-likelihood ratio; as a table, as JSON, or as a plot of each file's Elo
beside the pooled one.

Pairs: ``Round "k.1"`` and ``"k.2"`` as ``cutoff-match`` writes them (cutechess-cli's
round.game tags with ``-games 2 -repeat`` have the same form), or two games sharing
``Round "k"`` (older cutechess-cli versions). Pairs are formed within a file, never
across files (each file numbers its own).

Usage: ``cutoff-pool MATCH.pgn [MORE.pgn ...] [--engine NAME] [--sprt ELO0 ELO1]
[--json] [--plot FILE]`` (also ``python -m scripts.matches.pool``).

Bad input: a missing file stops the tool before anything is read (a typo must not
give a pooled figure without that file); a game the pool cannot use (no result,
the engine not playing, a round that pairs nothing) is one line on stderr with its
file and line, and the rest is pooled. Unfinished games (``Result "*"``, as an
interrupted match leaves its last games) are counted apart, not as errors. All
statistics come from ``elo``; this module must not play games or compute
statistics of its own.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from engine.analysis.outputs import (
    PLOT,
    overwrite_problem,
    replace_problem,
    writable_problem,
    write_failure,
)
from engine.analysis.plots import plot_file, save_figure

from ..common import EXIT_FAILED, ToolParser, print_stdout
from . import elo
from .match_pgn import first_missing

PROG = "cutoff-pool"
SCORES = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}
DEFAULT_SPRT = (0.0, 10.0)
"""The project's standard SPRT (logistic Elo), alpha = beta = 0.05."""
DEFAULT_ALPHA = 0.05
MAX_PROBLEMS_PER_FILE = 10
"""Problem lines shown per file; the rest are counted in one more line."""

_TAG = re.compile(r'^\[(\w+)\s+"((?:[^"\\]|\\.)*)"\]\s*$')
_ROUND_PAIRED = re.compile(r"^(\d+)\.([12])$")
_ROUND_NUMBER = re.compile(r"^(\d+)$")


@dataclass
class GameTags:
    """One game's tag pairs and the line of the file where they start."""

    line: int
    tags: dict[str, str]


def read_tags(path: str) -> Iterator[GameTags]:
    """Every game's tag section in a PGN file, in order (the moves are skipped)."""
    with open(path, encoding="utf-8", errors="replace") as handle:
        tags: dict[str, str] = {}
        start = 0
        in_tags = False
        for number, raw in enumerate(handle, 1):
            line = raw.strip()
            found = _TAG.match(line)
            if found:
                if not in_tags:
                    if tags:
                        yield GameTags(start, tags)
                    tags, start, in_tags = {}, number, True
                tags[found.group(1)] = found.group(2)
            elif line:
                in_tags = False
        if tags:
            yield GameTags(start, tags)


@dataclass
class Count:
    """One engine's results in a set of games, with the pairs completed."""

    wins: int = 0
    draws: int = 0
    losses: int = 0
    unfinished: int = 0
    pentanomial: list[int] = field(default_factory=lambda: [0, 0, 0, 0, 0])
    opponents: set[str] = field(default_factory=set)

    @property
    def games(self) -> int:
        return self.wins + self.draws + self.losses

    def add(self, other: Count) -> None:
        self.wins += other.wins
        self.draws += other.draws
        self.losses += other.losses
        self.unfinished += other.unfinished
        self.pentanomial = [a + b for a, b in zip(self.pentanomial, other.pentanomial)]
        self.opponents |= other.opponents


def _pair_key(round_tag: str) -> Optional[tuple[int, int]]:
    """(pair number, game 1 or 2, or 0 when the tag does not say) from a Round tag, or
    None when it names no pair."""
    found = _ROUND_PAIRED.match(round_tag)
    if found:
        return int(found.group(1)), int(found.group(2))
    found = _ROUND_NUMBER.match(round_tag)
    if found:
        return int(found.group(1)), 0
    return None


def count_file(path: str, engine: str) -> tuple[Count, list[str]]:
    """The counts of one file from ``engine``'s point of view, and its problem lines."""
    count = Count()
    problems: list[str] = []
    # pair number -> (game 1 or 2, engine's score, engine had White, line)
    halves: dict[int, tuple[int, float, bool, int]] = {}
    not_playing = 0
    players: set[str] = set()
    for game in read_tags(path):
        where = f"{path}:{game.line}"
        white = game.tags.get("White", "?")
        black = game.tags.get("Black", "?")
        result = game.tags.get("Result", "")
        players |= {white, black}
        if engine not in (white, black):
            not_playing += 1
            problems.append(f"{where}: {engine} does not play this game ({white} - {black})")
            continue
        if result == "*":
            count.unfinished += 1
            continue
        if result not in SCORES:
            problems.append(f"{where}: result {result!r} is not 1-0, 0-1, 1/2-1/2 or *")
            continue
        has_white = white == engine
        score = SCORES[result] if has_white else 1.0 - SCORES[result]
        if score == 1.0:
            count.wins += 1
        elif score == 0.0:
            count.losses += 1
        else:
            count.draws += 1
        count.opponents.add(black if has_white else white)
        key = _pair_key(game.tags.get("Round", ""))
        if key is None:
            problems.append(
                f"{where}: round {game.tags.get('Round', '')!r} names no pair "
                "(k.1 / k.2, or k); counted, not paired"
            )
            continue
        pair, half = key
        other = halves.pop(pair, None)
        if other is None:
            halves[pair] = (half, score, has_white, game.line)
        elif (half and other[0] == half) or other[2] == has_white:
            problems.append(
                f"{where}: round {game.tags['Round']!r} does not complete the pair of "
                f"line {other[3]} (the same game number, or {engine} has the same "
                "colour in both); counted, not paired"
            )
        else:
            count.pentanomial[round(2 * (other[1] + score))] += 1
    if not_playing and not (count.games or count.unfinished):
        # A file of other engines (or a misspelt --engine): one line, not one a game.
        names = ", ".join(sorted(players))
        problems = [f"{path}: {engine} plays none of its {not_playing} games ({names})"]
    if len(problems) > MAX_PROBLEMS_PER_FILE:
        more = len(problems) - MAX_PROBLEMS_PER_FILE
        problems[MAX_PROBLEMS_PER_FILE:] = [f"{path}: {more} more problems like these"]
    return count, problems


def first_engine(path: str) -> Optional[str]:
    """White of the first game in the file: the first engine of a ``cutoff-match`` run."""
    for game in read_tags(path):
        return game.tags.get("White")
    return None


def summary(count: Count, sprt: tuple[float, float], alpha: float) -> dict[str, Any]:
    """Counts and the statistics ``elo`` computes from them."""
    pairs = sum(count.pentanomial)
    estimate = (
        elo.pentanomial_elo(count.pentanomial)
        if pairs
        else elo.trinomial_elo(count.wins, count.draws, count.losses)
    )
    lower, upper = elo.sprt_bounds(alpha, alpha)
    llr = elo.llr_pentanomial(count.pentanomial, *sprt) if pairs else 0.0
    return {
        "games": count.games,
        "wins": count.wins,
        "draws": count.draws,
        "losses": count.losses,
        "unfinished": count.unfinished,
        "score": (count.wins + 0.5 * count.draws) / count.games if count.games else None,
        "pairs": pairs,
        "pentanomial": list(count.pentanomial),
        "elo_model": "pentanomial" if pairs else "trinomial",
        "elo": _finite(estimate.elo) if count.games else None,
        "elo_lower": _finite(estimate.elo_lower) if count.games else None,
        "elo_upper": _finite(estimate.elo_upper) if count.games else None,
        "los": elo.los(count.wins, count.losses),
        "opponents": sorted(count.opponents),
        "sprt": {
            "elo0": sprt[0],
            "elo1": sprt[1],
            "alpha": alpha,
            "beta": alpha,
            "llr": llr,
            "lower": lower,
            "upper": upper,
            "result": "H1" if llr >= upper else "H0" if llr <= lower else "continue",
        },
    }


def _finite(value: float) -> Optional[float]:
    return value if math.isfinite(value) else None


def pool(
    paths: Sequence[str], engine: str, sprt: tuple[float, float], alpha: float
) -> tuple[dict[str, Any], list[str]]:
    """The pooled report of ``paths`` for ``engine`` and every problem line."""
    total = Count()
    files = []
    problems: list[str] = []
    for path in paths:
        try:
            count, found = count_file(path, engine)
        except OSError as err:
            problems.append(f"{path}: {err.strerror or err}")
            continue
        problems.extend(found)
        total.add(count)
        files.append({"file": path, **summary(count, sprt, alpha)})
    report = {
        "engine": engine,
        "files": files,
        "pooled": summary(total, sprt, alpha),
        "problems": len(problems),
    }
    return report, problems


def _elo_text(row: dict[str, Any]) -> str:
    if row["elo"] is None:
        if row["score"] is None:
            return "-"
        return "+inf" if row["score"] > 0.5 else "-inf"
    low = "-inf" if row["elo_lower"] is None else f"{row['elo_lower']:+.1f}"
    high = "+inf" if row["elo_upper"] is None else f"{row['elo_upper']:+.1f}"
    return f"{row['elo']:+.1f} ({low} to {high})"


def format_report(report: dict[str, Any]) -> str:
    """The report as a table, one row per file and the pool last."""
    pooled = report["pooled"]
    rows = [(Path(f["file"]).name, f) for f in report["files"]] + [("pooled", pooled)]
    width = max(len(name) for name, _ in rows)
    against = ", ".join(pooled["opponents"]) or "nobody"
    lines = [
        f"{report['engine']} against {against}: {len(report['files'])} files, "
        f"{pooled['games']} games",
        f"  {'file':<{width}}  {'games':>5}  {'W / D / L':<17} "
        f"{'pairs [LL, LD, DD+WL, WD, WW]':<30} Elo (95 %)",
    ]
    for name, row in rows:
        wdl = f"{row['wins']} / {row['draws']} / {row['losses']}"
        penta = str(row["pentanomial"]) if row["pairs"] else "-"
        lines.append(
            f"  {name:<{width}}  {row['games']:>5}  {wdl:<17} {penta:<30} {_elo_text(row)}"
        )
    sprt = pooled["sprt"]
    lines.append(
        f"Pooled: LOS {100 * pooled['los']:.1f} %, Elo from {pooled['elo_model']} counts; "
        f"SPRT ({sprt['elo0']:g}, {sprt['elo1']:g}), alpha = beta = {sprt['alpha']:g}: "
        f"LLR {sprt['llr']:.2f} (bounds {sprt['lower']:.2f}, {sprt['upper']:.2f}), "
        f"{sprt['result']}"
    )
    if pooled["unfinished"]:
        lines.append(f"Unfinished games left out: {pooled['unfinished']}")
    return "\n".join(lines)


def plot_pool(report: dict[str, Any], path: str) -> None:
    """Each file's Elo with its 95 % interval, and the pooled one at the bottom."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [(Path(f["file"]).name, f) for f in report["files"]]
    rows.append(("pooled", report["pooled"]))
    rows = [(name, row) for name, row in rows if row["elo"] is not None]
    figure, axes = plt.subplots(figsize=(7, 1.2 + 0.45 * len(rows)), dpi=100)
    for index, (name, row) in enumerate(rows):
        y = len(rows) - 1 - index
        low = row["elo_lower"] if row["elo_lower"] is not None else row["elo"]
        high = row["elo_upper"] if row["elo_upper"] is not None else row["elo"]
        pooled = name == "pooled"
        axes.errorbar(
            [row["elo"]],
            [y],
            xerr=[[row["elo"] - low], [high - row["elo"]]],
            fmt="D" if pooled else "o",
            color="black" if pooled else "tab:blue",
            capsize=4,
        )
    axes.set_yticks(range(len(rows)))
    axes.set_yticklabels([f"{name} ({row['games']})" for name, row in reversed(rows)])
    axes.axvline(0, color="grey", linewidth=0.8)
    axes.set_xlabel("Elo, 95 % interval")
    axes.set_title(f"{report['engine']}: {report['pooled']['games']} games pooled")
    axes.grid(True, axis="x", alpha=0.3)
    figure.tight_layout()
    save_figure(figure, path)
    plt.close(figure)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = ToolParser(
        prog=PROG,
        description="Several match PGNs of one engine as one match: W/D/L, pentanomial "
        "pairs, Elo with its 95 % interval, LOS and the SPRT's LLR, per file and pooled.",
    )
    parser.add_argument("pgn", nargs="+", help="match PGN files (cutoff-match, cutechess-cli)")
    parser.add_argument(
        "--engine",
        metavar="NAME",
        help="whose results (default: White of the first game, a cutoff-match run's first engine)",
    )
    parser.add_argument(
        "--sprt",
        nargs=2,
        type=float,
        metavar=("ELO0", "ELO1"),
        default=DEFAULT_SPRT,
        help="the SPRT's hypotheses in logistic Elo (default 0 10)",
    )
    parser.add_argument(
        "--alpha",
        type=float,
        default=DEFAULT_ALPHA,
        help="the SPRT's error rates, alpha = beta (default 0.05)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")
    parser.add_argument("--plot", metavar="FILE", help="draw each file's Elo and the pool's")
    args = parser.parse_args(argv)
    if not 0.0 < args.alpha < 0.5:
        parser.error("--alpha must be between 0 and 0.5")
    missing = first_missing(args.pgn)
    if missing is not None:
        print(f"{PROG}: error: {missing}: no such file", file=sys.stderr)
        return EXIT_FAILED
    plot = None if args.plot is None else plot_file(args.plot)
    problem = (
        overwrite_problem([("--plot", plot)], args.pgn)
        or replace_problem([("--plot", plot, PLOT)])
        or writable_problem([("--plot", plot)])
    )
    if problem:
        print(f"{PROG}: error: {problem}", file=sys.stderr)
        return EXIT_FAILED
    engine = args.engine
    if engine is None:
        try:
            engine = first_engine(args.pgn[0])
        except OSError as err:
            print(f"{PROG}: error: {args.pgn[0]}: {err.strerror or err}", file=sys.stderr)
            return EXIT_FAILED
        if engine is None:
            print(f"{PROG}: error: {args.pgn[0]}: no game; name one with --engine", file=sys.stderr)
            return EXIT_FAILED
    report, problems = pool(args.pgn, engine, (args.sprt[0], args.sprt[1]), args.alpha)
    for problem in problems:
        print(f"{PROG}: {problem}", file=sys.stderr)
    failed = print_stdout(json.dumps(report, indent=2) if args.json else format_report(report))
    if failed is not None:
        print(f"{PROG}: error: {write_failure('stdout', failed)}", file=sys.stderr)
        return EXIT_FAILED
    if args.plot and report["pooled"]["games"]:
        try:
            plot_pool(report, args.plot)
        except OSError as err:
            print(f"{PROG}: error: {write_failure(plot_file(args.plot), err)}", file=sys.stderr)
            return EXIT_FAILED
    if not report["pooled"]["games"]:
        print(f"{PROG}: error: no finished game of {engine} in these files", file=sys.stderr)
        return EXIT_FAILED
    return 0


if __name__ == "__main__":
    sys.exit(main())
