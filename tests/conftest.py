"""Shared pytest helpers: where the repository and ../shared are, and running its scripts."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"


def shared_file(name: str) -> Path:
    """A file of ../shared/data, or skip the test when the checkout has none."""
    path = SHARED / "data" / name
    if not path.exists():
        pytest.skip(f"../shared/data/{name} not present (user checkout)")
    return path


def run_repo_script(
    name: str, *args: str, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """``python scripts/NAME ARGS`` from the repository root, its output captured as text."""
    return subprocess.run(
        [sys.executable, str(REPO / "scripts" / name), *args],
        cwd=str(REPO),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
