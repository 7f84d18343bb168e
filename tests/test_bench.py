"""The bench through its real entry point: deterministic node count, nps printed last."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import chess

from engine.play.bench import BENCH_FENS

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


def test_a_stopped_bench_prints_no_totals() -> None:
    """stop (set from the UCI reader) ends the bench between or inside searches; a
    partial node count is not the signature, so no totals are printed."""
    import threading

    from engine.play.bench import run_bench

    stop = threading.Event()
    lines: list[str] = []

    def out(line: str) -> None:
        lines.append(line)
        if line.startswith("position  2/"):
            stop.set()

    result = run_bench(depth=2, out=out, fens=BENCH_FENS[:5], stop=stop)
    assert result.stopped and result.searched == 2
    assert [line[:12] for line in lines] == ["position  1/", "position  2/"]
    stopped_at_once = run_bench(depth=30, out=lines.append, stop=stop)
    assert stopped_at_once.stopped and stopped_at_once.searched == 0
    finished = run_bench(depth=1, out=lines.append, fens=BENCH_FENS[:2])
    assert not finished.stopped and finished.searched == 2
    assert lines[-1].startswith("Nodes/second")
