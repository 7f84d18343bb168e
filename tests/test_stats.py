"""cutoff stats and the textbook searches it measures (engine.analysis.textbook,
engine.analysis.stats)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import chess
import pytest
from uci_harness import REPO, engine_command

from engine.analysis import stats
from engine.analysis.textbook import CUT, PV, TextbookSearch
from engine.core.search import SearchControl, Searcher, SearchParams
from engine.core.tt import TranspositionTable
from engine.play.bench import BENCH_FENS
from tests.conftest import skip_in_compiled_build

FENS = [
    chess.STARTING_FEN,
    "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    "7k/5Q2/6K1/8/8/8/8/8 w - - 0 1",  # mate in one: mate scores agree too
    "2rr3k/pp3pp1/1nnqbN1p/3pN3/2pP4/2P3Q1/PPB4P/R4RK1 w - - 0 1",
]


@pytest.mark.parametrize("fen", FENS)
def test_every_textbook_search_returns_the_minimax_value(fen: str) -> None:
    board = chess.Board(fen)
    for depth in (1, 2, 3):
        value = TextbookSearch("cutoff").minimax(board, depth)
        for order in ("random", "cutoff"):
            for soft in (False, True):
                assert TextbookSearch(order, seed=7).alphabeta(board, depth, soft) == value
            assert TextbookSearch(order, seed=7).pvs(board, depth) == value


@pytest.mark.parametrize("fen", FENS)
def test_node_types_add_up_and_fail_soft_is_never_bigger(fen: str) -> None:
    board = chess.Board(fen)
    for order in ("random", "cutoff"):
        hard = TextbookSearch(order, seed=3)
        hard.alphabeta(board, 3, soft=False)
        soft = TextbookSearch(order, seed=3)
        soft.alphabeta(board, 3, soft=True)
        # Without a TT or aspiration windows, a bound outside the window changes no
        # decision: fail-soft visits exactly the nodes fail-hard does.
        assert soft.counts.nodes == hard.counts.nodes
        for search in (hard, soft):
            counts = search.counts
            assert sum(counts.expected.values()) == counts.interior
            assert sum(counts.outcome.values()) == counts.interior
            assert counts.first_move_cuts <= counts.outcome[CUT]
            # Every node is a leaf, an interior node, or one without legal moves.
            assert counts.nodes >= counts.leaves + counts.interior
    pvs = TextbookSearch("cutoff")
    pvs.pvs(board, 3)
    assert sum(pvs.counts.expected.values()) == pvs.counts.interior
    assert sum(pvs.counts.outcome.values()) == pvs.counts.interior
    # A zero-window node cannot end exact: every exact result is an expected PV node.
    assert pvs.counts.outcome[PV] <= pvs.counts.expected[PV]


def test_cutoffs_order_beats_random_and_minimax() -> None:
    board = chess.Board(BENCH_FENS[5])
    leaves = {}
    for name, search in (("minimax", "minimax"), ("random", "random"), ("cutoff", "cutoff")):
        textbook = TextbookSearch("cutoff" if name == "minimax" else search, seed=1)
        if name == "minimax":
            textbook.minimax(board, 3)
        else:
            textbook.alphabeta(board, 3, soft=True)
        leaves[name] = textbook.counts.leaves
    assert leaves["cutoff"] < leaves["random"] < leaves["minimax"]


def test_observing_the_full_search_changes_nothing() -> None:
    """The observed search visits the same tree as the plain one, and its figures add up."""
    # In this process, not through `cutoff stats` (which runs the sources itself).
    skip_in_compiled_build("the observed table subclasses the transposition table")
    board = chess.Board(BENCH_FENS[1])
    plain = Searcher(TranspositionTable(16)).search(
        board, SearchParams(max_depth=5), SearchControl()
    )
    observed = stats.full_search(board, 5)
    assert observed.nodes == plain.nodes
    assert sum(observed.outcome.values()) > 0
    assert 0.5 < observed.first_move_cuts / observed.outcome[CUT] <= 1.0
    assert observed.tt_move_cuts <= observed.tt_move_available


def run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*engine_command(), "stats", *args],
        cwd=str(tmp_path),
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )


def test_cutoff_stats_command(tmp_path: Path) -> None:
    epd = tmp_path / "two.epd"
    epd.write_text(f"{FENS[1]}\n{FENS[2]}\n")
    done = run(tmp_path, str(epd), "--depth", "3", "--minimax-depth", "2", "--json")
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["positions"] == 2 and data["value_mismatches"] == []
    leaves = data["leaves"]
    assert set(leaves["minimax"]) == {"1", "2"} and set(leaves["pvs-cutoff"]) == {"1", "2", "3"}
    assert leaves["alphabeta-soft-cutoff"]["3"] < leaves["alphabeta-soft-random"]["3"]
    assert data["node_types"]["full search"]["first_move_cut_share"] > 0.5
    done = run(tmp_path, str(epd), "--depth", "2", "--minimax-depth", "2")
    assert done.returncode == 0 and "| minimax |" in done.stdout and "agree" in done.stdout
    pytest.importorskip("matplotlib")
    png = tmp_path / "nodes.png"
    done = run(tmp_path, str(epd), "--depth", "2", "--plot", str(png), "--quiet")
    assert done.returncode == 0, done.stderr
    assert png.read_bytes()[:4] == b"\x89PNG"
