"""Measure how late a UCI engine answers ``go movetime``, as a GUI sees it.

Starts the engine (default: Cutoff beside this interpreter), optionally keeps
``--load K`` busy-loop processes running beside it, and times ``--searches N``
searches of ``go movetime T`` from writing the line to reading ``bestmove``.
Prints the median, 90th percentile and worst answer time and how many went past
the movetime. Use it to choose ``Move Overhead`` on a loaded machine.

``--clock MS`` plays ``--games N`` self-play games instead, both sides on a
sudden-death clock of MS milliseconds from which every answer's measured time
(``go`` written to ``bestmove`` read) is subtracted, as a GUI does: it prints
the time losses and the lowest clock left. This script measures; it must not
change the engine.

Usage: python -m scripts.speed.latency [--movetime MS] [--searches N] [--load K]
       [--overhead MS] [--engine CMD] [--clock MS --games N --plies N]
"""

from __future__ import annotations

import contextlib
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Callable

import chess

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


def _start(
    command: list[str], overhead_ms: int
) -> tuple[subprocess.Popen[bytes], Callable[[str], float]]:
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    stdin = proc.stdin

    def send(line: str) -> float:
        stdin.write((line + "\n").encode())
        stdin.flush()
        return time.monotonic()

    send("uci")
    _read_until(proc.stdout, b"uciok")
    if overhead_ms >= 0:
        send(f"setoption name Move Overhead value {overhead_ms}")
    return proc, send


def _stop(proc: subprocess.Popen[bytes], send: Callable[[str], float]) -> None:
    with contextlib.suppress(OSError):
        send("quit")  # the engine may be gone already
    assert proc.stdin is not None
    proc.stdin.close()
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def measure(command: list[str], movetime_ms: int, searches: int, overhead_ms: int) -> list[float]:
    """Answer times in milliseconds, one per search."""
    proc, send = _start(command, overhead_ms)
    assert proc.stdout is not None
    try:
        times = []
        for number in range(searches):
            send(f"position {POSITIONS[number % len(POSITIONS)]}")
            send("isready")
            _read_until(proc.stdout, b"readyok")
            sent = send(f"go movetime {movetime_ms}")
            times.append((_read_until(proc.stdout, b"bestmove") - sent) * 1000.0)
        return times
    finally:
        _stop(proc, send)


def _bestmove(stream: IO[bytes]) -> tuple[float, str]:
    for line in stream:
        if line.startswith(b"bestmove"):
            return time.monotonic(), line.split()[1].decode()
    raise RuntimeError("engine exited before answering with bestmove")


def play_clock_game(
    command: list[str], clock_ms: int, max_plies: int, overhead_ms: int
) -> tuple[bool, float, int]:
    """One self-play game on a sudden-death clock, measured as a GUI measures it.

    Returns (a side lost on time, the lowest clock left after a move in ms, plies).
    """
    proc, send = _start(command, overhead_ms)
    assert proc.stdout is not None
    board = chess.Board()
    clocks = {chess.WHITE: float(clock_ms), chess.BLACK: float(clock_ms)}
    lowest = float(clock_ms)
    try:
        send("ucinewgame")
        while not board.is_game_over(claim_draw=True) and len(board.move_stack) < max_plies:
            moves = " ".join(m.uci() for m in board.move_stack)
            send("position startpos" + (f" moves {moves}" if moves else ""))
            send("isready")
            _read_until(proc.stdout, b"readyok")
            white, black = int(clocks[chess.WHITE]), int(clocks[chess.BLACK])
            sent = send(f"go wtime {white} btime {black}")
            answered, text = _bestmove(proc.stdout)
            clocks[board.turn] -= (answered - sent) * 1000.0
            lowest = min(lowest, clocks[board.turn])
            if clocks[board.turn] <= 0:
                return True, lowest, len(board.move_stack)
            board.push_uci(text)
        return False, lowest, len(board.move_stack)
    finally:
        _stop(proc, send)


def _with_load(load: int, work: Callable[[], None]) -> None:
    processes = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(load)]
    try:
        work()
    finally:
        for process in processes:
            process.kill()
            process.wait()


def main(argv: list[str] | None = None) -> int:
    parser = ToolParser(prog="latency", description=__doc__.splitlines()[0])
    parser.add_argument("--movetime", type=int, default=50, help="ms per search (default 50)")
    parser.add_argument("--searches", type=int, default=100, help="searches (default 100)")
    parser.add_argument("--load", type=int, default=0, help="busy-loop processes beside it")
    parser.add_argument(
        "--overhead", type=int, default=-1, help="set Move Overhead (ms); default: engine's own"
    )
    parser.add_argument("--engine", default=default_engine(), help="UCI command")
    parser.add_argument(
        "--clock", type=int, default=0, help="play self-play games on this sudden-death clock (ms)"
    )
    parser.add_argument("--games", type=int, default=4, help="games with --clock (default 4)")
    parser.add_argument(
        "--plies", type=int, default=200, help="plies per game at most with --clock (default 200)"
    )
    args = parser.parse_args(argv)
    if args.movetime < 1 or args.searches < 1 or args.load < 0:
        parser.error("--movetime and --searches must be positive, --load not negative")
    if args.clock < 0 or args.games < 1 or args.plies < 1:
        parser.error("--clock must not be negative, --games and --plies must be positive")
    try:
        command = engine_command(args.engine)
    except UsageError as error:
        parser.error(str(error))
    times: list[float] = []
    games: list[tuple[bool, float, int]] = []

    def work() -> None:
        if args.clock:
            for _ in range(args.games):
                games.append(play_clock_game(command, args.clock, args.plies, args.overhead))
        else:
            times.extend(sorted(measure(command, args.movetime, args.searches, args.overhead)))

    try:
        _with_load(args.load, work)
    except (OSError, RuntimeError) as exc:
        print(f"latency: {exc}", file=sys.stderr)
        return 1
    if args.clock:
        lows = sorted(low for _, low, _ in games)
        print(
            f"clock {args.clock} ms, {len(games)} games, {args.load} busy processes:"
            f" {sum(lost for lost, _, _ in games)} lost on time;"
            f" plies {statistics.median(plies for _, _, plies in games):.0f} median;"
            f" lowest clock {statistics.median(lows):.0f} ms median, {lows[0]:.0f} ms worst"
        )
        return 0
    late = sum(t > args.movetime for t in times)
    print(
        f"go movetime {args.movetime}, {len(times)} searches, {args.load} busy processes:"
        f" median {statistics.median(times):.1f} ms, p90 {times[int(0.9 * (len(times) - 1))]:.1f}"
        f" ms, worst {times[-1]:.1f} ms; {late} later than the movetime"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
