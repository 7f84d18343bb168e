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

from scripts.training.dataset import (
    DONE,
    RESULTS,
    SCORE_CLIP_CP,
    Sample,
    append_member,
    read_records,
    read_samples,
)
from tests.conftest import REPO, run_repo_script
from tests.references import see_value

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
        assert not any(see_value(board, m) >= 1 for m in board.legal_moves if board.is_capture(m))
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


def _units(path: Path) -> list[list[tuple[str, str]]]:
    """The (FEN, result) of each work unit of a data file, as train reads it (the
    positions after the last ``#done`` are one unit too)."""
    units: list[list[tuple[str, str]]] = [[]]
    for _, record in read_records(path):
        if isinstance(record, Sample):
            units[-1].append((record.fen, record.result))
        else:
            units.append([])
    return units[:-1] if not units[-1] else units


def test_a_data_file_is_relabelled_whole_in_its_games(tmp_path: Path) -> None:
    # Two games (the first with a hanging queen to take and a position the second
    # repeats), then positions of no game: relabelled, every position stays, in its
    # order, with its result, and each game stays one unit for train to hold out.
    hanging = "4k3/8/8/3q4/8/8/3R4/4K3 w - - 0 1"
    up = "4k3/8/8/8/8/8/8/3QK3 b - - 0 1"
    fens = [line.split(";")[0] for line in FENS]
    source = tmp_path / "old.gz"
    first = [f"{fen};1999;1-0" for fen in (fens[0], hanging, fens[1])]
    append_member(source, [*first, f"{DONE}game:1:0"])
    second = [f"{fen};1999;0-1" for fen in (fens[1], up, *fens[2:5])]
    append_member(source, [*second, f"{DONE}game:1:1", f"{fens[5]};1999;*"])
    out = tmp_path / "new.gz"
    datagen(out, "--fens", str(source))
    assert (
        _units(out)
        == _units(source)
        == [
            [(fens[0], "1-0"), (hanging, "1-0"), (fens[1], "1-0")],
            [(fens[1], "0-1"), (up, "0-1"), *[(fen, "0-1") for fen in fens[2:5]]],
            [(fens[5], "*")],
        ]
    )
    scores = {s.fen: s.score for s in read_samples(out)}
    # The teacher's scores, White's view (White a queen up, Black to move).
    assert scores[up] > 500 and 1999 not in scores.values()
    # A rerun finds every unit done; the same file relabelled elsewhere is the same.
    assert "tasks 0 " in datagen(out, "--fens", str(source))
    again = tmp_path / "again.gz"
    datagen(again, "--fens", str(source), "--jobs", "2")
    assert again.read_bytes() == out.read_bytes()


def test_a_text_line_gives_its_result_after_a_score(tmp_path: Path) -> None:
    # FEN;RESULT, FEN;SCORE;RESULT (an unpacked data file) and an EPD line.
    fens = [line.split(";")[0] for line in FENS]
    listed = tmp_path / "list.txt"
    listed.write_text(
        f'{fens[0]};0-1\n{fens[1]};-35;1-0\n{" ".join(fens[2].split()[:4])} id "x";\n'
    )
    datagen(tmp_path / "o.gz", "--fens", str(listed), "--no-qsearch-check")
    results = {s.fen.split()[0]: s.result for s in read_samples(tmp_path / "o.gz")}
    assert results == {
        fens[0].split()[0]: "0-1",
        fens[1].split()[0]: "1-0",
        fens[2].split()[0]: "*",
    }


def test_bad_input_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text("not a fen;1-0\n")
    done = run_repo_script(
        "training.datagen", str(tmp_path / "o.gz"), "--fens", str(bad), "--label-depth", "1"
    )
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and f"datagen: {bad}:1: bad FEN" in done.stderr
    assert not (tmp_path / "o.gz").exists()
    # A data file to relabel is checked before any label: one line naming file:line.
    data = tmp_path / "bad.gz"
    append_member(data, [f"{chess.STARTING_FEN};0;1-0", "not a fen;0;1-0"])
    done = run_repo_script(
        "training.datagen", str(tmp_path / "o.gz"), "--fens", str(data), "--label-depth", "1"
    )
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and f"datagen: {data}:2: bad FEN" in done.stderr
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


def test_quiet_filter_is_the_played_out_exchange() -> None:
    """``is_quiet`` (the search board's SEE) against the reference exchange: not in
    check, no promotion, no capture that wins material."""
    import random

    from scripts.training.engines import is_quiet

    rng = random.Random(11)
    verdicts = set()
    for _ in range(40):
        board = chess.Board()
        for _ in range(rng.randrange(4, 60)):
            moves = list(board.legal_moves)
            if not moves:
                break
            board.push(rng.choice(moves))
            expected = not board.is_check() and not any(
                move.promotion or see_value(board, move) >= 1
                for move in board.legal_moves
                if move.promotion or board.is_capture(move)
            )
            assert is_quiet(board) == expected, board.fen()
            verdicts.add(expected)
    assert verdicts == {True, False}
