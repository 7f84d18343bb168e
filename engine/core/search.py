"""Iterative deepening, aspiration windows, PVS negamax and quiescence search.

The node function is full-width alpha-beta made selective: null-move pruning,
reverse futility, futility and late move pruning, late move reductions, internal
iterative reduction, singular extensions, SEE ordering and pruning of losing
captures, and lazy evaluation, transposition-table cutoffs and (at its first ply)
quiet checks in quiescence; quiet moves are ordered by killers, a counter move and
a history with gravity and malus. ``_negamax`` and ``_qsearch`` number their steps
in the order they run (as Stockfish's search.cpp does), and a step that was
measured carries its Elo, as Ethereal's search does: a match of the full build
against the build without it, in colour-swapped pairs from the shipped openings
(docs/strength.md has the ledger). All selectivity together against plain PVS:
+135 +/- 43 Elo at 10+0.1. ``Searcher.selective = False`` turns all of it off,
which makes the search exact (the tests compare it with plain negamax). A match
measures one technique against a copy with its constant below set out of reach
(``scripts.matches.variant``, e.g. ``search.NULL_MOVE_MIN_DEPTH=99``), or against
the commit before it. Techniques that a match showed to be worth nothing are not
in the code (git history keeps them).

The searcher owns the per-search state (node counts, killers, PV table) and the
history table that survives between searches of one game; the transposition
table is passed in by its owner (the controller). Results leave through a
callback (``on_iteration``) and the returned ``SearchResult``: this module never
prints, never reads the clock except to compare with the deadlines it was given,
and never changes the board it was given.

The tree runs on the search board (engine.core.board: native integers, int moves,
legal generation, make/unmake, keys, psqt sums and the network's accumulator), not
on python-chess: python-chess stays at the edges. The root is converted from the
given ``chess.Board`` (its move stack too, for repetitions); the PV, best move and
ponder move are converted back; the tablebases get a python-chess board only where
a probe happens. Moves in the tables are 15-bit codes (``movepick.CODE_MASK``).
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Final, Optional

import chess
from mypy_extensions import i64

from engine.core import movepick
from engine.core.bitboards import BLACK, PAWN
from engine.core.board import Board
from engine.core.evaluate import Evaluator
from engine.core.exchange import SEE_VALUES, see_ge
from engine.core.features import MAX_PHASE
from engine.core.movegen import direct_quiet_checks, gives_check, legal_move, legal_moves
from engine.core.movepick import (
    CODE_MASK,
    MovePicker,
    history_base,
    history_bonus,
    order_moves,
    quiescence_moves,
    update_history,
)
from engine.core.nnue import Incremental, Network
from engine.core.nnue_eval import NetworkEvaluator
from engine.core.score import INFINITE, MATE, MATE_BOUND, MAX_PLY, score_from_tt, score_to_tt
from engine.core.tablebase import TB_WIN_CP, Tablebases
from engine.core.timeman import Deadlines
from engine.core.tt import BOUND_EXACT, BOUND_LOWER, BOUND_UPPER, TranspositionTable
from engine.core.tunables import int_value, value

ASPIRATION_MIN_DEPTH: Final = 4
"""Iterations from this depth on start with a narrow window around the last score."""
ASPIRATION_WINDOW_CP: Final = int_value("ASPIRATION_WINDOW_CP")
"""Half-width of the first aspiration window; doubled after every failure."""
ASPIRATION_MAX_DELTA_CP: Final = 1000
"""Past this half-width the failing side of the window opens fully."""
POLL_INTERVAL_NODES: Final = 64
"""Clock and stop flag are read once per this many nodes (a power of two)."""

# Selective search: the constants of each technique (the module docstring says how
# a match measures one). Those read through ``int_value``/``value`` are tunable without
# a rebuild (engine/core/tunables.py holds their defaults and ranges).
NULL_MOVE_MIN_DEPTH: Final = 3
NULL_MOVE_BASE_REDUCTION: Final = int_value("NULL_MOVE_BASE_REDUCTION")
"""The null move is searched ``BASE + depth // 4`` plies shallower than a real move."""
REVERSE_FUTILITY_MAX_DEPTH: Final = 6
REVERSE_FUTILITY_MARGIN_CP: Final = int_value("REVERSE_FUTILITY_MARGIN_CP")
"""Per ply of depth: what the opponent could win back in that many plies."""
FUTILITY_MAX_DEPTH: Final = 3
FUTILITY_MARGIN_CP: Final = tuple(
    int_value("FUTILITY_BASE_CP") + int_value("FUTILITY_PER_DEPTH_CP") * d if d else 0
    for d in range(FUTILITY_MAX_DEPTH + 1)
)
"""By depth: what a quiet move must be able to gain (default 0, 130, 230, 330)."""
LATE_MOVE_MAX_DEPTH: Final = 3
LATE_MOVE_COUNT: Final = tuple(
    int(value("LATE_MOVE_BASE") + value("LATE_MOVE_PER_DEPTH_SQUARED") * d * d) if d else 0
    for d in range(LATE_MOVE_MAX_DEPTH + 1)
)
"""Moves searched (of any kind) after which quiets are skipped, by depth (default 0,
5, 8, 13)."""
LMR_MIN_DEPTH: Final = 3
LMR_MIN_MOVES: Final = 3
"""Moves searched before reductions start (TT move, captures and killers count)."""
LMR_BASE: Final = value("LMR_BASE")
LMR_DIVISOR: Final = value("LMR_DIVISOR")
LMR_GOOD_HISTORY: Final = 1 << 12
"""A quiet move whose history is at least this is reduced one ply less."""
LMR_BAD_HISTORY: Final = -(1 << 12)
"""A quiet move whose history is at most this is reduced one ply more."""
LMR_MAX_MOVE_INDEX: Final = 63
"""The reduction table's last column: later moves are reduced as much as this one."""
IIR_MIN_DEPTH: Final = 4
"""A node with no TT move from this depth on is searched a ply shallower."""
LAZY_MARGIN_CP: Final = 250
"""Quiescence stands pat on the material and piece-square score alone when it is
more than this outside the window (the other terms rarely move that far)."""
SINGULAR_MIN_DEPTH: Final = 4
SINGULAR_TT_DEPTH_SLACK: Final = 3
"""The TT entry must have been searched at least ``depth - SLACK`` deep."""
SINGULAR_MARGIN_CP: Final = int_value("SINGULAR_MARGIN_CP")
"""Per ply of depth: how far below the TT score the other moves must stay."""

_SEE: Final[list[i64]] = list(SEE_VALUES)
_NO_LIMIT: Final = 1 << 30
"""The late-move-pruning count where late move pruning does not apply."""


def _reduction_table() -> list[list[int]]:
    """LMR plies by [depth][moves searched]: grows with log(depth) * log(move number)."""
    table = [[0] * (LMR_MAX_MOVE_INDEX + 1) for _ in range(MAX_PLY + 1)]
    for depth in range(1, MAX_PLY + 1):
        for count in range(1, LMR_MAX_MOVE_INDEX + 1):
            table[depth][count] = int(LMR_BASE + math.log(depth) * math.log(count) / LMR_DIVISOR)
    return table


_REDUCTIONS: Final = _reduction_table()


def _bound_holds(bound: int, score: int, alpha: int, beta: int) -> bool:
    """Whether a stored ``bound`` on ``score`` decides a node searched in (alpha, beta)."""
    return (
        bound == BOUND_EXACT
        or (bound == BOUND_LOWER and score >= beta)
        or (bound == BOUND_UPPER and score <= alpha)
    )


def _lmr_reduction(depth: int, searched: int, pv_node: bool, history: int) -> int:
    """The plies a late quiet move is reduced by: more with depth and move number, a ply
    less at PV nodes and with good history, a ply more with bad, at most to depth 1."""
    reduction = _REDUCTIONS[depth][min(searched, LMR_MAX_MOVE_INDEX)]
    if pv_node:
        reduction -= 1
    if history >= LMR_GOOD_HISTORY:
        reduction -= 1
    elif history <= LMR_BAD_HISTORY:
        reduction += 1
    return reduction if reduction <= depth - 2 else depth - 2


class SearchAbortedError(Exception):
    """Raised inside the tree when the search must stop at once."""


@dataclass
class SearchParams:
    """What limits one search, apart from the clock (see SearchControl)."""

    max_depth: int = MAX_PLY - 8
    node_limit: Optional[int] = None
    mate_moves: Optional[int] = None  # stop once a mate in <= this many moves is found
    multipv: int = 1
    root_moves: Optional[list[chess.Move]] = None  # `searchmoves`; None = all legal moves
    start_depth: int = 1
    """The first iteration's depth (Lazy SMP helpers start some a ply deeper)."""
    complete_first_iteration: bool = False
    """The node limit does not cut the first iteration short (weakened play, whose
    node limits are small, always gets every line scored once)."""


@dataclass
class SearchControl:
    """Signals shared between the controller thread and the search thread.

    ``stop`` aborts the search as soon as possible. ``hard_deadline`` is a
    ``time.monotonic()`` instant (None: no limit), re-read every few dozen nodes;
    ``deadlines`` decides between iterations whether to go on (None: only depth,
    nodes and mate limits apply). The controller may replace both during a
    search (``ponderhit``).
    """

    stop: threading.Event = field(default_factory=threading.Event)
    start_time: float = 0.0
    hard_deadline: Optional[float] = None
    deadlines: Optional[Deadlines] = None


@dataclass(frozen=True)
class IterationInfo:
    """One line of search progress (one per multipv line per iteration)."""

    depth: int
    seldepth: int
    multipv: int  # 1-based
    score: int  # side to move's view (engine.core.score)
    bound: int  # tt.BOUND_EXACT, BOUND_LOWER (fail high) or BOUND_UPPER (fail low)
    nodes: int
    time_ms: int
    hashfull: int
    pv: list[chess.Move]
    tbhits: int = 0


@dataclass
class SearchResult:
    """The outcome of a search: the move to play and what backs it."""

    best_move: Optional[chess.Move]
    ponder_move: Optional[chess.Move]
    score: int
    depth: int
    nodes: int
    seldepth: int = 0


@dataclass
class _RootLine:
    """A root move with the score and PV of its last completed search."""

    move: int
    score: int = -INFINITE
    pv: list[int] = field(default_factory=list)


class Searcher:
    """Searches positions; keeps history between searches of the same game."""

    def __init__(self, tt: TranspositionTable) -> None:
        self.tt = tt
        self.evaluator = Evaluator()
        """The hand-written evaluation, or a network's (``use_network``)."""
        self.network: Optional[Incremental] = None
        """The network's columns when it evaluates: positions keep its accumulators."""
        self.history = movepick.new_history()
        self.counter_moves = movepick.new_counter_moves()
        self.nodes = 0
        self.seldepth = 0
        self._killers: list[list[int]] = [[0, 0] for _ in range(MAX_PLY + 1)]
        self._pv: list[list[int]] = [[] for _ in range(MAX_PLY + 1)]
        self._poll_mask = POLL_INTERVAL_NODES - 1
        self._root_depth = 0
        self._control = SearchControl()
        self._node_limit: Optional[int] = None
        self._board = Board.from_chess(chess.Board())
        self._root_ply = 0
        self.tablebases: Optional[Tablebases] = None
        """Endgame tables probed in the tree (the controller's); None: no probes."""
        self._tb_pieces = 0
        self.on_make: Optional[Callable[[int, int], None]] = None
        """Called with (plies from the root, move code) before each move the tree
        makes (engine.analysis.stats observes the search through it)."""
        self.selective = True
        """False turns every pruning and reduction off (and the losing captures are
        ordered with the others): the search is then exact full-width alpha-beta."""
        # Hooks instead of overridable methods: a compiled Searcher (``cutoff
        # compile``) cannot be subclassed by interpreted code, such as engine.play.smp.
        self.on_poll: Optional[Callable[[int], None]] = None
        """Called with the node count whenever the search polls its limits (every
        ``POLL_INTERVAL_NODES`` nodes); it may end the search by raising
        ``SearchAbortedError``. Lazy SMP helpers publish their nodes here."""
        self.skip_ahead: Optional[Callable[[int], int]] = None
        """The iteration to search after a completed depth, when not the next one
        (Lazy SMP helpers keep ahead of the main search)."""

    def use_network(self, net: Optional[Network]) -> None:
        """Evaluate with ``net`` from the next search on; None: the hand-written
        evaluation."""
        if net is None:
            self.evaluator = Evaluator()
            self.network = None
        else:
            evaluator = NetworkEvaluator(net)
            self.evaluator = evaluator
            self.network = evaluator.incremental

    def new_game(self) -> None:
        """Forget killers, history and counter moves (the controller clears the TT)."""
        self.history = movepick.new_history()
        self.counter_moves = movepick.new_counter_moves()
        self._killers = [[0, 0] for _ in range(MAX_PLY + 1)]

    # ------------------------------------------------------------------ driver

    def search(
        self,
        board: chess.Board,
        params: SearchParams,
        control: SearchControl,
        on_iteration: Optional[Callable[[IterationInfo], None]] = None,
    ) -> SearchResult:
        """Search ``board`` (a copy is made) within ``params`` and ``control``."""
        if not control.start_time:
            control.start_time = time.monotonic()
        nb = Board.from_chess(board)
        nb.use_network(self.network)
        self._board = nb
        root_plies = nb.ply()
        self._root_ply = root_plies
        self._tb_pieces = 0
        if self.tablebases is not None:
            self._tb_pieces = self.tablebases.max_pieces
            self.tablebases.hits = 0
        self._control = control
        self._node_limit = params.node_limit
        self._poll_mask = POLL_INTERVAL_NODES - 1
        if params.node_limit is not None:
            while self._poll_mask and self._poll_mask + 1 > max(params.node_limit // 8, 1):
                self._poll_mask >>= 1
        self.nodes = 0
        self.seldepth = 0
        self._killers = [[0, 0] for _ in range(MAX_PLY + 1)]
        self.tt.new_search()
        movepick.age_history(self.history)

        legal = legal_moves(nb)
        if params.root_moves:
            wanted = {nb.from_chess_move(m) for m in params.root_moves}
            restricted = [m for m in legal if m in wanted]
            legal = restricted or legal
        if not legal:
            score = -MATE if nb.is_check() else 0
            return SearchResult(None, None, score, 0, 0)

        lines = [_RootLine(m) for m in legal]
        self._order_root(lines)
        multipv = max(1, min(params.multipv, len(lines)))
        best = lines[0]
        completed_depth = 0
        if params.complete_first_iteration:
            self._node_limit = None
        depth = max(1, params.start_depth)
        while depth <= max(1, params.max_depth):
            try:
                for pv_index in range(multipv):
                    self._search_root_aspirated(depth, lines, pv_index, on_iteration)
            except SearchAbortedError:
                # The tree does not unmake moves on the way out of an abort: do it here.
                while nb.ply() > root_plies:
                    nb.unmake()
                # A move of the unfinished iteration is only trusted when it beat the
                # previous best in a full-window re-search (it then sits in front).
                if lines[0].pv and lines[0].score > -INFINITE:
                    best = lines[0]
                break
            completed_depth = depth
            self._node_limit = params.node_limit
            if multipv > 1:
                # Pruning depends on the window, so a later line can come out above an
                # earlier one: report (and play) them best first. Stable for ties.
                lines[:multipv] = sorted(lines[:multipv], key=lambda line: -line.score)
            best = lines[0]
            if on_iteration is not None:
                self._report_lines(depth, lines, multipv, on_iteration)
            if self._should_stop_after(depth, params, best, len(legal)):
                break
            depth = depth + 1 if self.skip_ahead is None else self.skip_ahead(depth)

        score = best.score
        if score == -INFINITE:
            # Stopped before the first move was searched: the static view is all we have.
            score = self.evaluator.evaluate(nb)
        ponder = best.pv[1] if len(best.pv) > 1 else self._ponder_from_tt(best.move)
        return SearchResult(
            nb.to_chess_move(best.move),
            nb.to_chess_move(ponder) if ponder else None,
            score,
            completed_depth,
            self.nodes,
            self.seldepth,
        )

    def quiescence(self, board: chess.Board) -> int:
        """The quiescence score of ``board`` with a full window (side to move's view).

        The static evaluation once captures are resolved: what the main search uses
        at its horizon, and what the training data's quiet filter compares with the
        static evaluation (scripts/training/datagen.py). It reads and fills the TT as
        quiescence in the tree does.
        """
        nb = Board.from_chess(board)
        nb.use_network(self.network)
        self._board = nb
        self._root_ply = nb.ply()
        self._control = SearchControl()
        self._node_limit = None
        return self._qsearch(-INFINITE, INFINITE, 0, board.is_check())

    def ponder_from_tt(self, move: chess.Move) -> Optional[chess.Move]:
        """The reply to ``move`` the TT expects, from the last searched root (or None)."""
        nb = self._board
        legal = legal_move(nb, nb.from_chess_move(move) & CODE_MASK)
        reply = self._ponder_from_tt(legal) if legal else 0
        return nb.to_chess_move(reply) if reply else None

    def ply_from_root(self) -> int:
        """Moves (and null moves) made below the root of the current search."""
        return self._board.ply() - self._root_ply

    def _order_root(self, lines: list[_RootLine]) -> None:
        """First iteration order: TT move, then the interior-node ordering."""
        board = self._board
        tt_code = self.tt.probe_native(board.key)[0]
        moves = [line.move for line in lines]
        ordered = order_moves(board, moves, -1, 0, 0, self.history)
        rank = {m: i for i, m in enumerate(ordered)}
        lines.sort(key=lambda line: -1 if line.move & CODE_MASK == tt_code else rank[line.move])

    def _should_stop_after(
        self, depth: int, params: SearchParams, best: _RootLine, legal_count: int
    ) -> bool:
        """Decide at an iteration boundary whether another iteration is worth it.

        The time rules are timeman's (``Deadlines.iteration_done``, told of every
        completed iteration); the rules about mates are the search's.
        """
        deadlines = self._control.deadlines
        out_of_time = False
        if deadlines is not None:
            out_of_time = deadlines.iteration_done(
                time.monotonic(), best.move & CODE_MASK, best.score, legal_count
            )
        if (
            params.mate_moves is not None
            and best.score >= MATE_BOUND
            and (MATE - best.score + 1) // 2 <= params.mate_moves
        ):
            return True
        if abs(best.score) >= MATE_BOUND and depth >= MATE - abs(best.score) + 2:
            # A mate proven within the horizon cannot improve with more depth.
            timed = deadlines is not None and deadlines.soft() is not None
            return depth >= params.max_depth or timed
        return out_of_time

    def _tbhits(self) -> int:
        return self.tablebases.hits if self.tablebases is not None else 0

    def _ponder_from_tt(self, move: int) -> int:
        """The expected reply (0: none) from the TT to the legal root ``move``."""
        board = self._board
        board.make(move)
        try:
            code = self.tt.probe_native(board.key)[0]
            return legal_move(board, code) if code else 0
        finally:
            board.unmake()

    def _iteration_info(
        self, depth: int, pv_index: int, line: _RootLine, score: int, bound: int
    ) -> IterationInfo:
        """The progress report of root ``line`` (the ``pv_index``-th) with ``score``."""
        return IterationInfo(
            depth,
            self.seldepth,
            pv_index + 1,
            score,
            bound,
            self.nodes,
            int((time.monotonic() - self._control.start_time) * 1000),
            self.tt.hashfull(),
            [self._board.to_chess_move(move) for move in line.pv or [line.move]],
            self._tbhits(),
        )

    def _report_lines(
        self,
        depth: int,
        lines: list[_RootLine],
        multipv: int,
        on_iteration: Callable[[IterationInfo], None],
    ) -> None:
        for i in range(multipv):
            on_iteration(self._iteration_info(depth, i, lines[i], lines[i].score, BOUND_EXACT))

    def _search_root_aspirated(
        self,
        depth: int,
        lines: list[_RootLine],
        pv_index: int,
        on_iteration: Optional[Callable[[IterationInfo], None]],
    ) -> None:
        """Search root lines[pv_index:] with aspiration windows; best goes to pv_index."""
        previous = lines[pv_index].score
        if depth >= ASPIRATION_MIN_DEPTH and abs(previous) < MATE_BOUND:
            delta = ASPIRATION_WINDOW_CP
            alpha = max(previous - delta, -INFINITE)
            beta = min(previous + delta, INFINITE)
        else:
            delta = INFINITE
            alpha, beta = -INFINITE, INFINITE
        while True:
            score = self._search_root(depth, lines, pv_index, alpha, beta)
            if alpha < score < beta or (alpha == -INFINITE and beta == INFINITE):
                return
            bound = BOUND_UPPER if score <= alpha else BOUND_LOWER
            if on_iteration is not None:
                on_iteration(self._iteration_info(depth, pv_index, lines[pv_index], score, bound))
            delta *= 2
            if score <= alpha:
                alpha = max(score - delta, -INFINITE)
                if delta > ASPIRATION_MAX_DELTA_CP:
                    alpha = -INFINITE
            else:
                beta = min(score + delta, INFINITE)
                if delta > ASPIRATION_MAX_DELTA_CP:
                    beta = INFINITE

    def _search_root(
        self, depth: int, lines: list[_RootLine], first: int, alpha: int, beta: int
    ) -> int:
        """PVS over the root moves lines[first:]; returns the best score (fail-soft)."""
        board = self._board
        pvt = self._pv
        self.nodes += 1
        # Every count that lands on a poll interval polls, the root's too: a skipped
        # poll would let a thread run two intervals past a node limit.
        if not self.nodes & self._poll_mask:
            self._poll()
        self._root_depth = depth
        best_score = -INFINITE
        on_make = self.on_make
        for i in range(first, len(lines)):
            line = lines[i]
            if on_make is not None:
                on_make(0, line.move & CODE_MASK)
            board.make(line.move)
            full_window = True
            if i == first:
                score = -self._negamax(-beta, -alpha, depth - 1, 1, True)
            else:
                full_window = False
                score = -self._negamax(-alpha - 1, -alpha, depth - 1, 1, False)
                if alpha < score < beta:
                    full_window = True
                    score = -self._negamax(-beta, -alpha, depth - 1, 1, True)
            board.unmake()
            if score > best_score:
                best_score = score
            if i == first or score > alpha:
                line.score = score
                line.pv = [line.move, *pvt[1]] if full_window else [line.move]
                if i != first:
                    # The new best moves to the front of the searched part (stable order).
                    lines.insert(first, lines.pop(i))
                if score > alpha:
                    alpha = score
                    if alpha >= beta:
                        break
            else:
                line.score = -INFINITE
        code = lines[first].move & CODE_MASK
        bound = BOUND_LOWER if best_score >= beta else BOUND_EXACT
        if first == 0 and best_score > -INFINITE:
            self.tt.store_native(board.key, depth, bound, score_to_tt(best_score, 0), code)
        return best_score

    # ------------------------------------------------------------------- nodes

    def _poll(self) -> None:
        """Abort when stopped, past the hard deadline or over the node limit."""
        if self.on_poll is not None:
            self.on_poll(self.nodes)
        control = self._control
        if control.stop.is_set():
            raise SearchAbortedError
        if self._node_limit is not None and self.nodes >= self._node_limit:
            raise SearchAbortedError
        hard = control.hard_deadline
        if hard is not None and time.monotonic() >= hard:
            raise SearchAbortedError

    def _negamax(
        self, alpha: int, beta: int, depth: int, ply: int, pv_node: bool, excluded: int = 0
    ) -> int:
        """Fail-soft PVS negamax; ``pv_node`` is true when the window is open. ``excluded``
        (a move code): the singular test's search, without that move and the TT entry.
        Elo figures: docs/strength.md, the full build against the build without the step."""
        board = self._board
        pvt = self._pv
        if pv_node:
            pvt[ply] = []

        # 1. Check extension: a check never ends the main search.
        in_check = board.is_check()
        if in_check:
            depth += 1

        # 2. Horizon: quiescence, with quiet checks at its first ply (+26 Elo, 750 games).
        if depth <= 0:
            # (Never in check here as callers go, the check extension lifting depth 0;
            # quiescence is told anyway, since its move generation trusts the flag.)
            return self._qsearch(alpha, beta, ply, in_check, self.selective)

        # 3. Count the node; the clock and stop flag are read only now and then.
        self.nodes += 1
        if not self.nodes & self._poll_mask:
            self._poll()
        if ply > self.seldepth:
            self.seldepth = ply

        # 4. Draws by rule: fifty moves, repetition, insufficient material.
        halfmove_clock = board.halfmove_clock
        if halfmove_clock >= 100 and not in_check:
            return 0
        if halfmove_clock >= 4 and board.is_search_repetition():
            return 0
        if not (board.pawns | board.rooks | board.queens):
            minors = board.knights | board.bishops
            if not minors & (minors - 1):
                return 0
        if ply >= MAX_PLY - 1:
            return self.evaluator.evaluate(board)

        # 5. Mate distance pruning: no line here can beat a shorter mate found already.
        mating = MATE - ply
        if alpha < -mating:
            alpha = -mating
        if beta > mating - 1:
            beta = mating - 1
        if alpha >= beta:
            return alpha

        # 6. Transposition table: a deep enough bound ends a zero-window node at once.
        tt = self.tt
        key: i64 = board.key
        tt_code: i64 = 0
        tt_depth: i64 = 0
        tt_bound: i64 = 0
        tt_score: i64 = 0
        if not excluded:
            tt_code, tt_depth, tt_bound, tt_score = tt.probe_native(key)
        if tt_bound and not pv_node and tt_depth >= depth:
            # (tt_score stays as stored: the singular extension converts it too.)
            stored_score = score_from_tt(tt_score, ply)
            if _bound_holds(tt_bound, stored_score, alpha, beta):
                return stored_score

        # 7. Tablebases, right after a capture or pawn move (where positions enter them).
        if self._tb_pieces and not halfmove_clock and not excluded:
            tb_score = self._probe_tablebases(alpha, beta, depth, ply)
            if tb_score is not None:
                return tb_score

        # 8. Static evaluation, for pruning at non-PV nodes (PV nodes prune nothing).
        selective = self.selective and not in_check
        static_eval = -INFINITE
        if selective and not pv_node:
            static_eval = self.evaluator.evaluate(board)
            if -MATE_BOUND < beta < MATE_BOUND and not excluded:
                # 9. Reverse futility pruning (+24 Elo, 400 games): too far above beta to fall.
                if (
                    depth <= REVERSE_FUTILITY_MAX_DEPTH
                    and static_eval - REVERSE_FUTILITY_MARGIN_CP * depth >= beta
                ):
                    return static_eval
                # 10. Null move pruning (+11 Elo, 400 games): if passing fails high, moves would.
                if depth >= NULL_MOVE_MIN_DEPTH and static_eval >= beta:
                    score = self._null_move_search(depth, ply, beta)
                    if score > -INFINITE:
                        return score

        # 11. Internal iterative reduction (+3 Elo, 400 games): no TT move, likely a new node.
        if self.selective and not tt_code and depth >= IIR_MIN_DEPTH and not excluded:
            depth -= 1

        # 12. Singular extension (+35 Elo, 389 games): a TT move far above the others.
        tt_extension = 0
        if tt_bound and depth >= SINGULAR_MIN_DEPTH and self.selective:
            tt_extension, multi_cut = self._singular_extension(
                tt_code, tt_depth, tt_bound, tt_score, depth, ply, beta
            )
            if multi_cut > -INFINITE:
                return multi_cut

        # 13. The moves, in stages from the picker: an early cutoff saves generating the
        #     rest (losing captures last, and none in quiescence: +183 Elo, 118 games).
        lmp_count, futility_value = _NO_LIMIT, INFINITE
        if selective and not pv_node and alpha > -MATE_BOUND:
            if depth <= LATE_MOVE_MAX_DEPTH:
                lmp_count = LATE_MOVE_COUNT[depth]
            if depth <= FUTILITY_MAX_DEPTH:
                futility_value = static_eval + FUTILITY_MARGIN_CP[depth]
        futile = futility_value <= alpha
        reduce = selective and depth >= LMR_MIN_DEPTH
        original_alpha = alpha
        best_score, best_code, searched, pruned = -INFINITE, 0, 0, False  # pruned: by futility
        history = self.history
        hist_base = history_base(board)
        # The counter-move slot of the opponent's last move (0: a null move).
        last = board.last_move()
        counter_index = hist_base + (last & 4095) if last else 0
        counter = self.counter_moves[counter_index] if counter_index else 0
        quiets_tried: list[int] = []
        on_make = self.on_make
        k1, k2 = self._killers[ply]
        picker = MovePicker(board, tt_code, k1, k2, history, in_check, self.selective, counter)
        for stage, moves in picker:
            late = stage.late
            track_quiets = stage.quiet
            child_depth = depth - 1 + tt_extension if stage.extended else depth - 1
            for move in moves:
                code = move & CODE_MASK
                if excluded and code == excluded:
                    continue
                # 14. Late move pruning (+10 Elo, 400 games): late quiets at low depth.
                if late and searched >= lmp_count:
                    break
                promotion = (move >> 12) & 7
                # 15. Futility pruning (+26 Elo, 400 games): quiet non-checks far below alpha.
                if futile and late and not promotion and not gives_check(board, move):
                    pruned = True
                    continue
                # 16. Make the move (every move here is legal).
                if on_make is not None:
                    on_make(ply, code)
                board.make(move)
                # 17. A late quiet non-check: LMR (+26 Elo, 400 games).
                reduction = 0
                if (
                    late
                    and reduce
                    and searched >= LMR_MIN_MOVES
                    and not promotion
                    and not board.is_check()
                ):
                    move_history = history[hist_base + (code & 4095)]
                    reduction = _lmr_reduction(depth, searched, pv_node, move_history)
                searched += 1
                if track_quiets and not promotion:
                    quiets_tried.append(hist_base + (code & 4095))
                # 18. Principal variation search: null windows after the first move.
                full_window = pv_node
                if searched == 1:
                    score = -self._negamax(-beta, -alpha, child_depth, ply + 1, pv_node)
                else:
                    full_window = False
                    score = alpha + 1
                    if reduction > 0:
                        reduced = child_depth - reduction
                        score = -self._negamax(-alpha - 1, -alpha, reduced, ply + 1, False)
                    if score > alpha:
                        score = -self._negamax(-alpha - 1, -alpha, child_depth, ply + 1, False)
                    if pv_node and alpha < score < beta:
                        full_window = True
                        score = -self._negamax(-beta, -alpha, child_depth, ply + 1, True)
                board.unmake()
                if score <= best_score:
                    continue
                best_score = score
                if score <= alpha:
                    continue
                best_code = code
                alpha = score
                if pv_node:
                    pvt[ply] = [move, *pvt[ply + 1]] if full_window else [move]
                if alpha >= beta:
                    # 19. Beta cutoff: learn from a quiet refutation (+58 Elo, 259 games).
                    self._update_quiet_stats(move, depth, ply, counter_index, quiets_tried)
                    if not excluded:
                        tt.store_native(
                            key, depth, BOUND_LOWER, score_to_tt(best_score, ply), best_code
                        )
                    return best_score
            if searched >= lmp_count:
                picker.skip_quiets()  # step 14, for a quiet stage not yet generated

        # 20. Moves pruned by futility stand for a score no better than the margin's.
        if pruned and futility_value > best_score:
            best_score = futility_value

        # 21. No move searched: checkmate or stalemate, unless moves were pruned.
        if not searched:
            if excluded:
                return alpha  # only the TT move is legal here: it is singular
            return best_score if pruned else -mating if in_check else 0

        # 22. Store the result: exact inside the window, an upper bound below it.
        if not excluded:
            bound = BOUND_EXACT if best_score > original_alpha else BOUND_UPPER
            tt.store_native(key, depth, bound, score_to_tt(best_score, ply), best_code)
        return best_score

    def _probe_tablebases(self, alpha: int, beta: int, depth: int, ply: int) -> Optional[int]:
        """The node's score from the endgame tables when it ends the node, else None.

        A win or loss is a bound (a mate may come sooner), a draw is exact; a result
        that ends the node goes to the TT as if searched six plies deeper. The tables
        read a python-chess board, made from the search board only here.
        """
        board = self._board
        if board.piece_count() > self._tb_pieces or self.tablebases is None:
            return None
        wdl = self.tablebases.wdl(chess.Board(board.fen(), chess960=board.chess960))
        if wdl is None:
            return None
        if wdl > 1:
            tb_score, bound = TB_WIN_CP - ply, BOUND_LOWER
        elif wdl < -1:
            tb_score, bound = -(TB_WIN_CP - ply), BOUND_UPPER
        else:
            tb_score, bound = 0, BOUND_EXACT
        if _bound_holds(bound, tb_score, alpha, beta):
            self.tt.store_native(board.key, min(depth + 6, MAX_PLY - 1), bound, tb_score, 0)
            return tb_score
        return None

    def _singular_extension(
        self,
        tt_code: int,
        tt_depth: int,
        bound: int,
        tt_score: int,
        depth: int,
        ply: int,
        beta: int,
    ) -> tuple[int, int]:
        """(The TT move's extension, a score that ends the node or -INFINITE).

        Not past twice the iteration's depth, where extensions would compound. When the
        TT holds a deep enough lower bound, the other moves are searched at
        half depth against a window below it. If they all stay below, the TT move is
        the only good one here and is searched a ply deeper; if even that lowered
        window fails high, two moves beat beta and the node ends (multi-cut); if only
        the TT score is at or above beta, the TT move is searched a ply shallower.
        """
        tt_score = score_from_tt(tt_score, ply)
        if (
            not tt_code
            or ply >= 2 * self._root_depth
            or bound == BOUND_UPPER
            or tt_depth < depth - SINGULAR_TT_DEPTH_SLACK
            or not -MATE_BOUND < tt_score < MATE_BOUND
        ):
            return 0, -INFINITE
        singular_beta = tt_score - SINGULAR_MARGIN_CP * depth
        score = self._negamax(
            singular_beta - 1, singular_beta, (depth - 1) // 2, ply, False, tt_code
        )
        if score < singular_beta:
            return 1, -INFINITE
        if singular_beta >= beta:
            return 0, singular_beta
        if tt_score >= beta:
            return -1, -INFINITE
        return 0, -INFINITE

    def _update_quiet_stats(
        self,
        move: int,
        depth: int,
        ply: int,
        counter_index: int,
        quiets_tried: list[int],
    ) -> None:
        """After a cutoff by ``move``, if it is quiet: it becomes the ply's first killer
        and the counter move to the opponent's last move; its history gains, and the
        quiets tried before it lose as much (history with gravity and malus)."""
        board = self._board
        if (move >> 12) & 7 or board.is_capture(move):
            return
        code = move & CODE_MASK
        killers = self._killers[ply]
        if killers[0] != code:
            killers[1] = killers[0]
            killers[0] = code
        if counter_index:
            self.counter_moves[counter_index] = code
        history = self.history
        bonus = history_bonus(depth)
        best_index = history_base(board) + (code & 4095)
        update_history(history, best_index, bonus)
        for index in quiets_tried:
            if index != best_index:
                update_history(history, index, -bonus)

    def _null_move_search(self, depth: int, ply: int, beta: int) -> int:
        """The score with which passing fails high, else -INFINITE. Not twice in a row,
        and not with only king and pawns (zugzwang, where passing would be best)."""
        board = self._board
        own = board.black if board.turn == BLACK else board.white
        if not board.last_move() or not own & ~(board.pawns | board.kings):
            return -INFINITE
        board.make_null()
        # No repetition reaches back across a pass: the positions before it were not
        # really followed by this one (unmake restores the clock).
        board.halfmove_clock = 0
        null_depth = depth - 1 - NULL_MOVE_BASE_REDUCTION - depth // 4
        score = -self._negamax(-beta, -beta + 1, null_depth, ply + 1, False)
        board.unmake()
        if score < beta:
            return -INFINITE
        return beta if score >= MATE_BOUND else score

    def _qsearch(
        self, alpha: int, beta: int, ply: int, in_check: bool, checks: bool = False
    ) -> int:
        """Captures and queen promotions until the position is quiet; evasions in check;
        with ``checks``, quiet checks too (the first ply only). Steps as in _negamax."""
        board = self._board
        # 1. Count the node; the clock and stop flag are read only now and then.
        self.nodes += 1
        if not self.nodes & self._poll_mask:
            self._poll()
        if ply > self.seldepth:
            self.seldepth = ply
        if ply >= MAX_PLY - 1:
            return self.evaluator.evaluate(board)

        # 2. Transposition table (+37 Elo, 327 games, docs/strength.md): any stored
        #    result has searched at least the captures this node would.
        key: i64 = board.key
        _, _, tt_bound, tt_score = self.tt.probe_native(key)
        if tt_bound:
            bound = tt_bound
            tt_score = score_from_tt(tt_score, ply)
            if _bound_holds(bound, tt_score, alpha, beta):
                return tt_score

        # 3. Stand pat: the side to move need not capture (in check it must move).
        if in_check:
            best_score = -INFINITE
        elif self.selective:
            # Lazy evaluation: when the material and piece-square score is this far
            # outside the window, the other terms will not bring it back, and the
            # bound is returned without them. (features.blend inlined: this runs at
            # every quiescence node.)
            phase: i64 = board.phase if board.phase < MAX_PHASE else MAX_PHASE
            blended: i64 = board.mg * phase + board.eg * (MAX_PHASE - phase)
            rough: i64 = blended // MAX_PHASE if blended >= 0 else -(-blended // MAX_PHASE)
            if board.turn == BLACK:
                rough = -rough
            if rough - LAZY_MARGIN_CP >= beta:
                return rough - LAZY_MARGIN_CP
            if rough + LAZY_MARGIN_CP <= alpha:
                best_score = rough + LAZY_MARGIN_CP
            else:
                best_score = self.evaluator.evaluate(board)
        else:
            best_score = self.evaluator.evaluate(board)
        if best_score >= beta:
            return best_score
        if best_score > alpha:
            alpha = best_score

        # 4. The moves: evasions in check, else captures and queen promotions by
        #    MVV-LVA, then at the first ply quiet checks (+26 Elo, 750 games,
        #    docs/strength.md). None in check: mated.
        moves = quiescence_moves(board, self.history, in_check)
        if checks and not in_check:
            moves.extend(direct_quiet_checks(board))
        if not moves:
            return -(MATE - ply) if in_check else best_score
        original_alpha = alpha
        best_code = 0
        see_prune = self.selective and not in_check
        mailbox = board.mailbox
        on_make = self.on_make
        for move in moves:
            # 5. SEE pruning: a capture that loses material by static exchange is
            #    not searched (with losing captures last: +183 Elo, 118 games,
            #    docs/strength.md).
            if see_prune and not (move >> 12) & 7:
                attacker = mailbox[move & 63] & 7
                victim = mailbox[(move >> 6) & 63] & 7
                if _SEE[attacker] > _SEE[victim if victim else PAWN] and not see_ge(board, move, 0):
                    continue
            # 6. Make the move (every move here is legal), search.
            if on_make is not None:
                on_make(ply, move & CODE_MASK)
            board.make(move)
            score = -self._qsearch(-beta, -alpha, ply + 1, board.is_check())
            board.unmake()
            if score > best_score:
                best_score = score
                if score > alpha:
                    alpha = score
                    best_code = move & CODE_MASK
                    if alpha >= beta:
                        break

        # 7. Store the result where the table holds nothing for the position (never
        #    over a deeper result: store() would).
        if not tt_bound and best_score > -INFINITE:
            if best_score >= beta:
                bound = BOUND_LOWER
            elif best_score > original_alpha:
                bound = BOUND_EXACT
            else:
                bound = BOUND_UPPER
            self.tt.store_native(key, 0, bound, score_to_tt(best_score, ply), best_code)
        return best_score
