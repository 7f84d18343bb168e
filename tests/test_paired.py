"""Two versions of an engine compared paired by opening (``python -m
scripts.matches.paired``), run as users run it.

The games are written here with known results from known starting positions, so
every figure can be worked out by hand: the per-opening means, the unpaired and
skipped games, the interval, and the one-line errors.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import chess
import chess.pgn

from tests.conftest import REPO

TOOL = [sys.executable, "-m", "scripts.matches.paired"]
OPENINGS = [
    chess.STARTING_FEN,
    "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1",
    "rnbqkbnr/pppppppp/8/8/3P4/8/PPP1PPPP/RNBQKBNR b KQkq - 0 1",
    "rnbqkbnr/pppppppp/8/8/2P5/8/PP1PPPPP/RNBQKBNR b KQkq - 0 1",
]


def write(path: Path, games: list[tuple[int, str, str, str]]) -> None:
    """Games of one legal move each: (opening index, White, Black, result)."""
    with path.open("a", encoding="utf-8") as handle:
        for opening, white, black, result in games:
            board = chess.Board(OPENINGS[opening])
            game = chess.pgn.Game.from_board(board)
            game.headers.update({"White": white, "Black": black, "Result": result})
            game.add_main_variation(next(iter(board.legal_moves)))
            print(game, file=handle, end="\n\n")


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*TOOL, *args], cwd=REPO, capture_output=True, text=True, timeout=120, check=False
    )


def test_the_differences_by_opening_and_their_interval(tmp_path: Path) -> None:
    before, after = tmp_path / "before.pgn", tmp_path / "after.pgn"
    # Before: openings 0-2 with both colours; Cutoff scores 1/2, 1/2 and 0 in them.
    write(
        before,
        [
            (0, "Cutoff", "SF", "1-0"),
            (0, "SF", "Cutoff", "1-0"),
            (1, "Cutoff", "SF", "1/2-1/2"),
            (1, "SF", "Cutoff", "1/2-1/2"),
            (2, "Cutoff", "SF", "0-1"),
            (2, "SF", "Cutoff", "1-0"),
        ],
    )
    # After: 1, 1/2 and 1/4 in them; opening 3 only here; one game unfinished and
    # one the engine did not play, both skipped.
    write(
        after,
        [
            (0, "Cutoff", "SF", "1-0"),
            (0, "SF", "Cutoff", "0-1"),
            (1, "Cutoff", "SF", "1-0"),
            (1, "SF", "Cutoff", "1-0"),
            (2, "Cutoff", "SF", "1/2-1/2"),
            (2, "SF", "Cutoff", "1-0"),
            (3, "Cutoff", "SF", "1-0"),
            (2, "Cutoff", "SF", "*"),
            (2, "Other", "Another", "1-0"),
        ],
    )
    proc = run(str(before), str(after), "--json")
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    # The differences are 0.5, 0 and 0.25: mean 0.25, standard deviation 0.25.
    half = 1.959963984540054 * 0.25 / math.sqrt(3)
    assert out["total"]["openings"] == 3
    assert out["total"]["difference"] == round(0.25, 4)
    assert out["total"]["interval"] == round(half, 4)
    assert out["total"]["elo"] == round(-400 * math.log10(1 / 0.75 - 1), 1)
    assert [(p["unpaired"], p["skipped"]) for p in out["pairs"]] == [(1, 2)]

    # Pairs of files add up; the text names each pair and the total.
    proc = run(str(before), str(after), str(after), str(before))
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == f"{before} -> {after}: 3 openings, +0.250 a game (1 unpaired, 2 skipped)"
    assert lines[1] == f"{after} -> {before}: 3 openings, -0.250 a game (1 unpaired, 2 skipped)"
    assert lines[2].startswith("paired over 6 openings: +0.000 ± ")

    # The other engine's view: the same differences, negated.
    proc = run(str(before), str(after), "--engine", "SF", "--json")
    assert json.loads(proc.stdout)["total"]["difference"] == -0.25

    # The AFTER games under another name (two networks screened apart): the same.
    renamed = tmp_path / "renamed.pgn"
    renamed.write_text(after.read_text(encoding="utf-8").replace('"Cutoff"', '"net2"'))
    proc = run(str(before), str(renamed), "--after-engine", "net2", "--json")
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["total"] == out["total"]
    proc = run(str(before), str(renamed), "--json")
    assert proc.returncode == 1 and "no opening played by Cutoff in both" in proc.stderr


def test_bad_input_is_one_line(tmp_path: Path) -> None:
    one = tmp_path / "one.pgn"
    write(one, [(0, "Cutoff", "SF", "1-0")])
    proc = run(str(one))
    assert (proc.returncode, proc.stderr) == (
        2,
        "paired: error: give the files in pairs, BEFORE AFTER\n",
    )
    proc = run(str(one), str(tmp_path / "nope.pgn"))
    assert (proc.returncode, proc.stderr) == (
        1,
        f"paired: error: {tmp_path / 'nope.pgn'}: no such file\n",
    )
    proc = run(str(one), str(one), "--engine", "Nobody")
    assert (proc.returncode, proc.stderr) == (
        1,
        "paired: error: no opening played by Nobody in both files\n",
    )
    # A game that cannot be replayed: one line, the rest compared, a failing status.
    with one.open("a", encoding="utf-8") as handle:
        handle.write('[White "Cutoff"]\n[Black "SF"]\n[Result "1-0"]\n\n1. Nf3 Qxh7 1-0\n\n')
    proc = run(str(one), str(one), "--json")
    assert proc.returncode == 1
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 2 and lines[0].startswith(f"paired: {one}: game 2: illegal san: 'Qxh7'")
    assert json.loads(proc.stdout)["total"]["openings"] == 1


def test_help_says_what_it_computes() -> None:
    # argparse does not %-format a description, so a doubled percent would print as is.
    proc = run("--help")
    assert proc.returncode == 0
    assert "with its 95 % interval" in " ".join(proc.stdout.split())
