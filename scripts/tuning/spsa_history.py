"""What a cutoff-tune run's history says: each constant's path, and whether it is signal.

Usage: cutoff-tune report DIR [--plot FILE] [--keep FILE] [--min-z Z] [--json]
       (python -m scripts.tuning.spsa report ...)

SPSA moves every constant every iteration, by an amount proportional to the score
difference of the ``+`` and ``-`` sides times that constant's random sign. For a
constant that does not matter, the sign is independent of the difference, so its
movement is a sum of terms ``±a_k c_k step (s+ - s-)`` with random signs: a random
walk whose spread is known exactly from the observed differences,

    noise_i = sqrt(sum_k (a_k c_k,i (s+_k - s-_k)) ** 2).

A constant's z = (its value - its start) / noise_i says how far it moved in units of
that spread: |z| < 2 is what games alone would give a constant that changes nothing
(about 95 % of the time). The same sums say how strong a constant's effect must be
for the run to see it at z = 2 (``detectable_elo_per_step``). A constant has settled
when the last quarter of the run moved it by at most one step.

``report`` prints a table of this for a run's state (DIR/spsa.json), can draw the plot
with z in each panel's title, and ``--keep FILE`` writes the constants with |z| at
least ``--min-z`` (the others stay at their defaults, so they are left out), ready for
``CUTOFF_TUNE`` and the verdict matches. This module only reads a state: it never plays
games or changes the run.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Optional

from engine.analysis.outputs import Kind, write_failure
from engine.analysis.plots import plot_file, save_figure
from engine.core.tunables import TUNABLES

from ..common import UsageError, atomic_output, print_stdout
from ..matches.drivers import files_problem

PROG = "cutoff-tune report"
SETTLED_Z = 2.0
"""A constant whose last quarter moved it by less than this z has settled."""
ELO_PER_SCORE_AT_HALF = 400 / math.log(10) * 4
"""d(Elo)/d(score) at a 50 % score (logistic model); at score p it is this / (4 p (1-p))."""


def _constants_are_ours(path: Path) -> bool:
    try:
        data = json.loads(path.read_bytes())
    except ValueError:
        return False
    return isinstance(data, dict) and bool(data) and set(data) <= set(TUNABLES)


CONSTANTS = Kind("a file of cutoff-tune's constants", _constants_are_ours)
"""The tuner's files of constants: a JSON object of tunable names and numbers (an
empty one is written only where nothing was there)."""


@dataclass(frozen=True)
class Movement:
    """One constant over a run: where it went, and how that compares with noise."""

    name: str
    start: float
    value: float
    steps: float
    """value - start, in the constant's steps."""
    z: float
    """value - start over the random walk's spread (module docstring); 0 without games."""
    recent_z: float
    """The same over the last quarter of the iterations alone (0 before four)."""

    @property
    def settled(self) -> bool:
        """Whether the last quarter moved it no more than noise would (|z| < 2)."""
        return abs(self.recent_z) < SETTLED_Z


def _difference(row: dict[str, Any]) -> float:
    return float(row["plus"]) - float(row["minus"])


def _spread(rows: Sequence[dict[str, Any]], step: float) -> float:
    """The random walk's spread (module docstring) over ``rows``, in the constant's units."""
    return math.sqrt(
        sum((row["a"] * row["c_factor"] * step * _difference(row)) ** 2 for row in rows)
    )


def movements(state: dict[str, Any]) -> list[Movement]:
    """Every tuned constant's movement in the run whose state is ``state``."""
    history = state["history"]
    recent = history[len(history) - len(history) // 4 :] if len(history) >= 4 else []
    result = []
    for name, value in state["theta"].items():
        step = TUNABLES[name].step
        start = float(state["start"][name])
        moved = float(value) - start
        spread = _spread(history, step)
        # The last quarter: from the value before its first iteration to now.
        index = len(history) - len(recent)
        before = float(history[index - 1]["theta"][name]) if recent else float(value)
        recent_spread = _spread(recent, step)
        result.append(
            Movement(
                name=name,
                start=start,
                value=float(value),
                steps=moved / step,
                z=moved / spread if spread > 0 else 0.0,
                recent_z=(float(value) - before) / recent_spread if recent_spread > 0 else 0.0,
            )
        )
    return result


def mean_score(state: dict[str, Any]) -> float:
    """The tuned engine's mean score over both sides and every iteration (0.5 if none)."""
    history = state["history"]
    if not history:
        return 0.5
    total = sum(float(row["plus"]) + float(row["minus"]) for row in history)
    return total / (2 * len(history))


def detectable_elo_per_step(state: dict[str, Any]) -> float:
    """The effect (Elo per step of a constant) that this run would move to z = 2 on
    average, infinite before any iteration.

    If one step of constant i is worth g points of score, the + and - sides differ on
    average by 2 c_k g d_i in iteration k, so the constant moves on average
    2 g sum_k a_k c_k ** 2 steps, against a spread of sqrt(sum_k (a_k c_k diff_k) ** 2)
    steps: z = 2 at g = spread / sum_k a_k c_k ** 2. Linear in g and blind to the
    other constants' effects, which only add noise: a floor, not a promise."""
    history = state["history"]
    signal = sum(float(row["a"]) * float(row["c_factor"]) ** 2 for row in history)
    spread = _spread(history, 1.0)
    if signal <= 0 or spread <= 0:
        return math.inf
    p = min(max(mean_score(state), 0.05), 0.95)
    return spread / signal * ELO_PER_SCORE_AT_HALF / (4 * p * (1 - p))


def report_lines(state: dict[str, Any], min_z: float = 2.0) -> list[str]:
    """The run in a few lines: progress, the table, what is beyond noise."""
    history = state["history"]
    rows = movements(state)
    planned = state["settings"].get("iterations", len(history))
    lines = [f"{len(history)} of {planned} iterations; mean score {mean_score(state):.1%}"]
    width = max([len("constant")] + [len(row.name) for row in rows])
    lines.append(
        f"{'constant':<{width}}  {'start':>8}  {'now':>8}  {'steps':>6}  {'z':>6}  last quarter's z"
    )
    for row in rows:
        lines.append(
            f"{row.name:<{width}}  {row.start:8.4g}  {row.value:8.4g}  {row.steps:+6.2f}"
            f"  {row.z:+6.2f}  {row.recent_z:+6.2f} " + ("settled" if row.settled else "drifting")
        )
    beyond = [row.name for row in rows if abs(row.z) >= min_z]
    drifting = sum(not row.settled for row in rows)
    lines.append(
        f"beyond noise (|z| >= {min_z:g}): {', '.join(beyond) if beyond else 'none'}; "
        f"{len(rows) - drifting} of {len(rows)} settled"
    )
    elo = detectable_elo_per_step(state)
    if math.isfinite(elo):
        lines.append(
            f"this run sees, at z = 2, a constant whose one step is worth about {elo:.0f} Elo"
        )
    return lines


def kept(state: dict[str, Any], min_z: float = 2.0) -> dict[str, float]:
    """The constants beyond noise, at their tuned values (the others stay default)."""
    return {row.name: row.value for row in movements(state) if abs(row.z) >= min_z}


def plot_history(state: dict[str, Any], path: str) -> None:
    """One small panel per constant: its value over the iterations, in its own units
    and range: its default dashed, shaded the band that noise alone would keep it in,
    its z in the title. A constant that leaves the band is signal (|z| at least 2);
    one that has stopped drifting has settled."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(state["theta"])
    z = {row.name: row.z for row in movements(state)}
    columns = min(3, len(names))
    rows = -(-len(names) // columns)
    figure, axes = plt.subplots(
        rows, columns, figsize=(3.2 * columns, 1.9 * rows), dpi=100, squeeze=False
    )
    iterations = [0] + [row["iteration"] + 1 for row in state["history"]]
    for index, ax in enumerate(axes.flat):
        if index >= len(names):
            ax.set_visible(False)
            continue
        name = names[index]
        tunable = TUNABLES[name]
        values = [state["start"][name]] + [row["theta"][name] for row in state["history"]]
        # Where games alone would keep a constant that changes nothing, 95 % of the time.
        history = state["history"]
        band = [2 * _spread(history[:k], tunable.step) for k in range(len(history) + 1)]
        start = float(state["start"][name])
        ax.fill_between(
            iterations,
            [start - width for width in band],
            [start + width for width in band],
            color="grey",
            alpha=0.18,
            linewidth=0,
        )
        ax.plot(iterations, values, linewidth=1.2)
        ax.axhline(tunable.default, color="grey", linestyle="--", linewidth=0.8)
        ax.set_ylim(tunable.low, tunable.high)
        ax.set_title(f"{name}  z {z[name]:+.1f}", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
    figure.suptitle(
        f"cutoff-tune: {len(names)} constants over {len(state['history'])} iterations "
        "(dashed: the default; shaded: where noise alone would keep it, |z| < 2)",
        fontsize=10,
    )
    figure.tight_layout()
    save_figure(figure, path)
    plt.close(figure)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="What a cutoff-tune run says so far: each constant against the noise.",
    )
    parser.add_argument("dir", metavar="DIR", help="the run's folder (its spsa.json)")
    parser.add_argument("--plot", metavar="FILE", help="each constant over the iterations")
    parser.add_argument(
        "--keep", metavar="FILE", help="write the constants beyond noise, for CUTOFF_TUNE"
    )
    parser.add_argument(
        "--min-z", type=float, default=2.0, help="|z| a kept constant needs (default 2)"
    )
    parser.add_argument("--json", action="store_true", help="the table as JSON on stdout")
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Report on a run; 0, or 1 when its state cannot be read or a file written."""
    args = build_parser().parse_args(argv)
    path = Path(args.dir) / "spsa.json"
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
        if not all(key in state for key in ("settings", "start", "theta", "history")):
            raise ValueError("not a cutoff-tune state")
        unknown = [name for name in state["theta"] if name not in TUNABLES]
        if unknown:
            raise ValueError(f"{unknown[0]!r} is no tunable constant of this Cutoff")
    except (OSError, ValueError) as err:
        print(f"{PROG}: error: {path}: {err}", file=sys.stderr)
        return 1
    problem = files_problem([("--keep", args.keep, CONSTANTS)], args.plot, [path])
    if problem:
        print(f"{PROG}: error: {problem}", file=sys.stderr)
        return 1
    if args.json:
        elo = detectable_elo_per_step(state)
        text = json.dumps(
            {
                "iterations": len(state["history"]),
                "mean_score": mean_score(state),
                "detectable_elo_per_step": elo if math.isfinite(elo) else None,
                "constants": [asdict(row) | {"settled": row.settled} for row in movements(state)],
            },
            indent=1,
        )
    else:
        text = "\n".join(report_lines(state, args.min_z))
    failed = print_stdout(text)
    if failed is not None:
        print(f"{PROG}: error: {write_failure('stdout', failed)}", file=sys.stderr)
        return 1
    written = None
    try:
        if args.keep:
            written = Path(args.keep)
            with atomic_output(written) as handle:  # whole or not at all
                handle.write(json.dumps(kept(state, args.min_z), indent=1) + "\n")
        if args.plot:
            written = plot_file(args.plot)
            plot_history(state, args.plot)
    except UsageError as err:
        print(f"{PROG}: error: {err}", file=sys.stderr)
        return 1
    except OSError as err:
        assert written is not None
        print(f"{PROG}: error: {write_failure(written, err)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
