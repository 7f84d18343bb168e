"""The bench through its real entry point: deterministic node count, nps printed last."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import chess

from engine.bench import BENCH_FENS

REPO = Path(__file__).resolve().parents[1]


def _bench(tmp_path: Path) -> tuple[int, list[str]]:
    done = subprocess.run(
        [sys.executable, "-m", "engine", "bench", "--depth", "3"],
        cwd=str(tmp_path),
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    lines = done.stdout.strip().splitlines()
    match = re.search(r"Nodes searched\s*:\s*(\d+)", done.stdout)
    assert match, done.stdout
    return int(match.group(1)), lines


def test_bench_node_count_is_deterministic(tmp_path: Path) -> None:
    first, lines = _bench(tmp_path)
    second, _ = _bench(tmp_path)
    assert first == second > 0
    assert re.match(r"Nodes/second\s*:\s*\d+", lines[-1])


def test_bench_positions_are_legal() -> None:
    # An illegal position (the side not to move in check) lets the search capture
    # a king, and the bench would then measure a path no game can reach.
    for fen in BENCH_FENS:
        assert chess.Board(fen).is_valid(), fen
