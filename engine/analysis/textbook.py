"""The textbook searches, instrumented: minimax, alpha-beta and PVS as they are taught.

These searches exist to be measured against each other and against Cutoff's real
search (``engine.analysis.stats`` does the measuring); they play no games. All of them
search a fixed depth with no quiescence and no transposition table, score leaves
with Cutoff's static evaluation and score a position without legal moves as mate
or stalemate, so that they return the same root value whenever they are correct:

* ``minimax``: negamax over every legal move, no pruning;
* ``alphabeta``: fail-hard (a node returns a score clamped to its window) or
  fail-soft (it returns the best score it saw, which may lie outside the window);
* ``pvs``: principal variation search, fail-soft, the first move with the full
  window and the others with a zero window, searched again when they fail high.

Move order is ``random`` (a seeded shuffle, reproducible) or ``cutoff``: Cutoff's
own interior-node order (captures by MVV-LVA, killers, history), with killers and
history learnt by this search as it goes (there is no TT move without a TT).

Each search counts its nodes, leaves and interior nodes with their branching, the
node types by Knuth and Moore's classification as the search expects them (PV,
Cut, All) and as their results turn out (exact, fail high, fail low), cut nodes
and those cut by the first move, and PVS re-searches. The counters live in the
searcher object, not in Cutoff's search, which never pays for them. This module
must not print.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import chess

from engine.core.board import Board
from engine.core.evaluate import Evaluator
from engine.core.movegen import legal_moves
from engine.core.movepick import (
    CODE_MASK,
    HISTORY_MAX,
    age_history,
    generation_order,
    history_base,
    new_history,
    order_moves,
)
from engine.core.score import INFINITE, MATE

PV, CUT, ALL = "PV", "Cut", "All"
ORDERS = ("random", "cutoff")


@dataclass
class Counts:
    """What one search visited."""

    nodes: int = 0
    leaves: int = 0
    interior: int = 0
    children: int = 0
    """Legal moves summed over interior nodes (for the mean branching factor)."""
    expected: dict[str, int] = field(default_factory=lambda: {PV: 0, CUT: 0, ALL: 0})
    """Interior nodes by the type the search expects of them."""
    outcome: dict[str, int] = field(default_factory=lambda: {PV: 0, CUT: 0, ALL: 0})
    """Interior nodes by what their result turned out to be (exact, high, low)."""
    first_move_cuts: int = 0
    researches: int = 0

    @property
    def branching(self) -> float:
        return self.children / self.interior if self.interior else 0.0


def _child_type(node_type: str, index: int) -> str:
    """Knuth and Moore: the first child of a PV node is PV, the others Cut; a Cut
    node's children are All nodes; an All node's children are Cut nodes."""
    if node_type == PV:
        return PV if index == 0 else CUT
    return ALL if node_type == CUT else CUT


class TextbookSearch:
    """One configured textbook search over one position (see the module docstring)."""

    def __init__(self, order: str = "cutoff", seed: int = 0) -> None:
        if order not in ORDERS:
            raise ValueError(f"order is one of {ORDERS}, not {order!r}")
        self.order = order
        self._random = random.Random(seed)
        self._evaluator = Evaluator()
        self._history = new_history()
        self._killers: list[list[int]] = [[0, 0] for _ in range(64)]
        self.counts = Counts()
        self._board = Board.from_chess(chess.Board())

    # ---------------------------------------------------------------- helpers

    def _moves(self, ply: int) -> list[int]:
        board = self._board
        moves = legal_moves(board)
        if self.order == "random":
            # Shuffled from python-chess's order, so that a seed gives the same order
            # however the board generates.
            moves = generation_order(board, moves)
            self._random.shuffle(moves)
            return moves
        killers = self._killers[ply]
        return order_moves(board, moves, -1, killers[0], killers[1], self._history)

    def _learn(self, move: int, ply: int, depth: int) -> None:
        """A quiet move that cut: the next sibling node tries it early (killer, history)."""
        board = self._board
        if board.is_capture(move) or (move >> 12) & 7:
            return
        killers = self._killers[ply]
        code = move & CODE_MASK
        if killers[0] != code:
            killers[1], killers[0] = killers[0], code
        index = history_base(board) + (move & 4095)
        self._history[index] += depth * depth
        if self._history[index] >= HISTORY_MAX:
            age_history(self._history)

    def _leaf(self) -> int:
        self.counts.leaves += 1
        return self._evaluator.evaluate(self._board)

    def _terminal(self, ply: int) -> int:
        """Score of a node without legal moves: mated (shorter is worse) or stalemate."""
        return -(MATE - ply) if self._board.is_check() else 0

    def _enter(self, node_type: str, moves: list[int]) -> None:
        self.counts.interior += 1
        self.counts.children += len(moves)
        self.counts.expected[node_type] += 1

    def _leave(self, score: int, alpha: int, beta: int, cut_at: int) -> None:
        if score >= beta:
            self.counts.outcome[CUT] += 1
            self.counts.first_move_cuts += cut_at == 0
        elif score <= alpha:
            self.counts.outcome[ALL] += 1
        else:
            self.counts.outcome[PV] += 1

    def _start(self, board: chess.Board) -> None:
        self._board = Board.from_chess(board)
        self.counts = Counts()

    # --------------------------------------------------------------- searches

    def minimax(self, board: chess.Board, depth: int) -> int:
        """Negamax over every move to ``depth``; the side to move's score."""
        self._start(board)
        return self._minimax(depth, 0)

    def _minimax(self, depth: int, ply: int) -> int:
        self.counts.nodes += 1
        if depth == 0:
            return self._leaf()
        moves = self._moves(ply)
        if not moves:
            return self._terminal(ply)
        self.counts.interior += 1
        self.counts.children += len(moves)
        best = -INFINITE
        for move in moves:
            self._board.make(move)
            score = -self._minimax(depth - 1, ply + 1)
            self._board.unmake()
            best = max(best, score)
        return best

    def alphabeta(self, board: chess.Board, depth: int, soft: bool) -> int:
        """Alpha-beta to ``depth`` with a full window, fail-soft or fail-hard."""
        self._start(board)
        return self._search(-INFINITE, INFINITE, depth, 0, PV, soft, False)

    def pvs(self, board: chess.Board, depth: int) -> int:
        """Principal variation search to ``depth`` (fail-soft), full window at the root."""
        self._start(board)
        return self._search(-INFINITE, INFINITE, depth, 0, PV, True, True)

    def _search(
        self, alpha: int, beta: int, depth: int, ply: int, node_type: str, soft: bool, pvs: bool
    ) -> int:
        """Alpha-beta (``pvs``: with zero windows after the first move) below one node."""
        self.counts.nodes += 1
        if depth == 0:
            return self._clamp(self._leaf(), alpha, beta, soft)
        moves = self._moves(ply)
        if not moves:
            return self._clamp(self._terminal(ply), alpha, beta, soft)
        self._enter(node_type, moves)
        original_alpha = alpha
        best = -INFINITE
        for index, move in enumerate(moves):
            child_type = _child_type(node_type, index)
            self._board.make(move)
            if pvs and index:
                score = -self._search(-alpha - 1, -alpha, depth - 1, ply + 1, child_type, soft, pvs)
                if alpha < score < beta:
                    # It beat the first move: search it again with the whole window.
                    self.counts.researches += 1
                    score = -self._search(-beta, -alpha, depth - 1, ply + 1, PV, soft, pvs)
            else:
                score = -self._search(-beta, -alpha, depth - 1, ply + 1, child_type, soft, pvs)
            self._board.unmake()
            if score > best:
                best = score
            if score > alpha:
                alpha = score
            if alpha >= beta:
                self._learn(move, ply, depth)
                self._leave(best, original_alpha, beta, index)
                return best if soft else beta
        self._leave(best, original_alpha, beta, -1)
        return best if soft else alpha

    @staticmethod
    def _clamp(score: int, alpha: int, beta: int, soft: bool) -> int:
        """Fail-hard returns only scores inside the window (its bounds otherwise)."""
        if soft:
            return score
        return alpha if score <= alpha else beta if score >= beta else score
