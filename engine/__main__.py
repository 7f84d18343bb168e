"""Command line: ``cutoff`` / ``python -m engine``.

* no arguments: the UCI loop on stdin/stdout (what GUIs start);
* ``bench [--depth N] [--hash MB] [--positions K] [--plain]``: the fixed bench,
  node count, speed and nodes per depth (``--plain``: selectivity off);
* ``analyse [FEN] [--depth N] [--multipv K]``: one search, printed as UCI info
  lines and a ``bestmove`` line.

Bad arguments or a bad FEN give a one-line error on stderr and exit code 2,
never a traceback. This module must stay cheap to import (the UCI handshake
is timed by GUIs): heavy modules are imported inside the functions that need
them, and it must not contain protocol or search logic of its own.
"""

from __future__ import annotations

import sys
from typing import Optional

USAGE = (
    "usage: cutoff                                     UCI mode (for GUIs)\n"
    "       cutoff bench [--depth N] [--hash MB] [--positions K] [--plain]\n"
    "                                                  fixed-depth bench: nodes, speed, EBF\n"
    "       cutoff analyse [FEN] [--depth N] [--multipv K]   search one position\n"
)


class UsageError(Exception):
    """Bad command-line arguments; the message is printed on stderr."""


def _take_int(
    args: list[str], flag: str, default: Optional[int], low: int, high: int
) -> Optional[int]:
    """Remove ``flag N`` (or ``flag=N``) from ``args`` and return N within low..high."""
    for i, arg in enumerate(args):
        text: Optional[str] = None
        if arg == flag:
            if i + 1 >= len(args):
                raise UsageError(f"{flag} needs a number")
            text = args[i + 1]
            del args[i : i + 2]
        elif arg.startswith(flag + "="):
            text = arg.split("=", 1)[1]
            del args[i]
        if text is not None:
            try:
                value = int(text)
            except ValueError:
                raise UsageError(f"{flag} needs a number, got '{text}'") from None
            if not low <= value <= high:
                raise UsageError(f"{flag} must be between {low} and {high}")
            return value
    return default


def _print(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def _bench(args: list[str]) -> int:
    depth = _take_int(args, "--depth", None, 1, 64)
    hash_mb = _take_int(args, "--hash", 16, 1, 1024)
    positions = _take_int(args, "--positions", None, 1, 1000)
    selective = True
    if "--plain" in args:
        args.remove("--plain")
        selective = False
    if args:
        raise UsageError(f"unexpected argument '{args[0]}'")
    from engine.bench import BENCH_FENS, run_bench

    assert hash_mb is not None
    fens = BENCH_FENS[:positions] if positions else None
    run_bench(depth=depth, hash_mb=hash_mb, out=_print, selective=selective, fens=fens)
    return 0


def _analyse(args: list[str]) -> int:
    depth = _take_int(args, "--depth", 8, 1, 64)
    multipv = _take_int(args, "--multipv", 1, 1, 256)
    unknown = [a for a in args if a.startswith("--")]
    if unknown:
        raise UsageError(f"unknown option '{unknown[0]}'")
    import time

    from engine.controller import Controller
    from engine.limits import SearchLimits
    from engine.options import MULTIPV, Options
    from engine.uci import PositionError, parse_position
    from engine.uci_text import TextOutput

    try:
        board = parse_position(["fen", *args] if args else ["startpos"], chess960=False)
    except PositionError as exc:
        raise UsageError(str(exc)) from None
    options = Options()
    options.set(MULTIPV, str(multipv))
    controller = Controller(TextOutput(_print), options)
    controller.set_board(board)
    controller.go(SearchLimits(depth=depth), time.monotonic())
    controller.wait_idle()
    return 0


def main(argv: Optional[list[str]] = None) -> int:
    """Entry point of the ``cutoff`` console script; returns the exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        import os
        import threading

        from engine.uci import run

        code = run()
        try:
            sys.stdout.flush()
        except OSError:
            os._exit(code)  # the GUI closed the pipe: nothing left to say
        if threading.active_count() > 1:
            # A daemon thread may still be inside python-chess; exiting through the
            # interpreter's shutdown while it runs can abort with a fatal error.
            os._exit(code)
        return code
    command, rest = args[0], args[1:]
    try:
        if command in ("-h", "--help", "help"):
            sys.stdout.write(USAGE)
            return 0
        if command == "bench":
            return _bench(rest)
        if command in ("analyse", "analyze"):
            return _analyse(rest)
        raise UsageError(f"unknown command '{command}'")
    except UsageError as exc:
        sys.stderr.write(f"cutoff: {exc} (see cutoff --help)\n")
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
