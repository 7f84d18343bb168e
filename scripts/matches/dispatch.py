"""The match on the execution layer: one task per colour-swapped pair, on Dask.

Responsible for the client side of ``--scheduler``: cutting the match's games into
pair tasks (``pairs.PairTask``), handing them to ``engine.analysis.parallel.run`` (a Dask
``LocalCluster`` for ``local:N``, a running scheduler for ``tcp://HOST:PORT``; in this
process when no scheduler is given, which the tests use) and feeding every pair that
comes back, in completion order, into the same ``runner.Match`` as a local run: the
tally, the PGN, the progress lines with the running Elo and LLR, the SPRT. It stops
the iteration, which cancels the pairs not yet run, when the SPRT decides, when a fault
stops the match or on SIGINT/SIGTERM; a pair that failed on every attempt (its worker
killed again and again) is reported on stderr and listed in the summary, never dropped;
a lost scheduler ends the match with the games recorded so far.

It must not play games (``pairs`` does, on the workers) or compute statistics, and
it imports nothing of the Cutoff engine but ``engine.analysis.parallel``, which knows nothing
about chess.
"""

from __future__ import annotations

import dataclasses
import importlib
import os
import signal
import sys
from collections.abc import Generator, Iterator
from types import FrameType
from typing import Any, Optional, cast

from engine.analysis.parallel import (
    INSTALL_HINT,
    SchedulerLostError,
    SchedulerUnavailableError,
    run,
)

from .config import Config
from .engines import default_names
from .errors import MatchError
from .match_args import PROG
from .pairs import PairResult, PairTask, failed_pairs, play_pairs
from .runner import STOP_SIGNALS, Match


class _Interrupted(BaseException):
    """Raised by the signal handler while the client waits for results.

    A BaseException, like KeyboardInterrupt: cleanup code that suppresses ``Exception``
    (closing a Dask client) must not swallow it.
    """

    def __init__(self, signal_name: str) -> None:
        super().__init__(signal_name)
        self.signal_name = signal_name


class _StopSignals:
    """SIGINT/SIGTERM stop the match: at once while waiting for results, else after
    the pair being recorded, so that the PGN and the tally never disagree."""

    def __init__(self) -> None:
        self.signal_name: Optional[str] = None
        self.waiting = False
        self.previous: dict[int, Any] = {}

    def __enter__(self) -> _StopSignals:
        for signum in STOP_SIGNALS:
            self.previous[signum] = signal.signal(signum, self._received)
        return self

    def __exit__(self, *exc_info: object) -> None:
        for signum, handler in self.previous.items():
            signal.signal(signum, handler)

    def _received(self, signum: int, frame: Optional[FrameType]) -> None:
        if self.signal_name is not None:
            return  # already stopping: the cancellation and the cluster's close go on
        self.signal_name = signal.Signals(signum).name
        if self.waiting:
            raise _Interrupted(self.signal_name)


def pair_tasks(match: Match) -> Iterator[PairTask]:
    """One task per pair of the match's games, in pair order."""
    # The openings stay here: each job carries its own, and the settings go with
    # every task.
    cfg = dataclasses.replace(match.cfg, openings=[], opening_order=[])
    for first in range(0, len(match.jobs), 2):
        yield PairTask(tuple(match.jobs[first : first + 2]), cfg)


def run_pairs(cfg: Config) -> Match:
    """Play the match as pair tasks on ``cfg.scheduler`` (in this process if None)."""
    if cfg.scheduler is not None:
        # Checked before the PGN file is opened: a missing Dask is bad input, and bad
        # input leaves no file behind.
        try:
            importlib.import_module("distributed")
        except ImportError:
            raise MatchError(f"--scheduler needs Dask: {INSTALL_HINT}") from None
    match = Match(cfg, default_names(cfg.specs))
    new_pgn = cfg.pgn_path is not None and not os.path.exists(cfg.pgn_path)
    match.open_pgn()
    try:
        _play(match)
    except MatchError:
        match.close_output()
        if new_pgn and cfg.pgn_path is not None and os.path.getsize(cfg.pgn_path) == 0:
            # Bad input found on the cluster (no scheduler there, an engine that
            # cannot start) leaves no empty PGN behind, as in a local run.
            os.remove(cfg.pgn_path)
        raise
    match.close_output()
    return match


def _play(match: Match) -> None:
    received = 0
    try:
        with _StopSignals() as stop:
            # run() is a generator: closing it is what cancels the rest.
            results = cast(
                Generator[tuple[int, PairResult], None, None],
                run(
                    play_pairs,
                    pair_tasks(match),
                    scheduler=match.cfg.scheduler,
                    ordered=False,
                    on_failure=failed_pairs,
                ),
            )
            try:
                while match.stop_reason is None and stop.signal_name is None:
                    stop.waiting = True
                    try:
                        entry = next(results, None)
                    finally:
                        stop.waiting = False
                    if entry is None:
                        break
                    received += 1
                    _take(match, entry[1])
            finally:
                # Cancels the pairs not run yet and closes the cluster (a local one
                # ends its workers, and so their engines). A signal meanwhile only
                # marks the match interrupted: raising here would skip the closing.
                results.close()
            if stop.signal_name is not None:
                raise _Interrupted(stop.signal_name)
    except SchedulerUnavailableError as err:
        raise MatchError(str(err)) from None
    except SchedulerLostError as err:
        if not received:
            # Never connected, or lost before any pair: nothing to summarise.
            raise MatchError(str(err)) from None
        match.abort(f"the Dask scheduler was lost: {err}")
    except _Interrupted as stopped:
        match.interrupted = stopped.signal_name
        match.stop_reason = f"interrupted by {stopped.signal_name} (running pairs not counted)"


def _take(match: Match, result: PairResult) -> None:
    """Record one pair's games, or report why it has none; MatchError for bad engines."""
    if result.failure is not None:
        match.failed_pairs.append({"pair": result.pair + 1, "error": result.failure})
        _note(
            match,
            f"{PROG}: pair {result.pair + 1} failed on every attempt and is not counted: "
            f"{result.failure}",
        )
        return
    if result.start_failed and match.tally.games == 0 and match.names_from is None:
        # As for the local runner: an engine that cannot start is bad input.
        raise MatchError(result.stop or "an engine cannot start")
    if result.names is not None:
        names = list(result.names)
        if match.names_from is None:
            match.names, match.names_from = names, result.worker
        elif names != match.names:
            match.abort(
                f"the engines on {result.worker} are {' and '.join(names)}, not "
                f"{' and '.join(match.names)} as on {match.names_from}: every worker "
                "needs the same engines"
            )
            return
    for rec in result.records:
        match.record(rec)
    if result.stop is not None:
        match.abort(result.stop)


def _note(match: Match, line: str) -> None:
    if match.progress_is_tty and match.cfg.progress:
        line = "\n" + line  # below the progress line, which is redrawn in place
    print(line, file=sys.stderr, flush=True)
