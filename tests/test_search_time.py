"""``time`` and ``nps`` in ``info`` count from when the engine takes a ``go`` up
(engine.play.controller), not from when it arrived behind a slow command.

No clock bound: each test compares the reported time with the wait before the
search, which is many times longer than a depth-1 search however busy the machine.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from uci_harness import Engine, field, info_lines

TWO_CPUS = pytest.mark.skipif(
    (os.cpu_count() or 1) < 2, reason="Threads 2 needs two CPUs (Threads is capped at the cores)"
)


def test_time_counts_from_when_the_search_starts_not_from_a_wait_before(tmp_path: Path) -> None:
    """A ``go`` queued behind a search waited for it; its ``time`` leaves the wait out
    (the same wait as behind ``setoption name Threads``, which starts processes)."""
    eng = Engine(tmp_path)
    eng.handshake()
    eng.send("position startpos")
    sent = eng.send("go nodes 20000")
    eng.send("go depth 1")  # waits in the queue for the first search
    first_done, _, _ = eng.expect("bestmove", timeout=120)
    _, _, seen = eng.expect("bestmove", timeout=60)
    waited_ms = (first_done - sent) * 1000
    reported = int(field(info_lines(seen)[-1], "time"))
    assert reported < waited_ms / 4, (reported, waited_ms)
    eng.close()


@TWO_CPUS
def test_time_after_setoption_threads_leaves_the_helpers_start_out(tmp_path: Path) -> None:
    eng = Engine(tmp_path)
    eng.handshake()
    sent = eng.send("setoption name Threads value 2")
    eng.send("go depth 1")  # before readyok: it waits while the helper starts
    arrived, _, seen = eng.expect("bestmove", timeout=120)
    reported = int(field(info_lines(seen)[0], "time"))
    # Before: `depth 1 ... nodes 99 nps 77 time 1272`, the helper's start counted.
    assert reported < (arrived - sent) * 1000 / 4, (reported, arrived - sent)
    eng.close()
