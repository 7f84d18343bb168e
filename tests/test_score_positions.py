"""scripts/tuning/score_positions.py through its command line, with Cutoff as the scoring engine."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import chess

from tests.conftest import REPO, run_repo_script

SAMPLE = REPO / "tests" / "data" / "tuning_sample.txt"
ENGINE = f"{sys.executable} -m engine"


def run_script(*args: str) -> subprocess.CompletedProcess[str]:
    return run_repo_script("tuning.score_positions", *args)


def test_scores_are_added_in_order_and_reproducibly(tmp_path: Path) -> None:
    source = tmp_path / "in.txt"
    lines = SAMPLE.read_text().splitlines()[:12]
    source.write_text("\n".join(lines) + "\n")
    outputs = []
    for workers in ("1", "2"):
        out = tmp_path / f"out{workers}.txt"
        done = run_script(
            str(source), "--engine", ENGINE, "--nodes", "200", "--workers", workers,
            "--out", str(out),
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith("positions 12 ")
        outputs.append(out.read_text())
    # The same scores whatever the number of workers (empty hash before each search).
    assert outputs[0] == outputs[1]
    scored = outputs[0].splitlines()
    assert len(scored) == len(lines)
    for original, line in zip(lines, scored):
        fen, result, score = line.split(";")
        assert f"{fen};{result}" == original
        assert -2000 <= int(score) <= 2000
    # Scores are White's view: a position where White is a queen up scores high
    # whoever is to move.
    up = tmp_path / "up.txt"
    up.write_text("4k3/8/8/8/8/8/8/3QK3 w - - 0 1;1-0\n4k3/8/8/8/8/8/8/3QK3 b - - 0 1;1-0\n")
    done = run_script(str(up), "--engine", ENGINE, "--nodes", "200", "--out", str(tmp_path / "u"))
    assert done.returncode == 0, done.stderr
    assert all(int(line.split(";")[2]) > 500 for line in (tmp_path / "u").read_text().splitlines())


def test_bad_input_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text(f"{chess.STARTING_FEN};1-0\nnot a fen;1-0\n")
    out = tmp_path / "out.txt"
    done = run_script(str(bad), "--engine", ENGINE, "--nodes", "100", "--out", str(out))
    assert done.returncode == 2
    assert done.stderr.startswith("score_positions:") and done.stderr.count("\n") == 1
    assert "bad.txt:2" in done.stderr
    assert not out.exists()

    done = run_script(
        str(SAMPLE), "--engine", "/no/such/engine", "--nodes", "100", "--out", str(out)
    )
    assert done.returncode == 2
    assert done.stderr.startswith("score_positions: cannot start engine")
    assert not out.exists()
