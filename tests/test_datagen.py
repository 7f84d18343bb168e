"""scripts/training/datagen.py through its command line: Cutoff self-play, a PGN and a
FEN file labelled by Stockfish, deduplicated, resumed after an interruption."""

from __future__ import annotations

import gzip
import shutil
import subprocess
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


TUNING = list(
    {chess.polyglot.zobrist_hash(chess.Board(s.fen)): s.fen for s in read_samples(SAMPLE)}.values()
)
"""The tuning sample's positions, each once."""
NOISY = TUNING[9]
"""A quiet position whose best move (Stockfish at depth 2, from an empty hash) is a
capture: labelled, then dropped as noisy-best."""


def label(out: Path, fens: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_repo_script(
        "training.datagen",
        str(out),
        "--fens",
        str(fens),
        "--no-qsearch-check",
        "--teacher",
        str(STOCKFISH),
        "--quiet",
        *args,
    )


LOGGING_PROXY = """\
import subprocess
import sys
with open(sys.argv[1], "a") as log:
    child = subprocess.Popen(sys.argv[2:], stdin=subprocess.PIPE, text=True)
    for line in sys.stdin:
        log.write(line)
        log.flush()
        child.stdin.write(line)
        child.stdin.flush()
        if line.strip() == "quit":
            break
    child.stdin.close()
    child.wait()
"""
"""A teacher command that logs what it is sent and passes it on to the command after."""


def test_the_teacher_is_cleared_once_per_work_unit(tmp_path: Path) -> None:
    # Two units of a FEN file (FENS_PER_TASK positions, then the rest), the teacher's
    # input logged: one ucinewgame per unit, not one per position.
    fens = tmp_path / "f.txt"
    fens.write_text("\n".join(TUNING[:250]) + "\n")
    log = tmp_path / "teacher.log"
    proxy = tmp_path / "proxy.py"
    proxy.write_text(LOGGING_PROXY)
    teacher = f"{sys.executable} {proxy} {log} {STOCKFISH}"
    done = run_repo_script(
        "training.datagen",
        str(tmp_path / "o.gz"),
        "--fens",
        str(fens),
        "--no-qsearch-check",
        "--label-depth",
        "2",
        "--teacher",
        teacher,
        "--quiet",
    )
    assert done.returncode == 0, done.stderr
    sent = log.read_text().splitlines()
    assert sum(line.startswith("position") for line in sent) == 250
    assert sum(line == "ucinewgame" for line in sent) == 2


def test_a_resumed_or_parallel_run_labels_as_one_run(tmp_path: Path) -> None:
    # Unit 1 starts with NOISY (labelled, dropped); unit 2 starts with it again (a
    # duplicate: not labelled twice). A label depends on the positions of its unit
    # labelled before it, so a run resumed after unit 1 must still skip NOISY in unit
    # 2 though the file does not hold it, and so must workers that label the units
    # apart: the same samples every time.
    others = [fen for fen in TUNING[:400] if fen != NOISY]
    fens = tmp_path / "f.txt"
    fens.write_text("\n".join([NOISY, *others[:199], NOISY, *others[199:300]]) + "\n")
    whole = tmp_path / "whole.gz"
    first = label(whole, fens, "--label-depth", "2")
    assert first.returncode == 0, first.stderr
    assert "duplicates 1 " in first.stdout and "noisy-best 0 " not in first.stdout
    samples = list(read_samples(whole))
    assert NOISY not in [s.fen for s in samples]

    # Interrupted after unit 1: its samples and #done line only.
    cut = tmp_path / "cut.gz"
    lines = gzip.decompress(whole.read_bytes()).decode().splitlines()
    append_member(cut, lines[: lines.index(f"{DONE}fens:f.txt:1") + 1])
    resumed = label(cut, fens, "--label-depth", "2")
    assert resumed.returncode == 0, resumed.stderr
    assert "tasks 1 " in resumed.stdout
    assert list(read_samples(cut)) == samples

    apart = tmp_path / "apart.gz"
    parallel = label(apart, fens, "--label-depth", "2", "--jobs", "2")
    assert parallel.returncode == 0, parallel.stderr
    assert list(read_samples(apart)) == samples


def stockfish_eval(fen: str) -> str:
    """Stockfish's own ``eval`` line for ``fen``, read independently of datagen."""
    done = subprocess.run(
        [str(STOCKFISH)],
        input=f"position fen {fen}\neval\nquit\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    return next(line for line in done.stdout.splitlines() if line.startswith("Final evaluation"))


def test_static_labels_are_stockfishs_eval(tmp_path: Path) -> None:
    # A data file relabelled whole: its position in check has no static evaluation
    # and is the one dropped (counted not-quiet); the others keep their units.
    up = "4k3/8/8/8/8/8/8/3QK3 b - - 0 1"
    check = "4k3/8/8/8/8/8/4q3/4K3 w - - 0 1"
    source = tmp_path / "old.gz"
    append_member(source, [f"{fen};7;1-0" for fen in (TUNING[0], up, check)] + [f"{DONE}g:0"])
    append_member(source, [f"{fen};7;0-1" for fen in TUNING[1:4]] + [f"{DONE}g:1"])
    out = tmp_path / "static.gz"
    done = label(out, source, "--label-static")
    assert done.returncode == 0, done.stderr
    assert "not-quiet 1 " in done.stdout
    assert _units(out) == [
        [(TUNING[0], "1-0"), (up, "1-0")],
        [(fen, "0-1") for fen in TUNING[1:4]],
    ]
    scores = {s.fen: s.score for s in read_samples(out)}
    assert scores[up] > 500  # White's view, Black to move
    for fen in (TUNING[0], *TUNING[1:4]):
        pawns = float(stockfish_eval(fen).split()[2])
        assert scores[fen] == round(pawns * 100)
    assert "none (in check)" in stockfish_eval(check)


FAKE_TEACHER = """\
import sys
fen = ""
for line in sys.stdin:
    words = line.split()
    if words == ["uci"]:
        print("id name fake\\nuciok", flush=True)
    elif words == ["isready"]:
        print("readyok", flush=True)
    elif words[:2] == ["position", "fen"]:
        fen = " ".join(words[2:])
    elif words == ["eval"]:
        value = "+x.5" if fen.startswith(sys.argv[1]) else "+0.25"
        print(f"Final evaluation       {value} (white side)", flush=True)
    elif words == ["quit"]:
        break
"""


def test_unreadable_static_evaluation_is_one_line(tmp_path: Path) -> None:
    script = tmp_path / "fake.py"
    script.write_text(FAKE_TEACHER)
    fens = tmp_path / "f.txt"
    fens.write_text("\n".join(TUNING[:250]) + "\n")
    # Unreadable for a position of the second unit: that unit fails (one line naming
    # the teacher and the line), the first is written and done, and a rerun retries.
    bad_board = TUNING[220].split()[0]
    teacher = f"{sys.executable} {script} {bad_board}"
    out = tmp_path / "o.gz"
    done = label(out, fens, "--label-static", "--teacher", teacher)
    assert done.returncode == 1
    failed = [line for line in done.stderr.splitlines() if "failed" in line]
    assert len(failed) == 1 and "fens:f.txt:201" in failed[0]
    assert str(script) in failed[0] and "'Final evaluation       +x.5 (white side)'" in failed[0]
    assert "Traceback" not in done.stderr
    assert {s.score for s in read_samples(out)} == {25}
    assert f"{DONE}fens:f.txt:1" in gzip.decompress(out.read_bytes()).decode()
    # Unreadable from the first position (a teacher without eval): one usage line.
    teacher = f"{sys.executable} {script} r"
    done = label(tmp_path / "n.gz", fens, "--label-static", "--teacher", teacher)
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "--label-static" in done.stderr and "+x.5" in done.stderr
    assert not (tmp_path / "n.gz").exists()
