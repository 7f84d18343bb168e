"""Run a UCI engine over an EPD test suite and count the solved positions.

A position is solved when the engine's move is one of the ``bm`` moves (and none
of the ``am`` moves). Each position gets a fixed time (``--time``), depth or node
count. The engine is any UCI command (default: Cutoff as ``python -m engine``), with
UCI options set by ``--option NAME=VALUE``. Suites that grade moves the way the
Strategic Test Suite (STS) does, ``c9`` a list of UCI moves and ``c8`` their points
(10 for the best), are also scored in points: the move played earns its points, any
other move none. This script measures; it must not change the engine.

Bad input never ends the run with a traceback: a bad line (not UTF-8, not EPD, an
unplayable position, no ``bm``/``am``) gets one line on stderr naming the file and
line and is skipped; the other positions are still run. An engine that dies, or
stops answering, ends the run, but the summary of what was solved is still printed,
as it is after Ctrl-C or SIGTERM.

Exit status: 0 every position was run; 1 something failed on the way (a bad line
was skipped, the engine could not start, made an error or died); 2 usage error (bad
option value, unreadable or empty suite file); 130 interrupted (Ctrl-C); 143
terminated (SIGTERM).

Usage: cutoff-epd SUITE.epd [--time 1.0 | --depth N | --nodes N] [--engine CMD]
                  [--option NAME=VALUE ...] [--limit N]
(in a checkout: python -m scripts.matches.epd_suite ...)
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import math
import os
import shlex
import signal
import stat
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from types import FrameType
from typing import Optional, Union

import chess
import chess.engine

from engine.play.boards import unplayable_problems

from ..common import EXIT_USAGE, ToolParser, UsageError, engine_command, uci_option_values

PROG = "cutoff-epd"
"""The tool's name in its usage and messages: the console script's."""

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 128 + signal.SIGTERM

MAX_SUITE_BYTES = 64 << 20
"""Largest suite read (the biggest published suites are a few hundred KB)."""

# Seconds the engine gets to answer `uci` (python-chess's default of 10 s is short
# for a Python engine on a loaded machine), and to exit after `quit`.
ENGINE_TIMEOUT_S = 30.0


class TerminatedError(Exception):
    """SIGTERM, raised in the main thread so that the summary is still printed."""


def _raise_terminated(signum: int, frame: Optional[FrameType]) -> None:
    raise TerminatedError


Grading = tuple[tuple[chess.Move, int], ...]
"""STS-style points: (move, points) pairs."""


@dataclass(frozen=True)
class SuiteEntry:
    """One usable suite line: the board and what counts as solving it."""

    line_number: int
    board: chess.Board
    best: tuple[chess.Move, ...]
    avoid: tuple[chess.Move, ...]
    name: str
    points: Grading = ()
    """STS grading (``c9`` moves, ``c8`` points); empty when the line has none."""

    def points_of(self, move: Optional[chess.Move]) -> int:
        return next((value for graded, value in self.points if graded == move), 0)


def graded_moves(board: chess.Board, ops: Mapping[str, object]) -> Grading:
    """The ``c9``/``c8`` grading of an EPD line as (move, points); ``ValueError`` if bad."""
    moves, points = ops.get("c9"), ops.get("c8")
    if moves is None and points is None:
        return ()
    # Unquoted, a single move or number is parsed by python-chess as such.
    if isinstance(moves, chess.Move):
        moves = moves.uci()
    if isinstance(points, int):
        points = str(points)
    if not isinstance(moves, str) or not isinstance(points, str):
        raise ValueError("c8 (points) and c9 (UCI moves) must both be given, as strings")
    move_list, point_list = moves.split(), points.split()
    if len(move_list) != len(point_list) or not move_list:
        raise ValueError(f"c9 has {len(move_list)} moves but c8 {len(point_list)} points")
    graded = []
    for text, value in zip(move_list, point_list):
        try:
            move = chess.Move.from_uci(text)
        except ValueError:
            raise ValueError(f"c9: {text!r} is not a UCI move") from None
        if move not in board.legal_moves:
            raise ValueError(f"c9: {text} is not legal here")
        if not value.isdigit():
            raise ValueError(f"c8: {value!r} is not a number of points")
        graded.append((move, int(value)))
    return tuple(graded)


def parse_line(line: str, line_number: int) -> SuiteEntry:
    """A position from one EPD line; ``ValueError`` with a one-line reason if unusable."""
    board, ops = chess.Board.from_epd(line)
    # Positions an engine cannot be asked about: python-chess would send them, and an
    # engine may crash on them (Stockfish does on a missing king).
    problems = unplayable_problems(board)
    if problems:
        raise ValueError(f"unplayable position: {problems}")
    if not any(board.generate_legal_moves()):
        raise ValueError("no legal moves (checkmate or stalemate)")
    best, avoid = ops.get("bm", []), ops.get("am", [])
    if not isinstance(best, list) or not isinstance(avoid, list):
        raise ValueError("bm and am must be moves")
    if not best and not avoid:
        # Without them every move would count as solved.
        raise ValueError("no bm or am operation")
    points = graded_moves(board, ops)
    return SuiteEntry(line_number, board, tuple(best), tuple(avoid), str(ops.get("id", "")), points)


def read_suite(path: str) -> list[Union[SuiteEntry, str]]:
    """Each non-blank line as a SuiteEntry, or as the one-line error for a bad line.

    Lines are decoded one by one, so a stray non-UTF-8 byte costs one line, not the
    file. Raises ``OSError`` if the file cannot be read, and ``ValueError`` if it
    is not a regular file (``/dev/zero`` would never end) or is too large.
    """
    with open(path, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise ValueError("not a regular file")
        data = handle.read(MAX_SUITE_BYTES + 1)
    if len(data) > MAX_SUITE_BYTES:
        raise ValueError(f"larger than {MAX_SUITE_BYTES >> 20} MB: not an EPD suite")
    items: list[Union[SuiteEntry, str]] = []
    for number, raw in enumerate(data.splitlines(), start=1):
        where = f"{path} line {number}"
        try:
            line = raw.decode("utf-8").strip()
        except UnicodeDecodeError as error:
            items.append(f"{where}: not UTF-8 text (byte 0x{raw[error.start]:02x})")
            continue
        if not line:
            continue
        try:
            items.append(parse_line(line, number))
        except ValueError as error:
            items.append(f"{where}: {error}")
    return items


def build_parser() -> argparse.ArgumentParser:
    parser = ToolParser(prog=PROG, description=(__doc__ or "").splitlines()[0])
    parser.add_argument("suite", help="EPD file with bm/am operations")
    limits = parser.add_mutually_exclusive_group()
    limits.add_argument("--time", type=float, default=1.0, help="seconds per position")
    limits.add_argument("--depth", type=int, default=None, help="fixed depth instead of time")
    limits.add_argument("--nodes", type=int, default=None, help="fixed nodes instead of time")
    parser.add_argument("--engine", default=f"{sys.executable} -m engine", help="UCI command")
    parser.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a UCI option for the engine (repeatable), e.g. 'Use NNUE=true'",
    )
    parser.add_argument("--limit", type=int, default=None, help="only the first N positions")
    return parser


def start_engine(command: list[str]) -> chess.engine.SimpleEngine:
    """The engine, after ``uciok``; ``RuntimeError`` with a one-line reason if it fails."""
    what = f"engine {shlex.join(command)!r}"
    try:
        return chess.engine.SimpleEngine.popen_uci(command, timeout=ENGINE_TIMEOUT_S)
    except OSError as error:
        raise RuntimeError(f"{what} cannot be started: {error.strerror or error}") from None
    except chess.engine.EngineError as error:
        raise RuntimeError(f"{what} did not start: {error}") from None
    except (asyncio.TimeoutError, TimeoutError):
        raise RuntimeError(f"{what} sent no uciok within {ENGINE_TIMEOUT_S:g} s") from None


def stop_engine(engine: chess.engine.SimpleEngine, polite: bool) -> None:
    """Quit (or, when not ``polite``, kill at once) and make sure the process is gone."""
    if polite:
        with contextlib.suppress(chess.engine.EngineError, asyncio.TimeoutError, TimeoutError):
            engine.quit()
    # close() kills a process that is still running; the interpreter then waits for
    # python-chess's thread, which ends once the process has exited.
    engine.close()


def main(argv: Optional[list[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.depth is not None and args.depth < 1:
        parser.error(f"--depth must be >= 1, got {args.depth}")
    if args.nodes is not None and args.nodes < 1:
        parser.error(f"--nodes must be >= 1, got {args.nodes}")
    options: dict[str, str] = {}
    for text in args.option:
        name, equals, value = text.partition("=")
        if not equals or not name.strip():
            parser.error(f"--option takes NAME=VALUE, got {text!r}")
        options[name.strip()] = value.strip()
    if not args.time > 0 or math.isinf(args.time):
        parser.error(f"--time must be a positive number of seconds, got {args.time}")
    if args.limit is not None and args.limit < 1:
        parser.error(f"--limit must be >= 1, got {args.limit}")
    try:
        command = engine_command(args.engine)
    except UsageError as error:
        parser.error(str(error))
    try:
        items = read_suite(args.suite)
    except OSError as error:
        print(f"{PROG}: cannot read {args.suite}: {error.strerror}", file=sys.stderr)
        return EXIT_USAGE
    except ValueError as error:
        print(f"epd_suite: cannot read {args.suite}: {error}", file=sys.stderr)
        return EXIT_USAGE
    if not items:
        print(f"{PROG}: no positions in {args.suite}", file=sys.stderr)
        return EXIT_USAGE
    if args.limit is not None:
        positions_seen = 0
        for index, item in enumerate(items):
            positions_seen += isinstance(item, SuiteEntry)
            if positions_seen == args.limit:
                items = items[: index + 1]
                break
    if args.depth is not None:
        limit = chess.engine.Limit(depth=args.depth)
    elif args.nodes is not None:
        limit = chess.engine.Limit(nodes=args.nodes)
    else:
        limit = chess.engine.Limit(time=args.time)
    planned = sum(isinstance(item, SuiteEntry) for item in items)
    return run_suite(args.suite, command, items, limit, planned, options)


def configure(engine: chess.engine.SimpleEngine, options: dict[str, str]) -> None:
    """Set ``options`` (text values, as on the command line); ``RuntimeError`` if one
    is unknown to the engine or refused by it."""
    try:
        values = uci_option_values(options, engine.options)
    except ValueError as error:
        raise RuntimeError(f"the engine has {error}") from None
    try:
        engine.configure(values)
    except chess.engine.EngineError as error:
        raise RuntimeError(f"option refused: {error}") from None


def run_suite(
    suite: str,
    command: list[str],
    items: list[Union[SuiteEntry, str]],
    limit: chess.engine.Limit,
    planned: int,
    options: Optional[dict[str, str]] = None,
) -> int:
    """Play every position, print one line each and the summary; return the exit status."""
    solved = tried = bad_lines = engine_errors = 0
    points = most_points = graded = 0
    stopped: Optional[str] = None
    status = EXIT_OK
    start = time.monotonic()
    engine: Optional[chess.engine.SimpleEngine] = None
    polite = True
    if planned:
        try:
            engine = start_engine(command)
        except RuntimeError as error:
            print(f"{PROG}: {error}", file=sys.stderr)
            return EXIT_FAILED
        try:
            configure(engine, options or {})
        except RuntimeError as error:
            print(f"{PROG}: {error}", file=sys.stderr)
            stop_engine(engine, polite=True)
            return EXIT_FAILED
    previous_handler = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        for item in items:
            if isinstance(item, str):
                print(f"{PROG}: {item}", file=sys.stderr, flush=True)
                bad_lines += 1
                continue
            assert engine is not None
            where = f"{suite} line {item.line_number}"
            try:
                result = engine.play(item.board, limit, game=item.line_number)
            except chess.engine.EngineTerminatedError as error:
                stopped = f"the engine died at {where}: {error}"
                polite = False
                break
            except (asyncio.TimeoutError, TimeoutError):
                stopped = f"the engine gave no move at {where}"
                polite = False
                break
            except chess.engine.EngineError as error:
                print(f"{PROG}: {where}: engine error: {error}", file=sys.stderr, flush=True)
                engine_errors += 1
                tried += 1
                continue
            tried += 1
            move = result.move
            ok = move is not None and (not item.best or move in item.best)
            ok = ok and move not in item.avoid
            solved += ok
            name = item.name or f"#{item.line_number}"
            shown = "(none)" if move is None else item.board.san(move)
            earned = ""
            if item.points:
                graded += 1
                points += item.points_of(move)
                most_points += max(value for _, value in item.points)
                earned = f" {item.points_of(move):>2}"
            print(f"{name:12} {shown:8} {'ok' if ok else '--'}{earned}", flush=True)
    except KeyboardInterrupt:
        stopped, status, polite = "interrupted", EXIT_INTERRUPTED, False
    except TerminatedError:
        stopped, status, polite = "terminated", EXIT_TERMINATED, False
    finally:
        signal.signal(signal.SIGTERM, previous_handler)
        if engine is not None:
            stop_engine(engine, polite)
    if stopped is not None and status == EXIT_OK:
        print(f"{PROG}: {stopped}", file=sys.stderr, flush=True)
        status = EXIT_FAILED
    elif bad_lines or engine_errors:
        status = max(status, EXIT_FAILED)
    seconds = time.monotonic() - start
    notes = []
    if bad_lines:
        notes.append(f"{bad_lines} bad line{'s' if bad_lines != 1 else ''} skipped")
    if engine_errors:
        notes.append(f"{engine_errors} engine error{'s' if engine_errors != 1 else ''}")
    if stopped is not None:
        notes.append(f"{stopped}; {planned - tried} of {planned} positions not run")
    extra = f" ({'; '.join(notes)})" if notes else ""
    if graded:
        plural = "s" if graded != 1 else ""
        print(f"points {points} / {most_points} ({graded} graded position{plural})", flush=True)
    print(f"solved {solved} / {tried} in {seconds:.0f} s{extra}", flush=True)
    return status


if __name__ == "__main__":
    raise SystemExit(main())
