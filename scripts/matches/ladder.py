"""A rating ladder: one engine against an opponent at several calibrated levels.

Usage: python -m scripts.matches.ladder --engine SPEC [--opponent TEMPLATE]
       [--levels 1800 2000 2200] [--out DIR] [--resume] [--scale-by-perft]
       [--perft-rate N] [cutoff-match options]  (installed: cutoff-ladder ...)

Plays one ``cutoff-match`` per level, the engine against the opponent template with
``{elo}`` replaced by the level (by default Stockfish with ``UCI_LimitStrength`` and
``UCI_Elo``), and every other option passed through to the match (``--tc``,
``--rounds``, ``--openings``, ``--concurrency``, adjudication...). Each level's games
and summary are written as it finishes (``DIR/LEVEL.pgn``, ``DIR/LEVEL.json``), then
the ladder so far (``DIR/ladder.json``, ``DIR/ladder.md``): W/D/L, score and Elo per
level, and the one rating on the opponent's scale that explains all the games
(``elo.rating_on_scale``); ``--plot FILE`` draws the scores per level with their
95 % intervals and the rating's expected-score curve (matplotlib, the ``plot``
extra). ``--resume`` keeps every level whose summary shows all its
planned games and plays the others again, so an interrupted ladder loses at most the
level it was playing.

Hosts differ in speed, so every ladder prints and records the host's yardstick:
python-chess's perft rate (``scripts.speed.yardstick``, measured before the first level,
or given by ``--perft-rate``; ``--resume`` reuses the one in ``ladder.json``). With
``--scale-by-perft`` the ``--tc`` clock (base and increment) is multiplied by 240,000
/ that rate, a figure that Cutoff's own speed cannot move. A resumed ladder keeps the
recorded clock when no ``--tc`` is given, and is refused if its clock would change.

This module only builds the matches' command lines, reads their summaries and writes
the ladder: games, statistics and faults are the match runner's and ``elo``'. Exit
status: 0 every level played (faults are counted in the table, as in a match), 1 bad
input (an output that cannot be written included), a level that could not start or
a file that could not be written after all (a full disk: the finished levels stay
whole for ``--resume``), 130/143 interrupted (the levels finished so far
are kept and summarised).
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Optional

import chess

from engine.analysis.outputs import Kind, json_kind, text_kind, write_failure
from engine.analysis.plots import plot_file, save_figure

from ..common import UsageError, atomic_output, print_stdout
from ..speed import yardstick
from . import elo, match
from .drivers import outputs_problem, own_option_problem
from .errors import MatchError
from .match_pgn import MATCH_PGN
from .tally import SUMMARY
from .time_controls import TimeControl, parse_tc, positive_float

STOCKFISH = shutil.which("stockfish") or "/usr/games/stockfish"
DEFAULT_OPPONENT = f"cmd={STOCKFISH} option.UCI_LimitStrength=true option.UCI_Elo={{elo}}"
DEFAULT_LEVELS = (1800, 2000, 2200)
PROG = "cutoff-ladder"
"""The tool's name in its usage and messages: the console script's."""
OWN_OPTIONS = ("--pgn", "--json", "--engine")
"""Match options the ladder sets itself for every level."""
TABLE_START = "| opponent level |"
"""How ``ladder.md`` starts (``format_ladder``), by which it is known."""
LADDER = json_kind("a cutoff-ladder summary", ("engine", "levels", "rating"))
TABLE = text_kind("a cutoff-ladder table", TABLE_START)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description=(
            "Play an engine against an opponent at several levels (by default "
            "Stockfish's UCI_Elo) and rate it on the opponent's scale. Options not "
            "listed here go to every match (see cutoff-match --help)."
        ),
    )
    parser.add_argument("--engine", required=True, metavar="SPEC", help="the engine to rate")
    parser.add_argument(
        "--opponent",
        default=DEFAULT_OPPONENT,
        metavar="TEMPLATE",
        help="engine spec with {elo} for the level (default: Stockfish's UCI_Elo)",
    )
    parser.add_argument(
        "--levels",
        type=int,
        nargs="+",
        default=list(DEFAULT_LEVELS),
        metavar="ELO",
        help="the opponent's levels (default 1800 2000 2200)",
    )
    parser.add_argument("--out", default="ladder", help="folder for the results (default ladder)")
    parser.add_argument(
        "--resume", action="store_true", help="keep the levels a previous run finished"
    )
    parser.add_argument(
        "--plot", metavar="FILE", help="draw score against level (PNG, SVG...; needs matplotlib)"
    )
    parser.add_argument(
        "--scale-by-perft",
        action="store_true",
        help=(
            f"multiply --tc by {yardstick.REFERENCE_LEAVES_PER_SECOND:,} / this host's "
            "python-chess perft leaves/s"
        ),
    )
    parser.add_argument(
        "--perft-rate",
        metavar="N",
        help="this host's python-chess perft leaves/s, measured earlier (default: measure it)",
    )
    return parser


def _tc_option(passthrough: Sequence[str]) -> tuple[Optional[str], list[str]]:
    """The ``--tc`` value passed to every match (the last one wins, as in the match)
    and the other options without it."""
    tc = None
    rest: list[str] = []
    options = iter(passthrough)
    for option in options:
        if option == "--tc":
            tc = next(options, None)
            if tc is None:
                rest.append(option)  # the match says what is missing
        elif option.startswith("--tc="):
            tc = option.split("=", 1)[1]
        else:
            rest.append(option)
    return tc, rest


def scaled_tc(tc: TimeControl, factor: float) -> TimeControl:
    """``tc`` with base and increment multiplied, to 10 ms and 1 ms."""
    return TimeControl(tc.moves, round(tc.base_s * factor, 2), round(tc.inc_s * factor, 3))


def yardstick_record(rate: int, tc: Optional[str], scale: bool) -> dict[str, Any]:
    """The host's figure and the clock the levels are played at, as ladder.json keeps them."""
    played = tc
    if tc is not None and scale:
        played = scaled_tc(parse_tc(tc), yardstick.scale_factor(rate)).pgn()
    return {
        "perft_leaves_per_second": rate,
        "reference_leaves_per_second": yardstick.REFERENCE_LEAVES_PER_SECOND,
        "python_chess": chess.__version__,
        "tc_given": tc,
        "scaled": scale,
        "tc": played,
    }


def format_yardstick(record: dict[str, Any]) -> str:
    """``python-chess perft N leaves/s; tc X`` and how X was made."""
    rate = record["perft_leaves_per_second"]
    text = f"python-chess perft {rate:,} leaves/s; tc {record['tc'] or 'not set'}"
    if record["scaled"]:
        factor = yardstick.scale_factor(rate)
        text += f" ({record['tc_given']} scaled by {factor:.3f})"
    return text


def _recorded_yardstick(path: Path) -> Optional[dict[str, Any]]:
    """The yardstick an earlier run of this ladder recorded, if any."""
    try:
        recorded = json.loads(path.read_text(encoding="utf-8")).get("yardstick")
    except (OSError, ValueError, AttributeError):
        return None
    if isinstance(recorded, dict) and isinstance(recorded.get("perft_leaves_per_second"), int):
        return recorded
    return None


def _finished(path: Path) -> Optional[dict[str, Any]]:
    """A level's summary if it holds every planned game, else None."""
    try:
        summary: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if summary.get("games") and summary.get("games") == summary.get("games_planned"):
        return summary
    return None


def _row(level: int, summary: dict[str, Any]) -> dict[str, Any]:
    engine = summary["engines"][0]
    elo = summary.get("elo") or {}
    faults = {
        name: count
        for side in summary["engines"]
        for name, count in side["faults"].items()
        if count
    }
    return {
        "level": level,
        "wins": engine["wins"],
        "draws": engine["draws"],
        "losses": engine["losses"],
        "games": summary["games"],
        "score": engine["score"],
        "elo": elo.get("elo"),
        "error": elo.get("error"),
        "faults": faults,
        "opening_numbers": summary.get("opening_numbers"),
    }


def _fmt_elo(row: dict[str, Any]) -> str:
    if row["elo"] is None:
        return "+inf" if (row["score"] or 0.0) > 0.5 else "-inf"
    error = row["error"]
    return f"{row['elo']:+.0f} ± {error:.0f}" if error is not None else f"{row['elo']:+.0f}"


def ladder_summary(
    name: str, rows: Sequence[dict[str, Any]], host: Optional[dict[str, Any]] = None
) -> dict[str, Any]:
    """The ladder as JSON-ready data: the rows, the rating on the opponent's scale and
    the host's yardstick (``yardstick_record``)."""
    rating, error = elo.rating_on_scale(
        [elo.LevelResult(r["level"], r["wins"], r["draws"], r["losses"]) for r in rows]
    )
    return {
        "engine": name,
        "levels": list(rows),
        "games": sum(r["games"] for r in rows),
        "rating": rating if math.isfinite(rating) else None,
        "rating_error": error if math.isfinite(error) else None,
        "yardstick": host,
    }


def format_ladder(summary: dict[str, Any]) -> str:
    """The ladder as a Markdown table and the rating line."""
    lines = [
        f"{TABLE_START} {summary['engine']} W / D / L | score | Elo | faults |",
        "| ---: | --- | ---: | --- | --- |",
    ]
    for row in summary["levels"]:
        score = f"{100 * row['score']:.1f} %" if row["score"] is not None else "-"
        faults = ", ".join(f"{k} {v}" for k, v in row["faults"].items()) or "none"
        lines.append(
            f"| {row['level']} | {row['wins']} / {row['draws']} / {row['losses']} | {score} "
            f"| {_fmt_elo(row)} | {faults} |"
        )
    lines.append("")
    if summary["rating"] is None:
        lines.append(f"Rating on the opponent's scale: not finite ({summary['games']} games)")
    else:
        error = summary["rating_error"]
        bar = f" ± {error:.0f} (95 %)" if error is not None else ""
        lines.append(
            f"Rating on the opponent's scale: {summary['rating']:.0f}{bar}, "
            f"{summary['games']} games"
        )
    if summary.get("yardstick"):
        lines.append(format_yardstick(summary["yardstick"]))
    return "\n".join(lines)


def plot_ladder(summary: dict[str, Any], path: str) -> None:
    """Score against level with 95 % bars, and the expected score at the fitted rating."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = summary["levels"]
    figure, axes = plt.subplots(figsize=(7, 4.5), dpi=100)
    levels = [row["level"] for row in rows]
    scores = [100 * row["score"] for row in rows]
    bars = []
    for row in rows:
        level = elo.LevelResult(row["level"], row["wins"], row["draws"], row["losses"])
        bars.append(100 * elo.Z95 * math.sqrt(level.score_variance / level.games))
    axes.errorbar(levels, scores, yerr=bars, fmt="o", capsize=4, label="score, 95 %")
    rating = summary["rating"]
    if rating is not None:
        low, high = min(levels) - 200, max(levels) + 200
        xs = [low + (high - low) * i / 100 for i in range(101)]
        axes.plot(
            xs,
            [100 * elo.score_from_elo(rating - x) for x in xs],
            linestyle="--",
            label=f"expected at {rating:.0f}",
        )
    axes.axhline(50, color="grey", linewidth=0.8)
    axes.set_ylim(0, 100)
    axes.set_xlabel("opponent level")
    axes.set_ylabel(f"{summary['engine']} score (%)")
    axes.set_title(f"{summary['engine']}: rating ladder, {summary['games']} games")
    axes.legend()
    axes.grid(True, alpha=0.3)
    figure.tight_layout()
    save_figure(figure, path)
    plt.close(figure)


def _write(out: Path, summary: dict[str, Any], plot: Optional[str]) -> Optional[str]:
    """Write the ladder so far, each file whole or not at all (a full disk leaves the
    previous one, and ``--resume`` goes on); why one could not be written, or None."""
    texts = {"ladder.json": json.dumps(summary, indent=2), "ladder.md": format_ladder(summary)}
    for name, text in texts.items():
        try:
            with atomic_output(out / name) as handle:
                handle.write(text + "\n")
        except UsageError as err:
            return str(err)
        except OSError as err:
            return write_failure(out / name, err)
    if plot and summary["levels"]:
        try:
            plot_ladder(summary, plot)
        except OSError as err:
            return write_failure(plot_file(plot), err)
    return None


def _host_yardstick(
    args: argparse.Namespace, passthrough: Sequence[str], out: Path
) -> dict[str, Any] | str:
    """The yardstick and clock the levels are played with (printed), or what is wrong.

    A resumed ladder keeps the figure its ``ladder.json`` records and, when no
    ``--tc`` is given, its clock: its levels must all be played at one clock.
    """
    tc, _ = _tc_option(passthrough)
    scale: bool = args.scale_by_perft
    try:
        given = None if args.perft_rate is None else positive_float(args.perft_rate, "--perft-rate")
        recorded = _recorded_yardstick(out / "ladder.json") if args.resume else None
        if recorded is not None and tc is None and not scale:
            tc, scale = recorded.get("tc_given"), bool(recorded.get("scaled"))
        if tc is not None:
            parse_tc(tc)
    except MatchError as err:
        return str(err)
    if scale and tc is None:
        return "--scale-by-perft scales the clock of --tc: give --tc"
    if given is not None:
        rate, source = max(1, round(given)), "given by --perft-rate"
    elif recorded is not None:
        rate, source = recorded["perft_leaves_per_second"], f"recorded in {out / 'ladder.json'}"
    else:
        print(f"{PROG}: measuring python-chess perft...", file=sys.stderr, flush=True)
        rate, source = yardstick.measure(), "on this host"
    host = yardstick_record(rate, tc, scale)
    if recorded is not None and recorded.get("tc") != host["tc"]:
        return (
            f"--resume: {str(out / 'ladder.json')!r} was played at "
            f"{format_yardstick(recorded)}, not tc {host['tc'] or 'not set'}"
        )
    line = f"{PROG}: yardstick: python-chess perft {rate:,} leaves/s {source}"
    if host["scaled"]:
        line += f": {tc} scaled by {yardstick.scale_factor(rate):.3f} to {host['tc']}"
    elif tc is not None:
        line += f": tc {tc} (not scaled)"
    print(line, file=sys.stderr, flush=True)
    return host


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Play the ladder the arguments describe; the exit status (module docstring)."""
    args, passthrough = build_parser().parse_known_args(argv)
    if "{elo}" not in args.opponent:
        print(f"{PROG}: error: --opponent needs {{elo}} where the level goes", file=sys.stderr)
        return 1
    out = Path(args.out)
    # Every file the ladder writes (or deletes, for a level played again), checked
    # against the openings the matches read, and as an earlier ladder's file of its
    # kind, before the first one is touched.
    kinds: dict[str, Kind] = {}
    for level in dict.fromkeys(args.levels):
        kinds |= {f"{level}.pgn": MATCH_PGN, f"{level}.json": SUMMARY}
    kinds |= {"ladder.json": LADDER, "ladder.md": TABLE}
    problem = own_option_problem(passthrough, OWN_OPTIONS, "is set per level") or outputs_problem(
        out, kinds, args.plot, passthrough
    )
    if problem:
        print(f"{PROG}: error: {problem}", file=sys.stderr)
        return 1
    try:
        host = _host_yardstick(args, passthrough, out)
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted before the first level", file=sys.stderr)
        return 130
    if isinstance(host, str):
        print(f"{PROG}: error: {host}", file=sys.stderr)
        return 1
    if host["tc"] is not None:
        passthrough = [*_tc_option(passthrough)[1], "--tc", host["tc"]]
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        print(f"{PROG}: error: cannot create {str(out)!r}: {err.strerror}", file=sys.stderr)
        return 1
    name = "engine"  # until a level's summary gives the name the match used
    rows: list[dict[str, Any]] = []
    status = 0
    for level in args.levels:
        json_path = out / f"{level}.json"
        pgn_path = out / f"{level}.pgn"
        summary = _finished(json_path) if args.resume else None
        if summary is None:
            # A level is played whole: an unfinished one starts again from nothing.
            for path in (json_path, pgn_path):
                path.unlink(missing_ok=True)
            opponent = args.opponent.replace("{elo}", str(level))
            print(f"{PROG}: level {level}: {opponent}", file=sys.stderr, flush=True)
            status = match.main(
                [
                    "--engine",
                    args.engine,
                    "--engine",
                    opponent,
                    *passthrough,
                    "--pgn",
                    str(pgn_path),
                    "--json",
                    str(json_path),
                ]
            )
            if status == 1:
                print(f"{PROG}: level {level} could not be played", file=sys.stderr)
                return 1
            if status not in (0, 2):
                break  # interrupted: the finished levels are kept and summarised
            # Status 2 (a fault stopped the match): its games still count, faults shown.
            try:
                summary = json.loads(json_path.read_text(encoding="utf-8"))
            except (OSError, ValueError) as err:
                print(f"{PROG}: error: no summary in {str(json_path)!r}: {err}", file=sys.stderr)
                return 1
        name = summary["engines"][0]["name"]
        rows.append(_row(level, summary))
        problem = _write(out, ladder_summary(name, rows, host), args.plot)
        if problem:
            print(f"{PROG}: error: {problem}", file=sys.stderr)
            return 1
    result = ladder_summary(name, rows, host)
    problem = _write(out, result, args.plot)
    if problem:
        print(f"{PROG}: error: {problem}", file=sys.stderr)
        return 1
    failed = print_stdout(format_ladder(result))
    if failed is not None:
        print(f"{PROG}: error: {write_failure('stdout', failed)}", file=sys.stderr)
        return 1
    return status if status not in (0, 2) else 0


if __name__ == "__main__":
    sys.exit(main())
