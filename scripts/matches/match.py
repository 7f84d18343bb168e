"""Engine-vs-engine match runner: two UCI engines, colour-swapped game pairs, Elo and SPRT.

Responsible for: parsing the command line (engines with their options and limits,
time control, openings, adjudication, SPRT), starting the engines through python-chess's
asyncio API (``chess.engine``), playing the games with its own clocks and watchdogs,
classifying every game end (natural end, adjudication, time forfeit, illegal move,
crash, stall), writing each game to PGN with its reason, printing progress to stderr and
a summary (text or JSON) at the end.

All numbers about strength come from ``stats`` (pure numpy); this module must not
compute statistics itself, must not hide a fault (every one is counted and reported),
and must not print a traceback for bad input (one line and exit status 1). It does not
import the Cutoff engine: engines are only ever commands.

Ctrl-C (SIGINT) and SIGTERM end the engines (``quit``, then a kill after a second),
keep the PGN of the finished games and print the summary of those games; a game still
in progress is not counted. The engines run in their own process group, so that a
Ctrl-C in the terminal reaches only this runner and is not scored as engine crashes.

Exit status: 0 match finished (or stopped by the SPRT), 1 bad input (including an
opening whose game is already over) or an engine that cannot start, 2 match stopped
early by an engine fault (a crash without ``--recover``, or an engine that cannot be
restarted), 130 interrupted by Ctrl-C (SIGINT), 143 terminated by SIGTERM.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import datetime
import io
import json
import logging
import math
import os
import random
import re
import shlex
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, TextIO

import chess
import chess.engine
import chess.pgn

from ..common import ToolParser
from . import stats

DEFAULT_OPENINGS = Path(__file__).resolve().parent / "openings" / "noob3_500.epd"

# Seconds an engine gets to answer `uci` with `uciok` (python-chess waits 10 s, cutechess 35 s;
# a Python engine on a loaded machine needs more than the former).
STARTUP_TIMEOUT_S = 30.0
# Seconds an engine gets to exit after `quit` before it is killed (cutechess waits 5 s).
QUIT_TIMEOUT_S = 5.0
# The same when the runner is interrupted: supervisors follow SIGTERM with SIGKILL after
# a grace period (often 10 s), and an engine deep in a search may not read `quit` at all.
INTERRUPT_QUIT_TIMEOUT_S = 1.0
# Signals that stop the match with a summary of the games played.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)
# Extra seconds beyond the time budget before a silent engine counts as stalled.
DEFAULT_STALL_TIMEOUT_S = 10.0
# The same when no clock limits the move (depth / nodes only): searches may be long.
DEFAULT_STALL_TIMEOUT_UNTIMED_S = 60.0
# Seconds an engine may overrun its clock (or movetime) before it loses on time.
DEFAULT_MARGIN_S = 0.1
# Stand-in for a mate score in centipawns, for adjudication.
MATE_CP = 100_000

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

# Termination tag values (PGN standard words where one fits) per fault kind.
FAULT_TERMINATION = {
    "time forfeit": "time forfeit",
    "illegal move": "rules infraction",
    "crash": "abandoned",
    "stall": "stalled connection",
}


class MatchError(Exception):
    """Bad input or an engine that cannot be used; reported as one line, never a traceback."""


# --------------------------------------------------------------------------- limits


@dataclass(frozen=True)
class TimeControl:
    """A clock: ``base_s`` seconds for every ``moves`` moves (0 = whole game), plus ``inc_s``."""

    moves: int
    base_s: float
    inc_s: float

    def pgn(self) -> str:
        base = _fmt_seconds(self.base_s)
        text = f"{self.moves}/{base}" if self.moves else base
        return f"{text}+{_fmt_seconds(self.inc_s)}" if self.inc_s else text


def _fmt_seconds(value: float) -> str:
    return f"{value:g}"


_TC_RE = re.compile(r"^(?:(\d+)/)?(\d+(?:\.\d+)?|\d*\.\d+)(?:\+(\d+(?:\.\d+)?|\d*\.\d+))?$")


def parse_tc(text: str) -> TimeControl:
    """``base+inc`` (seconds), ``moves/base`` or ``moves/base+inc``."""
    match = _TC_RE.match(text.strip())
    if not match:
        raise MatchError(f"bad time control {text!r} (expected e.g. 10+0.1, 40/10 or 40/10+0.1)")
    moves = int(match.group(1)) if match.group(1) else 0
    base = float(match.group(2))
    inc = float(match.group(3)) if match.group(3) else 0.0
    if base <= 0 or (match.group(1) is not None and moves <= 0):
        raise MatchError(f"bad time control {text!r}: base time and move count must be positive")
    return TimeControl(moves, base, inc)


@dataclass(frozen=True)
class Limits:
    """What bounds one engine's moves; any combination, the first one reached stops it."""

    tc: Optional[TimeControl] = None
    movetime_s: Optional[float] = None
    depth: Optional[int] = None
    nodes: Optional[int] = None

    def is_empty(self) -> bool:
        return self.tc is None and self.movetime_s is None and self.depth is None and not self.nodes

    def describe(self) -> str:
        parts = []
        if self.tc:
            parts.append(f"tc {self.tc.pgn()}")
        if self.movetime_s is not None:
            parts.append(f"movetime {_fmt_seconds(self.movetime_s)}s")
        if self.depth is not None:
            parts.append(f"depth {self.depth}")
        if self.nodes is not None:
            parts.append(f"nodes {self.nodes}")
        return ", ".join(parts)

    def pgn_time_control(self) -> str:
        if self.tc:
            return self.tc.pgn()
        if self.movetime_s is not None:
            return f"1/{_fmt_seconds(self.movetime_s)}"
        return "-"


def _positive_float(text: str, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise MatchError(f"bad {what} {text!r}: not a number") from None
    if not value > 0 or math.isinf(value):
        raise MatchError(f"bad {what} {text!r}: must be positive")
    return value


def _positive_int(text: str, what: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise MatchError(f"bad {what} {text!r}: not an integer") from None
    if value <= 0:
        raise MatchError(f"bad {what} {text!r}: must be positive")
    return value


# --------------------------------------------------------------------------- engines


@dataclass
class EngineSpec:
    """One engine as given on the command line."""

    command: list[str]
    name: Optional[str] = None
    workdir: Optional[str] = None
    options: dict[str, str] = field(default_factory=dict)
    limits: Limits = field(default_factory=Limits)


def parse_engine_spec(text: str, defaults: Limits) -> EngineSpec:
    """Parse ``cmd=... name=... dir=... option.Name=value tc=... st=... depth=N nodes=N``.

    Tokens are split like a shell line, so ``cmd='python -m engine'`` keeps its spaces.
    A string without any ``cmd=`` token is the command itself.
    """
    try:
        tokens = shlex.split(text)
    except ValueError as err:
        raise MatchError(f"bad engine {text!r}: {err}") from None
    if not any(token.startswith("cmd=") for token in tokens):
        tokens = ["cmd=" + text]
    spec = EngineSpec(command=[])
    tc, movetime, depth, nodes = defaults.tc, defaults.movetime_s, defaults.depth, defaults.nodes
    for token in tokens:
        key, sep, value = token.partition("=")
        if not sep:
            raise MatchError(f"bad engine token {token!r} in {text!r} (expected key=value)")
        if key == "cmd":
            try:
                spec.command = shlex.split(value)
            except ValueError as err:
                raise MatchError(f"bad engine command {value!r}: {err}") from None
        elif key == "name":
            spec.name = value
        elif key == "dir":
            spec.workdir = value
        elif key.startswith("option."):
            spec.options[key[len("option.") :]] = value
        elif key == "tc":
            tc = parse_tc(value)
        elif key in ("st", "movetime"):
            movetime = _positive_float(value, "movetime")
        elif key == "depth":
            depth = _positive_int(value, "depth")
        elif key == "nodes":
            nodes = _positive_int(value, "nodes")
        else:
            raise MatchError(f"unknown engine key {key!r} in {text!r}")
    if not spec.command:
        raise MatchError(f"engine {text!r} has an empty command")
    program = spec.command[0]
    # A relative program path means "relative to where the runner was started", even
    # when dir= moves the engine elsewhere (subprocess would resolve it against dir=).
    if os.sep in program and not os.path.isabs(program):
        spec.command[0] = os.path.abspath(program)
    spec.limits = Limits(tc, movetime, depth, nodes)
    if spec.limits.is_empty():
        raise MatchError("no limit for an engine: give --tc, --movetime, --depth or --nodes")
    return spec


class _RecordingUciProtocol(chess.engine.UciProtocol):
    """python-chess's UCI protocol that keeps the engine's last stderr lines for reports."""

    def __init__(self) -> None:
        super().__init__()
        self.stderr_tail: collections.deque[str] = collections.deque(maxlen=3)

    def error_line_received(self, line: str) -> None:
        # Kept for fault reports instead of python-chess's warning per line.
        self.stderr_tail.append(line)
        logging.getLogger("chess.engine").debug("%s: stderr >> %s", self, line)


class EngineProcess:
    """One running engine process, restartable, with its display name."""

    def __init__(self, spec: EngineSpec, name: str) -> None:
        self.spec = spec
        self.name = name
        self.transport: Optional[asyncio.SubprocessTransport] = None
        self.protocol: Optional[_RecordingUciProtocol] = None

    def proto(self) -> _RecordingUciProtocol:
        if self.protocol is None:
            raise chess.engine.EngineTerminatedError("engine not started")
        return self.protocol

    async def start(self) -> None:
        """Spawn, handshake and configure; raise MatchError with the reason on failure."""
        what = f"engine {self.name!r} ({shlex.join(self.spec.command)})"
        try:
            # setpgrp: a Ctrl-C in the terminal goes to the whole foreground process
            # group; the runner ends its engines itself, after recording the games.
            transport, protocol = await _RecordingUciProtocol.popen(
                self.spec.command, cwd=self.spec.workdir, stderr=subprocess.PIPE, setpgrp=True
            )
        except OSError as err:
            raise MatchError(f"{what} cannot be started: {err.strerror or err}") from None
        self.transport, self.protocol = transport, protocol
        try:
            await asyncio.wait_for(protocol.initialize(), STARTUP_TIMEOUT_S)
            await protocol.configure(self._option_values(protocol))
        except asyncio.TimeoutError:
            self.kill()
            raise MatchError(f"{what} sent no uciok within {STARTUP_TIMEOUT_S:g}s") from None
        except chess.engine.EngineError as err:
            tail = _stderr_hint(protocol)
            self.kill()
            raise MatchError(f"{what} failed during start-up: {err}{tail}") from None

    def _option_values(
        self, protocol: chess.engine.UciProtocol
    ) -> dict[str, chess.engine.ConfigValue]:
        values: dict[str, chess.engine.ConfigValue] = {}
        for name, raw in self.spec.options.items():
            option = protocol.options.get(name)
            if option is None:
                known = ", ".join(protocol.options) or "none"
                raise chess.engine.EngineError(f"no option {name!r} (options: {known})")
            if option.type == "check":
                # python-chess treats any non-empty string but "false" as true.
                values[name] = raw.strip().lower() in ("true", "1", "yes", "on")
            else:
                values[name] = raw
        return values

    async def new_game(self, game: object, timeout_s: float) -> None:
        """Send ucinewgame and wait for readyok, so that this work is not on the clock."""
        protocol = self.proto()
        if hasattr(protocol, "_ucinewgame"):
            # python-chess would otherwise send ucinewgame inside the first play() and
            # the engine's reset work would count against its clock (cutechess and
            # fastchess start the clock only after readyok).
            protocol._ucinewgame()
            protocol.game = game
        await asyncio.wait_for(protocol.ping(), timeout_s)

    def kill(self) -> None:
        if self.transport is not None:
            self.transport.close()
        self.transport = None
        self.protocol = None

    async def quit(self, timeout_s: float = QUIT_TIMEOUT_S) -> None:
        protocol = self.protocol
        if protocol is not None and not protocol.returncode.done():
            with contextlib.suppress(asyncio.TimeoutError, chess.engine.EngineError):
                await asyncio.wait_for(protocol.quit(), timeout_s)
        self.kill()

    def exit_description(self) -> str:
        """Exit code and last stderr line of a dead engine, for the crash report."""
        protocol = self.protocol
        if protocol is None:
            return "not running"
        code = "exit code ?"
        if protocol.returncode.done():
            code = f"exit code {protocol.returncode.result()}"
        return code + _stderr_hint(protocol)


def _stderr_hint(protocol: _RecordingUciProtocol) -> str:
    if not protocol.stderr_tail:
        return ""
    return f"; last stderr: {protocol.stderr_tail[-1].strip()[:200]}"


# --------------------------------------------------------------------------- openings


@dataclass(frozen=True)
class Opening:
    """A starting position: the root board plus the book moves played from it."""

    root_fen: str
    moves: tuple[chess.Move, ...]
    label: str

    def board(self) -> chess.Board:
        board = chess.Board(self.root_fen)
        for move in self.moves:
            board.push(move)
        return board


def load_openings(path: str) -> list[Opening]:
    """Read EPD/FEN lines or PGN games; raise MatchError naming the first bad entry."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8", errors="replace")
    except OSError as err:
        raise MatchError(f"cannot read openings {path!r}: {err.strerror or err}") from None
    openings = _load_pgn(text, path) if file.suffix.lower() == ".pgn" else _load_epd(text, path)
    if not openings:
        raise MatchError(f"no opening positions in {path!r}")
    return openings


def _load_epd(text: str, path: str) -> list[Opening]:
    openings = []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        try:
            board = chess.Board(line)
        except ValueError:
            try:
                board, _ = chess.Board.from_epd(line)
            except ValueError as err:
                raise MatchError(f"{path}:{number}: not a FEN/EPD position: {err}") from None
        if not board.is_valid():
            raise MatchError(f"{path}:{number}: invalid position {board.fen()}")
        _check_not_over(board, f"{path}:{number}")
        openings.append(Opening(board.fen(), (), f"{path}:{number}"))
    return openings


def _check_not_over(board: chess.Board, where: str) -> None:
    """MatchError if the game would end before a move: it would be scored, unplayed."""
    outcome = board.outcome(claim_draw=True)
    if outcome is not None:
        reason = outcome.termination.name.lower().replace("_", " ")
        raise MatchError(f"{where}: the game is already over ({reason}): {board.fen()}")


_NON_SPACE = re.compile(r"\S")


def _load_pgn(text: str, path: str) -> list[Opening]:
    openings = []
    stream = io.StringIO(text)
    number = 0
    # Line of the stream position, counted incrementally (a book may hold many games).
    offset, line = 0, 1
    while True:
        found = _NON_SPACE.search(text, offset)
        start = found.start() if found else len(text)
        first_line = line + text.count("\n", offset, start)
        game = chess.pgn.read_game(stream)
        if game is None:
            break
        number += 1
        line = first_line + text.count("\n", start, stream.tell())
        offset = stream.tell()
        where = f"{path}:{first_line}: game {number}"
        if game.errors:
            raise MatchError(f"{where}: {game.errors[0]}")
        root = game.board()
        if not root.is_valid():
            raise MatchError(f"{where}: invalid start position {root.fen()}")
        _check_not_over(game.end().board(), where)
        openings.append(Opening(root.fen(), tuple(game.mainline_moves()), f"{path}#{number}"))
    return openings


# --------------------------------------------------------------------------- configuration


@dataclass(frozen=True)
class Adjudication:
    """Draw: after move ``draw_movenumber``, |score| <= ``draw_score_cp`` for
    ``draw_movecount`` moves of each engine. Resign: the loser's scores <= -R and the
    winner's >= R for ``resign_movecount`` moves each. ``max_moves``: draw after N moves."""

    draw_movenumber: Optional[int] = None
    draw_movecount: int = 0
    draw_score_cp: int = 0
    resign_movecount: Optional[int] = None
    resign_score_cp: int = 0
    max_moves: Optional[int] = None


@dataclass
class Config:
    specs: list[EngineSpec]
    openings: list[Opening]
    openings_path: Optional[str]
    opening_order: list[int]
    games: int
    concurrency: int
    adjudication: Adjudication
    margin_s: float
    stall_timeout_s: Optional[float]
    recover: bool
    sprt: Optional[tuple[float, float]]
    alpha: float
    beta: float
    pgn_path: Optional[str]
    json_path: Optional[str]
    event: str
    progress: bool


def build_parser() -> argparse.ArgumentParser:
    # Usage errors exit with 1, like every other bad input (the runner's documented
    # contract; 2 means a match stopped by an engine fault).
    parser = ToolParser(
        prog="match.py",
        usage_status=1,
        description="Play a match between two UCI engines in colour-swapped pairs; report "
        "W/D/L, Elo with a 95%% interval, LOS, pentanomial counts and an optional SPRT.",
        epilog="Engine spec: \"cmd='python -m engine' name=dev dir=../base option.Hash=64 "
        'tc=10+0.1 st=0.1 depth=3 nodes=20000" (per-engine limits override the global ones).',
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
    parser.add_argument("--concurrency", type=int, help="games played at the same time")
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
    if len(args.engine) != 2:
        raise MatchError(f"give exactly two --engine options (got {len(args.engine)})")
    defaults = Limits(
        tc=parse_tc(args.tc) if args.tc else None,
        movetime_s=_positive_float(str(args.movetime), "--movetime")
        if args.movetime is not None
        else None,
        depth=_positive_int(str(args.depth), "--depth") if args.depth is not None else None,
        nodes=_positive_int(str(args.nodes), "--nodes") if args.nodes is not None else None,
    )
    specs = [parse_engine_spec(text, defaults) for text in args.engine]

    if args.games is not None:
        games = _positive_int(str(args.games), "--games")
    else:
        games = 2 * _positive_int(str(args.rounds if args.rounds is not None else 1), "--rounds")

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

    concurrency = _positive_int(str(args.concurrency or 1), "--concurrency")
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
            _positive_int(str(args.maxmoves), "--maxmoves"),
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
            stats.sprt_bounds(alpha, beta)
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
    )


# --------------------------------------------------------------------------- one game


@dataclass(frozen=True)
class GameJob:
    number: int  # 1-based game number
    pair: int  # 0-based pair index; both games of a pair use the same opening
    first_is_white: bool  # whether engine 0 (the first --engine) has White
    opening: Opening


@dataclass
class GameRecord:
    job: GameJob
    result: str  # "1-0", "0-1" or "1/2-1/2"
    termination: str  # PGN Termination tag
    reason: str  # human-readable, also the Reason tag
    category: str  # reason without details, for the summary's counts
    fault_slot: Optional[int]  # engine index (0/1) that caused a fault, if any
    fault_kind: Optional[str]
    game: chess.pgn.Game

    @property
    def first_score(self) -> float:
        """Points of engine 0 in this game."""
        if self.result == "1/2-1/2":
            return 0.5
        white_won = self.result == "1-0"
        return 1.0 if white_won == self.job.first_is_white else 0.0


def _score_cp(info: chess.engine.InfoDict, mover: chess.Color) -> Optional[int]:
    score = info.get("score")
    if score is None:
        return None
    return score.pov(mover).score(mate_score=MATE_CP)


def _move_comment(info: chess.engine.InfoDict, mover: chess.Color, elapsed_s: float) -> str:
    parts = []
    score = info.get("score")
    if score is not None:
        pov = score.pov(mover)
        mate = pov.mate()
        text = (f"+M{mate}" if mate > 0 else f"-M{-mate}") if mate is not None else ""
        if mate is None:
            cp = pov.score()
            text = f"{(cp or 0) / 100:+.2f}"
        depth = info.get("depth")
        parts.append(f"{text}/{depth}" if depth is not None else text)
    parts.append(f"{elapsed_s:.3f}s")
    return " ".join(parts)


def adjudicate(
    board: chess.Board, evals: Sequence[tuple[chess.Color, Optional[int]]], adj: Adjudication
) -> Optional[tuple[str, str]]:
    """Result and reason if the scores so far (mover, cp from the mover's view) end the game."""
    if adj.resign_movecount:
        window = list(evals[-2 * adj.resign_movecount :])
        if len(window) == 2 * adj.resign_movecount and all(cp is not None for _, cp in window):
            for loser in (chess.WHITE, chess.BLACK):
                loser_says = [cp for colour, cp in window if colour == loser]
                winner_says = [cp for colour, cp in window if colour != loser]
                if all(cp is not None and cp <= -adj.resign_score_cp for cp in loser_says) and all(
                    cp is not None and cp >= adj.resign_score_cp for cp in winner_says
                ):
                    result = "0-1" if loser == chess.WHITE else "1-0"
                    side = "White" if loser == chess.WHITE else "Black"
                    return result, f"adjudication: {side} resigns"
    if adj.draw_movenumber is not None and board.fullmove_number >= adj.draw_movenumber:
        window = list(evals[-2 * adj.draw_movecount :])
        if len(window) == 2 * adj.draw_movecount and all(
            cp is not None and abs(cp) <= adj.draw_score_cp for _, cp in window
        ):
            return "1/2-1/2", "adjudication: draw"
    if adj.max_moves is not None and len(evals) >= 2 * adj.max_moves:
        return "1/2-1/2", "adjudication: max moves"
    return None


_ILLEGAL_RE = re.compile(r"(?:illegal|invalid) uci[^']*'([^']*)'")


def _uci_limit(
    limits: dict[chess.Color, Limits],
    clocks: dict[chess.Color, float],
    moves_made: dict[chess.Color, int],
    mover: chess.Color,
) -> chess.engine.Limit:
    """The `go` limits for the side to move: its own limits plus the clocks of both sides."""
    own = limits[mover]
    limit = chess.engine.Limit(time=own.movetime_s, depth=own.depth, nodes=own.nodes)
    if own.tc is None:
        return limit
    # The opponent's clock is sent too when it has one, as GUIs do.
    for colour, lim in limits.items():
        if lim.tc is None:
            continue
        if colour == chess.WHITE:
            limit.white_clock, limit.white_inc = clocks[colour], lim.tc.inc_s
        else:
            limit.black_clock, limit.black_inc = clocks[colour], lim.tc.inc_s
    if own.tc.moves:
        limit.remaining_moves = own.tc.moves - moves_made[mover] % own.tc.moves
    return limit


async def play_game(job: GameJob, engines: Sequence[EngineProcess], cfg: Config) -> GameRecord:
    """Play one game; every way it can end becomes a GameRecord, never an exception."""
    white_slot = 0 if job.first_is_white else 1
    slot_of = {chess.WHITE: white_slot, chess.BLACK: 1 - white_slot}
    board = job.opening.board()
    game = chess.pgn.Game()
    game.setup(chess.Board(job.opening.root_fen))
    node: chess.pgn.GameNode = game
    for move in job.opening.moves:
        node = node.add_variation(move)
    limits = {colour: engines[slot].spec.limits for colour, slot in slot_of.items()}
    clocks: dict[chess.Color, float] = {}
    moves_made: dict[chess.Color, int] = {chess.WHITE: 0, chess.BLACK: 0}
    for colour, lim in limits.items():
        if lim.tc:
            clocks[colour] = lim.tc.base_s
    evals: list[tuple[chess.Color, Optional[int]]] = []
    token = object()

    def finish(
        result: str,
        termination: str,
        reason: str,
        category: str,
        fault: Optional[tuple[chess.Color, str]] = None,
    ) -> GameRecord:
        fault_slot = slot_of[fault[0]] if fault else None
        _fill_headers(game, job, engines, white_slot, cfg, result, termination, reason, board)
        last = game.end()
        last.comment = f"{last.comment}, {reason}" if last.comment else reason
        return GameRecord(
            job,
            result,
            termination,
            reason,
            category,
            fault_slot,
            fault[1] if fault else None,
            game,
        )

    def forfeit(loser: chess.Color, kind: str, detail: str = "", why: str = "") -> GameRecord:
        name = engines[slot_of[loser]].name
        result = "0-1" if loser == chess.WHITE else "1-0"
        reason = f"{kind}{detail} by {name}" + (f" ({why})" if why else "")
        return finish(result, FAULT_TERMINATION[kind], reason, kind, (loser, kind))

    untimed_stall = cfg.stall_timeout_s or DEFAULT_STALL_TIMEOUT_UNTIMED_S
    for colour in (chess.WHITE, chess.BLACK):
        engine = engines[slot_of[colour]]
        try:
            await engine.new_game(token, untimed_stall)
        except asyncio.TimeoutError:
            engine.kill()
            return forfeit(colour, "stall", why="no readyok after ucinewgame")
        except chess.engine.EngineError:
            return forfeit(colour, "crash", why=engine.exit_description())

    while True:
        outcome = board.outcome(claim_draw=True)
        if outcome is not None:
            reason = outcome.termination.name.lower().replace("_", " ")
            return finish(outcome.result(), "normal", reason, reason)

        mover = board.turn
        engine = engines[slot_of[mover]]
        lim = limits[mover]
        limit = _uci_limit(limits, clocks, moves_made, mover)
        budget = clocks[mover] if lim.tc else (lim.movetime_s or 0.0)
        if lim.tc and lim.movetime_s is not None:
            budget = min(budget, lim.movetime_s)
        timed = lim.tc is not None or lim.movetime_s is not None
        stall_extra = cfg.stall_timeout_s or (
            DEFAULT_STALL_TIMEOUT_S if timed else DEFAULT_STALL_TIMEOUT_UNTIMED_S
        )
        deadline = budget + cfg.margin_s + stall_extra if timed else stall_extra

        started = time.monotonic()
        try:
            played = await asyncio.wait_for(
                engine.proto().play(
                    board, limit, game=token, info=chess.engine.INFO_BASIC | chess.engine.INFO_SCORE
                ),
                deadline,
            )
        except asyncio.TimeoutError:
            engine.kill()
            return forfeit(mover, "stall", why=f"no bestmove within {deadline:.1f}s")
        except chess.engine.EngineTerminatedError:
            return forfeit(mover, "crash", why=engine.exit_description())
        except chess.engine.EngineError as err:
            found = _ILLEGAL_RE.search(str(err))
            return forfeit(mover, "illegal move", f" {found.group(1) if found else str(err)}")
        elapsed = time.monotonic() - started

        best = played.move
        if best is None or best not in board.legal_moves:
            return forfeit(mover, "illegal move", f" {best.uci() if best else '(none)'}")

        if lim.tc:
            left = clocks[mover] - elapsed
            if left < -cfg.margin_s:
                return forfeit(
                    mover, "time forfeit", why=f"used {elapsed:.3f}s of {clocks[mover]:.3f}s"
                )
            moves_made[mover] += 1
            # Like fastchess, a small overrun within the margin is not carried over as a
            # negative clock: engines then never receive negative wtime/btime.
            clocks[mover] = max(left, 0.0) + lim.tc.inc_s
            if lim.tc.moves and moves_made[mover] % lim.tc.moves == 0:
                clocks[mover] += lim.tc.base_s
        if lim.movetime_s is not None and elapsed > lim.movetime_s + cfg.margin_s:
            return forfeit(
                mover, "time forfeit", why=f"used {elapsed:.3f}s of movetime {lim.movetime_s:g}s"
            )

        board.push(best)
        node = node.add_variation(best, comment=_move_comment(played.info, mover, elapsed))
        evals.append((mover, _score_cp(played.info, mover)))
        verdict = adjudicate(board, evals, cfg.adjudication)
        if verdict is not None:
            return finish(verdict[0], "adjudication", verdict[1], verdict[1])


def _fill_headers(
    game: chess.pgn.Game,
    job: GameJob,
    engines: Sequence[EngineProcess],
    white_slot: int,
    cfg: Config,
    result: str,
    termination: str,
    reason: str,
    board: chess.Board,
) -> None:
    white, black = engines[white_slot], engines[1 - white_slot]
    headers = game.headers
    headers["Event"] = cfg.event
    headers["Site"] = "?"
    headers["Date"] = datetime.date.today().strftime("%Y.%m.%d")
    headers["Round"] = f"{job.pair + 1}.{(job.number - 1) % 2 + 1}"
    headers["White"] = white.name
    headers["Black"] = black.name
    headers["Result"] = result
    white_tc = white.spec.limits.pgn_time_control()
    black_tc = black.spec.limits.pgn_time_control()
    if white_tc == black_tc:
        headers["TimeControl"] = white_tc
    else:
        headers["WhiteTimeControl"] = white_tc
        headers["BlackTimeControl"] = black_tc
    headers["Termination"] = termination
    headers["Reason"] = reason
    headers["Opening"] = job.opening.label
    headers["PlyCount"] = str(len(board.move_stack))


# --------------------------------------------------------------------------- the match


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
        moves = " ".join(move.uci() for move in record.game.mainline_moves())
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


class Match:
    """Schedules the games on ``concurrency`` workers, each with its own two engines."""

    def __init__(self, cfg: Config, names: list[str]) -> None:
        self.cfg = cfg
        self.names = names
        self.tally = Tally()
        self.jobs = [
            GameJob(
                number=i + 1,
                pair=i // 2,
                first_is_white=i % 2 == 0,
                opening=cfg.openings[cfg.opening_order[(i // 2) % len(cfg.opening_order)]],
            )
            for i in range(cfg.games)
        ]
        self.next_job = 0
        self.stop_reason: Optional[str] = None
        self.aborted = False
        # The name of the signal (SIGINT, SIGTERM) that stopped the match, if one did.
        self.interrupted: Optional[str] = None
        self.games_in_progress = 0
        self.engines: list[EngineProcess] = []
        self.ending_engines: Optional[asyncio.Task[None]] = None
        self.sprt_result: Optional[str] = None
        self.started = time.monotonic()
        self.pgn_file: Optional[TextIO] = None
        self.progress_is_tty = sys.stderr.isatty()

    def take_job(self) -> Optional[GameJob]:
        if self.next_job >= len(self.jobs) or self.aborted or self.interrupted:
            return None
        job = self.jobs[self.next_job]
        # After an SPRT decision only the second game of an already started pair is
        # still played, so that the pentanomial counts stay complete.
        if self.stop_reason is not None and job.number % 2 == 1:
            return None
        self.next_job += 1
        return job

    def abort(self, reason: str) -> None:
        if not self.aborted:
            self.aborted = True
            self.stop_reason = reason

    def interrupt(self, signal_name: str) -> None:
        """Stop the match for a signal: no new game, and every engine is ended now.

        Ending the engines is what stops the games in progress: each pending engine
        call fails, the game returns, and its worker drops it unrecorded. (Cancelling
        the tasks instead is not reliable: asyncio.wait_for before Python 3.12 loses
        a cancellation that arrives as its awaitable completes.)
        """
        if self.interrupted is not None:
            return
        self.interrupted = signal_name
        unfinished = self.games_in_progress
        self.stop_reason = f"interrupted by {signal_name}" + (
            f" ({unfinished} unfinished game{'s' if unfinished != 1 else ''} not counted)"
            if unfinished
            else ""
        )
        self.ending_engines = asyncio.ensure_future(self._end_engines())

    async def _end_engines(self) -> None:
        await asyncio.gather(*(engine.quit(INTERRUPT_QUIT_TIMEOUT_S) for engine in self.engines))

    def record(self, rec: GameRecord) -> None:
        self.tally.add(rec)
        if self.pgn_file is not None:
            print(rec.game, file=self.pgn_file, end="\n\n")
            self.pgn_file.flush()
        if self.cfg.sprt and self.sprt_result is None:
            llr = self.llr()
            lower, upper = stats.sprt_bounds(self.cfg.alpha, self.cfg.beta)
            if llr >= upper:
                self.sprt_result = "H1 accepted"
            elif llr <= lower:
                self.sprt_result = "H0 accepted"
            if self.sprt_result and self.stop_reason is None:
                self.stop_reason = f"SPRT: {self.sprt_result}"
        if self.cfg.progress:
            self.print_progress(rec)

    def llr(self) -> float:
        assert self.cfg.sprt is not None
        elo0, elo1 = self.cfg.sprt
        return stats.llr_pentanomial(self.tally.pentanomial, elo0, elo1)

    def print_progress(self, rec: GameRecord) -> None:
        t = self.tally
        est = self.elo_estimate()
        line = (
            f"[{t.games}/{self.cfg.games}] {self.names[0]} vs {self.names[1]}: "
            f"+{t.wins} ={t.draws} -{t.losses} "
            f"({100.0 * (t.wins + 0.5 * t.draws) / t.games:.1f}%) "
            f"Elo {est.elo:+.1f} +/- {_fmt_error(est.error)}"
        )
        if self.cfg.sprt:
            lower, upper = stats.sprt_bounds(self.cfg.alpha, self.cfg.beta)
            line += f" LLR {self.llr():.2f} ({lower:.2f}, {upper:.2f})"
        faults = sum(sum(counts.values()) for counts in t.faults.values())
        if faults:
            line += f" faults {faults}"
        line += f" | game {rec.job.number}: {rec.result} {rec.reason}"
        if self.progress_is_tty:
            sys.stderr.write("\r\x1b[2K" + line[:200])
        else:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()

    def elo_estimate(self) -> stats.EloEstimate:
        t = self.tally
        if t.pairs:
            return stats.pentanomial_elo(t.pentanomial)
        return stats.trinomial_elo(t.wins, t.draws, t.losses)

    async def worker(self, engines: list[EngineProcess]) -> None:
        try:
            while True:
                job = self.take_job()
                if job is None:
                    return
                for engine in engines:
                    # Only engines we never started or killed ourselves are started here.
                    # One that died on its own between games is left dead on purpose: the
                    # next game reports it as a crash instead of hiding the fault.
                    if engine.protocol is None:
                        try:
                            await engine.start()
                        except MatchError as err:
                            if not self.interrupted:
                                self.abort(f"cannot restart engine: {err}")
                            return
                if self.interrupted:
                    return  # the signal came while an engine was (re)starting
                self.games_in_progress += 1
                rec = await play_game(job, engines, self.cfg)
                self.games_in_progress -= 1
                if self.interrupted:
                    # Ended by interrupt() (the engines were stopped under it), or
                    # finished as the signal came: counted as unfinished either way.
                    return
                self.record(rec)
                if rec.fault_slot is not None:
                    self._after_fault(engines[rec.fault_slot], rec)
        finally:
            timeout_s = INTERRUPT_QUIT_TIMEOUT_S if self.interrupted else QUIT_TIMEOUT_S
            for engine in engines:
                await engine.quit(timeout_s)

    def _after_fault(self, engine: EngineProcess, rec: GameRecord) -> None:
        if rec.fault_kind == "crash" and not self.cfg.recover:
            engine.kill()
            self.abort(
                f"{engine.name} crashed in game {rec.job.number} "
                "(use --recover to restart it and go on)"
            )
        elif rec.fault_kind in ("crash", "stall", "illegal move"):
            # Restart before the next game: its state is unknown after the fault.
            engine.kill()

    async def run(self, first_engines: list[EngineProcess]) -> None:
        if self.cfg.pgn_path:
            try:
                self.pgn_file = open(self.cfg.pgn_path, "a", encoding="utf-8")  # noqa: SIM115
            except OSError as err:
                raise MatchError(
                    f"cannot write PGN {self.cfg.pgn_path!r}: {err.strerror}"
                ) from None
        try:
            engine_sets = [first_engines]
            for _ in range(min(self.cfg.concurrency, len(self.jobs)) - 1):
                engine_sets.append(
                    [EngineProcess(spec, name) for spec, name in zip(self.cfg.specs, self.names)]
                )
            self.engines = [engine for engines in engine_sets for engine in engines]
            await asyncio.gather(*(self.worker(engines) for engines in engine_sets))
            if self.ending_engines is not None:
                await self.ending_engines
        finally:
            if self.pgn_file is not None:
                self.pgn_file.close()
            if self.cfg.progress and self.progress_is_tty:
                sys.stderr.write("\n")


def _fmt_error(error: float) -> str:
    return f"{error:.1f}" if math.isfinite(error) else "inf"


async def start_first_engines(cfg: Config) -> tuple[list[EngineProcess], list[str]]:
    """Start one engine of each kind up front: bad commands fail before any game."""
    engines = [
        EngineProcess(spec, spec.name or f"engine{i + 1}") for i, spec in enumerate(cfg.specs)
    ]
    try:
        for engine in engines:
            await engine.start()
    except BaseException:
        for engine in engines:
            engine.kill()
        raise
    names = []
    for i, engine in enumerate(engines):
        reported = engine.proto().id.get("name", "").strip()
        names.append(cfg.specs[i].name or reported or Path(cfg.specs[i].command[0]).name)
    if names[0] == names[1]:
        names = [f"{names[0]} #1", f"{names[1]} #2"]
    for engine, name in zip(engines, names):
        engine.name = name
    return engines, names


# --------------------------------------------------------------------------- summary


def summary_dict(match: Match) -> dict[str, Any]:
    cfg, t = match.cfg, match.tally
    tri = stats.trinomial_elo(t.wins, t.draws, t.losses)
    penta = stats.pentanomial_elo(t.pentanomial) if t.pairs else None
    best = penta or tri

    def estimate(e: Optional[stats.EloEstimate]) -> Optional[dict[str, Any]]:
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
        lower, upper = stats.sprt_bounds(cfg.alpha, cfg.beta)
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
        "los": stats.los(t.wins, t.losses),
        "pentanomial": list(t.pentanomial),
        "pentanomial_dd": t.pair_dd,
        "pentanomial_wl": t.pair_wl,
        "pairs_identical": t.pair_identical,
        "sprt": sprt,
        "reasons": dict(sorted(t.reasons.items())),
        "faults": {match.names[slot]: dict(t.faults[slot]) for slot in (0, 1)},
        "stopped": match.stop_reason,
        "aborted": match.aborted,
        "interrupted": match.interrupted,
        "openings": cfg.openings_path,
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
    if s["pgn"]:
        lines.append(f"PGN: {s['pgn']}")
    if s["stopped"]:
        lines.append(f"Stopped: {s['stopped']}")
    return "\n".join(lines)


# --------------------------------------------------------------------------- entry point


class MatchInterruptedError(Exception):
    """A stop signal came while the engines were starting: no game, nothing to summarise."""

    def __init__(self, signal_name: str) -> None:
        super().__init__(signal_name)
        self.signal_name = signal_name


class _StopSignals:
    """SIGINT/SIGTERM handlers that stop the run cleanly instead of killing the runner.

    While the engines start, a signal cancels that step (the engines started so far
    are killed); once the match runs, it is handed to ``Match.interrupt``, which ends
    the engines and lets the match return with the games played so far.
    """

    def __init__(self) -> None:
        self.signal_name: Optional[str] = None
        self.task: Optional[asyncio.Future[Any]] = None
        self.match: Optional[Match] = None

    def __enter__(self) -> _StopSignals:
        loop = asyncio.get_running_loop()
        for signum in STOP_SIGNALS:
            # Not on Windows' event loops; Ctrl-C then ends the runner as before.
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(signum, self._received, signum)
        return self

    def __exit__(self, *exc_info: object) -> None:
        loop = asyncio.get_running_loop()
        for signum in STOP_SIGNALS:
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.remove_signal_handler(signum)

    def _received(self, signum: int) -> None:
        if self.signal_name is not None:
            return  # already stopping; the engines have their short quit timeout
        self.signal_name = signal.Signals(signum).name
        if self.match is not None:
            self.match.interrupt(self.signal_name)
        elif self.task is not None:
            self.task.cancel()


async def run_match(cfg: Config) -> Match:
    """Play the match; a stop signal ends it early with the games played so far."""
    with _StopSignals() as stop:
        stop.task = asyncio.ensure_future(start_first_engines(cfg))
        try:
            first_engines, names = await stop.task
        except asyncio.CancelledError:
            if stop.signal_name is None:
                raise
            raise MatchInterruptedError(stop.signal_name) from None
        if stop.signal_name is not None:
            # The signal came as the start-up finished (its cancellation was lost).
            for engine in first_engines:
                await engine.quit(INTERRUPT_QUIT_TIMEOUT_S)
            raise MatchInterruptedError(stop.signal_name)
        match = Match(cfg, names)
        stop.match = match
        await match.run(first_engines)
    return match


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.debug else logging.CRITICAL,
        format="%(asctime)s %(message)s",
        stream=sys.stderr,
    )
    try:
        cfg = build_config(args)
        match = asyncio.run(run_match(cfg))
    except MatchError as err:
        print(f"match.py: error: {err}", file=sys.stderr)
        return 1
    except MatchInterruptedError as stop:
        print(f"match.py: interrupted by {stop.signal_name} before any game", file=sys.stderr)
        return 128 + signal.Signals[stop.signal_name].value
    except KeyboardInterrupt:
        print("match.py: interrupted", file=sys.stderr)
        return 128 + signal.SIGINT
    summary = summary_dict(match)
    text = format_summary(summary)
    if cfg.json_path == "-":
        print(text, file=sys.stderr)
        print(json.dumps(summary, indent=2))
    else:
        print(text)
        if cfg.json_path:
            try:
                Path(cfg.json_path).write_text(
                    json.dumps(summary, indent=2) + "\n", encoding="utf-8"
                )
            except OSError as err:
                print(
                    f"match.py: error: cannot write {cfg.json_path!r}: {err.strerror}",
                    file=sys.stderr,
                )
                return 1
    if match.interrupted is not None:
        return 128 + signal.Signals[match.interrupted].value
    return 2 if match.aborted else 0


if __name__ == "__main__":
    sys.exit(main())
