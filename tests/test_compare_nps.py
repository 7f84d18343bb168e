"""scripts/speed/compare_nps.py through its command line: rounds, ratios, one-line errors."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import run_repo_script

REPO = Path(__file__).resolve().parents[1]


def test_two_builds_alternate_and_report_ratios() -> None:
    done = run_repo_script(
        "speed.compare_nps", str(REPO), str(REPO), "--depth", "2", "--rounds", "2", timeout=180
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert [line.split(":")[0] for line in lines[:2]] == ["round 1", "round 2"]
    assert all(re.search(r"ratio \d+\.\d %$", line) for line in lines[:2])
    base, other = lines[-2], lines[-1]
    assert base.split()[-1] == "base"
    # The same build twice searches the same tree.
    assert base.split()[1] == other.split()[1]
    assert re.search(r"\d+\.\d % \(\d+\.\d-\d+\.\d\)$", other)


def test_usage_errors_are_one_line(tmp_path: Path) -> None:
    for args in ([str(REPO)], [str(REPO), str(tmp_path)], [str(REPO), str(REPO), "--rounds", "0"]):
        done = run_repo_script("speed.compare_nps", *args)
        assert done.returncode == 2
        assert len(done.stderr.strip().splitlines()) == 1, done.stderr
        assert done.stderr.startswith("compare_nps: ")


def test_a_broken_build_is_reported(tmp_path: Path) -> None:
    # A regular package (with __init__.py), so it shadows any installed ``engine``.
    (tmp_path / "engine").mkdir()
    (tmp_path / "engine" / "__init__.py").write_text("")
    (tmp_path / "engine" / "__main__.py").write_text("raise SystemExit('broken build')\n")
    done = run_repo_script("speed.compare_nps", str(REPO), str(tmp_path), "--depth", "1")
    assert done.returncode == 1
    assert "bench failed in" in done.stderr and "broken build" in done.stderr


def test_extra_bench_arguments_per_build(tmp_path: Path) -> None:
    """``DIR::ARGS``: the same checkout with its network against its hand-written
    evaluation (different trees, so different node counts)."""
    from tests.networks import random_network

    net = tmp_path / "random.nnue"
    random_network(32, seed=5).write(net)
    done = run_repo_script(
        "speed.compare_nps",
        str(REPO),
        f"{REPO}::--nnue --eval-file {net}",
        "--depth",
        "2",
        "--rounds",
        "1",
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    base, other = done.stdout.strip().splitlines()[-2:]
    assert base.split()[1] != other.split()[1], done.stdout
