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
