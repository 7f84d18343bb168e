"""The match runner's command line: options, presets, and their validation.

Responsible for the argument parser (``--engine``, limits, openings and their order,
adjudication, SPRT, output), the ``--preset`` settings (the project's standard strength
test) and turning the arguments into a checked ``Config``, with a ``MatchError`` naming
the first bad value. It must not start engines or play games.
"""

from __future__ import annotations

import argparse
import random
from typing import Any, Optional

import chess

from engine.analysis.outputs import overwrite_problem, replace_problem, writable_problem
from engine.extras import install_hint

from ..common import ToolParser
from . import elo
from .adjudication import Adjudication
from .config import Config
from .engines import parse_engine_spec
from .errors import MatchError
from .games import DEFAULT_MARGIN_S, DEFAULT_STALL_TIMEOUT_S, DEFAULT_STALL_TIMEOUT_UNTIMED_S
from .match_openings import DEFAULT_OPENINGS, Opening, load_openings
from .match_pgn import ANY_PGN
from .tally import SUMMARY
from .time_controls import Limits, parse_tc, positive_float, positive_int

# The project's standard strength test (see scripts/matches/sprt.sh and the README).
PRESETS: dict[str, dict[str, Any]] = {
    "sprt": {
        "openings": str(DEFAULT_OPENINGS),
        "tc": "10+0.1",
        "sprt": [0.0, 10.0],
        "alpha": 0.05,
        "beta": 0.05,
        "concurrency": 2,
        "rounds": 20000,
        "draw": [34, 8, 20],
        "resign": [3, 400],
    },
}


PROG = "cutoff-match"
"""The tool's name in its usage and messages: the console script's."""


def build_parser() -> argparse.ArgumentParser:
    # Usage errors exit with 1, like every other bad input (the runner's documented
    # contract; 2 means a match stopped by an engine fault).
    parser = ToolParser(
        prog=PROG,
        usage_status=1,
        description="Play a match between two UCI engines in colour-swapped pairs; report "
        "W/D/L, Elo with a 95% interval, LOS, pentanomial counts and an optional SPRT.",
        epilog="Engine spec: \"cmd='python -m engine' name=dev dir=../base option.Hash=64 "
        'env.CUTOFF_TUNE=t.json tc=10+0.1 st=0.1 depth=3 nodes=20000" (per-engine limits '
        "override the global ones; env.NAME sets an environment variable of the engine).",
    )
    parser.add_argument(
        "--engine",
        action="append",
        default=[],
        metavar="SPEC",
        help="an engine (give exactly two); see below",
    )
    parser.add_argument(
        "--preset",
        choices=sorted(PRESETS),
        help="the project's standard test settings; explicit options win",
    )
    parser.add_argument(
        "--tc", help="time control: base+inc, moves/base or moves/base+inc (seconds)"
    )
    parser.add_argument("--movetime", type=float, help="fixed seconds per move")
    parser.add_argument("--depth", type=int, help="fixed search depth")
    parser.add_argument("--nodes", type=int, help="fixed node count per move")
    parser.add_argument("--games", type=int, help="number of games")
    parser.add_argument("--rounds", type=int, help="number of game pairs (default 1)")
    parser.add_argument("--openings", help="EPD/FEN lines or PGN games; one per pair")
    parser.add_argument(
        "--order",
        choices=["sequential", "random"],
        default=None,
        help="opening order (default sequential)",
    )
    parser.add_argument("--seed", type=int, default=None, help="seed for --order random")
    parser.add_argument("--start", type=int, default=None, help="first opening, 1-based")
    parser.add_argument(
        "--concurrency", type=int, help="games played at the same time (local runs)"
    )
    parser.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="play the pairs on Dask: tcp://HOST:8786 (a running scheduler) or local:N "
        "(N worker processes here); needs the dask extra: " + install_hint("dask"),
    )
    parser.add_argument(
        "--draw",
        nargs=3,
        type=int,
        metavar=("MOVENUMBER", "MOVECOUNT", "SCORE"),
        help="draw adjudication: from move MOVENUMBER, both |score| <= SCORE cp "
        "for MOVECOUNT moves each",
    )
    parser.add_argument(
        "--resign",
        nargs=2,
        type=int,
        metavar=("MOVECOUNT", "SCORE"),
        help="resign adjudication: loser <= -SCORE cp and winner >= SCORE cp "
        "for MOVECOUNT moves each",
    )
    parser.add_argument("--maxmoves", type=int, help="adjudicate a draw after this many moves")
    parser.add_argument(
        "--margin",
        type=float,
        default=None,
        help=f"seconds an engine may overrun its clock (default {DEFAULT_MARGIN_S})",
    )
    parser.add_argument(
        "--stall-timeout",
        type=float,
        default=None,
        help="seconds beyond the time budget before a silent engine is a stall "
        f"(default {DEFAULT_STALL_TIMEOUT_S:g}; {DEFAULT_STALL_TIMEOUT_UNTIMED_S:g} "
        "without a clock)",
    )
    parser.add_argument(
        "--recover",
        action="store_true",
        default=None,
        help="restart a crashed engine and go on (default: stop the match)",
    )
    parser.add_argument(
        "--sprt",
        nargs=2,
        type=float,
        metavar=("ELO0", "ELO1"),
        help="SPRT in logistic Elo; stops the match when a bound is crossed",
    )
    parser.add_argument("--alpha", type=float, default=None, help="SPRT false-positive rate (0.05)")
    parser.add_argument("--beta", type=float, default=None, help="SPRT false-negative rate (0.05)")
    parser.add_argument("--pgn", help="append every game to this PGN file")
    parser.add_argument("--json", help="write the summary as JSON to this file ('-': stdout)")
    parser.add_argument("--event", default=None, help="PGN Event tag")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    parser.add_argument("--debug", action="store_true", help="log all engine traffic to stderr")
    return parser


def _apply_preset(args: argparse.Namespace) -> None:
    if not args.preset:
        return
    for key, value in PRESETS[args.preset].items():
        if key == "rounds" and args.games is not None:
            continue
        if getattr(args, key) is None:
            setattr(args, key, value)


def build_config(args: argparse.Namespace) -> Config:
    """Validate the arguments and load the openings; MatchError on any bad value."""
    _apply_preset(args)
    # Before anything is written: --pgn appends to its file, so that must be games
    # (never destroying it), --json replaces its file, so that must be an earlier
    # summary; and both must be writable, not found out after the games.
    outputs = [("--pgn", args.pgn), ("--json", args.json)]
    problem = (
        overwrite_problem(outputs, [args.openings] if args.openings else [])
        or replace_problem([("--pgn", args.pgn, ANY_PGN), ("--json", args.json, SUMMARY)])
        or writable_problem(outputs)
    )
    if problem:
        raise MatchError(problem)
    if len(args.engine) != 2:
        raise MatchError(f"give exactly two --engine options (got {len(args.engine)})")
    defaults = Limits(
        tc=parse_tc(args.tc) if args.tc else None,
        movetime_s=positive_float(str(args.movetime), "--movetime")
        if args.movetime is not None
        else None,
        depth=positive_int(str(args.depth), "--depth") if args.depth is not None else None,
        nodes=positive_int(str(args.nodes), "--nodes") if args.nodes is not None else None,
    )
    specs = [parse_engine_spec(text, defaults) for text in args.engine]

    if args.games is not None:
        games = positive_int(str(args.games), "--games")
    else:
        games = 2 * positive_int(str(args.rounds if args.rounds is not None else 1), "--rounds")

    openings_path: Optional[str] = args.openings
    if openings_path:
        openings = load_openings(openings_path)
    else:
        openings = [Opening(chess.STARTING_FEN, (), "start position")]
    order = list(range(len(openings)))
    if (args.order or "sequential") == "random":
        random.Random(args.seed).shuffle(order)
    start = args.start if args.start is not None else 1
    if not 1 <= start <= len(openings):
        raise MatchError(f"--start {start} is outside 1..{len(openings)}")
    order = order[start - 1 :] + order[: start - 1]

    concurrency = positive_int(str(args.concurrency or 1), "--concurrency")
    adjudication = Adjudication()
    if args.draw:
        movenumber, movecount, score = args.draw
        if movenumber < 0 or movecount <= 0 or score < 0:
            raise MatchError("--draw needs MOVENUMBER >= 0, MOVECOUNT > 0, SCORE >= 0")
        adjudication = Adjudication(movenumber, movecount, score)
    if args.resign:
        movecount, score = args.resign
        if movecount <= 0 or score <= 0:
            raise MatchError("--resign needs MOVECOUNT > 0 and SCORE > 0")
        adjudication = Adjudication(
            adjudication.draw_movenumber,
            adjudication.draw_movecount,
            adjudication.draw_score_cp,
            movecount,
            score,
        )
    if args.maxmoves is not None:
        adjudication = Adjudication(
            adjudication.draw_movenumber,
            adjudication.draw_movecount,
            adjudication.draw_score_cp,
            adjudication.resign_movecount,
            adjudication.resign_score_cp,
            positive_int(str(args.maxmoves), "--maxmoves"),
        )

    margin = args.margin if args.margin is not None else DEFAULT_MARGIN_S
    if not margin >= 0:
        raise MatchError(f"--margin {margin} must be >= 0")
    stall = args.stall_timeout
    if stall is not None and not stall > 0:
        raise MatchError(f"--stall-timeout {stall} must be positive")

    alpha = args.alpha if args.alpha is not None else 0.05
    beta = args.beta if args.beta is not None else 0.05
    sprt: Optional[tuple[float, float]] = None
    if args.sprt:
        elo0, elo1 = float(args.sprt[0]), float(args.sprt[1])
        if not elo0 < elo1:
            raise MatchError("--sprt needs ELO0 < ELO1")
        try:
            elo.sprt_bounds(alpha, beta)
        except ValueError as err:
            raise MatchError(f"--alpha/--beta: {err}") from None
        sprt = (elo0, elo1)

    return Config(
        specs=specs,
        openings=openings,
        openings_path=openings_path,
        opening_order=order,
        games=games,
        concurrency=concurrency,
        adjudication=adjudication,
        margin_s=margin,
        stall_timeout_s=stall,
        recover=bool(args.recover),
        sprt=sprt,
        alpha=alpha,
        beta=beta,
        pgn_path=args.pgn,
        json_path=args.json,
        event=args.event or "Cutoff match",
        progress=not args.quiet,
        scheduler=args.scheduler,
    )
