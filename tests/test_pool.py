"""Pooling match PGNs (``python -m scripts.matches.pool``), run as users run it.

The games are written here with known results, so the counts, the pairs and the
statistics (taken from ``elo`` on the counts worked out by hand) can be checked;
so can the one-line errors for games the pool cannot use.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from scripts.matches import elo
from tests.conftest import REPO

TOOL = [sys.executable, "-m", "scripts.matches.pool"]


def game_text(white: str, black: str, result: str, round_tag: str | None) -> str:
    tags = [("Event", "test"), ("White", white), ("Black", black), ("Result", result)]
    if round_tag is not None:
        tags.insert(1, ("Round", round_tag))
    head = "\n".join(f'[{name} "{value}"]' for name, value in tags)
    return f"{head}\n\n1. e4 e5 {result}\n\n"


def write_pairs(path: Path, results: list[tuple[str, str]], paired_rounds: bool = True) -> None:
    """One pair per entry: (game 1's result with A White, game 2's with B White)."""
    text = []
    for k, (first, second) in enumerate(results, 1):
        one, two = (f"{k}.1", f"{k}.2") if paired_rounds else (str(k), str(k))
        text.append(game_text("A", "B", first, one))
        text.append(game_text("B", "A", second, two))
    path.write_text("".join(text), encoding="utf-8")


def run(*args: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run([*TOOL, *args], capture_output=True, text=True, timeout=60, cwd=REPO)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def report(*args: str) -> dict[str, Any]:
    proc = run(*args, "--json")
    assert proc.returncode == 0, proc.stderr
    data: dict[str, Any] = json.loads(proc.stdout)
    return data


# For A: pair 1 won twice (WW), pair 2 won and drawn (WD), pair 3 won then lost (WL),
# pair 4 drawn twice (DD), pair 5 lost twice (LL).
FIRST = [("1-0", "0-1"), ("1-0", "1/2-1/2"), ("1-0", "1-0"), ("1/2-1/2", "1/2-1/2"), ("0-1", "1-0")]
# A second match: pair 1 WW, pair 2 LD.
SECOND = [("1-0", "0-1"), ("1/2-1/2", "1-0")]


def test_files_are_counted_paired_and_pooled(tmp_path: Path) -> None:
    one, two = tmp_path / "one.pgn", tmp_path / "two.pgn"
    write_pairs(one, FIRST)
    write_pairs(two, SECOND)
    data = report(str(one), str(two))
    assert data["engine"] == "A"  # White of the first game
    first, second = data["files"]
    assert (first["wins"], first["draws"], first["losses"]) == (4, 3, 3)
    assert first["pentanomial"] == [1, 0, 2, 1, 1]
    assert (second["wins"], second["draws"], second["losses"]) == (2, 1, 1)
    assert second["pentanomial"] == [0, 1, 0, 0, 1]
    pooled = data["pooled"]
    assert (pooled["games"], pooled["pairs"]) == (14, 7)
    assert pooled["pentanomial"] == [1, 1, 2, 1, 2]
    expected = elo.pentanomial_elo([1, 1, 2, 1, 2])
    assert pooled["elo_model"] == "pentanomial"
    assert pooled["elo"] == pytest.approx(expected.elo)
    assert pooled["elo_lower"] == pytest.approx(expected.elo_lower)
    assert pooled["los"] == pytest.approx(elo.los(6, 4))
    assert pooled["sprt"]["llr"] == pytest.approx(elo.llr_pentanomial([1, 1, 2, 1, 2], 0, 10))
    assert pooled["opponents"] == ["B"]
    assert data["problems"] == 0


def test_the_other_engine_sees_the_mirror_and_the_table_names_every_file(
    tmp_path: Path,
) -> None:
    one = tmp_path / "one.pgn"
    write_pairs(one, FIRST)
    pooled = report(str(one), "--engine", "B", "--sprt", "-5", "5")["pooled"]
    assert (pooled["wins"], pooled["losses"]) == (3, 4)
    assert pooled["pentanomial"] == [1, 1, 2, 0, 1]
    assert pooled["sprt"]["elo0"] == -5.0
    assert pooled["sprt"]["llr"] == pytest.approx(elo.llr_pentanomial([1, 1, 2, 0, 1], -5, 5))
    text = run(str(one), str(one)).stdout
    assert "A against B: 2 files, 20 games" in text
    assert text.count("one.pgn") == 2 and "pooled" in text and "LLR" in text


def test_a_shared_round_number_pairs_like_k1_and_k2(tmp_path: Path) -> None:
    numbered = tmp_path / "cutechess.pgn"
    write_pairs(numbered, FIRST, paired_rounds=False)
    assert report(str(numbered))["pooled"]["pentanomial"] == [1, 0, 2, 1, 1]


def test_unusable_games_are_one_line_each_and_the_rest_is_pooled(tmp_path: Path) -> None:
    pgn = tmp_path / "mixed.pgn"
    text = [
        game_text("A", "B", "1-0", "1.1"),
        game_text("B", "A", "0-1", "1.2"),  # pair 1: WW
        game_text("A", "C", "1-0", "2.1"),
        game_text("B", "C", "1-0", "3.1"),  # A does not play
        game_text("A", "B", "1-0", "4.1"),
        game_text("A", "B", "0-1", "4.2"),  # A White in both: not a pair
        game_text("A", "B", "win", "5.1"),  # no such result
        game_text("A", "B", "1/2-1/2", None),  # no round
        game_text("B", "A", "*", "6.1"),  # unfinished
    ]
    pgn.write_text("".join(text), encoding="utf-8")
    proc = run(str(pgn), "--json")
    assert proc.returncode == 0, proc.stderr
    pooled = json.loads(proc.stdout)["pooled"]
    assert (pooled["wins"], pooled["draws"], pooled["losses"]) == (4, 1, 1)
    assert pooled["pentanomial"] == [0, 0, 0, 0, 1]
    assert pooled["unfinished"] == 1
    assert pooled["opponents"] == ["B", "C"]
    errors = proc.stderr.splitlines()
    assert len(errors) == 4, errors
    # Each line names the file and the line where the game's tags begin.
    lines = [int(e.split(":")[2]) for e in errors]
    assert lines == [25, 41, 49, 57]
    assert "A does not play this game (B - C)" in errors[0]
    assert "same colour" in errors[1]
    assert "'win'" in errors[2]
    assert "names no pair" in errors[3]


def test_a_missing_file_stops_before_anything_is_pooled(tmp_path: Path) -> None:
    one = tmp_path / "one.pgn"
    write_pairs(one, FIRST)
    proc = run(str(one), str(tmp_path / "typo.pgn"))
    assert proc.returncode == 1
    assert proc.stdout == ""
    assert proc.stderr.strip() == f"cutoff-pool: error: {tmp_path / 'typo.pgn'}: no such file"


def test_a_file_without_the_engine_is_one_line(tmp_path: Path) -> None:
    one = tmp_path / "one.pgn"
    write_pairs(one, FIRST)
    proc = run(str(one), "--engine", "Z")
    assert proc.returncode == 1
    assert proc.stderr.splitlines() == [
        f"cutoff-pool: {one}: Z plays none of its 10 games (A, B)",
        "cutoff-pool: error: no finished game of Z in these files",
    ]


def test_plot_draws_each_file_and_the_pool(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    one, two = tmp_path / "one.pgn", tmp_path / "two.pgn"
    write_pairs(one, FIRST)
    write_pairs(two, SECOND)
    picture = tmp_path / "pool.png"
    proc = run(str(one), str(two), "--plot", str(picture))
    assert proc.returncode == 0, proc.stderr
    assert picture.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_many_problems_in_one_file_are_cut_short(tmp_path: Path) -> None:
    pgn = tmp_path / "bad.pgn"
    good = game_text("A", "B", "1-0", "1.1")
    pgn.write_text(good + "".join(game_text("A", "B", "?", f"{k}.1") for k in range(2, 14)))
    proc = run(str(pgn))
    assert proc.returncode == 0, proc.stderr
    errors = proc.stderr.splitlines()
    assert len(errors) == 11
    assert errors[-1] == f"cutoff-pool: {pgn}: 2 more problems like these"


def test_help_answers() -> None:
    proc = run("--help")
    assert proc.returncode == 0
    assert proc.stdout.startswith("usage: cutoff-pool") and "95 % interval" in proc.stdout
