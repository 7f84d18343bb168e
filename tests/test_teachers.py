"""scripts/training/teachers.py through its command line: candidate teachers against a
cached reference, on a few positions of the test data."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest

from tests.conftest import REPO, run_repo_script

STOCKFISH = shutil.which("stockfish") or shutil.which("/usr/games/stockfish")
pytestmark = pytest.mark.skipif(STOCKFISH is None, reason="stockfish is not installed")

SAMPLE = REPO / "tests" / "data" / "tuning_sample.gz"


def teachers(tmp_path: Path, *args: str) -> tuple[int, str, str]:
    done = run_repo_script(
        "training.teachers",
        "--data",
        str(SAMPLE),
        "--positions",
        "30",
        "--stockfish",
        str(STOCKFISH),
        "--cache",
        str(tmp_path / "reference.txt"),
        "--quiet",
        *args,
    )
    return done.returncode, done.stdout, done.stderr


def rows(report: str) -> dict[str, list[str]]:
    """The table's cells by teacher."""
    cells = [line.strip("|").split("|") for line in report.splitlines() if line.startswith("| ")]
    return {row[0].strip(): [cell.strip() for cell in row[1:]] for row in cells[2:]}


def test_candidates_against_a_cached_reference(tmp_path: Path) -> None:
    argv = ["--reference", "stockfish:depth=4", "stockfish:depth=4", "stockfish:static"]
    status, out, err = teachers(tmp_path, *argv, "cutoff:static")
    assert status == 0, err
    table = rows(out)
    assert list(table) == ["stockfish:depth=4", "stockfish:static", "cutoff:static"]
    # The reference's own search, from a fresh process in the same units, labels alike.
    assert table["stockfish:depth=4"][2:4] == ["0.0000", "1.000"]
    for name in ("stockfish:static", "cutoff:static"):
        error, correlation = float(table[name][2]), float(table[name][3])
        assert 0 < error < 0.5 and 0 < correlation < 1
        assert float(table[name][0].replace(",", "")) > 0
    cache = tmp_path / "reference.txt"
    lines = cache.read_text().splitlines()
    assert len(lines) == 31 and "stockfish:depth=4" in lines[0]
    assert "reference's labels are in" in err

    # A rerun reads the reference's labels from the cache: a changed label there shows.
    first = lines[1].rpartition(";")
    cache.write_text("\n".join([lines[0], f"{first[0]};{int(first[2]) + 300}", *lines[2:]]))
    status, again, err = teachers(tmp_path, *argv)
    assert status == 0, err
    assert "reference's labels from" in err
    assert rows(again)["stockfish:depth=4"][2] != "0.0000"
    # Another reference does not take the cached labels.
    status, _, err = teachers(tmp_path, "--reference", "stockfish:depth=3", "stockfish:static")
    assert status == 0 and "reference's labels are in" in err


@pytest.mark.skipif(importlib.util.find_spec("matplotlib") is None, reason="needs matplotlib")
def test_plot(tmp_path: Path) -> None:
    png = tmp_path / "t.png"
    status, _, err = teachers(
        tmp_path, "--reference", "stockfish:depth=2", "stockfish:static", "--plot", str(png)
    )
    assert status == 0, err
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize(
    "argv, message",
    [
        (["komodo:depth=3"], "the engine is one of"),
        (["stockfish:depth=0"], "the limit is static"),
        (["stockfish:static", "--reference", "stockfish:time=1"], "the limit is static"),
        (["stockfish:static", "--positions", "0"], "--positions must be positive"),
        (["stockfish:static", "--positions", "5000"], "quiet positions, 5000 asked"),
    ],
)
def test_bad_input_is_one_line(tmp_path: Path, argv: list[str], message: str) -> None:
    status, out, err = teachers(tmp_path, *argv)
    assert status == 2 and err.count("\n") == 1 and message in err, err
    assert not out
