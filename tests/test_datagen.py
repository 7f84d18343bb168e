"""scripts/training/datagen.py through its command line: Cutoff self-play, a PGN and a
FEN file labelled by Stockfish, deduplicated, resumed after an interruption."""

from __future__ import annotations

import gzip
import shutil
import sys
from pathlib import Path

import chess
import chess.polyglot
import pytest

from engine.core.see import see_ge
from scripts.training.dataset import DONE, RESULTS, SCORE_CLIP_CP, read_samples
from tests.conftest import REPO, run_repo_script

STOCKFISH = shutil.which("stockfish") or shutil.which("/usr/games/stockfish")
pytestmark = pytest.mark.skipif(STOCKFISH is None, reason="stockfish is not installed")

SAMPLE = REPO / "tests" / "data" / "tuning_sample.gz"
FENS = [f"{sample.fen};{sample.result}" for sample in read_samples(SAMPLE)][:60]
"""Positions to label, as a FEN;RESULT file of --fens gives them."""
PGN = REPO / "tests" / "data" / "opera.pgn"


def datagen(out: Path, *args: str) -> str:
    done = run_repo_script(
        "training.datagen",
        str(out),
        "--engine",
        f"{sys.executable} -m engine",
        "--nodes",
        "100",
        "--max-plies",
        "30",
        "--skip-plies",
        "2",
        "--random-plies",
        "2",
        "--label-depth",
        "2",
        "--teacher",
        str(STOCKFISH),
        "--quiet",
        *args,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_sources_labelled_quiet_unique_and_resumed(tmp_path: Path) -> None:
    fens = tmp_path / "some.txt"
    # 60 tuning positions, the first twice (a duplicate), one not quiet (a hanging queen
    # to take), one broken line's worth of nothing (blank).
    lines = FENS
    hanging = "4k3/8/8/3q4/8/8/3R4/4K3 w - - 0 1;*"
    fens.write_text("\n".join([*lines, lines[0], hanging, ""]) + "\n")
    out = tmp_path / "data.gz"

    first = datagen(out, "--games", "1", "--fens", str(fens))
    assert "games 1 " in first
    assert "duplicates 1 " in first and "not-quiet 1 " in first

    samples = list(read_samples(out))
    keys = [chess.polyglot.zobrist_hash(chess.Board(s.fen)) for s in samples]
    assert len(keys) == len(set(keys)) > 40
    for sample in samples:
        board = chess.Board(sample.fen)
        assert not board.is_check()
        assert not any(see_ge(board, m, 1) for m in board.legal_moves if board.is_capture(m))
        assert abs(sample.score) <= SCORE_CLIP_CP and sample.result in RESULTS
    tuning = {line.split(";")[0]: line.split(";")[1] for line in lines}
    assert all(s.result == tuning[s.fen] for s in samples if s.fen in tuning)
    assert not any(s.fen.startswith("4k3/8/8/3q4") for s in samples)

    # An interruption mid-append leaves a torn gzip member: the rerun cuts it off, skips
    # the game and the chunk already done and adds only the new game and the PGN game.
    size = out.stat().st_size
    with out.open("ab") as handle:
        handle.write(gzip.compress(b"8/8/8/8/8/8/8/8 w - - 0 1;0;*\n")[:-3])
    second = datagen(out, "--games", "2", "--fens", str(fens), "--pgn", str(PGN))
    assert "tasks 2 games 1 " in second
    text = gzip.decompress(out.read_bytes()).decode()
    assert out.stat().st_size > size
    done = [line for line in text.splitlines() if line.startswith(DONE)]
    assert sorted(done) == sorted(
        [f"{DONE}game:1:0", f"{DONE}game:1:1", f"{DONE}fens:some.txt:1", f"{DONE}pgn:opera.pgn:1"]
    )
    again = list(read_samples(out))
    assert again[: len(samples)] == samples
    assert any(s.result == "1-0" and s.fen not in tuning for s in again)


def test_all_positions_keeps_the_noisy_ones(tmp_path: Path) -> None:
    # A hanging queen to take, a check, a finished game and a quiet position: the
    # default keeps only the quiet one; --all-positions all but the finished game.
    fens = tmp_path / "leaves.fen"
    fens.write_text(
        "4k3/8/8/3q4/8/8/3R4/4K3 w - - 0 1;*\n"
        "4k3/8/8/8/8/8/3R4/4K2r w - - 0 1;*\n"
        "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3;*\n"
        "4k3/8/8/8/8/8/3PP3/4K3 w - - 0 1;*\n"
    )
    quiet = datagen(tmp_path / "quiet.gz", "--fens", str(fens))
    assert "positions 1 " in quiet and "not-quiet 3 " in quiet
    every = datagen(tmp_path / "all.gz", "--fens", str(fens), "--all-positions")
    assert "positions 3 " in every and "not-quiet 1 " in every
    kept = [s.fen.split()[0] for s in read_samples(tmp_path / "all.gz")]
    assert kept == ["4k3/8/8/3q4/8/8/3R4/4K3", "4k3/8/8/8/8/8/3R4/4K2r", "4k3/8/8/8/8/8/3PP3/4K3"]
    # Self-play keeps its own quiet test: the option is refused beside --games.
    done = run_repo_script(
        "training.datagen",
        str(tmp_path / "o.gz"),
        "--games",
        "1",
        "--all-positions",
        "--label-depth",
        "1",
    )
    assert done.returncode == 2 and "not with --games" in done.stderr


def test_bad_input_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text("not a fen;1-0\n")
    done = run_repo_script(
        "training.datagen", str(tmp_path / "o.gz"), "--fens", str(bad), "--label-depth", "1"
    )
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and f"datagen: {bad}:1: bad FEN" in done.stderr
    assert not (tmp_path / "o.gz").exists()
    # An xz data file is read only: datagen, which appends, refuses to write one.
    done = run_repo_script(
        "training.datagen", str(tmp_path / "o.xz"), "--fens", str(bad), "--label-depth", "1"
    )
    assert done.returncode == 2 and "xz data files are read only" in done.stderr
    assert not (tmp_path / "o.xz").exists()


def test_bad_engine_is_one_line(tmp_path: Path) -> None:
    done = run_repo_script(
        "training.datagen",
        str(tmp_path / "o.gz"),
        "--games",
        "50",
        "--engine",
        str(tmp_path / "no-such-engine"),
        "--label-from-play",
        "--jobs",
        "2",
    )
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "cannot start engine" in done.stderr
    assert not (tmp_path / "o.gz").exists()


def test_quiet_check_is_cutoffs_quiescence_against_its_static_score() -> None:
    from scripts.training.datagen import QuietCheck

    check = QuietCheck()
    # White is a knight down for a pawn but takes the knight for nothing: the static
    # score is negative, the quiescence score positive.
    assert not check.agrees(chess.Board("4k2q/8/8/3n4/8/8/P2Q4/4K3 w - - 0 1"))
    for line in FENS[:20]:
        assert check.agrees(chess.Board(line.split(";")[0]))
