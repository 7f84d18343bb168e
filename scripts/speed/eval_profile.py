"""Where the evaluation's time goes, inside a real search and per call.

    python -m scripts.speed.eval_profile [--depth D] [--positions K]

1. Runs the bench under cProfile and prints the share of the search's time
   spent in the evaluation and in its parts (the pawn-king entries' misses:
   pawn structure and king shelter; endgame scaling), with call counts, plus the hit rate of the
   evaluation cache.
2. Runs the bench again without the profiler, timing each evaluation call: the
   evaluation's share of the CPU time and its cost per call inside a search.
3. Times one uncached evaluation on the bench positions in a warm loop (pawn
   caches warm, everything in the CPU caches: a lower bound, about half the cost
   inside a search) against the material + piece-square blend alone.

It measures; it must not change the engine. (cProfile slows every Python call,
so the shares are indicative; the bench's nodes/s is the speed figure.) It needs the
interpreted build and says so in one line otherwise: compiled callers call the
evaluation directly, past cProfile and the counting wrapper (for the compiled build,
``perf record`` of ``cutoff bench``: docs/speed.md).
"""

from __future__ import annotations

import cProfile
import pstats
import sys
import time

import chess

from engine.compiled import build_description
from engine.core import evaluate as evaluation
from engine.core.bitboards import WHITE
from engine.core.board import Board
from engine.core.features import blend
from engine.play.bench import BENCH_FENS, run_bench

from ..common import ToolParser

PARTS = (
    ("evaluation (all)", "evaluate.py", "evaluate"),
    ("  pawns and kings (cache misses)", "evaluate.py", "_fill_pawn_king"),
    ("  endgame scaling", "features.py", "scale_factors_bits"),
)


def profile_search(depth: int, positions: int) -> None:
    hits = [0, 0]
    original = evaluation.Evaluator.evaluate

    def counting(self: evaluation.Evaluator, board: Board) -> int:
        hits[0] += 1
        if self._keys[board.key & self._mask] == board.key:
            hits[1] += 1
        return original(self, board)

    evaluation.Evaluator.evaluate = counting  # type: ignore[method-assign]
    profiler = cProfile.Profile()
    profiler.enable()
    result = run_bench(depth=depth, fens=BENCH_FENS[:positions])
    profiler.disable()
    evaluation.Evaluator.evaluate = original  # type: ignore[method-assign]

    stats = pstats.Stats(profiler)
    entries = stats.stats  # type: ignore[attr-defined]
    total = sum(tottime for _, _, tottime, _, _ in entries.values())
    print(f"bench depth {depth}, {positions} positions: {result.nodes} nodes")
    print(f"{'part':34} {'calls':>9} {'seconds':>8} {'share':>7}")
    for label, filename, function in PARTS:
        calls = 0
        seconds = 0.0
        for (path, _, name), (_, ncalls, _, cumtime, _) in entries.items():
            if path.endswith(filename) and name == function:
                calls += ncalls
                seconds += cumtime
        print(f"{label:34} {calls:9d} {seconds:8.2f} {100 * seconds / total:6.1f}%")
    print(f"{'search total (profiled)':34} {'':9} {total:8.2f}")
    if hits[0]:
        print(f"evaluation cache hits: {hits[1]} of {hits[0]} ({100 * hits[1] / hits[0]:.0f}%)")


def time_in_search(depth: int, positions: int) -> None:
    original = evaluation.Evaluator.evaluate
    spent = [0.0, 0]
    clock = time.perf_counter

    def timed(self: evaluation.Evaluator, board: Board) -> int:
        start = clock()
        value = original(self, board)
        spent[0] += clock() - start
        spent[1] += 1
        return value

    evaluation.Evaluator.evaluate = timed  # type: ignore[method-assign]
    cpu = time.process_time()
    try:
        run_bench(depth=depth, fens=BENCH_FENS[:positions])
    finally:
        evaluation.Evaluator.evaluate = original  # type: ignore[method-assign]
    cpu = time.process_time() - cpu
    calls = max(spent[1], 1)
    print(
        f"in the search (unprofiled): evaluation {spent[0]:.2f} s of {cpu:.2f} s CPU "
        f"({100 * spent[0] / cpu:.1f}%), {spent[1]} calls, {1e6 * spent[0] / calls:.1f} us per call"
    )


def time_per_call(positions: int) -> None:
    boards = [Board.from_chess(chess.Board(fen)) for fen in BENCH_FENS[:positions]]
    # A one-slot evaluation cache misses on every call here (the positions
    # alternate), while the pawn caches stay warm, as they mostly are in a search.
    evaluator = evaluation.Evaluator(cache_bits=0)
    rounds = 2000
    start = time.perf_counter()
    for _ in range(rounds):
        for board in boards:
            evaluator.evaluate(board)
    full = (time.perf_counter() - start) / (rounds * len(boards))
    start = time.perf_counter()
    for _ in range(rounds):
        for board in boards:
            blend(board.mg, board.eg, min(board.phase, 24), 64, board.turn == WHITE)
    rough = (time.perf_counter() - start) / (rounds * len(boards))
    print(
        f"one uncached evaluation in a warm loop: {1e6 * full:.1f} us; "
        f"material + psqt blend alone: {1e6 * rough:.1f} us"
    )


def main(argv: list[str] | None = None) -> int:
    parser = ToolParser(prog="eval_profile", description=__doc__.splitlines()[0])
    parser.add_argument("--depth", type=int, default=6)
    parser.add_argument("--positions", type=int, default=len(BENCH_FENS))
    args = parser.parse_args(argv)
    build = build_description()
    if not build.startswith("interpreted"):
        print(
            f"error: eval_profile needs the interpreted build, not {build}: compiled "
            "callers bypass cProfile and the call counter (cutoff compile --remove)",
            file=sys.stderr,
        )
        return 2
    profile_search(args.depth, args.positions)
    time_in_search(args.depth, args.positions)
    time_per_call(args.positions)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
