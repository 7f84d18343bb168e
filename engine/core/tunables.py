"""The search's and the clock's tunable constants: their names, defaults, ranges and
SPSA steps, and the values this process runs with.

A tuner (``cutoff-tune``, scripts/tuning/spsa.py) changes these constants without a
rebuild: it writes a JSON object ``{"NAME": value, ...}`` to a file and starts the
engine with the environment variable ``CUTOFF_TUNE`` naming that file. The modules
that own the constants (engine/core/search.py, engine/core/timeman.py) read their
values here once, at import, into their module constants, so the compiled build reads
them too (as C statics, no slower than literals in the bench) and a running engine
never changes them. Without ``CUTOFF_TUNE`` every constant has its default and the
engine is exactly the untuned one (the bench signature holds).

A bad file or entry never stops the engine: one line on stderr, and the defaults (for
that entry, or all of them) stand. A value outside its range is clamped to it.

This module must stay cheap to import and must not import the search.
"""

from __future__ import annotations

import json
import math
import os
import sys
from dataclasses import dataclass
from typing import Final

ENV: Final = "CUTOFF_TUNE"
"""The environment variable that names the file of tuned values."""


@dataclass(frozen=True)
class Tunable:
    """One constant: its default, the range a tuner may move it in, and the SPSA
    perturbation step (``c``, in the constant's own units) at the first iteration."""

    name: str
    default: float
    low: float
    high: float
    step: float
    integer: bool
    owner: str
    """The module that uses it (``search``, ``timeman``)."""
    doc: str

    def within(self, value: float) -> float:
        """``value`` moved into the range (a tuner's real-valued point)."""
        return min(self.high, max(self.low, value))

    def clamp(self, value: float) -> float:
        """``value`` inside the range, rounded when the constant is an integer."""
        value = self.within(value)
        return float(round(value)) if self.integer else value


def _int(
    name: str, default: int, low: int, high: int, step: float, owner: str, doc: str
) -> Tunable:
    return Tunable(name, float(default), float(low), float(high), step, True, owner, doc)


def _real(
    name: str, default: float, low: float, high: float, step: float, owner: str, doc: str
) -> Tunable:
    return Tunable(name, default, low, high, step, False, owner, doc)


TUNABLES: Final = {
    t.name: t
    for t in (
        # The search's margins and reductions (engine/core/search.py).
        _int("ASPIRATION_WINDOW_CP", 30, 10, 80, 6, "search", "first aspiration half-width"),
        _int("NULL_MOVE_BASE_REDUCTION", 3, 2, 5, 0.6, "search", "null move: plies beyond depth/4"),
        _int("REVERSE_FUTILITY_MARGIN_CP", 90, 40, 160, 10, "search", "reverse futility, per ply"),
        _int("FUTILITY_BASE_CP", 30, 0, 120, 12, "search", "futility margin at depth 0"),
        _int("FUTILITY_PER_DEPTH_CP", 100, 50, 180, 10, "search", "futility margin per ply"),
        _int("LATE_MOVE_BASE", 4, 2, 8, 0.7, "search", "late move pruning: moves at depth 0"),
        _real("LATE_MOVE_PER_DEPTH_SQUARED", 1.0, 0.5, 2.0, 0.15, "search", "LMP: moves per ply²"),
        _real("LMR_BASE", 0.75, 0.25, 1.5, 0.1, "search", "reduction: constant part"),
        _real("LMR_DIVISOR", 2.25, 1.5, 3.5, 0.15, "search", "reduction: log·log divisor"),
        _int("SINGULAR_MARGIN_CP", 8, 2, 16, 1.2, "search", "singular margin per ply"),
        # The clock (engine/core/timeman.py).
        _int("INCREMENT_HORIZON_MOVES", 20, 10, 40, 3, "timeman", "moves left, with increment"),
        _real("SUDDEN_DEATH_SOFT_CAP", 0.2, 0.1, 0.35, 0.02, "timeman", "optimum's clock cap"),
        _real("OPENING_SHARE", 0.6, 0.3, 1.2, 0.08, "timeman", "optimum's scale at move 1"),
        _real("MIDDLEGAME_SHARE", 1.25, 0.8, 2.0, 0.1, "timeman", "optimum's scale from move 29"),
        _real("STABLE_SCALE", 0.75, 0.4, 1.0, 0.05, "timeman", "soft limit, stable best move"),
        _real("CHANGE_SCALE", 0.5, 0.2, 1.0, 0.08, "timeman", "soft limit per best-move change"),
        _real("SCORE_DROP_MAX_EXTRA", 0.5, 0.0, 1.5, 0.1, "timeman", "soft limit, score drop"),
        _real(
            "SOFT_LIMIT_NEXT_ITERATION", 0.6, 0.3, 0.9, 0.05, "timeman", "no iteration past this"
        ),
    )
}
"""Every tunable constant, by name. Its owner module's docstring says what it does."""


def read_values(path: str) -> tuple[dict[str, float], list[str]]:
    """The tuned values in the file at ``path`` (clamped to their ranges) and one
    problem per line for what was left out (the file, or an entry)."""
    try:
        with open(path, encoding="utf-8") as handle:
            data = json.load(handle)
    except (OSError, ValueError) as error:
        return {}, [f"{path}: {error}; every constant keeps its default"]
    if not isinstance(data, dict):
        return {}, [f"{path}: not a JSON object of names and numbers; defaults kept"]
    values: dict[str, float] = {}
    problems = []
    for name, value in data.items():
        tunable = TUNABLES.get(name)
        if tunable is None:
            problems.append(f"{path}: {name!r} is no tunable constant; ignored")
        elif isinstance(value, bool) or not isinstance(value, (int, float)):
            problems.append(f"{path}: {name} = {value!r} is not a number; default kept")
        elif not math.isfinite(value):
            problems.append(f"{path}: {name} = {value!r} is not finite; default kept")
        else:
            values[name] = tunable.clamp(float(value))
    return values, problems


def _load() -> dict[str, float]:
    path = os.environ.get(ENV)
    if not path:
        return {}
    values, problems = read_values(path)
    for problem in problems:
        sys.stderr.write(f"cutoff: {ENV}: {problem}\n")
    return values


TUNED: Final = _load()
"""This process's tuned values (only those the file set), read once at import."""


def value(name: str) -> float:
    """The value this process runs with: tuned, or the default."""
    return TUNED.get(name, TUNABLES[name].default)


def int_value(name: str) -> int:
    """``value`` of an integer constant."""
    return round(value(name))
