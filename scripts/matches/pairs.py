"""One colour-swapped pair of games as a task of the execution layer (``engine.analysis.parallel``).

Responsible for the worker's side of a match run with ``--scheduler``: ``play_pairs``
starts both engines of a ``PairTask`` (python-chess, as the local runner does), plays
its games with the runner's own game loop (``games.play_game``: clocks, adjudication,
fault classification, PGN), applies the runner's fault policy between the two games
(``runner.after_fault``: a faulty engine is restarted, a crash without ``--recover``
ends the pair and stops the match), quits the engines and returns a ``PairResult`` of
plain values that pickle. ``failed_pairs`` turns a task that failed on every attempt
into results that say so, so that the client reports it instead of dropping it.

It runs in worker processes and must not print, write files or keep score: the client
(``dispatch``) records, counts and decides when to stop. (A local cluster's workers
leave Ctrl-C to the runner: engine.analysis.parallel sees to that.)
"""

from __future__ import annotations

import asyncio
import os
import socket
from dataclasses import dataclass, field
from typing import Optional

from .config import Config
from .engines import EngineProcess, default_names, name_engines
from .errors import MatchError
from .games import GameJob, GameRecord, play_game
from .runner import after_fault


@dataclass(frozen=True)
class PairTask:
    """The games of one pair (two, or one for the last of an odd ``--games``)."""

    jobs: tuple[GameJob, ...]
    # The match's settings without its openings (each job carries its own): sent with
    # every task, so it is kept small.
    cfg: Config

    @property
    def pair(self) -> int:
        return self.jobs[0].pair


@dataclass
class PairResult:
    """What a worker sends back for one pair."""

    pair: int
    # The engines' display names as the worker's engines gave them (None when they
    # could not start): the client checks that every worker runs the same engines.
    names: Optional[tuple[str, str]] = None
    # The games played, in order; fewer than the task's when the match must stop.
    records: list[GameRecord] = field(default_factory=list)
    # Why the match must stop after this pair (an engine that cannot start or be
    # restarted, a crash without --recover), or None.
    stop: Optional[str] = None
    # Whether ``stop`` is an engine that could not start at all (bad input when no
    # game has been played yet, as for the local runner).
    start_failed: bool = False
    # Why the task failed on every attempt (``failed_pairs``), or None.
    failure: Optional[str] = None
    # host:pid of the worker process, for reports.
    worker: str = ""


def play_pairs(tasks: list[PairTask]) -> list[PairResult]:
    """The task function: play each pair of ``tasks`` on fresh engines."""
    return [asyncio.run(play_pair(task)) for task in tasks]


def failed_pairs(tasks: list[PairTask], error: BaseException) -> list[PairResult]:
    """Results for pairs that failed on every attempt (``engine.analysis.parallel``'s
    on_failure)."""
    # Dask's messages run to several sentences (KilledWorker: which task, which worker,
    # where to read more); the first says what happened.
    text = str(error).split(". ")[0].strip()
    reason = f"{type(error).__name__}: {text[:300]}"
    return [PairResult(task.pair, failure=reason) for task in tasks]


def _where() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


async def play_pair(task: PairTask) -> PairResult:
    """Start both engines, play the pair's games, quit the engines."""
    cfg = task.cfg
    result = PairResult(task.pair, worker=_where())
    engines = [EngineProcess(spec, name) for spec, name in zip(cfg.specs, default_names(cfg.specs))]
    try:
        for engine in engines:
            try:
                await engine.start()
            except MatchError as err:
                result.stop, result.start_failed = f"{err} (on {result.worker})", True
                return result
        first, second = name_engines(engines)
        result.names = (first, second)
        for job in task.jobs:
            for engine in engines:
                # An engine killed after a fault in the first game is restarted here.
                if engine.protocol is None:
                    try:
                        await engine.start()
                    except MatchError as err:
                        result.stop = f"cannot restart engine: {err} (on {result.worker})"
                        return result
            rec = await play_game(job, engines, cfg)
            result.records.append(rec)
            if rec.fault_slot is not None:
                result.stop = after_fault(engines[rec.fault_slot], rec, cfg.recover)
                if result.stop is not None:
                    return result
        return result
    finally:
        for engine in engines:
            await engine.quit()
