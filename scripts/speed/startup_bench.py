"""Measure process start -> ``uciok`` for the Cutoff launcher (median of N runs).

Usage: python -m scripts.speed.startup_bench [--runs N] [--cmd "cutoff"]

GUIs give engines 10 s (python-chess, fastchess) to 35 s (Cute Chess) for the
handshake; the issue's target is 0.3 s. This script only measures and prints;
it does not fail.
"""

from __future__ import annotations

import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

from ..common import ToolParser


def default_command() -> list[str]:
    launcher = Path(sys.executable).with_name("cutoff")
    return [str(launcher)] if launcher.exists() else [sys.executable, "-m", "engine"]


def time_to_uciok(command: list[str]) -> float:
    start = time.perf_counter()
    proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(b"uci\n")
    proc.stdin.flush()
    for line in proc.stdout:
        if line.strip() == b"uciok":
            break
    elapsed = time.perf_counter() - start
    proc.stdin.write(b"quit\n")
    proc.stdin.close()
    proc.wait(10)
    return elapsed


def main(argv: list[str] | None = None) -> int:
    parser = ToolParser(prog="startup_bench", description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=11)
    parser.add_argument("--cmd", help="engine command line (default: the cutoff launcher)")
    args = parser.parse_args(argv)
    command = shlex.split(args.cmd) if args.cmd else default_command()
    times = [time_to_uciok(command) for _ in range(max(1, args.runs))]
    print(f"command: {' '.join(command)}")
    print(
        f"start -> uciok over {len(times)} runs: median {statistics.median(times) * 1000:.0f} ms,"
        f" min {min(times) * 1000:.0f} ms, max {max(times) * 1000:.0f} ms"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
