"""Reading the match PGNs that the post-match tools (``clock_use``, ``turning_points``,
``paired``) analyse.

Responsible for what those tools share: every game of every file in order, read as
every other tool reads PGN (``engine.analysis.inputs.read_games``: a game that
cannot be replayed is one line naming its file and number, and the rest is read),
and the check that each file named exists before any is read (so that a typo is one
line, not a half-finished report), and ``LineReport``, their one stderr line per
game that cannot be replayed, counted for the exit status; and for knowing a file as
a match PGN (``MATCH_PGN``, by the tags only the match runner writes) or as any PGN
(``ANY_PGN``). It must not interpret the games: each tool does.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Optional

import chess.pgn

from engine.analysis.inputs import ErrorReport, read_games
from engine.analysis.outputs import pgn_kind

__all__ = ["ANY_PGN", "MATCH_PGN", "ErrorReport", "LineReport", "first_missing", "games_of"]

MATCH_PGN = pgn_kind(
    "a cutoff-match PGN",
    lambda tags: "Reason" in tags and "Opening" in tags,
)
"""Games of ``cutoff-match``: their first has its ``Reason`` and ``Opening`` tags."""

ANY_PGN = pgn_kind("a PGN file", bool)
"""Games of any program: the first starts with a tag pair. What ``cutoff-match --pgn``
may append to (a file of notes may not be)."""


def first_missing(paths: Sequence[str]) -> Optional[str]:
    """The first of ``paths`` that is not a file, or None when all are."""
    return next((path for path in paths if not Path(path).is_file()), None)


class LineReport:
    """An ``ErrorReport`` for a tool: each game that cannot be replayed is one line on
    stderr, ``PROG: FILE: game N: ...``; the tool reports on the others and exits 1
    when ``count`` is not zero."""

    def __init__(self, prog: str) -> None:
        self.prog = prog
        self.count = 0

    def __call__(self, message: str) -> None:
        self.count += 1
        print(f"{self.prog}: {message}", file=sys.stderr)


def games_of(paths: Sequence[str], on_error: ErrorReport) -> Iterator[chess.pgn.Game]:
    """Every game of every file that can be replayed, in order; each one that cannot
    is handed to ``on_error`` as ``FILE: game N: ...`` and skipped. A file that cannot
    be read raises ``OSError``."""
    for path in paths:
        with open(path, encoding="utf-8", errors="replace") as handle:
            for _, game, _ in read_games(path, handle, on_error):
                yield game
