"""The host's yardstick: python-chess's raw perft rate, which Cutoff's own speed cannot move.

Responsible for measuring leaves/s of a plain perft on python-chess as installed and
interpreted (legal generation, push/pop at every ply: the start position at depth 4
and Kiwipete at depth 3, per-process CPU time) and for the factor that scales a
clock to a host of ``REFERENCE_LEAVES_PER_SECOND``. The walk is this module's own
Python code, not the engine's (which ``cutoff compile`` compiles), so that a faster
Cutoff build never changes the figure. ``scripts.speed.speed`` reports it beside the
bench; ``cutoff-ladder`` prints it beside every ladder and scales its clock by it.
It must not import the engine.
"""

from __future__ import annotations

import statistics
import time

import chess

PERFT_CASES = (
    (chess.STARTING_FEN, 4, 197281),
    ("r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1", 3, 97862),
)
REFERENCE_LEAVES_PER_SECOND = 240_000
"""The perft rate at which a ladder's time control is played as written."""
RUNS = 3
"""Runs whose median is the host's figure: about 4 s on a 240,000 leaves/s host."""


def perft(board: chess.Board, depth: int) -> int:
    if depth == 0:
        return 1
    nodes = 0
    for move in board.generate_legal_moves():
        board.push(move)
        nodes += perft(board, depth - 1)
        board.pop()
    return nodes


def perft_leaves_per_second() -> float:
    """One run over ``PERFT_CASES``: leaves per CPU second."""
    leaves = 0
    start = time.process_time()
    for fen, depth, expected in PERFT_CASES:
        count = perft(chess.Board(fen), depth)
        if count != expected:
            raise SystemExit(f"python-chess perft mismatch on {fen}: {count} != {expected}")
        leaves += count
    return leaves / (time.process_time() - start)


def measure(runs: int = RUNS) -> int:
    """The median of ``runs`` runs, in whole leaves/s (what ladders record and print)."""
    return round(statistics.median(perft_leaves_per_second() for _ in range(max(1, runs))))


def scale_factor(leaves_per_second: float) -> float:
    """How much longer a clock must be on this host than on the reference host."""
    return REFERENCE_LEAVES_PER_SECOND / leaves_per_second
