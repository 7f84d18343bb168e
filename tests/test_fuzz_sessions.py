"""``python -m scripts.robustness.fuzz_sessions``: a few hostile sessions against the
real ``cutoff`` process (bad table and book files, Threads 2 with a 16 MB /dev/shm
where root may mount one, kills while helpers start) end clean. The acceptance run
of issue 65 is the same tool with ``--sessions 1000``."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from conftest import SHARED, run_repo_script
from uci_harness import engine_command


def test_hostile_sessions_end_clean(tmp_path: Path) -> None:
    summary = tmp_path / "summary.json"
    args = [
        "--sessions", "6", "--jobs", "2", "--seed", "7", "--kill-share", "0.34",
        "--small-shm-share", "0.5", "--engine", shlex.join(engine_command()),
        "--json", str(summary), "--failures", str(tmp_path / "failed"), "--quiet",
    ]  # fmt: skip
    syzygy = SHARED / "data" / "syzygy"
    if syzygy.is_dir():
        args += ["--syzygy", str(syzygy)]
    done = run_repo_script("robustness.fuzz_sessions", *args, timeout=600)
    failures = "\n".join(p.read_text()[:3000] for p in (tmp_path / "failed").glob("*.txt"))
    assert done.returncode == 0, done.stdout + done.stderr + failures
    figures = json.loads(summary.read_text())
    assert figures["sessions"] == 6 and figures["killed_during_helper_start"] >= 1
    assert figures["bestmoves"] >= 1 and figures["tracebacks"] == 0
