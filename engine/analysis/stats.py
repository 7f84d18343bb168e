"""``cutoff stats``: what alpha-beta saves, measured on Cutoff's own positions and search.

For a set of positions (``DEFAULT_POSITIONS``: openings, middlegames, endgames and
tactics, or an EPD file) and depths 1..N, it counts the leaves of the textbook
searches (engine.analysis.textbook): minimax, alpha-beta fail-hard and fail-soft with
random and with Cutoff's move order, and PVS with Cutoff's order; and the nodes
of Cutoff's full search (transposition table, quiescence, selectivity), reported
apart since its value differs. Beside them stand the textbook formulas computed
with each position's measured mean branching factor ``b``:

* minimax visits ``b^d`` leaves;
* alpha-beta with perfect ordering ``b^ceil(d/2) + b^floor(d/2) - 1`` (Knuth and
  Moore), with random ordering about ``b^(3d/4)``;
* real engines "roughly ``b^(0.7d)``", an effective branching factor of 3 to 6.

It also reports the effective branching factor per depth, the node types (PV,
Cut, All) as the search expects them and as their results turn out, the share of
Cut nodes cut by the first move searched (and, in the full search, by the TT
move), PVS re-searches, and nodes, time and nodes/s per position class; and it
checks that minimax, both alpha-beta variants and PVS agree on the root value.

The full search is observed from outside (``_ObservedTable`` stands in for its TT,
and the searcher's ``on_make`` hook reports the moves it makes), so the engine pays
nothing when nobody measures. Interpreted code cannot subclass compiled classes, so with a compiled
build (``cutoff compile``) ``cutoff stats`` loads the search from its sources
(engine.cli asks ``engine.compiled.use_sources`` before importing this module).
Output: a markdown report, a dict for JSON, and a log-scale plot (matplotlib, the
``plot`` extra). This module must not print: engine.cli does.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Union

import chess

from engine.analysis.plots import save_figure, use_file_backend
from engine.analysis.textbook import ALL, CUT, PV, Counts, TextbookSearch
from engine.core.search import SearchControl, Searcher, SearchParams
from engine.core.tt import BOUND_EXACT, BOUND_LOWER, TranspositionTable

DEFAULT_POSITIONS: tuple[tuple[str, str], ...] = (
    ("opening", chess.STARTING_FEN),
    ("opening", "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"),
    ("opening", "rnbqkb1r/ppp2ppp/4pn2/3p4/2PP4/2N5/PP2PPPP/R1BQKBNR w KQkq - 2 4"),
    ("middlegame", "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10"),
    ("middlegame", "r1b2rk1/2q1b1pp/p2ppn2/1p6/3QP3/1BN1B3/PPP3PP/R4RK1 w - - 0 1"),
    ("middlegame", "2r1nrk1/p2q1ppp/bp1p4/n1pPp3/P1P1P3/2PBB1N1/4QPPP/R4RK1 w - - 0 1"),
    ("endgame", "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1"),
    ("endgame", "6k1/5ppp/8/8/8/8/5PPP/3R2K1 w - - 0 1"),
    ("endgame", "8/5pk1/6p1/8/3B4/6P1/5PK1/8 b - - 0 1"),
    ("tactics", "2rr3k/pp3pp1/1nnqbN1p/3pN3/2pP4/2P3Q1/PPB4P/R4RK1 w - - 0 1"),
    ("tactics", "1k1r4/pp1b1R2/3q2pp/4p3/2B5/4Q3/PPP2B2/2K5 b - - 0 1"),
    ("tactics", "r1b1k2r/ppppnppp/2n2q2/2b5/3NP3/2P1B3/PP3PPP/RN1QKB1R w KQkq - 0 1"),
)
"""(class, FEN): positions from the bench and well-known test suites."""

VARIANTS = ("minimax", "alphabeta-hard-random", "alphabeta-soft-random",
            "alphabeta-hard-cutoff", "alphabeta-soft-cutoff", "pvs-cutoff")  # fmt: skip
"""The textbook searches, as named in the report (leaves counted)."""
FULL = "full search"
FORMULAS = ("b^d", "b^ceil(d/2)+b^floor(d/2)-1", "b^(3d/4)", "b^(0.7d)")


def formula_leaves(name: str, b: float, depth: int) -> float:
    """A textbook formula's leaf count for branching factor ``b`` and ``depth``."""
    if name == "b^d":
        return float(b**depth)
    if name == "b^ceil(d/2)+b^floor(d/2)-1":
        return float(b ** math.ceil(depth / 2) + b ** math.floor(depth / 2) - 1)
    if name == "b^(3d/4)":
        return float(b ** (0.75 * depth))
    return float(b ** (0.7 * depth))


# ----------------------------------------------------- observing the full search


@dataclass
class FullCounts:
    """What Cutoff's real search did, seen through its TT and its position."""

    nodes: int = 0
    outcome: dict[str, int] = field(default_factory=lambda: {PV: 0, CUT: 0, ALL: 0})
    first_move_cuts: int = 0
    tt_move_cuts: int = 0
    tt_move_available: int = 0
    seconds: float = 0.0


class _Observer:
    """Open nodes by ply: the TT move they found and the first move they searched."""

    def __init__(self) -> None:
        self.counts = FullCounts()
        self.nodes: dict[int, list[int]] = {}  # ply -> [tt move, first move]
        self.searcher: Optional[Searcher] = None

    @property
    def ply(self) -> int:
        return self.searcher.ply_from_root() if self.searcher is not None else 0

    def made(self, ply: int, code: int) -> None:
        """The search makes the move ``code`` at ``ply`` (its ``on_make`` hook)."""
        node = self.nodes.get(ply)
        if node is not None and node[1] == 0:
            node[1] = code


class _ObservedTable(TranspositionTable):
    def __init__(self, observer: _Observer, size_mb: int = 16) -> None:
        super().__init__(size_mb)
        self.observer = observer

    def probe_native(self, key: int) -> tuple[int, int, int, int]:
        entry = super().probe_native(key)
        self.observer.nodes[self.observer.ply] = [entry[0] if entry[2] else 0, 0]
        return entry

    def store_native(self, key: int, depth: int, bound: int, score: int, move_code: int) -> None:
        observer = self.observer
        node = observer.nodes.pop(observer.ply, None)
        counts = observer.counts
        kind = PV if bound == BOUND_EXACT else CUT if bound == BOUND_LOWER else ALL
        counts.outcome[kind] += 1
        if kind == CUT and node is not None and move_code:
            counts.first_move_cuts += node[1] == move_code
            if node[0]:
                counts.tt_move_available += 1
                counts.tt_move_cuts += node[0] == move_code
        super().store_native(key, depth, bound, score, move_code)


def full_search(board: chess.Board, depth: int) -> FullCounts:
    """Cutoff's search to ``depth`` from an empty table, observed."""
    observer = _Observer()
    searcher = Searcher(_ObservedTable(observer))
    observer.searcher = searcher
    searcher.on_make = observer.made
    started = time.process_time()
    result = searcher.search(board, SearchParams(max_depth=depth), SearchControl())
    observer.counts.seconds = time.process_time() - started
    observer.counts.nodes = result.nodes
    return observer.counts


# --------------------------------------------------------------- measuring


@dataclass
class PositionRun:
    """Every variant on one position at every depth."""

    kind: str
    fen: str
    branching: float
    leaves: dict[str, dict[int, int]] = field(default_factory=dict)
    values: dict[str, dict[int, int]] = field(default_factory=dict)
    counts: dict[str, dict[int, Counts]] = field(default_factory=dict)
    full: dict[int, FullCounts] = field(default_factory=dict)


def _textbook(board: chess.Board, variant: str, depth: int, seed: int) -> tuple[int, Counts]:
    kind, *rest = variant.split("-")
    order = rest[-1] if rest else "cutoff"
    search = TextbookSearch(order, seed)
    if kind == "minimax":
        value = search.minimax(board, depth)
    elif kind == "pvs":
        value = search.pvs(board, depth)
    else:
        value = search.alphabeta(board, depth, soft=rest[0] == "soft")
    return value, search.counts


def measure_position(
    kind: str, fen: str, depth: int, minimax_depth: int, seed: int = 1
) -> PositionRun:
    board = chess.Board(fen)
    probe = TextbookSearch("cutoff", seed)
    probe.minimax(board, min(2, depth))
    run = PositionRun(kind, fen, probe.counts.branching or 1.0)
    for variant in VARIANTS:
        top = min(depth, minimax_depth) if variant == "minimax" else depth
        for d in range(1, top + 1):
            value, counts = _textbook(board, variant, d, seed)
            run.leaves.setdefault(variant, {})[d] = counts.leaves
            run.values.setdefault(variant, {})[d] = value
            run.counts.setdefault(variant, {})[d] = counts
    for d in range(1, depth + 1):
        run.full[d] = full_search(board, d)
    return run


def value_mismatches(runs: list[PositionRun]) -> list[str]:
    """Where the textbook searches disagree on a root value (there should be none)."""
    problems = []
    for run in runs:
        for d, value in run.values["alphabeta-soft-cutoff"].items():
            for variant in VARIANTS:
                other = run.values[variant].get(d)
                if other is not None and other != value:
                    problems.append(f"{run.fen} depth {d}: {variant} {other} != {value}")
    return problems


def measure(
    positions: list[tuple[str, str]],
    depth: int,
    minimax_depth: int,
    progress: Optional[Callable[[int], None]] = None,
) -> list[PositionRun]:
    runs = []
    for number, (kind, fen) in enumerate(positions, start=1):
        runs.append(measure_position(kind, fen, depth, minimax_depth))
        if progress is not None:
            progress(number)
    return runs


# ------------------------------------------------------------------ report


def summary(runs: list[PositionRun], depth: int) -> dict[str, Any]:
    """Everything the report shows, as plain data (the JSON output)."""
    depths = list(range(1, depth + 1))
    totals: dict[str, dict[int, int]] = {}
    for variant in VARIANTS:
        for d in depths:
            values = [run.leaves[variant].get(d) for run in runs]
            if all(v is not None for v in values):
                totals.setdefault(variant, {})[d] = sum(v for v in values if v is not None)
    totals[FULL] = {d: sum(run.full[d].nodes for run in runs) for d in depths}
    formulas = {
        name: {
            d: round(sum(formula_leaves(name, run.branching, d) for run in runs)) for d in depths
        }
        for name in FORMULAS
    }
    ebf = {
        name: {
            d: round(series[d] / series[d - 1], 2)
            for d in depths[1:]
            if series.get(d - 1) and d in series
        }
        for name, series in totals.items()
    }
    types: dict[str, Any] = {}
    for variant in ("alphabeta-soft-cutoff", "pvs-cutoff"):
        expected = {
            t: sum(run.counts[variant][depth].expected[t] for run in runs) for t in (PV, CUT, ALL)
        }
        outcome = {
            t: sum(run.counts[variant][depth].outcome[t] for run in runs) for t in (PV, CUT, ALL)
        }
        first = sum(run.counts[variant][depth].first_move_cuts for run in runs)
        researches = sum(run.counts[variant][depth].researches for run in runs)
        types[variant] = {
            "expected": expected,
            "outcome": outcome,
            "first_move_cut_share": round(first / outcome[CUT], 3) if outcome[CUT] else None,
            "researches": researches,
        }
    outcome = {t: sum(run.full[depth].outcome[t] for run in runs) for t in (PV, CUT, ALL)}
    first = sum(run.full[depth].first_move_cuts for run in runs)
    tt_cuts = sum(run.full[depth].tt_move_cuts for run in runs)
    tt_available = sum(run.full[depth].tt_move_available for run in runs)
    types[FULL] = {
        "outcome": outcome,
        "first_move_cut_share": round(first / outcome[CUT], 3) if outcome[CUT] else None,
        "tt_move_cut_share": round(tt_cuts / tt_available, 3) if tt_available else None,
    }
    classes: dict[str, Any] = {}
    for kind in dict.fromkeys(run.kind for run in runs):
        chosen = [run for run in runs if run.kind == kind]
        nodes = sum(run.full[depth].nodes for run in chosen)
        seconds = sum(run.full[depth].seconds for run in chosen)
        classes[kind] = {
            "positions": len(chosen),
            "mean_nodes": round(nodes / len(chosen)),
            "mean_seconds": round(seconds / len(chosen), 3),
            "nodes_per_second": round(nodes / seconds) if seconds else None,
            "mean_branching": round(sum(r.branching for r in chosen) / len(chosen), 1),
        }
    return {
        "positions": len(runs),
        "depth": depth,
        "mean_branching": round(sum(run.branching for run in runs) / len(runs), 2),
        "leaves": totals,
        "formulas": formulas,
        "ebf": ebf,
        "node_types": types,
        "classes": classes,
        "value_mismatches": value_mismatches(runs),
    }


def markdown(data: dict[str, Any]) -> str:
    depths = list(range(1, data["depth"] + 1))
    lines = [
        f"Positions: {data['positions']}; mean branching factor b = {data['mean_branching']} "
        "(legal moves per interior node of the minimax tree). Counts are summed over the "
        "positions: leaves for the textbook searches and formulas, all nodes (quiescence "
        "included) for the full search.",
        "",
        "| search | " + " | ".join(f"d={d}" for d in depths) + " |",
        "| --- | " + " | ".join("---:" for _ in depths) + " |",
    ]
    for name, series in {**data["leaves"], **data["formulas"]}.items():
        cells = [f"{series[d]:,}" if d in series else "" for d in depths]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += ["", "Effective branching factor, N(d) / N(d-1):", "",
              "| search | " + " | ".join(f"d={d}" for d in depths[1:]) + " |",
              "| --- | " + " | ".join("---:" for _ in depths[1:]) + " |"]  # fmt: skip
    for name, series in data["ebf"].items():
        cells = [f"{series[d]:.2f}" if d in series else "" for d in depths[1:]]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += ["", f"Node types at depth {data['depth']} (expected by Knuth and Moore's "
              "classification / as the results turned out):", "",
              "| search | PV | Cut | All | first move cut | TT move cut | re-searches |",
              "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]  # fmt: skip
    for name, entry in data["node_types"].items():
        expected = entry.get("expected")
        outcome = entry["outcome"]
        cells = [
            f"{expected[t]:,} / {outcome[t]:,}" if expected else f"- / {outcome[t]:,}"
            for t in (PV, CUT, ALL)
        ]
        first = entry["first_move_cut_share"]
        tt_share = entry.get("tt_move_cut_share")
        cells.append(f"{first:.1%}" if first is not None else "")
        cells.append(f"{tt_share:.1%}" if tt_share is not None else "")
        cells.append(f"{entry['researches']:,}" if "researches" in entry else "")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += ["", f"Full search at depth {data['depth']}, by position class:", "",
              "| class | positions | b | mean nodes | mean time (s) | nodes/s |",
              "| --- | ---: | ---: | ---: | ---: | ---: |"]  # fmt: skip
    for kind, entry in data["classes"].items():
        lines.append(
            f"| {kind} | {entry['positions']} | {entry['mean_branching']} | "
            f"{entry['mean_nodes']:,} | {entry['mean_seconds']:.3f} | "
            f"{entry['nodes_per_second'] or 0:,} |"
        )
    mismatches = data["value_mismatches"]
    lines += ["", "Root values: minimax, alpha-beta (both) and PVS "
              + ("agree at every depth." if not mismatches else
                 f"DISAGREE in {len(mismatches)} cases: " + "; ".join(mismatches[:5]))]  # fmt: skip
    return "\n".join(lines) + "\n"


def plot(data: dict[str, Any], path: Union[str, Path]) -> None:
    """Leaves (nodes, for the full search) against depth, log scale; formulas dashed."""
    use_file_backend()
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(8, 5), dpi=100)
    for name, series in data["leaves"].items():
        depths = sorted(series)
        axes.plot(depths, [series[d] for d in depths], marker="o", label=name)
    for name, series in data["formulas"].items():
        depths = sorted(series)
        axes.plot(depths, [series[d] for d in depths], linestyle="--", linewidth=1, label=name)
    axes.set_yscale("log")
    axes.set_xticks(range(1, data["depth"] + 1))
    axes.set_xlabel("depth (plies)")
    axes.set_ylabel("leaves (nodes for the full search), summed over positions")
    axes.set_title(
        f"What alpha-beta saves: {data['positions']} positions, b = {data['mean_branching']}"
    )
    axes.legend(fontsize=7, ncol=2)
    axes.grid(True, which="both", alpha=0.3)
    figure.tight_layout()
    save_figure(figure, path)
    plt.close(figure)
