"""Shared pytest helpers: where the repository and ../shared are."""

from __future__ import annotations

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
