"""Speed of the engine's search against python-chess's raw perft, in one run.

Prints the bench's nodes/s, python-chess's perft leaves/s (legal generation,
push/pop at every ply: start position depth 4 and Kiwipete depth 3, measured by
``scripts.speed.yardstick``) and their ratio. Times are per-process CPU time, so other
load on the machine distorts the figures less; with ``--rounds N`` the two measurements
alternate and the medians are reported. This script measures; it must not change the engine.

Usage: python -m scripts.speed.speed [--rounds N] [--depth D]
"""

from __future__ import annotations

import statistics
import sys
import time

import chess

from engine.play.bench import run_bench

from ..common import ToolParser
from .yardstick import perft_leaves_per_second


def bench_nodes_per_second(depth: int | None) -> tuple[int, float]:
    start = time.process_time()
    result = run_bench(depth=depth)
    return result.nodes, result.nodes / (time.process_time() - start)


def main(argv: list[str] | None = None) -> int:
    parser = ToolParser(prog="speed", description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1, help="alternating rounds (median)")
    parser.add_argument("--depth", type=int, default=None, help="bench depth (default: bench's)")
    args = parser.parse_args(argv)
    perft_rates = []
    bench_rates = []
    nodes = 0
    for _ in range(max(1, args.rounds)):
        perft_rates.append(perft_leaves_per_second())
        nodes, rate = bench_nodes_per_second(args.depth)
        bench_rates.append(rate)
    perft_rate = statistics.median(perft_rates)
    bench_rate = statistics.median(bench_rates)
    print(f"python          : {sys.version.split()[0]} ({sys.implementation.name})")
    print(f"chess           : {chess.__version__}")
    print(f"bench nodes     : {nodes}")
    print(f"bench nodes/s   : {bench_rate:,.0f}")
    print(f"perft leaves/s  : {perft_rate:,.0f}")
    print(f"ratio           : {100 * bench_rate / perft_rate:.1f} %")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
