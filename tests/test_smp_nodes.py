"""Node limits with Lazy SMP (engine.play.smp, engine.play.controller).

``go nodes N`` bounds the nodes of all threads together, as in Stockfish: the total
an engine with ``Threads 2`` reports is at most N plus one poll interval per thread
(``POLL_INTERVAL_NODES``), through the ``cutoff`` process and through ``Analyser``.
"""

from __future__ import annotations

import os
from pathlib import Path

import chess
import chess.engine
import pytest
from uci_harness import Engine, field, info_lines

from engine.analysis import Analyser
from engine.core.search import POLL_INTERVAL_NODES

TWO_CPUS = pytest.mark.skipif(
    (os.cpu_count() or 1) < 2, reason="Threads 2 needs two CPUs (Threads is capped at the cores)"
)
OVERSHOOT = 2 * POLL_INTERVAL_NODES
"""At most one poll interval per thread past the limit (smp's module doc), two threads."""


def _final_nodes(lines: list[str]) -> int:
    return int(field(info_lines(lines)[-1], "nodes"))


@TWO_CPUS
@pytest.mark.parametrize("nodes", [20000, 3000])
def test_go_nodes_bounds_the_nodes_of_all_threads_together(tmp_path: Path, nodes: int) -> None:
    eng = Engine(tmp_path)
    eng.handshake()
    eng.send("setoption name Threads value 2")
    eng.send("isready")
    eng.expect("readyok", timeout=60)
    for position in ("position startpos", "position startpos moves e2e4 e7e5 g1f3"):
        eng.send(position)
        lines, _, _ = eng.search(f"go nodes {nodes}", timeout=120)
        total = _final_nodes(lines)
        # Before: about twice the limit (33,216 and 38,080 for 20,000).
        assert nodes <= total <= nodes + OVERSHOOT, (nodes, total)
    eng.close()


@TWO_CPUS
def test_analyser_node_limit_bounds_both_threads() -> None:
    with Analyser(threads=2) as analyser:
        assert analyser.threads == 2
        info = analyser.analyse(chess.Board(), chess.engine.Limit(nodes=20000))
        assert isinstance(info, dict)
        # Before: 40,064.
        assert 20000 <= info["nodes"] <= 20000 + OVERSHOOT, info["nodes"]
