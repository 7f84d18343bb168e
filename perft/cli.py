"""The ``python -m perft`` command line: one position (optionally divided) or a suite.

It parses arguments, runs the walks in ``perft.core`` (or, with ``--board native``,
``perft.native``'s on the engine's native search board; with ``--check-state``, the
native board walked beside python-chess's) on suites from ``perft.suite``, prints
results and returns the exit status: 0 all counts right, 1 a count or a state check
failed, 2 bad input. Bad input gives one line on stderr, never a traceback. A bad
suite line is one such line; the other lines are still checked, and the status is
then 2 unless a count failed (1). It does not implement move counting itself.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from typing import NoReturn, Optional

import chess

from perft.core import (
    StateMismatchError,
    WalkerFactory,
    divide,
    divide_checked,
    perft,
    perft_checked,
)
from perft.suite import (
    MAX_DEPTH,
    MAX_NUMBER_DIGITS,
    SuiteError,
    load_suite,
    parse_fen,
    resolve_suite,
)

DEFAULT_SUITE_MAX_DEPTH = 3
"""Python walks ~250k leaves/s; most suites' D4+ counts take minutes to hours."""

SHORT_FEN_CHARS = 36

BOARDS = ("python-chess", "native")
"""Values of ``--board``: which board generates the moves and counts."""

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


class UsageError(Exception):
    """Bad input; the message is printed as ``perft: <message>``."""


class _Parser(argparse.ArgumentParser):
    # argparse's own error() prints a usage block; one line is the project rule.
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see --help)")


def _build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="python -m perft",
        description=(
            "Count the leaf nodes of the legal move tree (perft) of a position, or check "
            "the counts of an EPD perft suite."
        ),
        epilog=(
            "examples: python -m perft startpos 4 --divide | "
            "python -m perft --suite perftsuite --max-depth 3 | "
            "python -m perft --check-state 'FEN' 3"
        ),
    )
    parser.add_argument(
        "position",
        nargs="*",
        metavar="FEN DEPTH",
        help="a FEN (quoted, or as separate words; 'startpos' works) followed by a depth",
    )
    parser.add_argument("--divide", action="store_true", help="print the count of each root move")
    parser.add_argument(
        "--suite",
        metavar="FILE",
        help="EPD suite ('FEN ;D1 n ;D2 n ...'), or a shipped one: cpw, perftsuite",
    )
    parser.add_argument(
        "--max-depth",
        type=str,
        metavar="N",
        help=f"deepest suite depth to check (default {DEFAULT_SUITE_MAX_DEPTH})",
    )
    parser.add_argument(
        "--check-state",
        action="store_true",
        help=(
            "walk the engine's native search board beside python-chess's and verify its "
            "incremental state against a from-scratch computation and python-chess "
            "after every push and pop (either --board: python-chess's board drives "
            "the walk)"
        ),
    )
    parser.add_argument(
        "--board",
        choices=BOARDS,
        default=BOARDS[0],
        help=(
            "the board that counts: python-chess's (default) or the engine's native "
            "search board (engine.core.board)"
        ),
    )
    return parser


def _parse_depth(text: str, what: str, minimum: int, maximum: Optional[int] = MAX_DEPTH) -> int:
    # The length comes first: int() refuses over 4,300 digits with its own message.
    digits = len(text.strip().lstrip("+-"))
    if digits > MAX_NUMBER_DIGITS:
        raise UsageError(f"{what} has {digits} digits (at most {MAX_NUMBER_DIGITS})")
    try:
        value = int(text)
    except ValueError:
        raise UsageError(f"{what} must be an integer, got {text!r}") from None
    if value < minimum:
        raise UsageError(f"{what} must be >= {minimum}, got {value}")
    if maximum is not None and value > maximum:
        raise UsageError(f"{what} must be <= {maximum}, got {value}")
    return value


def _native_walker() -> WalkerFactory:
    """The native board's walker, imported only when state checks are asked for."""
    from perft.native import NativeWalker

    return NativeWalker


class _Counter:
    """How leaves are counted when no state is checked: python-chess or the native board."""

    def __init__(self, board: str) -> None:
        self.native = board == "native"

    def perft(self, board: chess.Board, depth: int) -> int:
        if self.native:
            from perft.native import native_perft

            return native_perft(board, depth)
        return perft(board, depth)

    def divide(self, board: chess.Board, depth: int) -> list[tuple[chess.Move, int]]:
        if self.native:
            from perft.native import native_divide

            return native_divide(board, depth)
        return divide(board, depth)


def _rate(nodes: int, seconds: float) -> str:
    return f"{nodes / seconds:,.0f}" if seconds > 0 else "-"


def _short_fen(fen: str) -> str:
    if len(fen) <= SHORT_FEN_CHARS:
        return fen
    return fen[: SHORT_FEN_CHARS - 3] + "..."


def _count(
    board: chess.Board, depth: int, factory: Optional[WalkerFactory], counter: _Counter
) -> int:
    if factory is None:
        return counter.perft(board, depth)
    return perft_checked(board, depth, factory)


def _run_position(
    words: Sequence[str],
    show_divide: bool,
    factory: Optional[WalkerFactory],
    counter: _Counter,
) -> int:
    if len(words) < 2:
        raise UsageError("expected a FEN and a depth, or --suite FILE (see --help)")
    *fen_words, depth_text = words
    fen = " ".join(fen_words)
    depth = _parse_depth(depth_text, "depth", 1 if show_divide else 0)
    try:
        board = chess.Board() if fen == "startpos" else parse_fen(fen)
    except ValueError as error:
        raise UsageError(str(error)) from None

    start = time.perf_counter()
    counts: list[tuple[chess.Move, int]] = []
    if show_divide:
        counts = (
            counter.divide(board, depth)
            if factory is None
            else divide_checked(board, depth, factory)
        )
        nodes = sum(count for _, count in counts)
    else:
        nodes = _count(board, depth, factory, counter)
    seconds = time.perf_counter() - start

    for move, count in counts:
        print(f"{move.uci()}: {count}")
    if show_divide:
        print()
    print(f"Nodes searched: {nodes}")
    print(f"Time: {seconds:.3f} s")
    print(f"Speed: {_rate(nodes, seconds)} leaves/s")
    if factory is not None:
        print("State: incremental state matched a fresh computation at every push and pop")
    return EXIT_OK


def _run_suite(
    name: str, max_depth: int, factory: Optional[WalkerFactory], counter: _Counter
) -> int:
    try:
        path, display_name = resolve_suite(name)
        suite = load_suite(path, display_name)
    except SuiteError as error:
        raise UsageError(str(error)) from None
    for message in suite.errors:
        print(f"perft: {message}", file=sys.stderr, flush=True)
    entries = suite.entries
    if not entries:
        # Each bad line has had its own message; there is nothing left to check.
        return EXIT_USAGE

    header = (
        f"{'#':>4}  {'FEN':<{SHORT_FEN_CHARS}}  {'depth':>5}  {'expected':>12}  "
        f"{'got':>12}  {'result':<6}  {'nodes/s':>10}"
    )
    print(header)
    checks = failures = total_nodes = 0
    total_seconds = 0.0
    deepest = 0
    for index, entry in enumerate(entries, start=1):
        board = chess.Board(entry.fen)
        for depth, expected in entry.expected:
            if depth > max_depth:
                break
            start = time.perf_counter()
            got = _count(board, depth, factory, counter)
            seconds = time.perf_counter() - start
            checks += 1
            total_nodes += got
            total_seconds += seconds
            deepest = max(deepest, depth)
            passed = got == expected
            failures += not passed
            print(
                f"{index:>4}  {_short_fen(entry.fen):<{SHORT_FEN_CHARS}}  {depth:>5}  "
                f"{expected:>12}  {got:>12}  {'PASS' if passed else 'FAIL':<6}  "
                f"{_rate(got, seconds):>10}",
                flush=True,
            )
    if checks == 0:
        raise UsageError(f"{display_name}: no counts at depth <= {max_depth} to check")
    verdict = "all passed" if failures == 0 else f"{failures} FAILED"
    state = ", incremental state checked at every node" if factory is not None else ""
    bad = len(suite.errors)
    skipped = f"; {bad} bad line{'s' if bad != 1 else ''} skipped" if bad else ""
    print(
        f"{display_name}: {checks} checks on {len(entries)} positions (depth <= {deepest})"
        f"{state}: {verdict}{skipped}; {total_nodes:,} nodes in {total_seconds:.2f} s "
        f"({_rate(total_nodes, total_seconds)} nodes/s)"
    )
    if failures:
        return EXIT_FAILED
    return EXIT_USAGE if suite.errors else EXIT_OK


def run(argv: Sequence[str], factory: Optional[WalkerFactory] = None) -> int:
    """Run the command line on ``argv``; returns the exit status.

    ``factory`` replaces ``perft.native.NativeWalker`` for ``--check-state`` (tests
    use it to prove that a broken board is caught). Raises ``UsageError``.
    """
    args = _build_parser().parse_args(list(argv))
    counter = _Counter(args.board)
    if args.check_state and factory is None:
        factory = _native_walker()
    elif not args.check_state:
        factory = None
    try:
        if args.suite is not None:
            if args.position:
                raise UsageError("give either --suite or a FEN and a depth, not both")
            if args.divide:
                raise UsageError("--divide works on a single position, not with --suite")
            max_depth = DEFAULT_SUITE_MAX_DEPTH
            if args.max_depth is not None:
                # No upper bound: suite depths are capped when read, so a large
                # --max-depth just means "every depth in the file".
                max_depth = _parse_depth(args.max_depth, "--max-depth", 1, maximum=None)
            return _run_suite(args.suite, max_depth, factory, counter)
        if args.max_depth is not None:
            raise UsageError("--max-depth only applies to --suite")
        return _run_position(args.position, args.divide, factory, counter)
    except StateMismatchError as error:
        sys.stdout.flush()
        print(f"FAIL {error}", flush=True)
        return EXIT_FAILED


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point: ``run`` with one-line errors instead of tracebacks."""
    try:
        return run(sys.argv[1:] if argv is None else argv)
    except UsageError as error:
        print(f"perft: {error}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("perft: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # e.g. `python -m perft ... | head`: the reader left. Point stdout at
        # devnull so the interpreter's final flush does not print a traceback.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_FAILED
