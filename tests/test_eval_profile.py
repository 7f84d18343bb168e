"""scripts/speed/eval_profile.py through its command line, on a tiny bench."""

from __future__ import annotations

import re

from engine.compiled import build_description
from tests.conftest import run_repo_script


def test_profile_reports_the_evaluation_share_and_cost() -> None:
    done = run_repo_script("speed.eval_profile", "--depth", "2", "--positions", "3")
    if not build_description().startswith("interpreted"):
        # Compiled, the counts would be zero: the tool refuses in one line instead.
        assert done.returncode == 2 and "needs the interpreted build" in done.stderr
        assert done.stderr.count("\n") == 1 and not done.stdout, done.stderr
        return
    assert done.returncode == 0, done.stderr
    out = done.stdout
    nodes = re.search(r"bench depth 2, 3 positions: (\d+) nodes", out)
    assert nodes and int(nodes.group(1)) > 0, out
    calls = re.search(r"evaluation \(all\)\s+(\d+)", out)
    in_search = re.search(
        r"evaluation ([0-9.]+) s of ([0-9.]+) s CPU \(([0-9.]+)%\), (\d+) calls, ([0-9.]+) us", out
    )
    assert calls and in_search, out
    # The same bench twice: the timed run makes exactly the profiled run's calls.
    assert int(in_search.group(4)) == int(calls.group(1)) > 0
    # A share of wall-clock seconds over CPU seconds: above 100 % on a loaded machine.
    assert float(in_search.group(3)) > 0
    assert re.search(r"one uncached evaluation in a warm loop: [0-9.]+ us", out)
