"""Every process the ``cutoff`` process starts, in both install modes, with and
without the compiled build.

The processes the ``cutoff`` process starts inherit its ``sys.path``, and an
editable install finds the package through a finder that comes after it: once, a
folder of the compiled build on that path made every ``analyse --jobs`` worker die
with an ImportError. The tests elsewhere put the checkout on PYTHONPATH, which hides
such faults; this one installs the checkout into a fresh venv (``pip install -e``,
then ``pip install .``), without PYTHONPATH, and runs the analysis workers
(``--jobs 2``), the Lazy SMP helpers (``Threads 2``) and, when Dask is installed
here, the workers of ``--scheduler local:2``. It reads each started process's memory
map to see which build it runs: the compiled search once ``cutoff compile`` made it,
never before. It compiles once, in the editable checkout, and copies that build into
the installed package (the same sources and Python, so its manifest holds there too).
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Optional

import pytest

from engine import compiled

ROOT = Path(__file__).resolve().parent.parent
FENS = (
    "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1",
    "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
    "8/8/8/4k3/8/8/8/KQ6 w - - 0 1",
    "r1bqkb1r/pppp1ppp/2n2n2/4p2Q/2B1P3/8/PPPP1PPP/RNB1K1NR w KQkq - 4 4",
    "rnbqkb1r/ppp1pppp/5n2/3p4/3P4/5N2/PPP1PPPP/RNBQKB1R w KQkq - 2 3",
    "8/5pk1/6p1/8/8/6P1/5PK1/8 w - - 0 1",
    "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1",
    "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1",
)
"""Two chunks of positions (engine.cli.CHUNK_SIZE 4): both analysis workers start."""
LIBRARY = compiled.GROUP + "__mypyc"
"""The compiled build's shared library, in the map of a process that runs it."""


def _descendants(root: int) -> list[int]:
    """The processes below ``root``, from /proc alone."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            parents[int(entry.name)] = int(stat.rpartition(")")[2].split()[1])
    found, frontier = [], [root]
    while frontier:
        parent = frontier.pop()
        children = [pid for pid, ppid in parents.items() if ppid == parent]
        found.extend(children)
        frontier.extend(children)
    return found


class _Watcher:
    """Which processes below a process are helpers and workers (started by
    engine.processes, or by multiprocessing's ``spawn_main``: Dask workers), and
    whether each mapped the compiled build at any moment it was seen."""

    def __init__(self, root: int) -> None:
        self.root = root
        self.compiled: dict[int, bool] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        while not self._stop.is_set():
            for pid in _descendants(self.root):
                try:
                    cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
                    if b"spawn_main" not in cmdline and b"engine.processes" not in cmdline:
                        continue
                    mapped = LIBRARY in Path(f"/proc/{pid}/maps").read_text()
                except OSError:
                    continue
                self.compiled[pid] = self.compiled.get(pid, False) or mapped
            time.sleep(0.02)

    def stop(self) -> dict[int, bool]:
        self._stop.set()
        self._thread.join(10)
        return self.compiled


def _run(
    command: list[str], env: dict[str, str], cwd: Path, uci: Optional[str] = None
) -> tuple[str, str, dict[int, bool]]:
    """Run ``command``; its stdout, stderr and the watcher's findings. ``uci``: a
    session's commands, sent at once; ``quit`` follows the ``bestmove``."""
    process = subprocess.Popen(
        command,
        cwd=cwd,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    watcher = _Watcher(process.pid)
    timer = threading.Timer(600, process.kill)  # (a hung engine fails the test)
    timer.start()
    try:
        head = ""
        if uci is not None:
            assert process.stdin is not None and process.stdout is not None
            process.stdin.write(uci)
            process.stdin.flush()
            while not head.endswith("\n") or not head.splitlines()[-1].startswith("bestmove"):
                line = process.stdout.readline()
                if not line:
                    break
                head += line
        out, err = process.communicate("quit\n" if uci is not None else None)
        out = head + out
    finally:
        timer.cancel()
        if process.poll() is None:
            process.kill()
            process.wait()
        started = watcher.stop()
    assert process.returncode == 0, f"{command}: exit {process.returncode}\n{err}"
    assert "Traceback" not in err and "Error" not in err, f"{command}:\n{err}"
    return out, err, started


def _check(
    mode: str, cutoff: Path, env: dict[str, str], cwd: Path, built: bool, dask: bool
) -> list[dict[str, object]]:
    """Run what starts processes; every one runs, and runs the compiled build exactly
    when ``built``. Returns the analysis's records (the same in every mode)."""
    fens = cwd / "fens.txt"
    analyse = [str(cutoff), "analyse", "--quiet", "--json", "--depth", "5", str(fens)]
    out, _, workers = _run([*analyse, "--jobs", "2"], env, cwd)
    records = _records(out)
    assert [record["index"] for record in records] == list(range(1, len(FENS) + 1)), out
    assert len(workers) == 2, f"{mode}: analysis workers {workers}"
    assert set(workers.values()) == {built}, f"{mode}: analysis workers {workers}"
    uci = "uci\nsetoption name Threads value 2\nisready\nposition startpos\ngo depth 5\n"
    out, _, helpers = _run([str(cutoff)], env, cwd, uci=uci)
    assert "bestmove " in out and "helper" not in out, f"{mode}: {out}"
    assert len(helpers) == 1 and set(helpers.values()) == {built}, f"{mode}: helpers {helpers}"
    if dask:
        out, _, workers = _run([*analyse, "--scheduler", "local:2"], env, cwd)
        assert _records(out) == records, f"{mode}: {out}"
        assert len(workers) >= 2, f"{mode}: Dask workers {workers}"
        assert set(workers.values()) == {built}, f"{mode}: Dask workers {workers}"
    return records


def _records(out: str) -> list[dict[str, object]]:
    """What ``analyse --json`` found, without the timings (the same on every run:
    every position starts from an empty table)."""
    records = [json.loads(line) for line in out.splitlines()]
    assert all("error" not in record for record in records), out
    return [{k: r.get(k) for k in ("index", "bestmove", "nodes", "score", "pv")} for r in records]


@pytest.mark.slow
@pytest.mark.timeout(3600)  # two installs, a compile and four rounds of processes
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.skipif(compiled.missing_tools() != [], reason="needs mypy and setuptools")
@pytest.mark.skipif(shutil.which("gcc") is None and shutil.which("cc") is None, reason="no cc")
def test_every_started_process_runs_in_both_install_modes(tmp_path: Path) -> None:
    source = tmp_path / "src"
    source.mkdir()
    ignore = shutil.ignore_patterns(*compiled.NOT_SOURCES, "*.egg-info", "build")
    for folder in ("engine", "perft", "scripts"):
        shutil.copytree(ROOT / folder, source / folder, ignore=ignore)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    work = tmp_path / "work"  # neither checkout nor venv: nothing importable here
    work.mkdir()
    (work / "fens.txt").write_text("\n".join(FENS) + "\n")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    python, cutoff = venv / "bin" / "python", venv / "bin" / "cutoff"
    dask = importlib.util.find_spec("distributed") is not None
    extras = "[compile,dask]" if dask else "[compile]"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}

    def pip(*args: str) -> None:
        done = subprocess.run(
            [str(python), "-m", "pip", "install", "-q", *args],
            capture_output=True,
            text=True,
            timeout=1800,
            env=env,
        )
        if done.returncode != 0:
            pytest.skip(f"cannot install into a fresh venv: {done.stderr.strip()[-500:]}")

    pip("-e", f"{source}{extras}")
    results = {"editable": _check("editable", cutoff, env, work, False, dask)}
    built = subprocess.run(
        [str(cutoff), "compile"], capture_output=True, text=True, timeout=3600, env=env
    )
    assert built.returncode == 0, built.stdout + built.stderr
    status = subprocess.run(
        [str(cutoff), "compile", "--status"], capture_output=True, text=True, env=env
    )
    modules = len(compiled.COMPILED_MODULES)
    expected = f"{source / 'engine' / 'core'}: compiled by mypyc ({modules} modules)\n"
    assert status.stdout == expected, status.stdout
    results["editable, compiled"] = _check("editable, compiled", cutoff, env, work, True, dask)

    pip("--no-deps", "--force-reinstall", str(source))
    located = subprocess.run(
        [str(python), "-c", "import engine; print(engine.__file__)"],
        capture_output=True,
        text=True,
        cwd=work,
        env=env,
    )
    installed = Path(located.stdout.strip()).parent
    assert "site-packages" in str(installed), located.stdout + located.stderr
    results["installed"] = _check("installed", cutoff, env, work, False, dask)
    for path in compiled.extension_files(str(source / "engine" / "core")):
        shutil.copy2(path, installed / "core")
    results["installed, compiled"] = _check("installed, compiled", cutoff, env, work, True, dask)
    # The same analysis whatever runs it: the compiled search finds the same trees.
    assert all(records == results["editable"] for records in results.values()), results
