"""scripts/speed/latency.py: times go movetime through the real engine process."""

from __future__ import annotations

import re

from tests.conftest import run_repo_script


def test_latency_reports_answer_times() -> None:
    result = run_repo_script("speed.latency", "--searches", "3", "--movetime", "50", "--load", "1")
    assert result.returncode == 0, result.stderr
    match = re.search(
        r"3 searches, 1 busy processes: median ([\d.]+) ms.* worst ([\d.]+) ms", result.stdout
    )
    assert match, result.stdout
    assert 0 < float(match.group(1)) <= float(match.group(2))


def test_latency_bad_arguments_are_one_line() -> None:
    result = run_repo_script("speed.latency", "--movetime", "0")
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    result = run_repo_script("speed.latency", "--searches", "1", "--engine", "/nonexistent/engine")
    assert result.returncode == 1
    assert result.stderr.startswith("latency: ") and result.stderr.count("\n") == 1


def test_latency_plays_sudden_death_games() -> None:
    """--clock: self-play on a clock the script keeps; what it measured is printed (the
    number of time losses is a measurement, not asserted here: timing is noisy)."""
    result = run_repo_script("speed.latency", "--clock", "3000", "--games", "1", "--plies", "12")
    assert result.returncode == 0, result.stderr
    match = re.search(
        r"clock 3000 ms, 1 games, 0 busy processes: ([01]) lost on time; plies (\d+) median;"
        r" lowest clock (-?\d+) ms median, (-?\d+) ms worst",
        result.stdout,
    )
    assert match, result.stdout
    assert int(match.group(2)) <= 12 and int(match.group(3)) < 3000
