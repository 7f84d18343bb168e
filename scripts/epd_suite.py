"""Run a UCI engine over an EPD test suite and count the solved positions.

A position is solved when the engine's move is one of the ``bm`` moves (and none
of the ``am`` moves). Each position gets a fixed time (``--time``) or depth.
The engine is any UCI command (default: Cutoff as ``python -m engine``).
This script measures; it must not change the engine.

Usage: python scripts/epd_suite.py SUITE.epd [--time 1.0 | --depth N] [--engine CMD]
       [--limit N]
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time

import chess
import chess.engine


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("suite", help="EPD file with bm/am operations")
    parser.add_argument("--time", type=float, default=1.0, help="seconds per position")
    parser.add_argument("--depth", type=int, default=None, help="fixed depth instead of time")
    parser.add_argument("--engine", default=f"{sys.executable} -m engine", help="UCI command")
    parser.add_argument("--limit", type=int, default=None, help="only the first N positions")
    args = parser.parse_args(argv)
    try:
        with open(args.suite, encoding="utf-8") as handle:
            lines = [line.strip() for line in handle if line.strip()]
    except OSError as exc:
        print(f"epd_suite: cannot read {args.suite}: {exc.strerror}", file=sys.stderr)
        return 2
    if args.limit is not None:
        lines = lines[: args.limit]
    limit = (
        chess.engine.Limit(depth=args.depth) if args.depth else chess.engine.Limit(time=args.time)
    )
    solved = 0
    start = time.monotonic()
    engine = chess.engine.SimpleEngine.popen_uci(shlex.split(args.engine))
    try:
        for number, line in enumerate(lines, start=1):
            try:
                board, ops = chess.Board.from_epd(line)
            except ValueError as exc:
                print(f"epd_suite: {args.suite} line {number}: {exc}", file=sys.stderr)
                continue
            result = engine.play(board, limit, game=number)
            best = ops.get("bm", [])
            avoid = ops.get("am", [])
            ok = result.move is not None and (not best or result.move in best)
            ok = ok and result.move not in avoid
            solved += ok
            name = ops.get("id", f"#{number}")
            move = board.san(result.move) if result.move else "(none)"
            print(f"{name!s:12} {move:8} {'ok' if ok else '--'}", flush=True)
    finally:
        engine.quit()
    seconds = time.monotonic() - start
    print(f"solved {solved} / {len(lines)} in {seconds:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
