"""scripts/training/fit.py through its command line: each evaluation's loss on
labelled positions, statically and after quiescence, and a network's paired
difference from the hand-written evaluation."""

from __future__ import annotations

import math
import re
from pathlib import Path

import chess

from scripts.training.dataset import Sample, append_member
from tests.conftest import run_repo_script
from tests.networks import random_network
from tests.references import evaluate

FENS = [
    "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
    "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4",
    "8/5k2/8/3K4/8/8/2R5/8 b - - 0 60",
    "4k3/8/8/8/8/8/3PP3/4K3 w - - 0 1",
    "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3",  # mate: skipped
]


def loss(output: str, name: str) -> float:
    match = re.search(rf"^{re.escape(name)}\s+(\d\.\d+) ±", output, re.MULTILINE)
    assert match, output
    return float(match.group(1))


def test_fit_scores_the_hand_written_evaluation_and_a_network(tmp_path: Path) -> None:
    # Labels that are the hand-written evaluation itself (White's view): its static
    # loss is exactly zero, and a random network's is not.
    data = tmp_path / "data.gz"
    samples = []
    for fen in FENS:
        board = chess.Board(fen)
        white = evaluate(board) * (1 if board.turn == chess.WHITE else -1)
        samples.append(Sample(fen, white, "*"))
    append_member(data, [f"{s.fen};{s.score};{s.result}" for s in samples] + ["#done all"])
    net = tmp_path / "random.nnue"
    random_network(16, seed=3).write(net)

    done = run_repo_script("training.fit", str(data), "--eval-file", str(net), "--quiescence")
    assert done.returncode == 0, done.stderr
    assert "positions 4 (skipped, game over: 1); loss at K 400" in done.stdout
    assert loss(done.stdout, "hand-written") == 0.0
    network = loss(done.stdout, str(net))
    assert network > 0.0
    difference = re.search(rf"{re.escape(str(net))} .*minus hand-written \+(\d\.\d+)", done.stdout)
    assert difference and math.isclose(float(difference.group(1)), network, abs_tol=2e-6)
    assert f"{net}, quiescence" in done.stdout and "hand-written, quiescence" in done.stdout

    # Bad input: one line, no traceback.
    missing = run_repo_script("training.fit", str(tmp_path / "none.gz"))
    assert missing.returncode == 2
    assert missing.stderr.strip().splitlines() == [
        f"fit: error: cannot read {str(tmp_path / 'none.gz')!r}: no such file"
    ]
    bad = tmp_path / "bad.gz"
    append_member(bad, ["not a position;1;*"])
    broken = run_repo_script("training.fit", str(bad))
    assert broken.returncode == 1
    assert len(broken.stderr.strip().splitlines()) == 1 and "bad.gz" in broken.stderr
