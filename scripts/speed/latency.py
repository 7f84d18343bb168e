"""Measure how late a UCI engine answers ``go movetime``, as a GUI sees it.

Starts the engine (default: Cutoff beside this interpreter), optionally keeps
``--load K`` busy-loop processes running beside it, and times ``--searches N``
searches of ``go movetime T`` from writing the line to reading ``bestmove``.
Prints the median, 90th percentile and worst answer time and how many went past
the movetime. Use it to choose ``Move Overhead`` on a loaded machine. This
script measures; it must not change the engine.

Usage: python -m scripts.speed.latency [--movetime MS] [--searches N] [--load K]
       [--overhead MS] [--engine CMD]
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import IO

from ..common import ToolParser, UsageError, engine_command

POSITIONS = (
    "startpos",
    "startpos moves e2e4 c7c5 g1f3 d7d6 d2d4 c5d4 f3d4 g8f6 b1c3",
    "fen r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4",
    "fen 8/5pk1/6p1/8/3B4/6P1/5PK1/8 b - - 0 1",
)


def default_engine() -> str:
    launcher = Path(sys.executable).with_name("cutoff")
    return str(launcher) if launcher.exists() else f"{sys.executable} -m engine"


def _read_until(stream: IO[bytes], prefix: bytes) -> float:
    for line in stream:
        if line.startswith(prefix):
            return time.monotonic()
    raise RuntimeError(f"engine exited before answering with {prefix.decode()}")


def measure(command: list[str], movetime_ms: int, searches: int, overhead_ms: int) -> list[float]:
    """Answer times in milliseconds, one per search."""
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    stdin, stdout = proc.stdin, proc.stdout

    def send(line: str) -> float:
        stdin.write((line + "\n").encode())
        stdin.flush()
        return time.monotonic()

    try:
        send("uci")
        _read_until(stdout, b"uciok")
        if overhead_ms >= 0:
            send(f"setoption name Move Overhead value {overhead_ms}")
        times = []
        for number in range(searches):
            send(f"position {POSITIONS[number % len(POSITIONS)]}")
            send("isready")
            _read_until(stdout, b"readyok")
            sent = send(f"go movetime {movetime_ms}")
            times.append((_read_until(stdout, b"bestmove") - sent) * 1000.0)
        send("quit")
        return times
    finally:
        stdin.close()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()


def main(argv: list[str] | None = None) -> int:
    parser = ToolParser(prog="latency", description=__doc__.splitlines()[0])
    parser.add_argument("--movetime", type=int, default=50, help="ms per search (default 50)")
    parser.add_argument("--searches", type=int, default=100, help="searches (default 100)")
    parser.add_argument("--load", type=int, default=0, help="busy-loop processes beside it")
    parser.add_argument(
        "--overhead", type=int, default=-1, help="set Move Overhead (ms); default: engine's own"
    )
    parser.add_argument("--engine", default=default_engine(), help="UCI command")
    args = parser.parse_args(argv)
    if args.movetime < 1 or args.searches < 1 or args.load < 0:
        parser.error("--movetime and --searches must be positive, --load not negative")
    try:
        command = engine_command(args.engine)
    except UsageError as error:
        parser.error(str(error))
    load = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(args.load)]
    try:
        times = sorted(measure(command, args.movetime, args.searches, args.overhead))
    except (OSError, RuntimeError) as exc:
        print(f"latency: {exc}", file=sys.stderr)
        return 1
    finally:
        for process in load:
            process.kill()
            process.wait()
    late = sum(t > args.movetime for t in times)
    print(
        f"go movetime {args.movetime}, {len(times)} searches, {args.load} busy processes:"
        f" median {statistics.median(times):.1f} ms, p90 {times[int(0.9 * (len(times) - 1))]:.1f}"
        f" ms, worst {times[-1]:.1f} ms; {late} later than the movetime"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
