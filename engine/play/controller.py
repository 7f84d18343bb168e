"""The facade between the UCI protocol and the search.

The controller owns what lives across searches: the current position, the
transposition table, the searcher (with its history tables) and the option
values that act on them. It runs every search (and ``go perft`` and ``bench``)
on one worker thread, asks timeman for the deadlines of a ``go``, applies
``stop`` and ``ponderhit``, and guarantees exactly one legal ``bestmove`` per
search, also when the search raises. It delegates everything else: time rules
to timeman, perft to boards, the text of output lines to uci_text, the
evaluation table to evaluate. Output leaves as structured reports through an
``Output`` (iteration reports, the move played, text lines); uci_text.TextOutput
turns them into UCI lines, the analysis API into python-chess results. This
module must not read stdin or write stdout itself, and must not parse protocol
text (uci.py hands it parsed values).
"""

from __future__ import annotations

import dataclasses
import random
import threading
import time
from array import array
from dataclasses import dataclass, field
from typing import Callable, Optional, Protocol

import chess

from engine.core import timeman
from engine.core.board import Board
from engine.core.evaluate import Evaluator, evaluation_report
from engine.core.limits import SearchLimits
from engine.core.movepick import decode
from engine.core.nnue import BASE_HAND, Network, NetworkError, network_file
from engine.core.nnue import load as load_network
from engine.core.nnue_eval import NetworkEvaluator
from engine.core.score import MATE, MAX_PLY
from engine.core.search import IterationInfo, SearchControl, Searcher, SearchParams, SearchResult
from engine.core.tablebase import Tablebases
from engine.core.tt import BOUND_EXACT, TranspositionTable
from engine.play.boards import PerftStoppedError, perft
from engine.play.book import BookError, OpeningBook
from engine.play.options import (
    BOOK_FILE,
    BOOK_VARIETY,
    CLEAR_HASH,
    EVAL_FILE,
    GAVIOTA_PATH,
    HASH,
    LIMIT_STRENGTH,
    MOVE_OVERHEAD,
    MULTIPV,
    OWN_BOOK,
    PONDER,
    SKILL_LEVEL,
    SYZYGY_PATH,
    SYZYGY_PROBE_LIMIT,
    THREADS,
    UCI_CHESS960,
    UCI_ELO,
    USE_NNUE,
    Options,
    OptionSpec,
    Value,
)
from engine.play.smp import HelperPool
from engine.play.uci_text import BestMove, printable
from engine.play.weakened import Weakness, elo_for_skill, override, pick, weakness

REPETITION_WINDOW_PLIES = 100
"""How far back the game's history can matter to a search: a node whose position
lies more plies after the last capture or pawn move is a draw by the fifty-move
rule whatever repeats, so older plies are not copied to the search board."""


class Output(Protocol):
    """Where the controller's reports go (uci_text.TextOutput prints them as UCI)."""

    def info(self, info: IterationInfo, root: chess.Board, chess960: bool) -> None:
        """An iteration's report (or the closing report before the move is played)."""

    def bestmove(self, root: chess.Board, played: BestMove, chess960: bool) -> None:
        """The move played, once per search."""

    def text(self, line: str) -> None:
        """A line of text: ``info string``, perft counts, the bench."""


MAX_DEPTH = MAX_PLY - 8
"""Deepest iteration a ``go depth`` may ask for (the search's own ceiling)."""
MAX_PERFT_DEPTH = 20
"""``go perft`` deeper than this would never finish; it is clamped (stop still works)."""
QUIT_GRACE_S = 10.0
"""How long ``quit`` waits for a stopped search to send its ``bestmove``.

A stopped search answers within milliseconds on an idle machine; on a loaded one
(or while helpers start, which may wait ``smp.STOP_TIMEOUT_S`` for the last
search's helpers) it can take seconds, and a ``go`` must still end in its
``bestmove`` when ``quit`` follows it at once, as in a piped script."""


@dataclass
class _Job:
    """One running ``go``: its inputs, its signals and what it has reported."""

    root: chess.Board
    limits: SearchLimits
    params: SearchParams
    control: SearchControl
    chess960: bool
    withhold: bool
    """Ponder or infinite: no bestmove before ``stop`` or ``ponderhit``."""
    deadlines: timeman.Deadlines
    release: threading.Event
    """Set when the bestmove may be sent (withheld searches: stop or ponderhit)."""
    received_at: float = 0.0
    """When the ``go`` arrived: the GUI's clock ran from then (``control.start_time``,
    from which ``time`` and ``nps`` count, is when the engine took it up: later when it
    waited behind a slow command, such as a ``setoption`` starting helpers)."""
    last_main: Optional[IterationInfo] = None
    last_exact: Optional[IterationInfo] = None
    decided: Optional[IterationInfo] = None
    """A move chosen without searching (book, tablebase): its report."""
    lines: dict[int, IterationInfo] = field(default_factory=dict)
    """The last exact report of each MultiPV line (weakened play picks among them)."""
    weakness: Optional[Weakness] = None
    tablebase_score: Optional[int] = None
    """The tables' verdict on a drawn root: the score reported whatever the search says."""
    helped: bool = False
    """Lazy SMP helpers search this root too (their nodes count as the search's)."""
    total_nodes: int = 0
    """The whole search's nodes (helpers' included), counted when it ended."""
    total_ms: int = 0
    """The whole search's time, measured when it ended (not when bestmove was released)."""
    pondered: bool = False
    """Began as a ponder or infinite search: the GUI's clock did not run from ``go``."""


def _ms(value: Optional[float]) -> str:
    """A budget's milliseconds for the debug line; ``none`` when there is no limit."""
    return "none" if value is None else f"{value:.0f} ms"


class Controller:
    """The game's board, TT, searcher and the worker thread behind a UCI session."""

    def __init__(
        self,
        output: Output,
        options: Optional[Options] = None,
        debug: Optional[Callable[[], bool]] = None,
    ) -> None:
        self.options = options if options is not None else Options()
        self._out = output
        self._debug = debug if debug is not None else (lambda: False)
        self.tt = TranspositionTable(self.options.get_int(HASH))
        self.searcher = Searcher(self.tt)
        self.pool: Optional[HelperPool] = None
        """Lazy SMP helpers when Threads > 1 (their table is shared with ours)."""
        self.tablebases = Tablebases(on_fault=self.info_string)
        self.searcher.tablebases = self.tablebases
        self.network_path: Optional[str] = None
        """The network file the searchers evaluate with; None: the hand-written one."""
        self._network: Optional[Network] = None
        """EvalFile's network when Use NNUE is on and it loaded; weakened play leaves it
        unused (``_evaluate_with``)."""
        self._network_error: Optional[str] = None
        """Why EvalFile's network did not load while Use NNUE is on (``eval`` says)."""
        if self.options.get_bool(USE_NNUE):
            self._load_network()
        self.book: Optional[OpeningBook] = None
        self._random = random.Random()
        self.board = chess.Board(chess960=self.options.get_bool(UCI_CHESS960))
        self._lock = threading.Lock()
        self._job: Optional[_Job] = None
        self._stop_other = threading.Event()
        self._last_clock: Optional[tuple[bool, int, int, int, float]] = None
        """The last timed answer: side, ply, its clock, increment, our ms (for the lag)."""
        self._lag_ms = 0.0
        """The lag the GUI's clocks showed beyond our answers (timeman.next_lag_estimate)."""
        """Stop flag of a non-search job (perft)."""
        self._idle = threading.Event()
        self._idle.set()
        self._finishing = threading.Event()
        """Set once the running job has its result and only writes its last lines."""

    # ------------------------------------------------------------------ state

    @property
    def chess960(self) -> bool:
        return self.options.get_bool(UCI_CHESS960)

    def is_working(self) -> bool:
        """Busy, and not already writing its final lines: worth answering around."""
        return not self._idle.is_set() and not self._finishing.is_set()

    def is_awaiting_stop(self) -> bool:
        """True when the running search can only end by ``stop``/``ponderhit``."""
        with self._lock:
            job = self._job
            return job is not None and job.withhold and not job.release.is_set()

    def wait_idle(self, timeout: Optional[float] = None) -> bool:
        return self._idle.wait(timeout)

    def info_string(self, text: str) -> None:
        self._out.text("info string " + printable(text, 200))

    # ------------------------------------------------------- idle-only commands

    def set_board(self, board: chess.Board) -> None:
        """Make ``board`` the position for the next ``go`` (a copy of it).

        Only the recent moves are kept: no search looks further back than the
        fifty-move rule, and copying a long game's whole stack per search costs.
        """
        self.board = board.copy(stack=REPETITION_WINDOW_PLIES)

    def new_game(self) -> None:
        """Forget everything learnt in the previous game (TT, histories, the lag)."""
        self.tt.clear()
        self.searcher.new_game()
        self._last_clock = None
        self._lag_ms = 0.0

    def _move_overhead(self, limits: SearchLimits, root: chess.Board) -> int:
        """Move Overhead, or the lag the GUI's clocks showed if more (see timeman)."""
        clock = limits.own_time_ms(root.turn)
        last = self._last_clock
        if last is not None and clock is not None and limits.movestogo is None:
            turn, ply, previous, inc, answered_ms = last
            if turn == root.turn and ply + 2 == root.ply():
                lag = timeman.observed_lag_ms(previous, inc, clock, answered_ms)
                self._lag_ms = timeman.next_lag_estimate(self._lag_ms, lag)
        return max(self.options.get_int(MOVE_OVERHEAD), int(self._lag_ms))

    def _record_answer(self, job: _Job) -> None:
        """The clock and our measure of this answer, for the next move's lag."""
        limits = job.limits
        clock = limits.own_time_ms(job.root.turn)
        if clock is None or job.pondered or limits.movestogo is not None:
            self._last_clock = None
            return
        answered_ms = (time.monotonic() - job.received_at) * 1000.0
        # Past the hard limit the OS was not running us (or the search overran): lag
        # too, which the next moves must reserve for as much as the pipes' delay.
        hard_ms = job.deadlines.budget.hard_ms
        if hard_ms is not None:
            answered_ms = min(answered_ms, hard_ms)
        inc = limits.own_inc_ms(job.root.turn)
        self._last_clock = (job.root.turn, job.root.ply(), clock, inc, answered_ms)

    def set_option(self, name: str, raw: Optional[str]) -> None:
        """Validate, store and apply one option (raises OptionError)."""
        spec, value, note = self.options.set(name, raw)
        if note:
            self.info_string(note)
        self._apply_option(spec, value)

    def _apply_option(self, spec: OptionSpec, value: Optional[Value]) -> None:
        if spec.name == HASH and isinstance(value, int) and value != self._hash_mb():
            if self.pool is not None:
                self._restart_helpers()
            else:
                self.tt.resize(value)
        elif spec.name == THREADS and isinstance(value, int):
            helpers = self.pool.helpers if self.pool is not None else 0
            if value - 1 != helpers:
                self._restart_helpers()
        elif spec.name == CLEAR_HASH:
            self.new_game()
        elif spec.name == UCI_CHESS960 and isinstance(value, bool):
            self.board.chess960 = value
        elif spec.name in (OWN_BOOK, BOOK_FILE):
            self._open_book()
        elif spec.name == SYZYGY_PATH:
            for note in self.tablebases.set_syzygy_path(self.options.get_str(SYZYGY_PATH)):
                self.info_string(note)
        elif spec.name == GAVIOTA_PATH:
            for note in self.tablebases.set_gaviota_path(self.options.get_str(GAVIOTA_PATH)):
                self.info_string(note)
        elif spec.name == SYZYGY_PROBE_LIMIT and isinstance(value, int):
            self.tablebases.probe_limit = value
        elif spec.name in (USE_NNUE, EVAL_FILE):
            self._load_network()
            if spec.name == EVAL_FILE and not self.options.get_bool(USE_NNUE):
                self._check_network_file()

    def evaluation_lines(self) -> list[str]:
        """``eval``: the hand-written evaluation's terms, the network's score when one
        is loaded, and which of them the search uses."""
        board = self.board
        lines = evaluation_report(board)
        if self._network is not None:
            # As the search scores it: the native board with the network's accumulator.
            evaluator = NetworkEvaluator(self._network, cache_bits=0)
            native = Board.from_chess(board)
            native.use_network(evaluator.incremental)
            score = evaluator.evaluate(native)
            side = "white" if board.turn == chess.WHITE else "black"
            lines.append(f"Network: {self._network.describe()}")
            if self._network.base == BASE_HAND:
                hand = Evaluator(cache_bits=0).evaluate(native)
                lines.append(
                    f"NNUE correction: {evaluator.output(native):+d} cp to the hand-written"
                    f" {hand:+d} cp (side to move)"
                )
            white = score if board.turn == chess.WHITE else -score
            lines.append(f"NNUE evaluation: {score:+d} cp from the side to move ({side})")
            lines.append(f"NNUE evaluation: {white:+d} cp from white's point of view")
        if self._network is None and self._network_error is not None:
            lines.append(
                f"Searching with: the hand-written evaluation (the network could not be"
                f" loaded: {self._network_error})"
            )
        elif self._network is None:
            lines.append("Searching with: the hand-written evaluation (Use NNUE is off)")
        elif self._weakness() is not None:
            lines.append(
                "Searching with: the hand-written evaluation (weakened play: its levels"
                " were calibrated with it)"
            )
        else:
            lines.append(f"Searching with: the network {self.network_path}")
        return lines

    def _load_network(self) -> None:
        """The evaluation the options ask for: EvalFile's network when Use NNUE is on
        (one info string and the hand-written evaluation when it cannot be read)."""
        self.network_path = None
        self._network = None
        self._network_error = None
        if self.options.get_bool(USE_NNUE):
            path = network_file(self.options.get_str(EVAL_FILE))
            try:
                self._network = load_network(path)
            except NetworkError as exc:
                self._network_error = str(exc)
                self.info_string(f"EvalFile: {exc}; using the hand-written evaluation")
            else:
                self.network_path = str(path)
        self.searcher.use_network(self._network)

    def _check_network_file(self) -> None:
        """EvalFile named while Use NNUE is off: read it anyway, so that a file that
        cannot be a network is reported when it is named (as ``--eval-file`` is beside
        ``--no-nnue``), not only once Use NNUE is turned on."""
        try:
            load_network(network_file(self.options.get_str(EVAL_FILE)))
        except NetworkError as exc:
            self.info_string(f"EvalFile: {exc}; Use NNUE is off: the hand-written evaluation")

    def _evaluate_with(self, weakened: bool) -> None:
        """The network for full-strength searches, the hand-written evaluation for
        weakened ones: ``ANCHORS`` were measured with it, and the network makes the
        same node limits play about 90 Elo stronger (docs/strength.md)."""
        network = self._network is not None and not weakened
        if network != (self.searcher.network is not None):
            self.searcher.use_network(self._network if network else None)

    def _hash_mb(self) -> int:
        """The Hash the table was made for (a shared one may be smaller: smp)."""
        return self.pool.asked_mb if self.pool is not None else self.tt.size_mb

    def _restart_helpers(self) -> None:
        """Helpers for the current Threads and Hash (none for one thread)."""
        size_mb = self.options.get_int(HASH)
        self._close_helpers()
        threads = self.options.get_int(THREADS)
        self.tt.size_mb = size_mb
        if threads <= 1:
            self.tt.resize(size_mb)
            return
        self.tt.resize(1)  # the old table goes before the shared one is made
        try:
            self.pool = HelperPool(threads, size_mb, self.info_string)
        except (OSError, ValueError) as exc:
            why = getattr(exc, "strerror", None) or exc
            self.info_string(f"Threads: cannot start helpers ({why}); searching alone")
            self.tt.resize(size_mb)
            return
        self.tt.size_mb = self.pool.size_mb  # smaller when /dev/shm has less room
        self.tt.use(self.pool.table_words)

    def _close_helpers(self) -> None:
        if self.pool is not None:
            self.tt.use(array("Q", bytes(16)))  # let go of the shared table first
            self.pool.close()
            self.pool = None

    def _open_book(self) -> None:
        """(Re)open the book the options name; a bad file is one info string, no book."""
        if self.book is not None:
            self.book.close()
            self.book = None
        path = self.options.get_str(BOOK_FILE)
        if not self.options.get_bool(OWN_BOOK) or not path:
            return
        try:
            self.book = OpeningBook.open(path)
        except BookError as exc:
            self.info_string(f"book: {exc}; playing without a book")

    def _weakness(self) -> Optional[Weakness]:
        if self.options.get_bool(LIMIT_STRENGTH):
            settings = weakness(self.options.get_int(UCI_ELO))
        elif (level := self.options.get_int(SKILL_LEVEL)) < 20:
            settings = weakness(elo_for_skill(level))
        else:
            return None
        try:
            # A calibration's raw settings (CUTOFF_WEAKNESS) replace the mapped ones,
            # full strength's included: the top of the scale is measured too.
            return override() or settings
        except ValueError as exc:
            self.info_string(f"{exc}; ignored")
            return settings

    # ------------------------------------------------------------------ search

    def go(self, limits: SearchLimits, received_at: float) -> None:
        """Start a search of the current position on the worker thread.

        Whatever goes wrong before the search starts is reported and answered with
        a legal move (after ``stop`` when the ``go`` waits for one): a GUI forfeits
        an engine that sends no bestmove.
        """
        started = time.monotonic()
        try:
            job = self._prepare(limits, received_at, started)
        except Exception as exc:
            self.info_string(f"error in go: {type(exc).__name__}: {exc}; playing a legal move")
            job = self._fallback_job(limits, received_at, started)
        self._start(lambda: self._run_search(job), job)

    def _prepare(self, limits: SearchLimits, received_at: float, started: float) -> _Job:
        """The job of a ``go``: limits, deadlines, book and tables; helpers started.
        Deadlines count from ``received_at``, ``time`` and ``nps`` from ``started``."""
        root = self.board.copy(stack=REPETITION_WINDOW_PLIES)
        params = SearchParams(
            max_depth=MAX_DEPTH if limits.depth is None else max(1, min(MAX_DEPTH, limits.depth)),
            node_limit=None if limits.nodes is None else max(1, limits.nodes),
            mate_moves=None if limits.mate is None else max(1, limits.mate),
            multipv=self.options.get_int(MULTIPV),
            root_moves=self._root_moves(root, limits.searchmoves),
        )
        overhead = self._move_overhead(limits, root)
        budget = timeman.plan(
            limits, root.turn, overhead, self.options.get_bool(PONDER), root.fullmove_number
        )
        if budget.panic:
            params.max_depth = 1
        deadlines = timeman.Deadlines(budget, received_at)
        control = SearchControl(
            start_time=started, hard_deadline=deadlines.hard, deadlines=deadlines
        )
        job = _Job(
            root=root,
            limits=limits,
            params=params,
            control=control,
            chess960=self.chess960,
            withhold=limits.ponder or limits.is_unbounded(),
            deadlines=deadlines,
            release=threading.Event(),
            received_at=received_at,
            pondered=limits.ponder or limits.is_unbounded(),
        )
        if not job.withhold and not limits.searchmoves:
            self._decide_without_search(job)
        if job.decided is None and not limits.is_unbounded():
            job.weakness = self._weakness()
        self._evaluate_with(weakened=job.weakness is not None)
        if job.weakness is not None:
            params.multipv = max(params.multipv, job.weakness.multipv)
            params.complete_first_iteration = True
            if job.weakness.nodes:
                params.node_limit = min(params.node_limit or job.weakness.nodes,
                                        job.weakness.nodes)  # fmt: skip
        if self._debug():
            self.info_string(
                f"time budget soft {_ms(budget.soft_ms)} hard {_ms(budget.hard_ms)}"
                f" panic {'yes' if budget.panic else 'no'} max depth {params.max_depth}"
                f" overhead {overhead} ms"
            )
        if self.pool is not None and job.decided is None and job.weakness is None:
            age = (self.tt.age + 1) & 0xFF
            self.pool.start(root, params.max_depth, age, self.network_path, params.node_limit)
            # The node limit is the threads' together: the main search checks the sum.
            self.searcher.on_poll = self.pool.main_poll
            job.helped = True
        return job

    def _fallback_job(self, limits: SearchLimits, received_at: float, started: float) -> _Job:
        """A job that plays a legal move without searching (``_prepare`` failed).

        Built only from values that cannot fail: no time plan, no book, no tables.
        """
        root = self.board.copy(stack=False)
        legal = list(root.generate_legal_moves())
        withhold = limits.ponder or limits.is_unbounded()
        decided = None
        if legal:
            decided = IterationInfo(1, 1, 1, 0, BOUND_EXACT, 0, 0, 0, [legal[0]])
        return _Job(
            root=root,
            limits=limits,
            params=SearchParams(),
            control=SearchControl(start_time=started),
            chess960=self.chess960,
            withhold=withhold,
            deadlines=timeman.Deadlines(timeman.UNLIMITED, received_at),
            release=threading.Event(),
            received_at=received_at,
            decided=decided,
        )

    def _decide_without_search(self, job: _Job) -> None:
        """Book and tablebases: a move without a search, or fewer root moves to search.

        A failure here costs only the shortcut: it is reported and the search runs.
        """
        try:
            self._book_or_tables(job)
        except Exception as exc:
            self.info_string(f"error in book or tablebases: {type(exc).__name__}: {exc}")
            job.decided = job.tablebase_score = None
            job.params.root_moves = None

    def _book_or_tables(self, job: _Job) -> None:
        root = job.root
        if self.book is not None:
            move = self.book.choose(root, self.options.get_bool(BOOK_VARIETY))
            if move is not None:
                self.info_string(f"book move {root.uci(move, chess960=job.chess960)}")
                job.decided = IterationInfo(
                    1, 1, 1, self._static_score(root), BOUND_EXACT, 0, 0, 0, [move]
                )
                return
        probe = self.tablebases.root(root)
        if probe is None:
            return
        if probe.move is not None:
            job.decided = IterationInfo(
                1, 1, 1, probe.score, BOUND_EXACT, 0, 0, 0, [probe.move],
                tbhits=self.tablebases.hits,
            )  # fmt: skip
        else:
            job.tablebase_score = probe.score
            if len(probe.keep) < root.legal_moves.count():
                job.params.root_moves = probe.keep

    def stop(self) -> None:
        """End the running search (or perft) as soon as possible; idle: nothing."""
        self._stop_other.set()
        if self.pool is not None:
            self.pool.stop()
        with self._lock:
            job = self._job
        if job is not None:
            job.control.stop.set()
            job.release.set()

    def ponderhit(self, received_at: float) -> None:
        """The predicted move was played: the ponder search becomes a timed one.

        Its budget is planned anew from the ``go ponder`` clocks, measured from
        this moment (the GUI's clock for us started when it sent ``ponderhit``).
        """
        with self._lock:
            job = self._job
            if job is None or not job.limits.ponder:
                return
            if job.decided is not None:  # nothing searches (a failed go): answer now
                job.withhold = False
                job.release.set()
                return
            job.limits.ponder = False
            if job.limits.is_unbounded():
                return  # `go ponder infinite`: now an infinite search, still waits for stop
            budget = timeman.plan(
                job.limits,
                job.root.turn,
                self.options.get_int(MOVE_OVERHEAD),
                self.options.get_bool(PONDER),
                job.root.fullmove_number,
            )
            job.deadlines.restart(budget, received_at)
            job.control.hard_deadline = job.deadlines.hard
            job.withhold = False
            job.release.set()

    def _root_moves(self, root: chess.Board, texts: list[str]) -> Optional[list[chess.Move]]:
        """``searchmoves`` as legal moves; bad ones are reported and skipped."""
        moves: list[chess.Move] = []
        for text in texts:
            if text == "0000":
                continue  # python-chess sends this for an empty root_moves list
            try:
                move = root.parse_uci(text)
            except ValueError:
                self.info_string(f"searchmoves: ignoring illegal move '{text}'")
                continue
            if move not in moves:
                moves.append(move)
        return moves or None

    def _start(self, target: Callable[[], None], job: Optional[_Job]) -> None:
        if not self._idle.is_set():
            raise RuntimeError("the engine is busy")
        self._stop_other.clear()
        with self._lock:
            self._job = job
        self._finishing.clear()
        self._idle.clear()
        thread = threading.Thread(target=self._guard(target), name="cutoff-worker", daemon=True)
        thread.start()

    def _guard(self, target: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            try:
                target()
            except Exception as exc:
                self.info_string(f"error: {type(exc).__name__}: {exc}")
            finally:
                with self._lock:
                    self._job = None
                self._idle.set()

        return run

    def _run_search(self, job: _Job) -> None:
        result: Optional[SearchResult] = None
        if job.decided is not None:
            self._out.info(job.decided, job.root, job.chess960)
            job.last_main = job.last_exact = job.decided
            result = SearchResult(job.decided.pv[0], None, job.decided.score, 1, 0)
        elif any(True for _ in job.root.generate_legal_moves()):
            try:
                result = self.searcher.search(
                    job.root.copy(), job.params, job.control, lambda i: self._on_iteration(job, i)
                )
            except Exception as exc:
                # Report, then answer with a legal fallback move below: a GUI
                # forfeits an engine that sends no bestmove.
                self.info_string(f"error in search: {type(exc).__name__}: {exc}")
            finally:
                self.searcher.on_poll = None
            job.total_nodes = self.searcher.nodes
        if self.pool is not None:
            self.pool.stop()
            if job.helped and job.params.node_limit is not None:
                # A node-limited search reports its exact total (fixed-node matches and
                # tuning read it): the helpers' final counts, a poll interval at most away.
                self.pool.wait_idle()
            if job.decided is None:  # helpers did not search a decided move's root
                result = self._deeper_helper_result(job, result)
            if job.helped:
                job.total_nodes += self.pool.nodes()
        job.total_ms = max(0, int((time.monotonic() - job.control.start_time) * 1000))
        if job.withhold:
            job.release.wait()
        self._finishing.set()
        self._finish(job, result)
        self._record_answer(job)

    def _deeper_helper_result(
        self, job: _Job, result: Optional[SearchResult]
    ) -> Optional[SearchResult]:
        """Lazy SMP: play a helper's move when it completed a deeper iteration.

        Helpers search the whole root with one line, so only such searches take
        their moves (not ``searchmoves``, MultiPV or a tablebase-restricted root).
        The adopted line is reported like any completed iteration.
        """
        assert self.pool is not None
        params = job.params
        if result is None or params.root_moves or params.multipv > 1:
            return result
        deepest = self.pool.deepest()
        if deepest is None or not result.depth < deepest[0] <= params.max_depth:
            return result
        depth, code, score = deepest
        move = decode(code)
        if not job.root.is_legal(move):
            return result
        ponder = self.searcher.ponder_from_tt(move)
        nodes = result.nodes + self.pool.nodes()
        info = IterationInfo(
            depth=depth,
            seldepth=max(result.seldepth, depth),
            multipv=1,
            score=score,
            bound=BOUND_EXACT,
            nodes=nodes,
            time_ms=max(0, int((time.monotonic() - job.control.start_time) * 1000)),
            hashfull=self.tt.hashfull(),
            pv=[move] + ([ponder] if ponder is not None else []),
        )
        self._on_iteration(job, dataclasses.replace(info, nodes=result.nodes))
        return SearchResult(move, ponder, score, depth, nodes, info.seldepth)

    def _on_iteration(self, job: _Job, info: IterationInfo) -> None:
        if job.tablebase_score is not None and info.bound == BOUND_EXACT:
            info = dataclasses.replace(info, score=job.tablebase_score)
        if self.pool is not None:
            if info.bound == BOUND_EXACT and info.multipv == 1:
                self.pool.main_completed(info.depth)
            info = dataclasses.replace(info, nodes=info.nodes + self.pool.nodes())
        try:
            if info.bound == BOUND_EXACT and info.pv:
                job.lines[info.multipv] = info
            if info.multipv > self.options.get_int(MULTIPV):
                return  # weakened play's own extra lines: not the GUI's business
            if info.multipv == 1:
                job.last_main = info
                if info.bound == BOUND_EXACT and info.pv:
                    job.last_exact = info
            self._out.info(info, job.root, job.chess960)
        except Exception as exc:
            self.info_string(f"error reporting an iteration: {type(exc).__name__}: {exc}")

    def _finish(self, job: _Job, result: Optional[SearchResult]) -> None:
        """The closing exact-score report (when needed), then the move played."""
        root = job.root
        legal = list(root.generate_legal_moves())
        if not legal:
            # Mated (mate 0) or stalemated (cp 0), and no move to play.
            score = -MATE if root.is_check() else 0
            info = IterationInfo(0, 0, 1, score, BOUND_EXACT, 0, 0, 0, [])
            self._out.info(info, root, job.chess960)
            self._out.bestmove(root, BestMove(None), job.chess960)
            return
        best = result.best_move if result is not None else None
        if best is None or best not in legal:
            best = self._fallback_move(job, legal)
        if job.weakness is not None and len(job.lines) > 1:
            best = self._weakened_move(job, best)
        ponder = self._ponder_move(job, result, best)
        last = job.last_main
        if (
            last is None
            or last.bound != BOUND_EXACT
            or not last.pv
            or last.pv[0] != best
            or job.weakness is not None
            or job.total_nodes > last.nodes
        ):
            closing = self._closing_info(job, result, best, ponder)
            self._out.info(closing, root, job.chess960)
            self._close_other_lines(job, closing)
        self._out.bestmove(root, BestMove(best, ponder), job.chess960)

    def _close_other_lines(self, job: _Job, closing: IterationInfo) -> None:
        """MultiPV: lines 2.. of the last completed depth again, with the search's totals.

        Only while the closing line is that depth's first line: a move of the
        unfinished iteration that overtook it may be one of the other lines.
        """
        first = job.lines.get(1)
        if first is None or first.pv[:1] != closing.pv[:1] or job.weakness is not None:
            return
        for multipv in range(2, self.options.get_int(MULTIPV) + 1):
            line = job.lines.get(multipv)
            if line is not None:
                totals = dataclasses.replace(
                    line,
                    nodes=closing.nodes,
                    time_ms=closing.time_ms,
                    hashfull=closing.hashfull,
                    tbhits=closing.tbhits,
                )
                self._out.info(totals, job.root, job.chess960)

    def _weakened_move(self, job: _Job, best: chess.Move) -> chess.Move:
        """Weakened play: a move among the lines near the best (engine.play.weakened)."""
        assert job.weakness is not None
        lines = [(info.pv[0], info.score) for _, info in sorted(job.lines.items())]
        if lines[0][0] != best:
            return best  # the last iteration changed its mind: trust the search
        choice = pick(lines, job.weakness, self._random)
        if choice != best:
            chosen = next(info for info in job.lines.values() if info.pv[0] == choice)
            # The closing report (see _finish) then states the chosen line.
            job.last_exact = IterationInfo(
                chosen.depth, chosen.seldepth, 1, chosen.score, BOUND_EXACT, chosen.nodes,
                chosen.time_ms, chosen.hashfull, chosen.pv, chosen.tbhits,
            )  # fmt: skip
        return choice

    def _fallback_move(self, job: _Job, legal: list[chess.Move]) -> chess.Move:
        """A legal move when the search gave none: the last PV move, else the first legal."""
        for info in (job.last_exact, job.last_main):
            if info is not None and info.pv and info.pv[0] in legal:
                return info.pv[0]
        allowed = job.params.root_moves or []
        for move in allowed:
            if move in legal:
                return move
        return legal[0]

    def _ponder_move(
        self, job: _Job, result: Optional[SearchResult], best: chess.Move
    ) -> Optional[chess.Move]:
        candidates: list[Optional[chess.Move]] = []
        if result is not None and result.best_move == best:
            candidates.append(result.ponder_move)
        for info in (job.last_exact, job.last_main):
            if info is not None and len(info.pv) > 1 and info.pv[0] == best:
                candidates.append(info.pv[1])
        after = job.root.copy(stack=False)
        after.push(best)
        for move in candidates:
            if move is not None and after.is_legal(move):
                return move
        return None

    def _closing_info(
        self,
        job: _Job,
        result: Optional[SearchResult],
        best: chess.Move,
        ponder: Optional[chess.Move],
    ) -> IterationInfo:
        """An exact-score report whose PV starts with the move we play.

        fastchess and python-chess take the score of a move from the last info
        line before ``bestmove``; it must be exact and about the move played. Its
        nodes, time and tbhits are the whole search's (Stockfish's last line says
        the same), its depth, score and PV the last completed iteration's.
        """
        exact = job.last_exact
        pv = [best] + ([ponder] if ponder is not None else [])
        if exact is not None and exact.pv and exact.pv[0] == best:
            depth, score, pv = exact.depth, exact.score, exact.pv
        elif result is not None and result.best_move == best and result.depth > 0:
            depth, score = result.depth, result.score
            if job.tablebase_score is not None:
                score = job.tablebase_score
        else:
            # Aborted before depth 1 finished: no searched score exists, use the static one.
            depth, score = 0, self._static_score(job.root)
        seldepth = result.seldepth if result is not None else 0
        return IterationInfo(
            depth=depth,
            seldepth=seldepth,
            multipv=1,
            score=score,
            bound=BOUND_EXACT,
            nodes=job.total_nodes,
            time_ms=job.total_ms,
            hashfull=self.tt.hashfull(),
            pv=pv,
            tbhits=self.tablebases.hits,
        )

    @staticmethod
    def _static_score(board: chess.Board) -> int:
        """The hand-written evaluation of ``board`` (side to move's view); 0 when it
        cannot be scored (a report must not fail on it)."""
        try:
            return Evaluator(cache_bits=0).evaluate(Board.from_chess(board))
        except Exception:
            return 0

    # ---------------------------------------------------------------- extras

    def perft(self, depth: int) -> None:
        """``go perft N``: per-move counts, a blank line, the total (Stockfish layout)."""
        board = self.board.copy()
        depth = max(0, min(MAX_PERFT_DEPTH, depth))
        self._start(lambda: self._run_perft(board, depth), None)

    def _run_perft(self, board: chess.Board, depth: int) -> None:
        total = 0
        try:
            if depth == 0:
                total = 1
            else:
                for move in list(board.generate_legal_moves()):
                    text = board.uci(move, chess960=self.chess960)
                    board.push(move)
                    try:
                        count = perft(board, depth - 1, self._stop_other)
                    finally:
                        board.pop()
                    self._out.text(f"{text}: {count}")
                    total += count
        except PerftStoppedError:
            self.info_string("perft stopped")
            return
        self._out.text("")
        self._out.text(f"Nodes searched: {total}")

    def bench(self, depth: Optional[int]) -> None:
        """Run the bench on the worker, its lines going to the output as text."""
        from engine.play.bench import run_bench

        def run() -> None:
            # stop and quit set _stop_other: a bench of a minute must yield to them.
            result = run_bench(
                depth=depth, out=self._out.text, stop=self._stop_other, network=self.network_path
            )
            if result.stopped:
                self.info_string(f"bench stopped after {result.searched} positions")

        self._start(run, None)

    def shutdown(self) -> None:
        """``quit``: stop whatever runs and give it a moment to finish; end the helpers."""
        self.stop()
        self.wait_idle(QUIT_GRACE_S)
        self._close_helpers()
