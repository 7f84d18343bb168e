"""The match runner's two exceptions: bad input, and a stop before any game.

Responsible for nothing but the types. ``MatchError`` carries a one-line message that
the entry point prints (exit status 1); every module of the runner raises it for bad
input or an engine that cannot be used, and none of them may print a traceback instead.
"""

from __future__ import annotations


class MatchError(Exception):
    """Bad input or an engine that cannot be used; reported as one line, never a traceback."""


class MatchInterruptedError(Exception):
    """A stop signal came while the engines were starting: no game, nothing to summarise."""

    def __init__(self, signal_name: str) -> None:
        super().__init__(signal_name)
        self.signal_name = signal_name
