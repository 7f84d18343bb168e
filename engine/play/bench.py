"""The bench: fixed positions searched to a fixed depth, one thread, fixed TT size.

Its node count is the engine's behavioural signature (commit messages end with
``Bench: N``): any change to search or evaluation that changes the tree changes
N, and a pure speed change must keep it. Nodes/second is the speed figure.
Every position starts from a cleared TT and fresh histories, so the count does
not depend on the order of positions or on earlier searches. A ``stop`` event
(the UCI ``bench`` command's: ``stop`` and ``quit`` end it) aborts the search in
progress and skips the rest, with no totals: a partial count is no signature.
This module must not print directly: lines go through the ``out`` callback.
"""

from __future__ import annotations

import threading
import time
from array import array
from dataclasses import dataclass, field
from typing import Callable, Optional

import chess

from engine.core.nnue import load as load_network
from engine.core.search import IterationInfo, SearchControl, Searcher, SearchParams
from engine.core.tt import BOUND_EXACT, TranspositionTable
from engine.play.smp import HelperPool, make_pool

BENCH_DEPTH = 8
"""Default depth: the whole bench runs in well under a minute on CPython."""

BENCH_HASH_MB = 16

# Openings, middlegames, tactics and endgames; FENs as published (start position,
# the Chess Programming Wiki perft positions, well-known test-suite positions).
BENCH_FENS: list[str] = [
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - 0 1",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
    "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
    "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10",
    "rnbqkb1r/pp1p1ppp/4pn2/2p5/2PP4/2N5/PP2PPPP/R1BQKBNR w KQkq - 0 4",
    "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
    "r1bqk2r/pppp1ppp/2n2n2/2b1p3/2B1P3/3P1N2/PPP2PPP/RNBQK2R w KQkq - 1 5",
    "rnbqkb1r/ppp2ppp/4pn2/3p4/2PP4/2N5/PP2PPPP/R1BQKBNR w KQkq - 2 4",
    "r2q1rk1/pp2bppp/2n1pn2/2pp4/3P4/2PBPN2/PP1N1PPP/R2QK2R w KQ - 0 9",
    "2rq1rk1/pb1nbppp/1p2pn2/2pp4/2PP4/1PN1PN2/PB2BPPP/2RQ1RK1 w - - 4 11",
    "r1b2rk1/2q1bppp/p2p1n2/np2p3/3PP3/5N1P/PPBN1PP1/R1BQR1K1 w - - 1 13",
    "r1bq1rk1/ppp2ppp/2np1n2/2b1p3/2B1P3/2NP1N2/PPP2PPP/R1BQ1RK1 w - - 0 7",
    "2kr3r/ppp1qppp/2n1bn2/2b1p3/4P3/2NP1N2/PPPBBPPP/R2Q1RK1 w - - 6 10",
    "1k1r4/pp1b1R2/3q2pp/4p3/2B5/4Q3/PPP2B2/2K5 b - - 0 1",
    "3r1k2/4npp1/1ppr3p/p6P/P2PPPP1/1NR5/5K2/2R5 w - - 0 1",
    "2q1rr1k/3bbnnp/p2p1pp1/2pPp3/PpP1P1P1/1P2BNNP/2BQ1PRK/7R b - - 0 1",
    "rnbqkb1r/p3pppp/1p6/2ppP3/3N4/2P5/PPP1QPPP/R1B1KB1R w KQkq - 0 1",
    "r1b2rk1/2q1b1pp/p2ppn2/1p6/3QP3/1BN1B3/PPP3PP/R4RK1 w - - 0 1",
    "2r3k1/pppR1pp1/4p3/4P1P1/5P2/1P4K1/P1P5/8 w - - 0 1",
    "r1bqkb1r/4npp1/p1p4p/1p1pP1B1/8/1B6/PPPN1PPP/R2Q1RK1 w kq - 0 1",
    "2kr1bnr/pbpq4/2n1pp2/3p3p/3P1P1B/2N2N1Q/PPP3PP/2KR1B1R w - - 0 1",
    "2r1nrk1/p2q1ppp/bp1p4/n1pPp3/P1P1P3/2PBB1N1/4QPPP/R4RK1 w - - 0 1",
    "r1b1k2r/ppppnppp/2n2q2/2b5/3NP3/2P1B3/PP3PPP/RN1QKB1R w KQkq - 0 1",
    "8/8/8/4k3/8/8/2K1P3/8 w - - 0 1",
    "8/8/3k4/8/8/3K4/2R5/8 w - - 0 1",
    "6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1",
    "8/5pk1/6p1/8/3B4/6P1/5PK1/8 b - - 0 1",
    "4k3/8/8/8/8/8/4P3/4K2R w K - 0 1",
    "2r5/3pk3/8/2P5/8/2K5/8/8 w - - 5 4",
    "5k2/8/8/8/8/8/8/4K2Q w - - 0 1",
]


@dataclass
class BenchResult:
    nodes: int
    seconds: float
    nps: int
    depth_nodes: list[int] = field(default_factory=list)
    """Nodes to complete each depth (index 0 is depth 1), summed over the positions."""
    depth_seconds: list[float] = field(default_factory=list)
    """Seconds to complete each depth, summed over the positions."""
    searched: int = 0
    """Positions searched to the end; fewer than asked when stopped."""
    stopped: bool = False
    """``stop`` was set: the bench ended early and printed no totals."""


class _DepthRecorder:
    """Nodes and seconds at which one search completed each depth."""

    def __init__(self, depth: int) -> None:
        self.start = time.perf_counter()
        self.nodes = [0] * depth
        self.seconds = [0.0] * depth

    def on_iteration(self, info: IterationInfo) -> None:
        self.nodes[info.depth - 1] = info.nodes
        self.seconds[info.depth - 1] = time.perf_counter() - self.start


def run_bench(
    depth: Optional[int] = None,
    hash_mb: int = BENCH_HASH_MB,
    out: Optional[Callable[[str], None]] = None,
    selective: bool = True,
    fens: Optional[list[str]] = None,
    threads: int = 1,
    stop: Optional[threading.Event] = None,
    network: Optional[str] = None,
) -> BenchResult:
    """Search every bench position to ``depth``; report through ``out``.

    ``network``: a network file to evaluate with (engine.core.nnue; the signature
    is then that network's), None for the hand-written evaluation.

    ``stop``, once set, aborts the bench (see the module doc).

    ``selective=False`` turns off every pruning and reduction (plain PVS), to show
    what selectivity saves; ``fens`` replaces the bench positions. ``threads`` > 1
    adds Lazy SMP helpers (engine.play.smp): the node count then includes theirs and is
    no longer the signature (helpers race each other), and the depth figures are
    the main searcher's, so they give the time to depth.
    """
    depth = depth or BENCH_DEPTH
    pool = make_pool(threads, hash_mb, out or (lambda _: None))
    tt = TranspositionTable(hash_mb, words=pool.table_words if pool is not None else None)
    try:
        positions = fens or BENCH_FENS
        return _run(depth, tt, pool, out, selective, positions, threads, stop, network)
    finally:
        if pool is not None:
            tt.use(array("Q", bytes(16)))  # let go of the shared table first
            pool.close()


def _telling(
    pool: HelperPool, on_iteration: Callable[[IterationInfo], None]
) -> Callable[[IterationInfo], None]:
    """``on_iteration`` that also tells the helpers how deep the main search is."""

    def report(info: IterationInfo) -> None:
        if info.bound == BOUND_EXACT and info.multipv == 1:
            pool.main_completed(info.depth)
        on_iteration(info)

    return report


def _run(
    depth: int,
    tt: TranspositionTable,
    pool: Optional[HelperPool],
    out: Optional[Callable[[str], None]],
    selective: bool,
    positions: list[str],
    threads: int,
    stop: Optional[threading.Event] = None,
    network: Optional[str] = None,
) -> BenchResult:
    stop = stop or threading.Event()
    searcher = Searcher(tt)
    searcher.selective = selective
    if network is not None:
        searcher.use_network(load_network(network))
    total_nodes = 0
    total_seconds = 0.0
    depth_nodes = [0] * depth
    depth_seconds = [0.0] * depth
    searched = 0
    for number, fen in enumerate(positions, start=1):
        if stop.is_set():
            break
        tt.clear()
        searcher.new_game()
        board = chess.Board(fen)
        recorder = _DepthRecorder(depth)
        on_iteration: Callable[[IterationInfo], None] = recorder.on_iteration
        if pool is not None:
            pool.start(board, depth, (tt.age + 1) & 0xFF, network)
            on_iteration = _telling(pool, recorder.on_iteration)
        result = searcher.search(
            board, SearchParams(max_depth=depth), SearchControl(stop=stop), on_iteration
        )
        seconds = time.perf_counter() - recorder.start
        reached, reached_at = recorder.nodes, recorder.seconds
        total_nodes += result.nodes
        if pool is not None:
            pool.stop()
            pool.wait_idle()
            total_nodes += pool.nodes()
        if stop.is_set():
            break  # the search was cut short: its count is not the bench's
        searched += 1
        total_seconds += seconds
        # A search that ends early (a mate proven) has reached every deeper depth too.
        for d in range(depth):
            if d >= result.depth:
                reached[d], reached_at[d] = result.nodes, seconds
            depth_nodes[d] += reached[d]
            depth_seconds[d] += reached_at[d]
        if out is not None:
            move = result.best_move.uci() if result.best_move else "(none)"
            out(f"position {number:2d}/{len(positions)}: {move:6s} {result.nodes:8d} nodes")
    nps = int(total_nodes / total_seconds) if total_seconds > 0 else 0
    if stop.is_set():
        return BenchResult(total_nodes, total_seconds, nps, searched=searched, stopped=True)
    if out is not None:
        out("===========================")
        out("Depth      Nodes   Time (ms)   EBF")
        for d in range(depth):
            ebf = depth_nodes[d] / depth_nodes[d - 1] if d and depth_nodes[d - 1] else 0.0
            out(f"{d + 1:5d} {depth_nodes[d]:10d} {int(depth_seconds[d] * 1000):11d} {ebf:5.2f}")
        out("===========================")
        out(f"Selectivity     : {'on' if selective else 'off (plain PVS)'}")
        if threads > 1:
            out(f"Threads         : {threads} (nodes: all searchers; depths: the main one)")
        out(f"Total time (ms) : {int(total_seconds * 1000)}")
        out(f"Nodes searched  : {total_nodes}")
        out(f"Nodes/second    : {nps}")
    return BenchResult(
        total_nodes, total_seconds, nps, depth_nodes, depth_seconds, searched=searched
    )
