"""scripts/matches/variant.py: engine copies with switched constants, for matches."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _variant(tmp_path: Path, *overrides: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scripts.matches.variant", str(tmp_path / "v"), *overrides],
        cwd=str(REPO),
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_variant_switches_a_constant_and_runs(tmp_path: Path) -> None:
    done = _variant(tmp_path, "search.NULL_MOVE_MIN_DEPTH=99", "search.IIR_MIN_DEPTH=5")
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "v" / "engine" / "core" / "search.py").read_text()
    assert "\nNULL_MOVE_MIN_DEPTH: Final = 99\n" in text
    assert "\nIIR_MIN_DEPTH: Final = 5\n" in text
    source = (REPO / "engine" / "core" / "search.py").read_text()
    assert source.count("\nNULL_MOVE_MIN_DEPTH: Final = 3\n") == 1
    bench = subprocess.run(
        [sys.executable, "-m", "engine", "bench", "--depth", "2", "--positions", "2"],
        cwd=str(tmp_path / "v"),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Nodes searched" in bench.stdout, bench.stderr


def test_variant_rejects_unknown_names(tmp_path: Path) -> None:
    done = _variant(tmp_path, "search.NO_SUCH_SWITCH=1")
    assert done.returncode == 2
    assert "0 definitions of NO_SUCH_SWITCH" in done.stderr
    assert _variant(tmp_path, "nonsense").returncode == 2
