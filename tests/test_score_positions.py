"""scripts/tuning/score_positions.py through its command line, with Cutoff as the scoring engine."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import chess

from scripts.training.dataset import append_member, format_sample, read_samples
from tests.conftest import REPO, run_repo_script

SAMPLE = REPO / "tests" / "data" / "tuning_sample.gz"
ENGINE = f"{sys.executable} -m engine"


def run_script(*args: str) -> subprocess.CompletedProcess[str]:
    return run_repo_script("tuning.score_positions", *args)


def test_scores_are_added_in_order_and_reproducibly(tmp_path: Path) -> None:
    source = tmp_path / "in.gz"
    samples = list(read_samples(SAMPLE))[:12]
    append_member(source, [format_sample(sample) for sample in samples])
    outputs = []
    for workers in ("1", "2"):
        out = tmp_path / f"out{workers}.gz"
        done = run_script(
            str(source), "--engine", ENGINE, "--nodes", "200", "--workers", workers,
            "--out", str(out),
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith("positions 12 ")
        outputs.append(out.read_bytes())
    # The same scores whatever the number of workers (empty hash before each search).
    assert outputs[0] == outputs[1]
    scored = list(read_samples(tmp_path / "out1.gz"))
    assert len(scored) == len(samples)
    for original, sample in zip(samples, scored):
        # The same position and result, the score Cutoff's (not Stockfish's) now.
        assert (sample.fen, sample.result) == (original.fen, original.result)
        assert -2000 <= sample.score <= 2000
    assert [s.score for s in scored] != [s.score for s in samples]
    # Scores are White's view: a position where White is a queen up scores high
    # whoever is to move.
    up = tmp_path / "up.gz"
    append_member(up, [f"4k3/8/8/8/8/8/8/3QK3 {turn} - - 0 1;0;1-0" for turn in "wb"])
    done = run_script(
        str(up), "--engine", ENGINE, "--nodes", "200", "--out", str(tmp_path / "u.gz")
    )
    assert done.returncode == 0, done.stderr
    assert all(sample.score > 500 for sample in read_samples(tmp_path / "u.gz"))


def test_bad_input_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.gz"
    append_member(bad, [f"{chess.STARTING_FEN};0;1-0", "not a fen;0;1-0"])
    out = tmp_path / "out.gz"
    done = run_script(str(bad), "--engine", ENGINE, "--nodes", "100", "--out", str(out))
    assert done.returncode == 2
    assert done.stderr.startswith("score_positions:") and done.stderr.count("\n") == 1
    assert "bad.gz:2: bad FEN" in done.stderr
    assert not out.exists()

    done = run_script(
        str(SAMPLE), "--engine", "/no/such/engine", "--nodes", "100", "--out", str(out)
    )
    assert done.returncode == 2
    assert done.stderr.startswith("score_positions: cannot start engine")
    assert not out.exists()
