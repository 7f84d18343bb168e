"""scripts/speed/widths.py through its command line: one bench per width, one-line errors."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from engine.core.nnue import BASE_HAND, SCRELU, check_lanes, load
from scripts.speed.widths import costing_network
from tests.conftest import run_repo_script

REPO = Path(__file__).resolve().parents[1]


def test_random_networks_load_and_fit_their_lanes(tmp_path: Path) -> None:
    for hidden in (8, 256):
        path = tmp_path / f"w{hidden}.nnue"
        costing_network(hidden).write(path)
        net = load(path)
        assert (net.hidden, net.base) == (hidden, BASE_HAND)
        check_lanes(net)
    costing_network(16, activation=SCRELU, buckets=8).write(tmp_path / "s.nnue")
    net = load(tmp_path / "s.nnue")
    assert (net.activation, net.buckets) == (SCRELU, 8)


@pytest.mark.parametrize(
    "extra, described",
    [
        ((), "(crelu, 1 output bucket)"),
        (("--activation", "screlu", "--buckets", "8"), "(screlu, 8"),
    ],
)
def test_each_width_searches_the_hand_written_evaluations_tree(
    extra: tuple[str, ...], described: str
) -> None:
    done = run_repo_script(
        "speed.widths", str(REPO), "--widths", "8,16", "--depth", "1", "--rounds", "1", *extra,
        timeout=180,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert lines[0].startswith("base: --no-nnue; then zero-output networks 8, 16 wide")
    assert described in lines[0]
    assert lines[1].startswith("round 1:")
    assert lines[-3].split()[-1] == "base"
    assert "w8.nnue " in lines[-2] and "w16.nnue " in lines[-1]
    # A correction that adds zero leaves the tree alone: the same node count.
    counts = {re.findall(r" (\d+) +\d+ ", line)[0] for line in lines[-3:]}
    assert len(counts) == 1, lines


def test_bad_widths_are_one_line() -> None:
    for bad in (("--widths", "x"), ("--widths", "0"), ("--widths", ""), ("--buckets", "0")):
        done = run_repo_script("speed.widths", str(REPO), *bad)
        assert done.returncode == 2
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr
        assert done.stderr.startswith("widths: ")
