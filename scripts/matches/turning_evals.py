"""What the engines' evaluations said at the turning points of one engine's lost games.

Responsible for running engines on the positions ``turning_points`` finds: in each
game the engine named by ``--loser`` lost, the position the winner moved from at its
turning point (its first move after which its own reported score stayed at or above
``--margin`` pawns, default 1.50, to the end). Each position gets six figures, all
in pawns from the winner's side (positive: good for the winner):

* ``winner_search``: the winner's score at the turning move, from its move comment;
* ``stockfish_depth1`` and ``cutoff_depth1``: the score of a ``go depth 1`` search
  (quiescence included), the last one the engine reported;
* ``stockfish_static``: Stockfish's ``eval`` command (its ``Final evaluation``
  line); missing in check, where Stockfish has none;
* ``cutoff_static``: Cutoff's ``eval`` command, the evaluation its search uses (the
  network, unless ``Use NNUE`` is off or the network cannot be loaded, which is an
  error here: the figure would not be the network's);
* ``loser_search``: the loser's own score on its last move before the turning
  point, from its move comment, negated.

Mates count as ``MATE_PAWNS`` (100) pawns, less one hundredth a move, as
python-chess's ``score(mate_score=...)`` counts them. It prints the number of lost
games, how many had a turning point, each figure's median, and how many positions
each reads ``CLEAR_PAWNS`` (+1.00) or more by; ``--json`` prints every position's
figures and the summary as one JSON document.

Usage: ``python -m scripts.matches.turning_evals MATCH.pgn [MORE.pgn ...] --loser
NAME [--margin PAWNS] [--stockfish PATH] [--cutoff CMD] [--cutoff-option NAME=VALUE
...] [--json]``. ``--loser`` is required: the figures are one engine's losses (a
name no game has is an error naming the players). Cutoff is ``python -m engine`` of
this checkout unless ``--cutoff`` says otherwise; ``--cutoff-option`` sets its UCI
options (``EvalFile=PATH`` measures another network, ``Use NNUE=false`` the
hand-written evaluation). The engines run in the repository root, one thread and a
16 MB hash each, their tables cleared before each position. A search goes through
python-chess (``SimpleEngine``); ``eval`` is not UCI and python-chess cannot send it,
so each engine's static evaluations come from a second process of it, driven
through its text (``scripts.training.engines.UciPipe``). Every engine started is
closed, on an error too.

It must not find the turning points (``turning_points`` does, from the same reading
of the PGN files: ``match_pgn``) nor judge the engines' moves; bad input is one line
(a missing file; a game that cannot be replayed, and the rest is measured, exit
status 1).
"""

from __future__ import annotations

import contextlib
import json
import re
import shutil
import statistics
import sys
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Optional

import chess
import chess.engine
from tqdm import tqdm

from ..common import (
    EXIT_FAILED,
    REPORTED_FAILURES,
    EngineMoveError,
    ToolParser,
    UsageError,
    engine_command,
    quit_engine,
    report_failure,
    uci_option_values,
)
from ..training.engines import (
    STOCKFISH_PATHS,
    UciPipe,
    start_engine,
    stockfish_static_pawns,
)
from .match_pgn import LineReport, first_missing
from .turning_points import MATE_PAWNS, read_files

PROG = "turning_evals"
DEFAULT_MARGIN = 1.5
"""The margin the issue asks for (``turning_points``' own default is 2.00)."""
CLEAR_PAWNS = 1.0
"""A figure at or above this reads the position as clearly the winner's."""
MATE_CP = round(MATE_PAWNS * 100)
"""A mate, in centipawns: python-chess's ``mate_score``."""
EVAL_TIMEOUT = 60.0
"""Seconds an engine may take to start, or to answer ``eval`` for one position."""
SEARCH = chess.engine.Limit(depth=1)

FIGURES = (
    ("winner_search", "the winner's search (its move's comment)"),
    ("stockfish_depth1", "Stockfish, depth 1 with quiescence"),
    ("cutoff_depth1", "Cutoff, depth 1 with quiescence"),
    ("stockfish_static", "Stockfish's static evaluation"),
    ("cutoff_static", "Cutoff's static evaluation"),
    ("loser_search", "the loser's search on its move before"),
)
"""Each position's figures: JSON key and the text report's label, in order."""
STATIC_FIGURES = ("stockfish_static", "cutoff_static")
"""The figures whose count of clear readings the text report prints."""

_CUTOFF_EVALUATION = re.compile(
    r"^(NNUE )?[Ee]valuation: ([+-]?\d+) cp from white's point of view$"
)
_SEARCHING_WITH = "Searching with: "


def cutoff_static(lines: Sequence[str]) -> tuple[float, str]:
    """Cutoff's ``eval`` output as pawns from White's view, of the evaluation its search
    uses, and what that is (the text after ``Searching with:``). ``ValueError`` when
    a line is missing, or when the network the options ask for could not be loaded."""
    scores: dict[bool, int] = {}
    searching: Optional[str] = None
    for line in lines:
        text = line.strip()
        found = _CUTOFF_EVALUATION.match(text)
        if found is not None:
            scores[found.group(1) is not None] = int(found.group(2))
        elif text.startswith(_SEARCHING_WITH):
            searching = text.removeprefix(_SEARCHING_WITH)
    if searching is None:
        raise ValueError(f"no {_SEARCHING_WITH.strip()!r} line after eval")
    if "could not be loaded" in searching:
        raise ValueError(f"its network was not used: {searching}")
    network = searching.startswith("the network")
    if network not in scores:
        kind = "NNUE evaluation" if network else "Evaluation"
        raise ValueError(f"no '{kind}: ... cp from white's point of view' line after eval")
    return scores[network] / 100, searching


def pawns(score: Optional[chess.engine.PovScore], side: chess.Color) -> Optional[float]:
    """A search's score in pawns from ``side``'s view (mates as ``MATE_PAWNS``)."""
    if score is None:
        return None
    value = score.pov(side).score(mate_score=MATE_CP)
    return None if value is None else value / 100


def summarise(positions: Sequence[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per figure: its median over the positions that have it, how many have it, and
    how many of those read ``CLEAR_PAWNS`` or more (None: no position has it)."""
    summary: dict[str, dict[str, Any]] = {}
    for key, _ in FIGURES:
        values = [p[key] for p in positions if p[key] is not None]
        summary[key] = {
            "median": round(statistics.median(values), 3) if values else None,
            "positions": len(values),
            "clear": sum(value >= CLEAR_PAWNS for value in values),
        }
    return summary


class StaticEvaluator(UciPipe):
    """One engine process answering ``eval``: started (``uci``, the ``options``,
    ``isready``), then for each position ``position fen``, ``eval`` and ``isready``,
    and the lines before ``readyok``. Failures are ``EngineMoveError``s."""

    def __init__(self, argv: list[str], options: Mapping[str, chess.engine.ConfigValue]) -> None:
        super().__init__(argv, EVAL_TIMEOUT, "engine")
        try:
            self._send("uci")
            self._until("uciok")
            setup = [
                f"setoption name {name} value {uci_text(value)}" for name, value in options.items()
            ]
            self._send(*setup, "isready")
            self._until("readyok")
        except EngineMoveError:
            self.close()
            raise

    def evaluate(self, board: chess.Board) -> list[str]:
        self._send(f"position fen {board.fen()}", "eval", "isready")
        return self._until("readyok")


def uci_text(value: chess.engine.ConfigValue) -> str:
    """An option's value as ``setoption`` writes it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return "" if value is None else str(value)


@dataclass
class Engines:
    """The four processes: each engine's search (python-chess) and its ``eval``."""

    stockfish: chess.engine.SimpleEngine
    stockfish_eval: StaticEvaluator
    cutoff: chess.engine.SimpleEngine
    cutoff_eval: StaticEvaluator
    cutoff_evaluation: str = ""
    """What Cutoff's search evaluates with (its ``eval``'s ``Searching with:``)."""

    def measure(self, board: chess.Board, game: int) -> dict[str, Optional[float]]:
        """The engines' figures for ``board``, from the side to move's view. ``game``
        differs for each position: python-chess clears the tables then."""
        side = board.turn
        sign = 1.0 if side == chess.WHITE else -1.0
        figures: dict[str, Optional[float]] = {}
        for key, engine in (("stockfish_depth1", self.stockfish), ("cutoff_depth1", self.cutoff)):
            info = engine.analyse(board, SEARCH, game=game)
            figures[key] = pawns(info.get("score"), side)
        try:
            white = stockfish_static_pawns(self.stockfish_eval.evaluate(board))
        except ValueError as exc:
            raise EngineMoveError(f"stockfish, {board.fen()}: {exc}") from None
        figures["stockfish_static"] = None if white is None else sign * white
        try:
            cutoff_white, self.cutoff_evaluation = cutoff_static(self.cutoff_eval.evaluate(board))
        except ValueError as exc:
            raise EngineMoveError(f"cutoff, {board.fen()}: {exc}") from None
        figures["cutoff_static"] = sign * cutoff_white
        return figures


@contextlib.contextmanager
def started(
    stockfish: list[str], cutoff: list[str], cutoff_options: Mapping[str, str]
) -> Iterator[Engines]:
    """The engines, closed when the block ends however it ends. A bad option is a
    ``UsageError``, a network Cutoff cannot load an ``EngineMoveError``, both before
    Stockfish starts."""
    with contextlib.ExitStack() as stack:

        def search(argv: list[str]) -> chess.engine.SimpleEngine:
            engine = start_engine(argv)
            stack.callback(engine.close)  # kills the process if quitting did not end it
            stack.callback(quit_engine, engine)
            return engine

        def static(
            argv: list[str], options: Mapping[str, chess.engine.ConfigValue]
        ) -> StaticEvaluator:
            evaluator = StaticEvaluator(argv, options)
            stack.callback(evaluator.close)
            return evaluator

        # Cutoff first: a bad option is said before Stockfish starts.
        cut = search(cutoff)
        try:
            values = uci_option_values(cutoff_options, cut.options)
        except ValueError as exc:
            raise UsageError(f"--cutoff-option: the engine has {exc}") from None
        cut.configure(values)
        cut_eval = static(cutoff, values)
        try:
            # Which evaluation the options gave, and a network that did not load, now.
            _, evaluation = cutoff_static(cut_eval.evaluate(chess.Board()))
        except ValueError as exc:
            raise EngineMoveError(f"cutoff: {exc}") from None
        sf = search(stockfish)
        sf_eval = static(stockfish, {})
        yield Engines(sf, sf_eval, cut, cut_eval, evaluation)


def measure_points(points: Sequence[Mapping[str, Any]], engines: Engines) -> list[dict[str, Any]]:
    """Every turning point with its six figures (progress on stderr on a terminal)."""
    positions = []
    for game, point in enumerate(tqdm(points, unit="position", disable=None, desc=PROG)):
        loser = point["loser_score"]
        row = {key: point[key] for key in ("round", "ply", "phase", "winner", "loser", "fen")}
        row["winner_search"] = point["winner_score"]
        row.update(engines.measure(chess.Board(point["fen"]), game))
        row["loser_search"] = None if loser is None else -loser
        positions.append(row)
    return positions


def default_stockfish() -> Optional[str]:
    """Stockfish on the PATH, or where Debian installs it."""
    return next(filter(None, (shutil.which(path) for path in STOCKFISH_PATHS)), None)


def signed(value: Optional[float]) -> str:
    return "n/a" if value is None else f"{value:+.2f}"


def format_report(out: Mapping[str, Any]) -> str:
    """The summary of ``out`` (``main``'s JSON document) as text."""
    lines = [
        f"{out['lost']} games lost by {out['loser']}, {out['with_turning_point']} with a "
        f"turning point (the winner's score at or above +{out['margin']:.2f} from it to "
        "the end)",
    ]
    if out["with_turning_point"]:
        lines.append("at the turning points, from the winner's side (median, positions):")
        for key, label in FIGURES:
            figure = out["summary"][key]
            line = f"  {label:<42} {signed(figure['median']):>7} {figure['positions']:>5}"
            if key in STATIC_FIGURES:
                line += f"   +{CLEAR_PAWNS:.2f} or more: {figure['clear']} of {figure['positions']}"
            lines.append(line)
        lines.append(f"Cutoff evaluates with: {out['cutoff_evaluation']}")
    return "\n".join(lines)


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = ToolParser(
        prog=PROG,
        description="What Stockfish's and Cutoff's evaluations (depth 1, static) said at "
        "the turning points of one engine's lost games, beside the players' own scores.",
    )
    parser.add_argument("pgn", nargs="+", help="match PGN files (as cutoff-match writes them)")
    parser.add_argument("--loser", required=True, help="the engine whose lost games are studied")
    parser.add_argument(
        "--margin",
        type=float,
        default=DEFAULT_MARGIN,
        help=f"pawns the winner's score must stay at or above (default {DEFAULT_MARGIN})",
    )
    parser.add_argument("--stockfish", metavar="PATH", help="Stockfish (default: on the PATH)")
    parser.add_argument(
        "--cutoff",
        metavar="CMD",
        default=f"{sys.executable} -m engine",
        help="Cutoff's command (default: python -m engine, this checkout's)",
    )
    parser.add_argument(
        "--cutoff-option",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a UCI option for Cutoff (repeatable), e.g. EvalFile=PATH",
    )
    parser.add_argument(
        "--json", action="store_true", help="print JSON (with every position) instead"
    )
    args = parser.parse_args(argv)
    if not args.margin > 0:
        parser.error(f"--margin must be positive, not {args.margin}")
    options: dict[str, str] = {}
    for text in args.cutoff_option:
        name, equals, value = text.partition("=")
        if not equals or not name.strip():
            parser.error(f"--cutoff-option takes NAME=VALUE, got {text!r}")
        options[name.strip()] = value.strip()
    try:
        cutoff = engine_command(args.cutoff)
    except UsageError as exc:
        parser.error(str(exc).replace("--engine", "--cutoff"))
    stockfish = args.stockfish or default_stockfish()
    if stockfish is None:
        parser.error("no stockfish found (apt install stockfish), give --stockfish PATH")
    missing = first_missing(args.pgn)
    if missing is not None:
        print(f"{PROG}: error: {missing}: no such file", file=sys.stderr)
        return EXIT_FAILED
    on_error = LineReport(PROG)
    try:
        report = read_files(args.pgn, args.margin, on_error)
    except OSError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return EXIT_FAILED
    if args.loser not in report.engines:
        players = ", ".join(sorted(report.engines)) or "none"
        print(f"{PROG}: error: no games of {args.loser!r} (players: {players})", file=sys.stderr)
        return EXIT_FAILED
    points = [p for p in report.points if p["loser"] == args.loser]
    positions: list[dict[str, Any]] = []
    evaluation = ""
    if points:
        try:
            with started([stockfish], cutoff, options) as engines:
                positions = measure_points(points, engines)
                evaluation = engines.cutoff_evaluation
        except REPORTED_FAILURES as exc:
            return report_failure(PROG, exc)
    out = {
        "games": report.games,
        "skipped": report.skipped,
        "margin": args.margin,
        "loser": args.loser,
        "lost": report.engines[args.loser].losses,
        "with_turning_point": len(points),
        "cutoff_evaluation": evaluation,
        "summary": summarise(positions),
        "positions": positions,
    }
    print(json.dumps(out, indent=2) if args.json else format_report(out))
    return EXIT_FAILED if on_error.count else 0


if __name__ == "__main__":
    sys.exit(main())
