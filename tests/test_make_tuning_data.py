"""scripts/tuning/make_tuning_data.py through its command line, with Cutoff as the engine."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import chess

from scripts.training.dataset import SCORE_CLIP_CP, read_samples
from tests.conftest import run_repo_script
from tests.references import see_value

# Few, short, cheap games: enough to exercise every step while keeping the
# file well under the suite's time budget.
SMALL_RUN = [
    "--engine",
    f"{sys.executable} -m engine",
    "--games",
    "2",
    "--nodes",
    "300",
    "--max-plies",
    "40",
    "--skip-plies",
    "2",
    "--random-plies",
    "2",
]


def run_script(*args: str) -> subprocess.CompletedProcess[str]:
    return run_repo_script("tuning.make_tuning_data", *args)


def test_positions_are_labelled_quiet_and_reproducible(tmp_path: Path) -> None:
    outputs = []
    for name in ("first.gz", "second.gz"):
        out = tmp_path / name
        done = run_script(*SMALL_RUN, "--out", str(out))
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith("games 2 positions ")
        outputs.append(out.read_bytes())
    assert outputs[0] == outputs[1]

    # Disjoint ranges of games concatenate to the longer run (parallel generation).
    parts = []
    for first in ("0", "1"):
        out = tmp_path / f"part{first}.gz"
        part_args = [*SMALL_RUN]
        part_args[part_args.index("--games") + 1] = "1"
        done_part = run_script(*part_args, "--first-game", first, "--out", str(out))
        assert done_part.returncode == 0, done_part.stderr
        parts.append(out.read_bytes())
    assert parts[0] + parts[1] == outputs[0]

    # The training data's format: FEN;SCORE;RESULT, the score the playing engine's.
    samples = list(read_samples(tmp_path / "first.gz"))
    # 2 games of at most 40 - 2 recorded plies each; some positions pass the filter.
    assert 0 < len(samples) <= 2 * 38
    assert f"positions {len(samples)} " in done.stdout
    assert len({sample.score for sample in samples}) > 1
    for fen, score, result in samples:
        assert result in ("1-0", "1/2-1/2", "0-1")
        assert abs(score) <= SCORE_CLIP_CP
        board = chess.Board(fen)
        assert board.is_valid()
        assert not board.is_check()
        assert not board.is_game_over()
        # Quiet: no capture or promotion wins material by static exchange.
        for move in board.generate_legal_moves():
            if board.is_capture(move):
                assert see_value(board, move) < 1, (fen, move)
            assert not move.promotion, (fen, move)


def test_missing_openings_file_is_one_line(tmp_path: Path) -> None:
    done = run_script(
        *SMALL_RUN, "--out", str(tmp_path / "out.gz"), "--openings", str(tmp_path / "none.epd")
    )
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
    assert done.stderr.startswith("make_tuning_data:")
    assert not (tmp_path / "out.gz").exists()
    # The output is a data file: gzip, named so.
    done = run_script(*SMALL_RUN, "--out", str(tmp_path / "out.txt"))
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "the output is a gzip data file (.gz)" in done.stderr
