"""scripts/epd_suite.py through its command line, on WAC positions."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO, shared_file


def test_counts_solved_positions(tmp_path: Path) -> None:
    suite = shared_file("wac.epd")
    done = subprocess.run(
        [
            sys.executable,
            str(REPO / "scripts" / "epd_suite.py"),
            str(suite),
            "--depth",
            "8",
            "--limit",
            "3",
        ],
        cwd=str(REPO),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 4
    assert lines[-1].startswith("solved ") and lines[-1].split()[3] == "3"
    assert int(lines[-1].split()[1]) >= 2  # WAC.001 and .003 fall at depth 8 (pruned)


def test_missing_file_is_one_line(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "epd_suite.py"), str(tmp_path / "none.epd")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1
