"""scripts/training/leaves.py through its command line: the positions Cutoff's search
evaluates, sampled per root, the same for any number of workers, with a compiled
build too."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import chess

from scripts.training.dataset import DONE, append_member
from tests.conftest import REPO, run_repo_script
from tests.test_compiled import _copy_package, _fake_build

ROOTS = [
    "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
    "rnbqkb1r/ppp2ppp/4pn2/3p4/2PP4/2N5/PP2PPPP/R1BQKBNR w KQkq - 0 4",
    "8/5pk1/6p1/3R4/8/6P1/5PKP/3r4 w - - 0 40",
    "r4rk1/pp3ppp/2n1bq2/3p4/3P4/2NB1N2/PP3PPP/R2Q1RK1 b - - 3 13",
]


def _data(path: Path) -> Path:
    append_member(path, [f"{fen};{10 * i};1-0" for i, fen in enumerate(ROOTS)] + [f"{DONE}g:0"])
    return path


def _leaves(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scripts.training.leaves", *args, "--quiet"],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_leaves_are_searched_positions_the_same_for_any_workers(tmp_path: Path) -> None:
    data = _data(tmp_path / "data.gz")
    args = (str(data), "--roots", "3", "--nodes", "300", "--per-root", "5", "--seed", "4")
    one = _leaves(REPO, *args, "--out", str(tmp_path / "one.fen"))
    assert one.returncode == 0, one.stderr
    assert "roots 3 positions 15 " in one.stdout
    two = _leaves(REPO, *args, "--out", str(tmp_path / "two.fen"), "--jobs", "2")
    assert two.returncode == 0, two.stderr
    lines = (tmp_path / "one.fen").read_text().splitlines()
    assert lines == (tmp_path / "two.fen").read_text().splitlines()
    assert len(lines) == 15
    fens = []
    for line in lines:
        fen, result = line.split(";")
        assert result == "*"
        board = chess.Board(fen)
        assert board.is_valid()
        fens.append(fen)
    # Positions inside the trees, not the roots: most differ from every root, and
    # the search's positions are some plies beyond them.
    roots = {chess.Board(fen).board_fen() for fen in ROOTS}
    assert sum(chess.Board(fen).board_fen() not in roots for fen in fens) >= 12
    # Another seed draws other roots or other leaves.
    other = _leaves(REPO, *args[:-1], "5", "--out", str(tmp_path / "other.fen"))
    assert other.returncode == 0, other.stderr
    assert (tmp_path / "other.fen").read_text().splitlines() != lines


def test_bad_data_is_one_line_and_no_output(tmp_path: Path) -> None:
    data = tmp_path / "bad.gz"
    append_member(data, [f"{ROOTS[0]};5;1-0", "not a sample"])
    out = tmp_path / "out.fen"
    done = run_repo_script("training.leaves", str(data), "--out", str(out), "--quiet")
    assert done.returncode == 2
    assert done.stderr.strip() == (
        f"leaves: {data}:2: expected FEN;SCORE;RESULT, got 'not a sample'"
    )
    assert not out.exists() and not out.with_name("out.fen.tmp").exists()
    append_member(data := tmp_path / "fen.gz", [f"{ROOTS[0]};5;1-0", "not/a/fen w - - 0 1;5;*"])
    bad_fen = run_repo_script("training.leaves", str(data), "--out", str(out), "--quiet")
    assert bad_fen.returncode == 2 and f"leaves: {data}:2: bad FEN" in bad_fen.stderr
    missing = run_repo_script("training.leaves", str(tmp_path / "no.gz"), "--out", str(out))
    assert missing.returncode == 2 and "no such file" in missing.stderr


def test_leaves_runs_the_sources_of_a_current_build(tmp_path: Path) -> None:
    """The evaluation is observed through a subclass, which compiled classes refuse:
    with a build in place the tool loads the search from its sources (the stand-in
    extensions would crash the import if it did not)."""
    pkg = _copy_package(tmp_path)
    _fake_build(pkg)
    shutil.copytree(REPO / "scripts", tmp_path / "scripts", ignore=shutil.ignore_patterns("*.pyc"))
    data = _data(tmp_path / "data.gz")
    done = _leaves(tmp_path, str(data), "--out", str(tmp_path / "out.fen"), "--roots", "2")
    assert done.returncode == 0, done.stderr
    assert "the search runs from its sources" in done.stderr
    assert len((tmp_path / "out.fen").read_text().splitlines()) == 8
