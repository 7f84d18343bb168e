"""The PyInstaller one-file build (scripts/packaging/build_exe.py) runs and answers ``uci``.

Slow (a PyInstaller build takes tens of seconds); skipped without PyInstaller.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_one_file_build_answers_uci(tmp_path: Path) -> None:
    pytest.importorskip("PyInstaller")
    dist = tmp_path / "dist"
    done = subprocess.run(
        [sys.executable, "-m", "scripts.packaging.build_exe", "--dist", str(dist)],
        cwd=str(REPO),
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    exe = dist / ("cutoff.exe" if sys.platform == "win32" else "cutoff")
    assert exe.exists()
    run = subprocess.run(
        [str(exe)],
        input="uci\nisready\nposition startpos\ngo depth 2\n",
        capture_output=True,
        text=True,
        cwd=str(tmp_path),
        timeout=120,
    )
    lines = run.stdout.splitlines()
    assert "uciok" in lines and "readyok" in lines
    assert lines[-1].startswith("bestmove ")
