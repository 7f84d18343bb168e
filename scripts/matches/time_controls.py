"""What bounds an engine's moves: time controls, movetime, depth and nodes.

Responsible for parsing and describing limits (``--tc 40/10+0.1`` and the per-engine
``tc=``, ``st=``, ``depth=``, ``nodes=``) and the positive-number checks the command line
shares. Pure values: it must not start engines or keep clocks (the game loop does).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Optional

from .errors import MatchError


@dataclass(frozen=True)
class TimeControl:
    """A clock: ``base_s`` seconds for every ``moves`` moves (0 = whole game), plus ``inc_s``."""

    moves: int
    base_s: float
    inc_s: float

    def clock_after_move(self, left_s: float, moves_made: int) -> float:
        """The clock after a move that left ``left_s`` on it, ``moves_made`` moves in.

        Like fastchess, a small overrun (the runner forfeits a larger one) is not
        carried over as a negative clock, so engines never receive negative
        wtime/btime; then the increment, and the base again at each control.
        """
        clock = max(left_s, 0.0) + self.inc_s
        if self.moves and moves_made % self.moves == 0:
            clock += self.base_s
        return clock

    def pgn(self) -> str:
        base = fmt_seconds(self.base_s)
        text = f"{self.moves}/{base}" if self.moves else base
        return f"{text}+{fmt_seconds(self.inc_s)}" if self.inc_s else text


def fmt_seconds(value: float) -> str:
    return f"{value:g}"


_TC_RE = re.compile(r"^(?:(\d+)/)?(\d+(?:\.\d+)?|\d*\.\d+)(?:\+(\d+(?:\.\d+)?|\d*\.\d+))?$")


def parse_tc(text: str) -> TimeControl:
    """``base+inc`` (seconds), ``moves/base`` or ``moves/base+inc``."""
    match = _TC_RE.match(text.strip())
    if not match:
        raise MatchError(f"bad time control {text!r} (expected e.g. 10+0.1, 40/10 or 40/10+0.1)")
    moves = int(match.group(1)) if match.group(1) else 0
    base = float(match.group(2))
    inc = float(match.group(3)) if match.group(3) else 0.0
    if base <= 0 or (match.group(1) is not None and moves <= 0):
        raise MatchError(f"bad time control {text!r}: base time and move count must be positive")
    return TimeControl(moves, base, inc)


@dataclass(frozen=True)
class Limits:
    """What bounds one engine's moves; any combination, the first one reached stops it."""

    tc: Optional[TimeControl] = None
    movetime_s: Optional[float] = None
    depth: Optional[int] = None
    nodes: Optional[int] = None

    def is_empty(self) -> bool:
        return self.tc is None and self.movetime_s is None and self.depth is None and not self.nodes

    def fields(self) -> list[tuple[str, str]]:
        """The limits set, as (engine spec key, value): ``tc``, ``st`` (move time in
        seconds), ``depth``, ``nodes``."""
        fields = []
        if self.tc:
            fields.append(("tc", self.tc.pgn()))
        if self.movetime_s is not None:
            fields.append(("st", fmt_seconds(self.movetime_s)))
        if self.depth is not None:
            fields.append(("depth", str(self.depth)))
        if self.nodes is not None:
            fields.append(("nodes", str(self.nodes)))
        return fields

    def describe(self) -> str:
        """The limits in words, for the summary (``tc 10+0.1, movetime 0.1s``)."""
        words = {"tc": "tc {}", "st": "movetime {}s", "depth": "depth {}", "nodes": "nodes {}"}
        return ", ".join(words[key].format(value) for key, value in self.fields())

    def pgn_time_control(self) -> str:
        if self.tc:
            return self.tc.pgn()
        if self.movetime_s is not None:
            return f"1/{fmt_seconds(self.movetime_s)}"
        return "-"


def positive_float(text: str, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise MatchError(f"bad {what} {text!r}: not a number") from None
    if not value > 0 or math.isinf(value):
        raise MatchError(f"bad {what} {text!r}: must be positive")
    return value


def positive_int(text: str, what: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise MatchError(f"bad {what} {text!r}: not an integer") from None
    if value <= 0:
        raise MatchError(f"bad {what} {text!r}: must be positive")
    return value
