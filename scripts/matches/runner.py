"""The match itself: game scheduling on concurrent workers, stop rules and signals.

Responsible for handing out the games of a match (colour-swapped pairs, one opening per
pair) to ``concurrency`` workers with two engines each, recording every finished game
(tally, PGN, progress line on stderr), stopping on an SPRT decision (after completing
the pair), on an engine fault (unless ``--recover``), on SIGINT/SIGTERM (the engines
are ended, the games played so far are kept) or on a game that cannot be written to
the PGN (a full disk: what was written of it is taken back, so that the games before
stay whole), and restarting an engine after a fault.
``Match`` (the record of a match as it goes) and ``after_fault`` (the fault policy)
also serve the pairs played on Dask (``pairs``, ``dispatch``).
It must not play a move itself (``games``) or compute statistics (``elo``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import stat
import sys
import time
from typing import Any, BinaryIO, Optional

from engine.analysis.outputs import write_failure

from . import elo
from .config import Config
from .engines import INTERRUPT_QUIT_TIMEOUT_S, QUIT_TIMEOUT_S, EngineProcess, start_first_engines
from .errors import MatchError, MatchInterruptedError
from .games import GameJob, GameRecord, play_game
from .tally import Tally, progress_elo

# Signals that stop the match with a summary of the games played.
STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Match:
    """Schedules the games on ``concurrency`` workers, each with its own two engines."""

    def __init__(self, cfg: Config, names: list[str]) -> None:
        self.cfg = cfg
        self.names = names
        self.tally = Tally()
        self.jobs = [
            GameJob(
                number=i + 1,
                pair=i // 2,
                first_is_white=i % 2 == 0,
                opening=cfg.openings[cfg.opening_order[(i // 2) % len(cfg.opening_order)]],
            )
            for i in range(cfg.games)
        ]
        self.next_job = 0
        self.stop_reason: Optional[str] = None
        self.aborted = False
        # The name of the signal (SIGINT, SIGTERM) that stopped the match, if one did.
        self.interrupted: Optional[str] = None
        self.games_in_progress = 0
        self.engines: list[EngineProcess] = []
        self.ending_engines: Optional[asyncio.Task[None]] = None
        self.sprt_result: Optional[str] = None
        self.started = time.monotonic()
        self.pgn_file: Optional[BinaryIO] = None
        # Why the games can no longer be written (a full disk), which stops the match.
        self.output_error: Optional[str] = None
        self.pgn_needs_break = False
        self.progress_is_tty = sys.stderr.isatty()
        # On the execution layer (``dispatch``): the worker whose engines gave the
        # names, and the pairs that failed on every attempt ({"pair", "error"}).
        self.names_from: Optional[str] = None
        self.failed_pairs: list[dict[str, Any]] = []

    def take_job(self) -> Optional[GameJob]:
        if self.next_job >= len(self.jobs) or self.aborted or self.interrupted or self.output_error:
            return None
        job = self.jobs[self.next_job]
        # After an SPRT decision only the second game of an already started pair is
        # still played, so that the pentanomial counts stay complete.
        if self.stop_reason is not None and job.number % 2 == 1:
            return None
        self.next_job += 1
        return job

    def abort(self, reason: str) -> None:
        if not self.aborted:
            self.aborted = True
            self.stop_reason = reason

    def interrupt(self, signal_name: str) -> None:
        """Stop the match for a signal: no new game, and every engine is ended now.

        Ending the engines is what stops the games in progress: each pending engine
        call fails, the game returns, and its worker drops it unrecorded. (Cancelling
        the tasks instead is not reliable: asyncio.wait_for before Python 3.12 loses
        a cancellation that arrives as its awaitable completes.)
        """
        if self.interrupted is not None:
            return
        self.interrupted = signal_name
        unfinished = self.games_in_progress
        self.stop_reason = f"interrupted by {signal_name}" + (
            f" ({unfinished} unfinished game{'s' if unfinished != 1 else ''} not counted)"
            if unfinished
            else ""
        )
        self.ending_engines = asyncio.ensure_future(self._end_engines())

    async def _end_engines(self) -> None:
        await asyncio.gather(*(engine.quit(INTERRUPT_QUIT_TIMEOUT_S) for engine in self.engines))

    def record(self, rec: GameRecord) -> None:
        """Count a finished game and append it to the PGN; a game that cannot be
        written is not counted (nor any after it): the match stops."""
        if self.output_error is not None or not self._write_game(rec.pgn):
            return
        self.tally.add(rec)
        if self.cfg.sprt and self.sprt_result is None:
            llr = self.llr()
            lower, upper = elo.sprt_bounds(self.cfg.alpha, self.cfg.beta)
            if llr >= upper:
                self.sprt_result = "H1 accepted"
            elif llr <= lower:
                self.sprt_result = "H0 accepted"
            if self.sprt_result and self.stop_reason is None:
                self.stop_reason = f"SPRT: {self.sprt_result}"
        if self.cfg.progress:
            self.print_progress(rec)

    def llr(self) -> float:
        assert self.cfg.sprt is not None
        elo0, elo1 = self.cfg.sprt
        return elo.llr_pentanomial(self.tally.pentanomial, elo0, elo1)

    def print_progress(self, rec: GameRecord) -> None:
        t = self.tally
        line = (
            f"[{t.games}/{self.cfg.games}] {self.names[0]} vs {self.names[1]}: "
            f"+{t.wins} ={t.draws} -{t.losses} "
            f"({100.0 * (t.wins + 0.5 * t.draws) / t.games:.1f}%)"
        )
        running_elo = progress_elo(t)
        if running_elo is not None:
            line += " " + running_elo
        if self.cfg.sprt:
            lower, upper = elo.sprt_bounds(self.cfg.alpha, self.cfg.beta)
            line += f" LLR {self.llr():.2f} ({lower:.2f}, {upper:.2f})"
        faults = sum(sum(counts.values()) for counts in t.faults.values())
        if faults:
            line += f" faults {faults}"
        line += f" | game {rec.job.number}: {rec.result} {rec.reason}"
        if self.progress_is_tty:
            sys.stderr.write("\r\x1b[2K" + line[:200])
        else:
            sys.stderr.write(line + "\n")
        sys.stderr.flush()

    async def worker(self, engines: list[EngineProcess]) -> None:
        try:
            while True:
                job = self.take_job()
                if job is None:
                    return
                for engine in engines:
                    # Only engines we never started or killed ourselves are started here.
                    # One that died on its own between games is left dead on purpose: the
                    # next game reports it as a crash instead of hiding the fault.
                    if engine.protocol is None:
                        try:
                            await engine.start()
                        except MatchError as err:
                            if not (self.interrupted or self.output_error):
                                self.abort(f"cannot restart engine: {err}")
                            return
                if self.interrupted or self.output_error:
                    return  # the signal came while an engine was (re)starting
                self.games_in_progress += 1
                rec = await play_game(job, engines, self.cfg)
                self.games_in_progress -= 1
                if self.interrupted or self.output_error:
                    # Ended by interrupt() or fail_output() (the engines were stopped
                    # under it), or finished as the signal came: unfinished either way.
                    return
                self.record(rec)
                if rec.fault_slot is not None:
                    self._after_fault(engines[rec.fault_slot], rec)
        finally:
            stopped = self.interrupted or self.output_error
            timeout_s = INTERRUPT_QUIT_TIMEOUT_S if stopped else QUIT_TIMEOUT_S
            for engine in engines:
                await engine.quit(timeout_s)

    def _after_fault(self, engine: EngineProcess, rec: GameRecord) -> None:
        stop = after_fault(engine, rec, self.cfg.recover)
        if stop is not None:
            self.abort(stop)

    def open_pgn(self) -> None:
        """Open the PGN file for appending; MatchError if it cannot be written."""
        if self.cfg.pgn_path:
            try:
                # Unbuffered: each game is written (and on failure taken back) whole.
                self.pgn_file = open(self.cfg.pgn_path, "ab", buffering=0)  # noqa: SIM115
                self.pgn_needs_break = _ends_open(self.cfg.pgn_path)
            except OSError as err:
                raise MatchError(write_failure(self.cfg.pgn_path, err)) from None

    def _write_game(self, pgn: str) -> bool:
        """Append one game to the PGN file; False when it cannot be written, which
        takes back what was written of it (the games before stay whole) and stops
        the match with ``output_error``."""
        handle = self.pgn_file
        if handle is None:
            return True
        # A file whose last line is not ended gets a blank line first, so that the
        # game starts on a line of its own.
        data = memoryview((("\n\n" if self.pgn_needs_break else "") + pgn + "\n\n").encode())
        status = os.fstat(handle.fileno())
        try:
            while data:
                data = data[handle.write(data) or 0 :]
        except OSError as err:
            if stat.S_ISREG(status.st_mode):
                with contextlib.suppress(OSError):
                    os.ftruncate(handle.fileno(), status.st_size)
            assert self.cfg.pgn_path is not None
            self.fail_output(write_failure(self.cfg.pgn_path, err))
            return False
        self.pgn_needs_break = False
        return True

    def fail_output(self, message: str) -> None:
        """Stop the match because an output cannot be written: no new game, and the
        engines are ended now (the games in progress could not be kept either)."""
        if self.output_error is not None:
            return
        self.output_error = message
        self.stop_reason = message
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return  # on Dask: the dispatcher stops at the stop reason
        self.ending_engines = asyncio.ensure_future(self._end_engines())

    def close_output(self) -> None:
        """Close the PGN file and end the progress line."""
        if self.pgn_file is not None:
            self.pgn_file.close()
            self.pgn_file = None
        if self.cfg.progress and self.progress_is_tty:
            sys.stderr.write("\n")

    async def run(self, first_engines: list[EngineProcess]) -> None:
        self.open_pgn()
        try:
            engine_sets = [first_engines]
            for _ in range(min(self.cfg.concurrency, len(self.jobs)) - 1):
                engine_sets.append(
                    [EngineProcess(spec, name) for spec, name in zip(self.cfg.specs, self.names)]
                )
            self.engines = [engine for engines in engine_sets for engine in engines]
            await asyncio.gather(*(self.worker(engines) for engines in engine_sets))
            if self.ending_engines is not None:
                await self.ending_engines
        finally:
            self.close_output()


def _ends_open(path: str) -> bool:
    """Whether the regular file at ``path`` ends in the middle of a line (a file cut
    short, or written by hand)."""
    with open(path, "rb") as handle:
        status = os.fstat(handle.fileno())
        if not stat.S_ISREG(status.st_mode) or status.st_size == 0:
            return False
        handle.seek(-1, os.SEEK_END)
        return handle.read(1) != b"\n"


def after_fault(engine: EngineProcess, rec: GameRecord, recover: bool) -> Optional[str]:
    """Kill ``engine`` after a fault that leaves it in an unknown state, so that it is
    restarted before its next game; the reason to stop the match, if the fault stops it.

    The one fault policy of the local runner and of a pair played on a worker
    (``pairs``): a crash stops the match unless ``recover``.
    """
    if rec.fault_kind == "crash" and not recover:
        engine.kill()
        return (
            f"{engine.name} crashed in game {rec.job.number} "
            "(use --recover to restart it and go on)"
        )
    if rec.fault_kind in ("crash", "stall", "illegal move"):
        # Restart before the next game: its state is unknown after the fault.
        engine.kill()
    return None


class _StopSignals:
    """SIGINT/SIGTERM handlers that stop the run cleanly instead of killing the runner.

    While the engines start, a signal cancels that step (the engines started so far
    are killed); once the match runs, it is handed to ``Match.interrupt``, which ends
    the engines and lets the match return with the games played so far.
    """

    def __init__(self) -> None:
        self.signal_name: Optional[str] = None
        self.task: Optional[asyncio.Future[Any]] = None
        self.match: Optional[Match] = None

    def __enter__(self) -> _StopSignals:
        loop = asyncio.get_running_loop()
        for signum in STOP_SIGNALS:
            # Not on Windows' event loops; Ctrl-C then ends the runner as before.
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(signum, self._received, signum)
        return self

    def __exit__(self, *exc_info: object) -> None:
        loop = asyncio.get_running_loop()
        for signum in STOP_SIGNALS:
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.remove_signal_handler(signum)

    def _received(self, signum: int) -> None:
        if self.signal_name is not None:
            return  # already stopping; the engines have their short quit timeout
        self.signal_name = signal.Signals(signum).name
        if self.match is not None:
            self.match.interrupt(self.signal_name)
        elif self.task is not None:
            self.task.cancel()


async def run_match(cfg: Config) -> Match:
    """Play the match; a stop signal ends it early with the games played so far."""
    with _StopSignals() as stop:
        stop.task = asyncio.ensure_future(start_first_engines(cfg.specs))
        try:
            first_engines, names = await stop.task
        except asyncio.CancelledError:
            if stop.signal_name is None:
                raise
            raise MatchInterruptedError(stop.signal_name) from None
        if stop.signal_name is not None:
            # The signal came as the start-up finished (its cancellation was lost).
            for engine in first_engines:
                await engine.quit(INTERRUPT_QUIT_TIMEOUT_S)
            raise MatchInterruptedError(stop.signal_name)
        match = Match(cfg, names)
        stop.match = match
        await match.run(first_engines)
    return match
