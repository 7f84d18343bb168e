"""Bench nodes/s of two or more engine builds, alternating, as ratios to the first.

    python -m scripts.speed.compare_nps BASE OTHER [OTHER ...] [--depth D] [--rounds N]
                                        [--cpu C]

Each build is a directory holding an ``engine`` package (a clone, or a copy made
by ``python -m scripts.matches.variant``). A round runs ``python -m engine bench`` once in each
build, one after the other; each run's nodes/s is the bench's own figure (search
time only, not start-up). A shared machine drifts in speed from minute to minute,
so the ratio is taken within each round, and the median and range of the rounds
are reported. ``--cpu C`` pins every run to one core, so that a build never runs
against a sibling on the other core. A build given as ``DIR::ARGS`` adds ARGS to its
bench command: ``. .::--nnue`` compares this checkout's hand-written evaluation with
its network (the node counts then differ: the trees do). This script measures; it
must not change the engine.
"""

from __future__ import annotations

import os
import re
import shlex
import statistics
import subprocess
import sys
from pathlib import Path

from ..common import ToolParser

NODES = re.compile(r"Nodes searched\s*:\s*(\d+)")
NPS = re.compile(r"Nodes/second\s*:\s*(\d+)")


def split_build(text: str) -> tuple[Path, list[str]]:
    """``DIR`` or ``DIR::ARGS``: the build directory and the extra bench arguments."""
    directory, _, extra = text.partition("::")
    return Path(directory), shlex.split(extra)


def bench(build: Path, depth: int, cpu: int | None, extra: list[str]) -> tuple[int, int]:
    """(nodes, nodes/s) of one bench run of ``build``."""
    env = dict(os.environ, PYTHONPATH=str(build))

    def pin() -> None:
        if cpu is not None:
            os.sched_setaffinity(0, {cpu})

    done = subprocess.run(
        [sys.executable, "-m", "engine", "bench", "--depth", str(depth), *extra],
        cwd=str(build),
        env=env,
        capture_output=True,
        text=True,
        preexec_fn=pin,
        check=False,
    )
    nodes, nps = NODES.search(done.stdout), NPS.search(done.stdout)
    if done.returncode != 0 or not nodes or not nps:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise RuntimeError(f"bench failed in {build}: {last}")
    return int(nodes.group(1)), int(nps.group(1))


def main(argv: list[str] | None = None) -> int:
    parser = ToolParser(prog="compare_nps", description=__doc__.splitlines()[0])
    parser.add_argument(
        "builds", nargs="+", help="build directories, base first (DIR::ARGS: extra bench args)"
    )
    parser.add_argument("--depth", type=int, default=6, help="bench depth (default 6)")
    parser.add_argument("--rounds", type=int, default=6, help="rounds (default 6)")
    parser.add_argument("--cpu", type=int, default=None, help="pin every run to this core")
    args = parser.parse_args(argv)
    if len(args.builds) < 2:
        parser.error("give at least two builds: the base, then the others")
    builds = [split_build(text) for text in args.builds]
    for build, _ in builds:
        package = build / "engine"
        if not (package / "__init__.py").is_file() or not (package / "__main__.py").is_file():
            parser.error(f"{build} holds no engine package")
    if args.rounds < 1 or args.depth < 1:
        parser.error("--rounds and --depth must be at least 1")

    names = [str(build) for build in args.builds]
    speeds: list[list[int]] = [[] for _ in args.builds]
    nodes: list[int] = [0] * len(args.builds)
    try:
        for number in range(1, args.rounds + 1):
            line = []
            for index, (build, extra) in enumerate(builds):
                nodes[index], nps = bench(build.resolve(), args.depth, args.cpu, extra)
                speeds[index].append(nps)
                line.append(f"{nps}")
            shown = [f"{100 * s[-1] / speeds[0][-1]:.1f} %" for s in speeds[1:]]
            print(f"round {number}: nodes/s {' / '.join(line)}; ratio {', '.join(shown)}")
            sys.stdout.flush()
    except RuntimeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1

    print(f"{'build':40} {'nodes':>9} {'median nodes/s':>15}  ratio to base (median, range)")
    for index, name in enumerate(names):
        median = statistics.median(speeds[index])
        if index == 0:
            summary = "base"
        else:
            ratios = [100 * s / b for s, b in zip(speeds[index], speeds[0])]
            summary = f"{statistics.median(ratios):.1f} % ({min(ratios):.1f}-{max(ratios):.1f})"
        print(f"{name[-40:]:40} {nodes[index]:9d} {median:15.0f}  {summary}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
