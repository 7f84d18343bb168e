"""Iterative deepening, aspiration windows, PVS negamax and quiescence search.

The node function is full-width alpha-beta made selective: null-move pruning,
reverse futility, futility and late move pruning, late move reductions, internal
iterative reduction, singular extensions, SEE ordering and pruning of losing
captures, and lazy evaluation, transposition-table cutoffs and (at its first ply)
quiet checks in quiescence; quiet moves are ordered by killers, a counter move and
a history with gravity and malus. Each has a module-level switch (constants below)
so that a match can measure it against the build without it; the Elo each one was
measured to be worth stands beside its step in the node function, in brackets: a
match of the full build against the build without it, in colour-swapped pairs from
the shipped openings (docs/strength.md has the ledger).
All selectivity together against plain PVS: +135 +/- 43 Elo at 10+0.1.
``Searcher.selective = False`` turns all of them off, which makes the search
exact (the tests compare it with plain negamax). Techniques that a match showed
to be worth nothing are not in the code (git history keeps them).

The searcher owns the per-search state (node counts, killers, PV table) and the
history table that survives between searches of one game; the transposition
table is passed in by its owner (the controller). Results leave through a
callback (``on_iteration``) and the returned ``SearchResult``: this module never
prints, never reads the clock except to compare with the deadlines it was given,
and never changes the board it was given (it searches a copy).

Hot-path rules: python-chess calls that scan the board or its move stack
(``is_game_over``, ``is_repetition``, ``san``, ``copy``, ``zobrist_hash``,
``piece_map``) cost tens of microseconds and never run per node. One board,
push/pop; the Zobrist key and evaluation sums come from ``Position``; the move
picker tries the TT move before any move generation; moves are generated
pseudo-legally and tested for legality only when they could leave the king
attacked; whether a king is attacked is asked of ``engine.attacks`` (one call,
where ``Board.is_check`` and ``was_into_check`` make several); repetition uses our
key history.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Final, Optional

import chess

from engine import movepick
from engine.attacks import (
    DIAGONAL_LINES,
    STRAIGHT_LINES,
    CheckSquares,
    checking_squares,
    gives_check,
    king_attacked,
)
from engine.evaluate import Evaluator
from engine.features import MAX_PHASE
from engine.movepick import (
    HISTORY_SIDE_SIZE,
    NO_LIMIT,
    STAGE_EVASIONS,
    STAGE_KILLERS,
    STAGE_QUIETS,
    STAGE_TT,
    MovePicker,
    decode,
    history_bonus,
    move_code,
    order_moves,
    quiescence_moves,
    quiet_checks,
    update_history,
)
from engine.position import Position
from engine.score import INFINITE, MATE, MATE_BOUND, MAX_PLY, score_from_tt, score_to_tt
from engine.see import SEE_VALUES, see_ge
from engine.tablebase import TB_WIN_CP, Tablebases
from engine.timeman import Deadlines
from engine.tt import BOUND_EXACT, BOUND_LOWER, BOUND_UPPER, TranspositionTable

ASPIRATION_MIN_DEPTH: Final = 4
"""Iterations from this depth on start with a narrow window around the last score."""
ASPIRATION_WINDOW_CP: Final = 30
"""Half-width of the first aspiration window; doubled after every failure."""
ASPIRATION_MAX_DELTA_CP: Final = 1000
"""Past this half-width the failing side of the window opens fully."""
POLL_INTERVAL_NODES: Final = 64
"""Clock and stop flag are read once per this many nodes (a power of two)."""

# Selective search. Each technique has a switch, so that a match can measure it
# against the build without it (README: "Selective search"); ``Searcher.selective``
# turns them all off at once (the exactness tests search that way). The numbers are
# Final (the compiled search folds them); the switches are not: mypyc 2.4 keeps the
# literal True and the int 1 in one constant slot, and a Final switch read as a value
# made the compiled quiescence raise TypeError (CI's compiled bench check finds that).
NULL_MOVE = True
"""Null-move pruning: if passing still fails high, the node is not worth a full search."""
NULL_MOVE_MIN_DEPTH: Final = 3
NULL_MOVE_BASE_REDUCTION: Final = 3
"""The null move is searched ``BASE + depth // 4`` plies shallower than a real move."""
REVERSE_FUTILITY = True
"""Static null move: far enough above beta at low depth, a non-PV node fails high."""
REVERSE_FUTILITY_MAX_DEPTH: Final = 6
REVERSE_FUTILITY_MARGIN_CP: Final = 90
"""Per ply of depth: what the opponent could win back in that many plies."""
FUTILITY = True
"""Quiet, non-checking moves at frontier nodes far below alpha are skipped."""
FUTILITY_MAX_DEPTH: Final = 3
FUTILITY_MARGIN_CP: Final = (0, 130, 230, 330)
LATE_MOVE_PRUNING = True
"""At depth 1-3 of non-PV nodes, quiet moves beyond a count are skipped."""
LATE_MOVE_MAX_DEPTH: Final = 3
LATE_MOVE_COUNT: Final = (0, 5, 8, 13)
"""Moves searched (of any kind) after which quiets are skipped, by depth."""
LATE_MOVE_REDUCTIONS = True
"""Late quiet moves are searched shallower, and again at full depth if they fail high."""
LMR_MIN_DEPTH: Final = 3
LMR_MIN_MOVES: Final = 3
"""Moves searched before reductions start (TT move, captures and killers count)."""
LMR_BASE: Final = 0.75
LMR_DIVISOR: Final = 2.25
LMR_GOOD_HISTORY: Final = 1 << 12
"""A quiet move whose history is at least this is reduced one ply less."""
LMR_BAD_HISTORY: Final = -(1 << 12)
"""A quiet move whose history is at most this is reduced one ply more."""
LMR_MAX_MOVE_INDEX: Final = 63
"""The reduction table's last column: later moves are reduced as much as this one."""
INTERNAL_ITERATIVE_REDUCTION = True
"""A node with no TT move at depth >= IIR_MIN_DEPTH is searched a ply shallower."""
IIR_MIN_DEPTH: Final = 4
SEE_ORDERING = True
"""Captures losing material by static exchange are tried after the quiet moves."""
SEE_QSEARCH = True
"""Quiescence skips captures that lose material by static exchange."""
LAZY_EVAL = True
"""Quiescence stands pat on the material and piece-square score alone when it is
more than LAZY_MARGIN_CP outside the window (the other terms rarely move that far)."""
LAZY_MARGIN_CP: Final = 250
QSEARCH_TT = True
"""Quiescence probes the transposition table (a bound ends the node) and stores its
result where the table holds nothing for the position."""
HISTORY_MALUS = True
"""A cutoff also lowers the history of the quiet moves searched before the refutation."""
COUNTER_MOVES = True
"""The quiet move that last refuted the opponent's previous move is tried after the killers."""
QSEARCH_CHECKS = True
"""The first ply of quiescence also tries quiet checks that do not lose material."""
SINGULAR_EXTENSIONS = True
"""A TT move that every other move falls well short of is searched a ply deeper."""
SINGULAR_MIN_DEPTH: Final = 4
SINGULAR_TT_DEPTH_SLACK: Final = 3
"""The TT entry must have been searched at least ``depth - SLACK`` deep."""
SINGULAR_MARGIN_CP: Final = 8
"""Per ply of depth: how far below the TT score the other moves must stay."""

_BB_SQUARES: Final = chess.BB_SQUARES
_PAWN: Final = chess.PAWN


def _reduction_table() -> list[list[int]]:
    """LMR plies by [depth][moves searched]: grows with log(depth) * log(move number)."""
    table = [[0] * (LMR_MAX_MOVE_INDEX + 1) for _ in range(MAX_PLY + 1)]
    for depth in range(1, MAX_PLY + 1):
        for count in range(1, LMR_MAX_MOVE_INDEX + 1):
            table[depth][count] = int(LMR_BASE + math.log(depth) * math.log(count) / LMR_DIVISOR)
    return table


_REDUCTIONS: Final = _reduction_table()

_KING_LINES: Final = [
    straight | diagonal for straight, diagonal in zip(STRAIGHT_LINES, DIAGONAL_LINES)
]
"""A piece off every line through its king cannot expose the king by moving."""


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
    score: int  # side to move's view (engine.score)
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

    move: chess.Move
    score: int = -INFINITE
    pv: list[chess.Move] = field(default_factory=list)


class Searcher:
    """Searches positions; keeps history between searches of the same game."""

    def __init__(self, tt: TranspositionTable) -> None:
        self.tt = tt
        self.evaluator = Evaluator()
        self.history = movepick.new_history()
        self.counter_moves = movepick.new_counter_moves()
        self.nodes = 0
        self.seldepth = 0
        self._killers: list[list[int]] = [[0, 0] for _ in range(MAX_PLY + 1)]
        self._pv: list[list[chess.Move]] = [[] for _ in range(MAX_PLY + 1)]
        self._poll_mask = POLL_INTERVAL_NODES - 1
        self._root_depth = 0
        self._control = SearchControl()
        self._node_limit: Optional[int] = None
        self._pos = Position(chess.Board())
        self.tablebases: Optional[Tablebases] = None
        """Endgame tables probed in the tree (the controller's); None: no probes."""
        self._tb_pieces = 0
        self.position_type: type[Position] = Position
        """What searches wrap the board in: a subclass may observe the moves made
        (engine.stats does); read once per search, so the nodes never pay for it."""
        self.selective = True
        """False turns every pruning and reduction off (the module switches stay as
        they are): the search is then exact full-width alpha-beta."""
        # Hooks instead of overridable methods: a compiled Searcher (``cutoff
        # compile``) cannot be subclassed by interpreted code, such as engine.smp.
        self.on_poll: Optional[Callable[[int], None]] = None
        """Called with the node count whenever the search polls its limits (every
        ``POLL_INTERVAL_NODES`` nodes); it may end the search by raising
        ``SearchAbortedError``. Lazy SMP helpers publish their nodes here."""
        self.skip_ahead: Optional[Callable[[int], int]] = None
        """The iteration to search after a completed depth, when not the next one
        (Lazy SMP helpers keep ahead of the main search)."""

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
        pos = self.position_type(board.copy())
        self._pos = pos
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

        legal = list(pos.board.generate_legal_moves())
        if params.root_moves:
            wanted = {move_code(m) for m in params.root_moves}
            restricted = [m for m in legal if move_code(m) in wanted]
            legal = restricted or legal
        if not legal:
            score = -MATE if pos.board.is_check() else 0
            return SearchResult(None, None, score, 0, 0)

        root_plies = len(pos.board.move_stack)
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
                while len(pos.board.move_stack) > root_plies:
                    pos.pop()
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
            score = self.evaluator.evaluate(pos)
        ponder = best.pv[1] if len(best.pv) > 1 else self._ponder_from_tt(best.move)
        return SearchResult(best.move, ponder, score, completed_depth, self.nodes, self.seldepth)

    def quiescence(self, board: chess.Board) -> int:
        """The quiescence score of ``board`` with a full window (side to move's view).

        The static evaluation once captures are resolved: what the main search
        uses at its horizon. For tests and tools; it reads and fills the TT as
        quiescence in the tree does (QSEARCH_TT).
        """
        self._pos = Position(board.copy())
        self._control = SearchControl()
        self._node_limit = None
        return self._qsearch(-INFINITE, INFINITE, 0, board.is_check())

    def ponder_from_tt(self, move: chess.Move) -> Optional[chess.Move]:
        """The reply to ``move`` the TT expects, from the last searched root (or None)."""
        return self._ponder_from_tt(move)

    def _order_root(self, lines: list[_RootLine]) -> None:
        """First iteration order: TT move, then the interior-node ordering."""
        board = self._pos.board
        entry = self.tt.probe(self._pos.key)
        tt_code = entry[0] if entry else 0
        moves = [line.move for line in lines]
        ordered = order_moves(board, moves, -1, 0, 0, self.history)
        rank = {move_code(m): i for i, m in enumerate(ordered)}
        lines.sort(
            key=lambda line: -1 if move_code(line.move) == tt_code else rank[move_code(line.move)]
        )

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
                time.monotonic(), move_code(best.move), best.score, legal_count
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

    def _ponder_from_tt(self, move: chess.Move) -> Optional[chess.Move]:
        """The expected reply from the TT when the PV is one move long."""
        pos = self._pos
        board = pos.board
        if not board.is_legal(move):
            return None
        pos.push(move)
        try:
            entry = self.tt.probe(pos.key)
            if entry and entry[0]:
                reply = decode(entry[0])
                if board.is_legal(reply):
                    return reply
            return None
        finally:
            pos.pop()

    def _report_lines(
        self,
        depth: int,
        lines: list[_RootLine],
        multipv: int,
        on_iteration: Callable[[IterationInfo], None],
    ) -> None:
        elapsed_ms = int((time.monotonic() - self._control.start_time) * 1000)
        hashfull = self.tt.hashfull()
        for i in range(multipv):
            line = lines[i]
            on_iteration(
                IterationInfo(
                    depth,
                    self.seldepth,
                    i + 1,
                    line.score,
                    BOUND_EXACT,
                    self.nodes,
                    elapsed_ms,
                    hashfull,
                    list(line.pv) or [line.move],
                    self._tbhits(),
                )
            )

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
                line = lines[pv_index]
                on_iteration(
                    IterationInfo(
                        depth,
                        self.seldepth,
                        pv_index + 1,
                        score,
                        bound,
                        self.nodes,
                        int((time.monotonic() - self._control.start_time) * 1000),
                        self.tt.hashfull(),
                        list(line.pv) or [line.move],
                        self._tbhits(),
                    )
                )
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
        pos = self._pos
        pvt = self._pv
        self.nodes += 1
        self._root_depth = depth
        best_score = -INFINITE
        for i in range(first, len(lines)):
            line = lines[i]
            pos.push(line.move)
            full_window = True
            if i == first:
                score = -self._negamax(-beta, -alpha, depth - 1, 1, True)
            else:
                full_window = False
                score = -self._negamax(-alpha - 1, -alpha, depth - 1, 1, False)
                if alpha < score < beta:
                    full_window = True
                    score = -self._negamax(-beta, -alpha, depth - 1, 1, True)
            pos.pop()
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
        code = move_code(lines[first].move)
        bound = BOUND_LOWER if best_score >= beta else BOUND_EXACT
        if first == 0 and best_score > -INFINITE:
            self.tt.store(pos.key, depth, bound, score_to_tt(best_score, 0), code)
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
        """Fail-soft PVS negamax; ``pv_node`` is true when the window is open.

        ``excluded`` (a move code) is the singular-extension test: the node is searched
        without that move, and neither reads nor writes its transposition-table entry."""
        pos = self._pos
        board = pos.board
        pvt = self._pv
        if pv_node:
            pvt[ply] = []

        # 1. In check: extend, so that a check never ends the main search.
        in_check = king_attacked(board, board.turn)
        if in_check:
            depth += 1

        # 2. Horizon: resolve captures first, and at this first quiescence ply also
        #    quiet checks that do not lose material: a captures-only horizon misses
        #    the mates and forks that begin with a quiet check. [Quiet checks: +26
        #    Elo, 95 % +6 to +46, 750 games at 10+0.1]
        if depth <= 0:
            return self._qsearch(alpha, beta, ply, False, QSEARCH_CHECKS and self.selective)

        # 3. Count the node; the clock and stop flag are read only now and then.
        self.nodes += 1
        if not self.nodes & self._poll_mask:
            self._poll()
        if ply > self.seldepth:
            self.seldepth = ply

        # 4. Draws by rule: fifty moves, repetition, insufficient material.
        if board.halfmove_clock >= 100 and not in_check:
            return 0
        if board.halfmove_clock >= 4 and pos.is_repetition():
            return 0
        if not (board.pawns | board.rooks | board.queens) and (
            (board.knights | board.bishops).bit_count() <= 1
        ):
            return 0
        if ply >= MAX_PLY - 1:
            return self.evaluator.evaluate(pos)

        # 5. Mate distance pruning: no line here can beat a shorter mate found already.
        mating = MATE - ply
        if alpha < -mating:
            alpha = -mating
        if beta > mating - 1:
            beta = mating - 1
        if alpha >= beta:
            return alpha

        # 6. Transposition table: a deep enough bound ends zero-window nodes at once.
        tt = self.tt
        key = pos.key
        # (The singular test's search never sees the entry: no cutoff, no TT move.)
        entry = tt.probe(key) if not excluded else None
        tt_code = 0
        if entry:
            tt_code, tt_depth, bound, tt_score = entry
            if not pv_node and tt_depth >= depth:
                tt_score = score_from_tt(tt_score, ply)
                if (
                    bound == BOUND_EXACT
                    or (bound == BOUND_LOWER and tt_score >= beta)
                    or (bound == BOUND_UPPER and tt_score <= alpha)
                ):
                    return tt_score

        # 6b. Tablebases: right after a capture or pawn move (where a position first
        #     enters the tables), few enough pieces are looked up; a win or loss is
        #     a bound (a mate may come sooner), a draw is exact.
        if (
            self._tb_pieces
            and not excluded
            and not board.halfmove_clock
            and board.occupied.bit_count() <= self._tb_pieces
            and self.tablebases is not None
        ):
            wdl = self.tablebases.wdl(board)
            if wdl is not None:
                if wdl > 1:
                    tb_score, bound = TB_WIN_CP - ply, BOUND_LOWER
                elif wdl < -1:
                    tb_score, bound = -(TB_WIN_CP - ply), BOUND_UPPER
                else:
                    tb_score, bound = 0, BOUND_EXACT
                if (
                    bound == BOUND_EXACT
                    or (bound == BOUND_LOWER and tb_score >= beta)
                    or (bound == BOUND_UPPER and tb_score <= alpha)
                ):
                    tt.store(key, min(depth + 6, MAX_PLY - 1), bound, tb_score, 0)
                    return tb_score

        us = board.turn
        selective = self.selective and not in_check
        static_eval = -INFINITE
        # (PV nodes prune nothing, so they need no static evaluation.)
        if selective and not pv_node:
            static_eval = self.evaluator.evaluate(pos)
            if -MATE_BOUND < beta < MATE_BOUND and not excluded:
                # 7. Reverse futility: this far above beta, the opponent will not
                #    get back to it in the plies that are left.
                #    [+24 +/- 27 Elo, 400 games at 2,000 nodes]
                if (
                    REVERSE_FUTILITY
                    and depth <= REVERSE_FUTILITY_MAX_DEPTH
                    and static_eval - REVERSE_FUTILITY_MARGIN_CP * depth >= beta
                ):
                    return static_eval
                # 8. Null move: if passing still fails high, a real move would too.
                #    Not twice in a row, and not with only king and pawns (zugzwang).
                #    [+11 +/- 18 Elo, 400 games at 1,000 nodes]
                if (
                    NULL_MOVE
                    and depth >= NULL_MOVE_MIN_DEPTH
                    and static_eval >= beta
                    and board.move_stack[-1]
                    and board.occupied_co[us] & ~(board.pawns | board.kings)
                ):
                    pos.push_null()
                    score = -self._negamax(
                        -beta,
                        -beta + 1,
                        depth - 1 - NULL_MOVE_BASE_REDUCTION - depth // 4,
                        ply + 1,
                        False,
                    )
                    pos.pop_null()
                    if score >= beta:
                        return beta if score >= MATE_BOUND else score

        # 9. Internal iterative reduction: without a TT move the ordering is poor and
        #    the node probably new; a shallower search is cheaper and fills the TT.
        #    [+3 +/- 24 Elo, 400 games at 3,000 nodes]
        if (
            INTERNAL_ITERATIVE_REDUCTION
            and self.selective
            and not tt_code
            and depth >= IIR_MIN_DEPTH
            and not excluded
        ):
            depth -= 1

        # 9b. Singular extension: when the TT holds a deep enough lower bound, search
        #     the other moves at half depth against a window below it. If they all
        #     stay below, the TT move is the only good one here and is searched a ply
        #     deeper; if even that lowered window fails high, two moves beat beta
        #     (multi-cut); if only the TT score is at or above beta, the TT move is
        #     searched a ply shallower. Not past twice the iteration's depth, where
        #     extensions would compound. [+35 Elo, 95 % +7 to +63, 389 games at
        #     10+0.1]
        tt_extension = 0
        if (
            SINGULAR_EXTENSIONS
            and tt_code
            and depth >= SINGULAR_MIN_DEPTH
            and self.selective
            and ply < 2 * self._root_depth
        ):
            assert entry is not None
            _, tt_depth, bound, tt_score = entry
            tt_score = score_from_tt(tt_score, ply)
            if (
                bound != BOUND_UPPER
                and tt_depth >= depth - SINGULAR_TT_DEPTH_SLACK
                and -MATE_BOUND < tt_score < MATE_BOUND
            ):
                singular_beta = tt_score - SINGULAR_MARGIN_CP * depth
                score = self._negamax(
                    singular_beta - 1, singular_beta, (depth - 1) // 2, ply, False, tt_code
                )
                if score < singular_beta:
                    tt_extension = 1
                elif singular_beta >= beta:
                    return singular_beta
                elif tt_score >= beta:
                    tt_extension = -1

        # Frontier pruning of quiet moves (steps 11-12) applies at this node?
        lmp_count = NO_LIMIT
        futility_value = INFINITE
        if selective and not pv_node and alpha > -MATE_BOUND:
            if LATE_MOVE_PRUNING and depth <= LATE_MOVE_MAX_DEPTH:
                lmp_count = LATE_MOVE_COUNT[depth]
            if FUTILITY and depth <= FUTILITY_MAX_DEPTH:
                futility_value = static_eval + FUTILITY_MARGIN_CP[depth]
        futile = futility_value <= alpha
        reduce = selective and LATE_MOVE_REDUCTIONS and depth >= LMR_MIN_DEPTH

        # 10. Moves in stages from the move picker, so that an early cutoff saves
        #     generating the rest: TT move, captures by MVV-LVA that do not lose
        #     material, killers, quiets by history, then losing captures. In check:
        #     the TT move, then every legal evasion. [Losing captures last, and
        #     skipped in quiescence: +183 +/- 61 Elo, SPRT H1 after 118 games]
        them_bb = board.occupied_co[not us]
        king_sq = board.king(us)
        # Only a piece on a line between its king and an enemy slider can be pinned.
        pin_lines = _KING_LINES[king_sq] if king_sq is not None else 0
        if not pin_lines & them_bb & (board.bishops | board.rooks | board.queens):
            pin_lines = 0
        ep_square = board.ep_square
        original_alpha = alpha
        best_score = -INFINITE
        best_code = 0
        searched = 0
        pruned = False
        killers = self._killers[ply]
        history = self.history
        hist_base = HISTORY_SIDE_SIZE if us else 0
        # The counter-move slot of the opponent's last move (0: a null move).
        counter_index = 0
        if COUNTER_MOVES:
            last = board.move_stack[-1]
            if last:
                counter_index = hist_base + last.from_square * 64 + last.to_square
        quiets_tried: list[int] = []
        # Where a quiet move would check from: computed at the first futile quiet.
        check_squares: Optional[CheckSquares] = None
        picker = MovePicker(
            board,
            tt_code,
            killers[0],
            killers[1],
            history,
            in_check,
            SEE_ORDERING and self.selective,
            lmp_count,
            self.counter_moves[counter_index] if counter_index else 0,
        )
        for stage, moves in picker:
            # Legal evasions need no test; the TT move in check always gets one.
            verify_all = in_check and stage == STAGE_TT
            verify_none = stage == STAGE_EVASIONS
            quiet_stage = stage == STAGE_QUIETS
            # Quiet moves whose history a cutoff lowers (the killers' stage holds only
            # quiets).
            track_quiets = HISTORY_MALUS and (quiet_stage or stage == STAGE_KILLERS)
            child_depth = depth - 1 + tt_extension if stage == STAGE_TT else depth - 1
            for move in moves:
                from_sq = move.from_square
                to_sq = move.to_square
                if excluded and move_code(move) == excluded:
                    continue
                if quiet_stage and searched >= lmp_count:
                    # 11. Late move pruning: at low depth, quiets this far down the
                    #     history order rarely matter. [+10 +/- 29 Elo, 400 games
                    #     at 2,000 nodes]
                    pruned = True
                    break
                if (
                    futile
                    and quiet_stage
                    and not move.promotion
                    and from_sq != king_sq
                    and not _BB_SQUARES[from_sq] & pin_lines
                ):
                    # 12. Futility (below), decided before the move is made when the
                    #     move is surely legal (no king move, no piece on a pin line):
                    #     only a check keeps it. Making moves just to ask that was a
                    #     third of all makes in the bench.
                    if check_squares is None:
                        check_squares = checking_squares(board)
                    if not gives_check(board, move, check_squares):
                        pruned = True
                        if futility_value > best_score:
                            best_score = futility_value
                        continue
                pos.push(move)
                if (
                    not verify_none
                    and (
                        verify_all
                        or from_sq == king_sq
                        or _BB_SQUARES[from_sq] & pin_lines
                        or to_sq == ep_square
                    )
                    and king_attacked(board, us)
                ):
                    pos.pop()
                    continue
                reduction = 0
                # Checks are neither pruned nor reduced.
                if (
                    quiet_stage
                    and (futile or (reduce and searched >= LMR_MIN_MOVES))
                    and not move.promotion
                    and not king_attacked(board, not us)
                ):
                    if futile:
                        # 12. Futility: a quiet move cannot lift this node to alpha
                        #     (here: king moves and pieces that may be pinned).
                        #     [+26 +/- 26 Elo, 400 games at 2,000 nodes]
                        pos.pop()
                        pruned = True
                        if futility_value > best_score:
                            best_score = futility_value
                        continue
                    # 13. Late move reductions: a quiet move late in the order is
                    #     searched shallower first (less at PV nodes and with good
                    #     history); a fail high is searched again at full depth.
                    #     [+26 +/- 28 Elo, 400 games at 2,000 nodes]
                    reduction = _REDUCTIONS[depth][min(searched, LMR_MAX_MOVE_INDEX)]
                    if pv_node:
                        reduction -= 1
                    move_history = history[hist_base + from_sq * 64 + to_sq]
                    if move_history >= LMR_GOOD_HISTORY:
                        reduction -= 1
                    elif move_history <= LMR_BAD_HISTORY:
                        reduction += 1
                    if reduction > depth - 2:
                        reduction = depth - 2
                searched += 1
                if track_quiets and not move.promotion:
                    quiets_tried.append(hist_base + from_sq * 64 + to_sq)
                # A child's PV is only valid when the child was searched as a PV node.
                full_window = pv_node
                if searched == 1:
                    score = -self._negamax(-beta, -alpha, child_depth, ply + 1, pv_node)
                else:
                    full_window = False
                    score = alpha + 1
                    if reduction > 0:
                        score = -self._negamax(
                            -alpha - 1, -alpha, child_depth - reduction, ply + 1, False
                        )
                    if score > alpha:
                        score = -self._negamax(-alpha - 1, -alpha, child_depth, ply + 1, False)
                    if pv_node and alpha < score < beta:
                        full_window = True
                        score = -self._negamax(-beta, -alpha, child_depth, ply + 1, True)
                pos.pop()
                if score > best_score:
                    best_score = score
                    if score > alpha:
                        best_code = from_sq | (to_sq << 6) | ((move.promotion or 0) << 12)
                        alpha = score
                        if pv_node:
                            pvt[ply] = [move, *pvt[ply + 1]] if full_window else [move]
                        if alpha >= beta:
                            # 14. Cutoff: remember quiet moves that refute (killers, history).
                            if not (
                                _BB_SQUARES[to_sq] & them_bb
                                or move.promotion
                                or (to_sq == ep_square and board.piece_type_at(from_sq) == _PAWN)
                            ):
                                if killers[0] != best_code:
                                    killers[1] = killers[0]
                                    killers[0] = best_code
                                if counter_index:
                                    self.counter_moves[counter_index] = best_code
                                # History with gravity: the refutation gains, the quiets
                                # tried before it lose as much (malus). With the counter
                                # move: [+58 +/- 33 Elo, 259 games at 10+0.1]
                                bonus = history_bonus(depth)
                                best_index = hist_base + from_sq * 64 + to_sq
                                update_history(history, best_index, bonus)
                                for index in quiets_tried:
                                    if index != best_index:
                                        update_history(history, index, -bonus)
                            if not excluded:
                                tt.store(
                                    key, depth, BOUND_LOWER, score_to_tt(best_score, ply), best_code
                                )
                            return best_score
            picker.searched = searched

        # 15. No move searched: checkmate or stalemate, unless moves were pruned.
        if not searched:
            if excluded:
                # Only the TT move is legal here: it is singular.
                return alpha
            if pruned:
                return best_score if best_score > -INFINITE else static_eval
            return -mating if in_check else 0

        if not excluded:
            bound = BOUND_EXACT if best_score > original_alpha else BOUND_UPPER
            tt.store(key, depth, bound, score_to_tt(best_score, ply), best_code)
        return best_score

    def _qsearch(
        self, alpha: int, beta: int, ply: int, in_check: bool, checks: bool = False
    ) -> int:
        """Captures and queen promotions until the position is quiet; evasions in check;
        with ``checks``, quiet checks too (the first ply only)."""
        pos = self._pos
        board = pos.board
        self.nodes += 1
        if not self.nodes & self._poll_mask:
            self._poll()
        if ply > self.seldepth:
            self.seldepth = ply
        if ply >= MAX_PLY - 1:
            return self.evaluator.evaluate(pos)

        # Any stored result has searched at least the captures this node would.
        # [+37 +/- 33 Elo, 327 games at 5+0.05]
        tt_entry = None
        if QSEARCH_TT:
            tt_entry = self.tt.probe(pos.key)
            if tt_entry:
                bound = tt_entry[2]
                tt_score = score_from_tt(tt_entry[3], ply)
                if (
                    bound == BOUND_EXACT
                    or (bound == BOUND_LOWER and tt_score >= beta)
                    or (bound == BOUND_UPPER and tt_score <= alpha)
                ):
                    return tt_score

        if in_check:
            # Evasions: every legal move, no stand-pat (standing still is not allowed).
            best_score = -INFINITE
        elif LAZY_EVAL and self.selective:
            # Stand pat: the side to move need not capture. Lazy evaluation: when the
            # material and piece-square score is this far outside the window, the
            # other terms will not bring it back, and the bound is returned without
            # them. (features.blend inlined: this runs at every quiescence node.)
            phase = pos.phase if pos.phase < MAX_PHASE else MAX_PHASE
            blended = pos.mg * phase + pos.eg * (MAX_PHASE - phase)
            rough = blended // MAX_PHASE if blended >= 0 else -(-blended // MAX_PHASE)
            if not board.turn:
                rough = -rough
            if rough - LAZY_MARGIN_CP >= beta:
                return rough - LAZY_MARGIN_CP
            if rough + LAZY_MARGIN_CP <= alpha:
                best_score = rough + LAZY_MARGIN_CP
            else:
                best_score = self.evaluator.evaluate(pos)
        else:
            best_score = self.evaluator.evaluate(pos)
        if best_score >= beta:
            return best_score
        if best_score > alpha:
            alpha = best_score

        moves = quiescence_moves(board, self.history, in_check)
        if checks and not in_check:
            # Quiet checks after the captures (those losing material are skipped below).
            moves.extend(quiet_checks(board))
        if not moves:
            return -(MATE - ply) if in_check else best_score  # no evasion: mated
        original_alpha = alpha
        best_code = 0
        us = board.turn
        king_sq = board.king(us)
        lines = _KING_LINES[king_sq] if king_sq is not None else -1
        ep_square = board.ep_square
        see_prune = SEE_QSEARCH and self.selective and not in_check
        piece_type_at = board.piece_type_at
        for move in moves:
            from_sq = move.from_square
            risky = 0
            if not in_check:
                # A capture that loses material by static exchange is not searched.
                if (
                    see_prune
                    and not move.promotion
                    and SEE_VALUES[piece_type_at(from_sq) or 1]
                    > SEE_VALUES[piece_type_at(move.to_square) or 1]
                    and not see_ge(board, move, 0)
                ):
                    continue
                # A capture onto the en passant square is en passant: two pawns
                # leave the rank. (Evasions are legal already.)
                risky = (
                    from_sq == king_sq
                    or _BB_SQUARES[from_sq] & lines
                    or move.to_square == ep_square
                )
            pos.push(move)
            if risky and king_attacked(board, us):
                pos.pop()
                continue
            score = -self._qsearch(-beta, -alpha, ply + 1, king_attacked(board, not us))
            pos.pop()
            if score > best_score:
                best_score = score
                if score > alpha:
                    alpha = score
                    best_code = move_code(move)
                    if alpha >= beta:
                        break
        if QSEARCH_TT and tt_entry is None and best_score > -INFINITE:
            # Never over a deeper result for the same position (store() would).
            if best_score >= beta:
                bound = BOUND_LOWER
            elif best_score > original_alpha:
                bound = BOUND_EXACT
            else:
                bound = BOUND_UPPER
            self.tt.store(pos.key, 0, bound, score_to_tt(best_score, ply), best_code)
        return best_score
