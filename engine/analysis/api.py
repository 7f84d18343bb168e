"""The Python API for analysis: Cutoff in-process, with python-chess's result types.

``Analyser`` runs Cutoff's controller and searcher in this process and answers as
``chess.engine.SimpleEngine`` does: ``analyse(board, limit)`` takes a
``chess.engine.Limit`` (depth, nodes, time, mate, or clocks) and returns one
``chess.engine.InfoDict`` (score as a ``PovScore``, PV as ``chess.Move``s, depth,
seldepth, nodes, nps, time in seconds, hashfull, multipv, tbhits when tables are
set), or a list of them, best first, when ``multipv`` is given; ``analysis(board)``
streams the same InfoDicts as depths complete (``Analysis``, python-chess's
``AnalysisResult`` shape) until the limit or ``stop()``; ``play(board, limit)``
returns a ``chess.engine.PlayResult``. Code written for ``SimpleEngine`` works on
its results unchanged. Nodes, time and nps of the final InfoDict are the whole
search's; depth, score and PV those of its last completed depth.

The analyser keeps its transposition table and move ordering history between
calls (``clear()`` forgets them), which is what makes consecutive positions of a
game cheap; ``analyse_game`` analyses every position of a ``chess.pgn.Game`` that
way, and ``analyse_many`` is the iterator form for batches. ``threads=N`` searches
each position with Lazy SMP (N - 1 helper processes, engine.play.smp), as the UCI
``Threads`` option does; ``close()`` ends them.

Every entry validates its input as the command line does: a board no engine can
search raises ``InvalidPositionError`` (the check is perft.core's
``unplayable_problems``, which ``cutoff analyse`` applies to its input), a limit
that asks for nothing sensible ``InvalidLimitError``; both are ``ValueError``s.
``configure`` checks options as python-chess's does: an unknown name, a value of the
wrong type or a spin value out of range raises ``InvalidOptionError``, which is both
python-chess's ``chess.engine.EngineError`` and a ``ValueError``.

An ``Analyser`` holds no global state, so any number of processes can each have
their own; within one, a second call while one is running raises
``AnalyserBusyError`` instead of sharing the search. The search runs on the
controller's worker thread while the caller waits; Ctrl-C stops it cleanly.

This module must not search, evaluate or format text itself: it drives the
controller, as uci.py does, and turns its reports into python-chess results.
"""

from __future__ import annotations

import contextlib
import math
import multiprocessing
import queue
import threading
import time
import warnings
import weakref
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Optional, Union

import chess
import chess.engine
import chess.pgn

from engine.core.limits import SearchLimits
from engine.core.score import is_mate_score, mate_in_moves
from engine.core.search import IterationInfo
from engine.core.tt import BOUND_EXACT
from engine.core.wdl import search_wdl
from engine.play.boards import unplayable_problems
from engine.play.controller import Controller
from engine.play.options import (
    EVAL_FILE,
    GAVIOTA_PATH,
    HASH,
    MAX_THREADS,
    MOVE_OVERHEAD,
    MULTIPV,
    OPTIONS,
    PONDER,
    SYZYGY_PATH,
    THREADS,
    UCI_ANALYSE_MODE,
    UCI_CHESS960,
    USE_NNUE,
    OptionError,
    Options,
    OptionSpec,
)
from engine.play.uci_text import BestMove, legal_pv

AnalysisResult = Union[chess.engine.InfoDict, list[chess.engine.InfoDict]]
ConfigValue = Union[str, int, bool, None]

DEFAULT_HASH_MB = 16
BUSY = "this Analyser is already analysing (one call at a time)"
POLL_S = 0.1
"""How often a waiting caller wakes up, so that Ctrl-C reaches it."""
MANAGED_OPTIONS = (MULTIPV, PONDER, UCI_CHESS960, UCI_ANALYSE_MODE)
"""Options each call sets itself (python-chess's ``configure`` refuses the same)."""


class AnalyserBusyError(RuntimeError):
    """``analyse`` was called while another call on the same analyser was running."""


class InvalidPositionError(ValueError):
    """The board cannot be searched: no kings, the side not to move in check, ..."""


class InvalidLimitError(ValueError):
    """The limit (or ``multipv``, ``root_moves``) asks for nothing sensible."""


class InvalidOptionError(chess.engine.EngineError, ValueError):
    """``configure`` was given an unknown option, a value of the wrong type or out of
    range, or one it cannot use. python-chess raises ``chess.engine.EngineError`` for
    the same (its ``configure`` checks the option's declaration), so code written for
    ``SimpleEngine`` catches it; it is a ``ValueError`` as the other refusals are."""


def option_value(spec: OptionSpec, value: ConfigValue) -> Optional[str]:
    """``value`` for option ``spec`` as the ``setoption`` text, checked as python-chess
    checks an option before sending it, but strictly: a spin takes a whole number (an
    ``int`` or its digits) within its range, a check a ``bool`` (or ``"true"`` or
    ``"false"``), a string a ``str``. Raises ``InvalidOptionError`` naming the option."""
    if spec.kind == "button":
        return None
    if spec.kind == "spin":
        number: Optional[int] = None
        if isinstance(value, int) and not isinstance(value, bool):
            number = value
        elif isinstance(value, str):
            with contextlib.suppress(ValueError):
                number = int(value.strip())
        if number is None:
            raise InvalidOptionError(
                f"{spec.name} must be a whole number from {spec.min} to {spec.max}, not {value!r}"
            )
        if not spec.min <= number <= spec.max:
            where = " (the cores of this machine)" if spec.name == THREADS else ""
            raise InvalidOptionError(
                f"{spec.name} must be from {spec.min} to {spec.max}{where}, not {number}"
            )
        return str(number)
    if spec.kind == "check":
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, str) and value.strip().lower() in ("true", "false"):
            return value.strip().lower()
        raise InvalidOptionError(f"{spec.name} must be True or False, not {value!r}")
    if value is None:
        return ""
    if not isinstance(value, str):
        raise InvalidOptionError(f"{spec.name} must be a string, not {value!r}")
    if "\n" in value or "\r" in value:
        raise InvalidOptionError(f"{spec.name} must be one line, not {value!r}")
    return value


def check_position(board: chess.Board) -> None:
    """Raise ``InvalidPositionError`` unless ``board`` can be searched.

    The same rule and message as ``cutoff analyse``'s input (perft.core's
    ``unplayable_problems``): both kings, no pawn on the first or last rank, the
    side not to move not in check.
    """
    problems = unplayable_problems(board)
    if problems:
        raise InvalidPositionError(f"impossible position ({problems}): {board.fen()}")


def pov_score(score: int, turn: chess.Color) -> chess.engine.PovScore:
    """A search score (side to move's view, engine.core.score units) as python-chess's type."""
    if is_mate_score(score):
        return chess.engine.PovScore(chess.engine.Mate(mate_in_moves(score)), turn)
    return chess.engine.PovScore(chess.engine.Cp(score), turn)


def _whole(
    name: str, value: object, least: int, error: type[ValueError] = InvalidLimitError
) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise error(f"{name} must be a whole number, not {value!r}")
    if value < least:
        raise error(f"{name} must be at least {least}, not {value}")
    return value


def _seconds(name: str, value: object, positive: bool) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or math.isnan(value):
        raise InvalidLimitError(f"{name} must be a number of seconds, not {value!r}")
    if value < 0 or (positive and value == 0):
        rule = "above zero" if positive else "at least zero"
        raise InvalidLimitError(f"{name} must be {rule}, not {value}")
    return float(value)


def _ms(name: str, value: object) -> int:
    return round(min(_seconds(name, value, positive=False), 1e9) * 1000)


def search_limits(limit: chess.engine.Limit) -> SearchLimits:
    """A ``chess.engine.Limit`` as the ``go`` command python-chess would send for it.

    Raises ``InvalidLimitError`` for what no ``go`` should ask: a depth, node
    count, mate or moves-to-go below 1, a time of zero or less, a negative clock
    or increment, or no limit at all.
    """
    limits = SearchLimits()
    if limit.time is not None:
        limits.movetime_ms = max(1, round(min(_seconds("time", limit.time, True), 1e9) * 1000))
    if limit.depth is not None:
        limits.depth = _whole("depth", limit.depth, 1)
    if limit.nodes is not None:
        limits.nodes = _whole("nodes", limit.nodes, 1)
    if limit.mate is not None:
        limits.mate = _whole("mate", limit.mate, 1)
    if limit.white_clock is not None:
        limits.wtime_ms = _ms("white_clock", limit.white_clock)
    if limit.black_clock is not None:
        limits.btime_ms = _ms("black_clock", limit.black_clock)
    if limit.white_inc is not None:
        limits.winc_ms = _ms("white_inc", limit.white_inc)
    if limit.black_inc is not None:
        limits.binc_ms = _ms("black_inc", limit.black_inc)
    if limit.remaining_moves is not None:
        limits.movestogo = _whole("remaining_moves", limit.remaining_moves, 1)
    if limits.is_unbounded():
        raise InvalidLimitError("the limit sets nothing: give a depth, nodes, time, mate or clocks")
    return limits


def info_dict(
    info: IterationInfo, root: chess.Board, tables: bool = False
) -> chess.engine.InfoDict:
    """One report as python-chess's ``InfoDict``, as it would parse our ``info`` line.

    ``tables``: endgame tables are set, so ``tbhits`` is given even when zero (as
    Stockfish always sends it).
    """
    result: chess.engine.InfoDict = {
        "depth": info.depth,
        "seldepth": max(info.seldepth, info.depth),
        "multipv": info.multipv,
        "score": pov_score(info.score, root.turn),
        "nodes": info.nodes,
        "nps": info.nodes * 1000 // max(1, info.time_ms),
        "hashfull": info.hashfull,
        "time": info.time_ms / 1000.0,
    }
    result["wdl"] = chess.engine.PovWdl(chess.engine.Wdl(*search_wdl(info.score, root)), root.turn)
    if tables or info.tbhits:
        result["tbhits"] = info.tbhits
    pv = legal_pv(root, info.pv)
    if pv:
        result["pv"] = pv
    return result


class Analysis:
    """A running search's results as they come: python-chess's ``AnalysisResult`` shape.

    Iterate it (or call ``get``/``next``) for each InfoDict as a depth completes
    (one per line with ``multipv``) and the final one with the whole search's
    nodes and time; iteration ends with the search. ``info`` is the latest main
    line, ``multipv`` the latest of every line; ``stop()`` ends the search early
    and ``wait()`` returns its ``chess.engine.BestMove``. As a context manager it
    stops the search on the way out. Made by ``Analyser.analysis``.
    """

    def __init__(
        self,
        root: chess.Board,
        stop: Callable[[], None],
        idle: Callable[[], bool],
        release: Callable[[], None],
        tables: bool,
    ) -> None:
        self._root = root
        self._stop = stop
        self._idle = idle
        self._release = release
        self._tables = tables
        self._queue: queue.SimpleQueue[Optional[chess.engine.InfoDict]] = queue.SimpleQueue()
        self._done = threading.Event()
        self._ending = threading.Lock()
        self._ended = False
        """The caller has taken the end of the queue."""
        self._end_queued = False
        """The end is in the queue, after every InfoDict."""
        self._best: Optional[chess.engine.BestMove] = None
        self.multipv: list[chess.engine.InfoDict] = [{}]
        """The latest InfoDict of each line (``multipv[0]`` is the main line)."""

    # What the controller's worker thread calls (through the analyser's output).

    def _post(self, info: IterationInfo) -> None:
        result = info_dict(info, self._root, self._tables)
        while len(self.multipv) < info.multipv:
            self.multipv.append({})
        self.multipv[info.multipv - 1] = result
        self._queue.put(dict(result))  # type: ignore[arg-type]

    def _finish(self, move: Optional[chess.Move], ponder: Optional[chess.Move]) -> None:
        with self._ending:
            if self._done.is_set():
                return  # already ended (see _check_worker)
            self._best = chess.engine.BestMove(move, ponder)
            # The analyser is free again before anyone waiting hears of the end, so
            # that a call right after ``wait()`` is not refused as busy.
            self._release()
            self._done.set()
        self._queue.put(None)
        self._end_queued = True

    def _check_worker(self) -> None:
        """End the analysis if the controller went idle without a move (it failed).

        The controller is idle only after it has handed over its move, so an idle
        controller and no move means there will be none: the last main line's
        first move stands, and the analyser is released rather than held forever.
        """
        if self._idle() and not self._done.is_set():
            pv = self.multipv[0].get("pv")
            self._finish(pv[0] if pv else None, None)

    # What the caller calls.

    @property
    def info(self) -> chess.engine.InfoDict:
        """The latest InfoDict of the main line (empty before the first depth)."""
        return self.multipv[0]

    def stop(self) -> None:
        """End the search as soon as possible (its last completed depth stands)."""
        # Under the lock that ends the search: once the analyser is free, another
        # caller's search may start, and this stop must not reach it.
        with self._ending:
            if not self._done.is_set():
                self._stop()

    def wait(self) -> chess.engine.BestMove:
        """Wait for the search to end; its move (None: no legal move) and ponder move."""
        try:
            while not self._done.wait(POLL_S):
                self._check_worker()
        except KeyboardInterrupt:
            self.stop()
            self._done.wait()
            raise
        assert self._best is not None
        return self._best

    def would_block(self) -> bool:
        """True when ``get`` would wait for the engine (nothing pending, still searching)."""
        return not self._ended and self._queue.empty() and not self._done.is_set()

    def empty(self) -> bool:
        """True when every InfoDict so far has been consumed."""
        return self._ended or self._queue.empty() or (self._end_queued and self._queue.qsize() == 1)

    def get(self) -> chess.engine.InfoDict:
        """The next InfoDict, waiting for it; ``chess.engine.AnalysisComplete`` at the end."""
        if self._ended:
            raise chess.engine.AnalysisComplete()
        try:
            while True:
                try:
                    item = self._queue.get(timeout=POLL_S)
                    break
                except queue.Empty:
                    self._check_worker()
        except KeyboardInterrupt:
            self.stop()
            self._done.wait()
            raise
        if item is None:
            self._ended = True
            raise chess.engine.AnalysisComplete()
        return item

    def next(self) -> Optional[chess.engine.InfoDict]:
        """``get``, or None once the search has ended and everything was consumed."""
        try:
            return self.get()
        except chess.engine.AnalysisComplete:
            return None

    def __iter__(self) -> Iterator[chess.engine.InfoDict]:
        return self

    def __next__(self) -> chess.engine.InfoDict:
        try:
            return self.get()
        except chess.engine.AnalysisComplete:
            raise StopIteration from None

    def __enter__(self) -> Analysis:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.stop()
        self.wait()


class _Output:
    """The controller's output, handed to the running ``Analysis``."""

    def __init__(self) -> None:
        self.current: Optional[Analysis] = None
        self.messages: list[str] = []

    def info(self, info: IterationInfo, root: chess.Board, chess960: bool) -> None:
        if info.bound == BOUND_EXACT and self.current is not None:
            self.current._post(info)

    def bestmove(self, root: chess.Board, played: BestMove, chess960: bool) -> None:
        if self.current is not None:
            self.current._finish(played.move, played.ponder)

    def text(self, line: str) -> None:
        self.messages.append(line)


@dataclass(frozen=True)
class GamePosition:
    """One position of an analysed game: where it stands and what was played from it."""

    ply: int
    """Plies from the game's start position (0: before the first move)."""
    board: chess.Board
    """The position (a copy, with the game's moves up to it)."""
    move: Optional[chess.Move]
    """The move the game played from here; None after the last move."""
    info: chess.engine.InfoDict


class Analyser:
    """Cutoff in this process, answering like python-chess's ``SimpleEngine``.

    ``use_nnue`` chooses the learned evaluation (``eval_file``: its network file,
    default the shipped one) or the hand-written one, as the UCI options ``Use NNUE``
    and ``EvalFile`` do; None keeps the engine's default.
    """

    def __init__(
        self,
        hash_mb: int = DEFAULT_HASH_MB,
        *,
        threads: int = 1,
        syzygy_path: Optional[str] = None,
        use_nnue: Optional[bool] = None,
        eval_file: Optional[str] = None,
    ) -> None:
        _whole("threads", threads, 1, ValueError)
        self._options = Options()
        self._options.set(HASH, str(_whole("hash_mb", hash_mb, 1, ValueError)))
        # No GUI and no pipe between us and the caller: a time limit is all search.
        self._options.set(MOVE_OVERHEAD, "0")
        self._output = _Output()
        self._controller = Controller(self._output, self._options)
        self._lock = threading.Lock()
        # Helper processes end with the analyser, or at the latest with the interpreter.
        self._finalizer = weakref.finalize(self, self._controller.shutdown)
        settings: dict[str, ConfigValue] = {}
        if threads > 1:
            if multiprocessing.current_process().daemon:
                # A daemonic process may not start processes (a Dask nanny's worker).
                warnings.warn(
                    f"threads={threads}: this process is daemonic and cannot start "
                    "Lazy SMP helpers; searching with one thread",
                    RuntimeWarning,
                    stacklevel=2,
                )
            else:
                settings[THREADS] = min(threads, MAX_THREADS)  # capped: at most the cores
        if syzygy_path is not None:
            settings[SYZYGY_PATH] = syzygy_path
        # The file first: turning the network on then loads the right one, once.
        if eval_file is not None:
            settings[EVAL_FILE] = eval_file
        if use_nnue is not None:
            settings[USE_NNUE] = use_nnue
        try:
            self.configure(settings)
        except BaseException:
            self.close()
            raise

    @property
    def hash_mb(self) -> int:
        return self._options.get_int(HASH)

    @property
    def threads(self) -> int:
        """Searching processes: this one and the Lazy SMP helpers that started."""
        pool = self._controller.pool
        return 1 + (pool.helpers if pool is not None else 0)

    def configure(self, options: Mapping[str, ConfigValue]) -> None:
        """Set UCI options by name, as python-chess's ``configure`` does.

        The names and ranges are the UCI engine's (``Threads``, ``Hash``,
        ``SyzygyPath``, ``GaviotaTbPath``, ``UCI_LimitStrength``...). Every option is
        checked before any is set, as python-chess checks them, and
        ``InvalidOptionError`` (a ``chess.engine.EngineError`` and a ``ValueError``)
        names the first bad one: an unknown name, a value of the wrong type, a spin
        value out of range (not clamped as in UCI), or ``MultiPV``, ``Ponder``,
        ``UCI_Chess960`` and ``UCI_AnalyseMode``, which each call sets. A table path
        with no tables in it, or ``Use NNUE`` with no network ``EvalFile`` can load,
        raises it too, naming what was wrong.
        """
        with self._claim():
            checked: list[tuple[OptionSpec, Optional[str]]] = []
            for name, value in options.items():
                spec = self._options.spec(name) if isinstance(name, str) else None
                if spec is None:
                    known = ", ".join(o.name for o in OPTIONS if o.name not in MANAGED_OPTIONS)
                    raise InvalidOptionError(f"no such option: {name!r} (options: {known})")
                if spec.name in MANAGED_OPTIONS:
                    raise InvalidOptionError(f"{spec.name} is set by each call, not by configure")
                checked.append((spec, option_value(spec, value)))
            for spec, raw in checked:
                self._output.messages = []
                try:
                    self._controller.set_option(spec.name, raw)
                except OptionError as exc:
                    raise InvalidOptionError(str(exc)) from None
                if raw and not self._took_effect(spec.name):
                    notes = [m.removeprefix("info string ") for m in self._output.messages]
                    raise InvalidOptionError(
                        "; ".join(notes) or f"{spec.name}: nothing usable in {raw}"
                    )

    def _took_effect(self, option: str) -> bool:
        """False when ``option`` is a table path and no table of that kind is open, or
        the network is on and none could be loaded."""
        tables = self._controller.tablebases
        if option == SYZYGY_PATH:
            return tables.syzygy is not None
        if option == GAVIOTA_PATH:
            return tables.gaviota is not None
        if option in (USE_NNUE, EVAL_FILE) and self._options.get_bool(USE_NNUE):
            return self._controller.network_path is not None
        return True

    def clear(self) -> None:
        """Forget the transposition table and history (as a new game would)."""
        with self._claim():
            self._controller.new_game()

    def close(self) -> None:
        """Stop any search and end the Lazy SMP helper processes (idempotent).

        An analyser still works after ``close``, with one thread and a new table.
        """
        self._controller.stop()
        self._controller.wait_idle()
        if self._controller.pool is not None:
            self._controller.set_option(THREADS, "1")

    def __enter__(self) -> Analyser:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def analysis(
        self,
        board: chess.Board,
        limit: Optional[chess.engine.Limit] = None,
        *,
        multipv: Optional[int] = None,
        root_moves: Optional[Iterable[chess.Move]] = None,
    ) -> Analysis:
        """Start searching ``board`` and return the ``Analysis`` that streams it.

        Without a limit the search runs until ``Analysis.stop()`` (or the end of
        the context manager), as python-chess's ``analysis`` does. The analyser is
        busy until the search has ended.
        """
        limits = SearchLimits(infinite=True) if limit is None else search_limits(limit)
        return self._start(board, limits, multipv, root_moves)

    def analyse(
        self,
        board: chess.Board,
        limit: chess.engine.Limit,
        *,
        multipv: Optional[int] = None,
        root_moves: Optional[Iterable[chess.Move]] = None,
    ) -> AnalysisResult:
        """Search ``board`` within ``limit``: one InfoDict, or ``multipv`` of them.

        The board is not changed. A position without legal moves gives depth 0 and
        a mate (checkmate) or zero (stalemate) score and no PV. Nodes, time and
        nps are the whole search's, depth, score and PV the last completed depth's.
        """
        analysis = self._start(board, search_limits(limit), multipv, root_moves)
        analysis.wait()
        lines = [line for line in analysis.multipv if line]
        if multipv is None:
            return lines[0]
        return lines

    def play(
        self,
        board: chess.Board,
        limit: chess.engine.Limit,
        *,
        root_moves: Optional[Iterable[chess.Move]] = None,
    ) -> chess.engine.PlayResult:
        """The move to play in ``board``, as python-chess's ``SimpleEngine.play``.

        A ``chess.engine.PlayResult``: ``move`` (None without a legal move),
        ``ponder`` and ``info``, the final InfoDict of the search.
        """
        analysis = self._start(board, search_limits(limit), None, root_moves)
        best = analysis.wait()
        return chess.engine.PlayResult(best.move, best.ponder, info=dict(analysis.info))  # type: ignore[arg-type]

    def _start(
        self,
        board: chess.Board,
        limits: SearchLimits,
        multipv: Optional[int],
        root_moves: Optional[Iterable[chess.Move]],
    ) -> Analysis:
        """Validate, claim the analyser and start the search (the claim ends with it)."""
        check_position(board)
        if multipv is not None:
            _whole("multipv", multipv, 1)
        if root_moves is not None:
            moves = list(root_moves)
            illegal = [move.uci() for move in moves if not board.is_legal(move)]
            if illegal:
                raise InvalidLimitError(f"root_moves not legal here: {' '.join(illegal)}")
            limits.searchmoves = [move.uci() for move in moves]
        if not self._lock.acquire(blocking=False):
            raise AnalyserBusyError(BUSY)
        try:
            controller = self._controller
            controller.wait_idle()  # the previous search's last lines
            controller.set_option(MULTIPV, str(multipv or 1))
            controller.set_board(board)
            tables = (
                controller.tablebases.syzygy is not None
                or controller.tablebases.gaviota is not None
            )
            analysis = Analysis(
                board.copy(stack=False),
                controller.stop,
                lambda: controller.wait_idle(0),
                self._lock.release,
                tables,
            )
            self._output.current = analysis
            controller.go(limits, time.monotonic())
        except BaseException:
            self._lock.release()
            raise
        return analysis

    def analyse_many(
        self,
        boards: Iterable[chess.Board],
        limit: chess.engine.Limit,
        *,
        multipv: Optional[int] = None,
        clear: bool = False,
    ) -> Iterator[AnalysisResult]:
        """``analyse`` for each board in turn, yielded as each finishes.

        With ``clear``, every position starts from an empty table, so its result
        does not depend on what was analysed before it.
        """
        for board in boards:
            if clear:
                self.clear()
            yield self.analyse(board, limit, multipv=multipv)

    def iter_game(self, game: chess.pgn.Game, limit: chess.engine.Limit) -> Iterator[GamePosition]:
        """Every position of ``game``'s main line, from its start to after its last move."""
        board = game.board()
        node: chess.pgn.GameNode = game
        ply = 0
        while True:
            following = node.next()
            move = following.move if following is not None else None
            info = self.analyse(board, limit)
            assert isinstance(info, dict)
            yield GamePosition(ply, board.copy(), move, info)
            if following is None or move is None:
                return
            board.push(move)
            node = following
            ply += 1

    def analyse_game(self, game: chess.pgn.Game, limit: chess.engine.Limit) -> list[GamePosition]:
        """``iter_game`` as a list."""
        return list(self.iter_game(game, limit))

    def _claim(self) -> _Claim:
        return _Claim(self._lock)


class _Claim:
    """The analyser's lock, taken without waiting: a second caller is an error."""

    def __init__(self, lock: threading.Lock) -> None:
        self._lock = lock

    def __enter__(self) -> None:
        if not self._lock.acquire(blocking=False):
            raise AnalyserBusyError(BUSY)

    def __exit__(self, *exc_info: object) -> None:
        self._lock.release()
