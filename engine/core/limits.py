"""SearchLimits: one parsed UCI ``go`` command.

This module turns the tokens after ``go`` into plain values: clocks, increments,
movestogo, depth, nodes, mate, movetime, infinite, ponder, perft and the raw
``searchmoves`` strings. It tolerates any order, repeated tokens and negative
clocks (a GUI sends one when the flag has fallen: timeman answers at once). A
value that is no number or cannot be a limit (``depth 0``, ``mate -3``,
``nodes -5``, ``movetime -1``) and an unknown token are skipped and reported as
warnings. A ``go`` that asked for a limit but is left with none that ends the
search gets ``DEFAULT_MOVETIME_MS`` instead of searching until ``stop``: the GUI
that sent it waits for a ``bestmove``. Only a bare ``go`` (or one with just
``ponder``/``searchmoves``) and ``go infinite`` wait for ``stop``. It must not look
at a board (moves stay strings here; the controller resolves them), read the
clock, or compute time budgets (that is timeman.py).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Optional

# Tokens that take one integer argument, mapped to the SearchLimits field they set.
_INT_TOKENS = {
    "wtime": "wtime_ms",
    "btime": "btime_ms",
    "winc": "winc_ms",
    "binc": "binc_ms",
    "movestogo": "movestogo",
    "depth": "depth",
    "nodes": "nodes",
    "mate": "mate",
    "movetime": "movetime_ms",
    "perft": "perft",
}
# The least value that is a limit; below it a token is skipped (clocks, increments and
# movestogo have none: timeman copes with any value a GUI sends).
_MINIMUM = {"depth": 1, "nodes": 1, "mate": 1, "movetime": 0, "perft": 0}
_FLAG_TOKENS = {"infinite", "ponder"}
GO_KEYWORDS = frozenset(_INT_TOKENS) | _FLAG_TOKENS | {"searchmoves"}

# Python ints are unbounded; a hostile "depth 10**400" must not become a huge
# computation anywhere downstream, so every number is clamped to this magnitude.
_MAX_MAGNITUDE = 10**15

DEFAULT_MOVETIME_MS = 1000
"""The search time of a ``go`` whose limits were all skipped (or that gave only
increments or movestogo): short, and bounded whatever the position and machine."""


@dataclass
class SearchLimits:
    """What a ``go`` command asked for; None means the token was absent."""

    wtime_ms: Optional[int] = None
    btime_ms: Optional[int] = None
    winc_ms: Optional[int] = None
    binc_ms: Optional[int] = None
    movestogo: Optional[int] = None
    depth: Optional[int] = None
    nodes: Optional[int] = None
    mate: Optional[int] = None
    movetime_ms: Optional[int] = None
    perft: Optional[int] = None
    infinite: bool = False
    ponder: bool = False
    searchmoves: list[str] = field(default_factory=list)

    def has_clock(self) -> bool:
        """True when either side's clock was given (a game clock is running)."""
        return self.wtime_ms is not None or self.btime_ms is not None

    def own_time_ms(self, white_to_move: bool) -> Optional[int]:
        """Clock of the side to move; None when neither clock was sent.

        A clock sent only for the opponent (``go btime 100`` with white to move)
        counts as zero for us: the GUI thinks our flag is about to fall.
        """
        if not self.has_clock():
            return None
        own = self.wtime_ms if white_to_move else self.btime_ms
        return 0 if own is None else own

    def own_inc_ms(self, white_to_move: bool) -> int:
        inc = self.winc_ms if white_to_move else self.binc_ms
        return max(0, inc or 0)

    def is_unbounded(self) -> bool:
        """True when nothing but ``stop`` can end the search (a bare ``go`` too)."""
        if self.infinite:
            return True
        limited = (
            self.has_clock()
            or self.depth is not None
            or self.nodes is not None
            or self.mate is not None
            or self.movetime_ms is not None
        )
        return not limited


def _parse_int(text: str) -> Optional[int]:
    """An integer from ``text``; floats are truncated; None when it is no number."""
    try:
        value = int(text)
    except ValueError:
        try:
            number = float(text)
        except ValueError:
            return None
        if not math.isfinite(number):
            return None
        value = int(number)
    return max(-_MAX_MAGNITUDE, min(_MAX_MAGNITUDE, value))


def parse_go(tokens: list[str]) -> tuple[SearchLimits, list[str]]:
    """Parse the tokens after ``go``; returns the limits and human-readable warnings.

    ``searchmoves`` takes every following token up to the next ``go`` keyword
    (the spec puts it last; stopping at a keyword is a leniency). A skipped value
    or unknown token is a warning; the last warning then says when the search got
    ``DEFAULT_MOVETIME_MS`` for want of a limit.
    """
    limits = SearchLimits()
    warnings: list[str] = []
    unknown: list[str] = []
    asked = False  # a token other than ponder, infinite and searchmoves: a limit was meant
    i = 0
    while i < len(tokens):
        token = tokens[i].lower()
        i += 1
        if token in _INT_TOKENS:
            asked = True
            if i >= len(tokens) or tokens[i].lower() in GO_KEYWORDS:
                warnings.append(f"ignoring '{token}' (needs a number)")
                continue
            value = _parse_int(tokens[i])
            minimum = _MINIMUM.get(token)
            if value is None:
                warnings.append(f"ignoring '{token} {tokens[i]}' (not a number)")
            elif minimum is not None and value < minimum:
                warnings.append(f"ignoring '{token} {tokens[i]}' (must be at least {minimum})")
            else:
                setattr(limits, _INT_TOKENS[token], value)
            i += 1
        elif token == "infinite":
            limits.infinite = True
        elif token == "ponder":
            limits.ponder = True
        elif token == "searchmoves":
            while i < len(tokens) and tokens[i].lower() not in GO_KEYWORDS:
                limits.searchmoves.append(tokens[i].lower())
                i += 1
        else:
            # UCI: ignore what you do not know, but say so (a typo must not pass unseen).
            asked = True
            unknown.append(tokens[i - 1])
    if unknown:
        warnings.append(f"ignoring unknown '{' '.join(unknown)}'")
    if asked and not limits.infinite and limits.perft is None and limits.is_unbounded():
        limits.movetime_ms = DEFAULT_MOVETIME_MS
        warnings.append(
            f"no limit left: searching {DEFAULT_MOVETIME_MS} ms ('go infinite' waits for stop)"
        )
    return limits, warnings
