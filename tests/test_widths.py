"""scripts/speed/widths.py through its command line: one bench per width, one-line errors."""

from __future__ import annotations

from pathlib import Path

from engine.core.nnue import BASE_HAND, check_lanes, load
from scripts.speed.widths import random_network
from tests.conftest import run_repo_script

REPO = Path(__file__).resolve().parents[1]


def test_random_networks_load_and_fit_their_lanes(tmp_path: Path) -> None:
    for hidden in (8, 256):
        path = tmp_path / f"w{hidden}.nnue"
        random_network(hidden, BASE_HAND).write(path)
        net = load(path)
        assert (net.hidden, net.base) == (hidden, BASE_HAND)
        check_lanes(net)


def test_each_width_is_benched_against_the_shipped_network() -> None:
    done = run_repo_script(
        "speed.widths", str(REPO), "--widths", "8,16", "--depth", "1", "--rounds", "1", timeout=180
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert lines[0].startswith("base: the shipped network; then widths 8, 16")
    assert lines[1].startswith("round 1:")
    assert lines[-3].split()[-1] == "base"
    assert "w8.nnue " in lines[-2] and "w16.nnue " in lines[-1]


def test_bad_widths_are_one_line() -> None:
    for widths in ("x", "0", ""):
        done = run_repo_script("speed.widths", str(REPO), "--widths", widths)
        assert done.returncode == 2
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr
        assert done.stderr.startswith("widths: ")
