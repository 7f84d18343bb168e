"""engine.processes: the engine's processes start from scripts without a main guard.

Scripts, notebooks and ``python -c`` have no ``if __name__ == "__main__":``. The
README's snippets are such scripts: Lazy SMP helpers (``Analyser(threads=2)``) and
local analysis workers (``parallel.run(jobs=2)``) must start without running the
script again, and nothing the engine started may be left once the work is done (no
helper, no worker, no resource tracker): each script prints its children itself.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import REPO, two_cpus

CHILDREN = """
import multiprocessing, os
def children():
    found = [p.pid for p in multiprocessing.active_children()]
    for entry in os.listdir("/proc"):
        try:
            with open(f"/proc/{entry}/stat") as stat:
                if int(stat.read().rpartition(")")[2].split()[1]) == os.getpid():
                    found.append(int(entry))
        except (OSError, ValueError):
            continue
    return sorted(set(found))
"""
"""The live children of the script, from multiprocessing and from /proc (zombies too)."""

ANALYSER = (
    CHILDREN
    + """
import chess, chess.engine
from engine.analysis import Analyser
with Analyser(threads=2) as analyser:
    print("threads", analyser.threads)
    info = analyser.analyse(chess.Board(), chess.engine.Limit(depth=3))
    print("best", info["pv"][0].uci())
print("children", children())
"""
)

PARALLEL = (
    CHILDREN
    + """
from engine.analysis.parallel import run_ordered
print("ran", list(run_ordered(sorted, [3, 1, 2], jobs=2)))  # sorted: a chunk of one, as is
print("children", children())
"""
)


def _run(code: str, as_script: bool, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    if as_script:
        script = tmp_path / "unguarded.py"
        script.write_text(code)
        command = [sys.executable, str(script)]
    else:
        command = [sys.executable, "-c", code]
    return subprocess.run(
        command,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        capture_output=True,
        text=True,
        timeout=120,
    )


def _clean(done: subprocess.CompletedProcess[str]) -> None:
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr and "bootstrapping" not in done.stderr, done.stderr
    assert "children []" in done.stdout, done.stdout


@two_cpus
@pytest.mark.parametrize("as_script", [True, False], ids=["script", "python-c"])
def test_an_analyser_with_threads_in_an_unguarded_script(tmp_path: Path, as_script: bool) -> None:
    done = _run(ANALYSER, as_script, tmp_path)
    _clean(done)
    assert "threads 2" in done.stdout  # the helper did start
    assert "best " in done.stdout


@pytest.mark.parametrize("as_script", [True, False], ids=["script", "python-c"])
def test_local_workers_in_an_unguarded_script(tmp_path: Path, as_script: bool) -> None:
    done = _run(PARALLEL, as_script, tmp_path)
    _clean(done)
    assert "ran [3, 1, 2]" in done.stdout


def test_a_task_function_of_a_guarded_script_still_runs_in_the_workers(tmp_path: Path) -> None:
    # Defined in __main__: the workers run the script (as __mp_main__) to find it.
    code = (
        CHILDREN
        + """
from engine.analysis.parallel import run_ordered
def double(chunk):
    return [2 * x for x in chunk]
if __name__ == "__main__":
    print("doubled", list(run_ordered(double, [1, 2, 3], jobs=2)))
    print("children", children())
"""
    )
    done = _run(code, True, tmp_path)
    _clean(done)
    assert "doubled [2, 4, 6]" in done.stdout
