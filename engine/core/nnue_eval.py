"""The network as the search's evaluation: ``NetworkEvaluator``.

It reads the accumulator (both perspectives in one packed integer, from
engine.core.nnue's ``Incremental`` columns) that the search board keeps up to date in
its make and unmake (engine.core.board, after ``use_network(evaluator.incremental)``),
so a node costs only the output layer: the accumulator
becomes bytes, whose 16-bit lanes are clamped and summed with the output weights in
the side to move's order. Interpreted, one numpy ``take`` decodes and clamps all lanes
through a table and one dot product sums them; compiled (mypyc), a loop over the
bytes in native 64-bit integers does both in less than half the time of those numpy
calls (0.6 against 1.4 µs for a 32-wide network). A
network whose file says BASE_HAND is a correction: its output is added to the
hand-written evaluation's score (the inherited evaluation's, after this cache's miss).
With SCReLU each clamped lane is squared before its weight (``output_dot_squared``:
64-bit sums); with output buckets the pieces on the board pick the weights.

This module owns that output step and its cache; it must not read network files
(engine.core.nnue does) nor choose the evaluation (the ``Use NNUE`` option does).
"""

from __future__ import annotations

import types
from typing import TYPE_CHECKING, Final

import numpy as np

from engine.core.bitboards import WHITE
from engine.core.board import Board
from engine.core.evaluate import EVAL_CACHE_BITS, Evaluator
from engine.core.nnue import (
    BASE_HAND,
    LANE_BITS,
    LANE_OFFSET,
    SCRELU,
    Incremental,
    Network,
    bucket,
)
from engine.core.score import MATE_BOUND

if TYPE_CHECKING:
    # Only mypyc needs the type (native 64-bit integers); at run time the annotations
    # are strings, so the interpreted engine does not depend on mypy_extensions.
    from mypy_extensions import i64

MAX_NETWORK_SCORE: Final = MATE_BOUND // 2
"""The network's scores are clamped below the search's tablebase and mate scores."""


def output_dot(acc: int, size: int, weights: list[i64], qa: i64) -> i64:
    """The output layer's sum over the lanes of the packed accumulator ``acc`` (``size``
    bytes): each lane, less LANE_OFFSET, clamped to [0, qa], times its weight.

    The compiled build's path: a plain loop that mypyc turns into C."""
    data = acc.to_bytes(size, "little")
    dot: i64 = 0
    at: i64 = 0
    for weight in weights:
        value: i64 = (data[at] | (data[at + 1] << 8)) - LANE_OFFSET
        if value > 0:
            dot += (value if value < qa else qa) * weight
        at += 2
    return dot


def output_dot_squared(acc: int, size: int, weights: list[i64], qa: i64) -> i64:
    """``output_dot`` for SCReLU: each clamped lane squared before its weight (at most
    255**2 * 32767 a term: the sum needs 64 bits, which ``i64`` has)."""
    data = acc.to_bytes(size, "little")
    dot: i64 = 0
    at: i64 = 0
    for weight in weights:
        value: i64 = (data[at] | (data[at + 1] << 8)) - LANE_OFFSET
        if value > 0:
            if value > qa:
                value = qa
            dot += value * value * weight
        at += 2
    return dot


def _runs_compiled() -> bool:
    """Whether this module was compiled by mypyc (its functions are then native, not
    Python function objects)."""
    return not isinstance(output_dot, types.FunctionType)


COMPILED: Final = _runs_compiled()
"""The output layer's path: ``output_dot`` compiled, numpy interpreted (where the
loop would take twice numpy's time)."""


class NetworkEvaluator(Evaluator):
    """The network as the search's evaluation: ``evaluate(board)`` reads the board's
    accumulators (kept by its make and unmake), so a node costs the output layer only.

    A subclass of the hand-written ``Evaluator`` so that the search calls either
    through one native method (the compiled build dispatches it without a lookup);
    only the cache of scores by key is shared.
    """

    def __init__(self, net: Network, cache_bits: int = EVAL_CACHE_BITS) -> None:
        super().__init__(cache_bits)
        self.net = net
        self.incremental = Incremental(net)
        hidden = net.hidden
        self._bytes = 4 * hidden
        # Lane value + 2**15 -> the activation, for every 16-bit pattern: one numpy
        # ``take`` decodes and clamps (and for SCReLU squares) all 2N lanes.
        self._squared = net.activation == SCRELU
        clipped = np.clip(np.arange(1 << LANE_BITS, dtype=np.int64) - LANE_OFFSET, 0, net.qa)
        self._activation = clipped * clipped if self._squared else clipped
        # The accumulator's low half is White's view: each bucket's output weights in
        # the order [side to move, other side] for either side to move.
        white = net.out_weights.astype(np.int64)
        black = np.concatenate((white[:, hidden:], white[:, :hidden]), axis=1)
        # Interpreted, each bucket's row as an array in a list (a list index at each
        # evaluation, not numpy's, which makes a view each time); compiled, as lists.
        self._rows_white = list(white)
        self._rows_black = list(black)
        self._lists_white: list[list[i64]] = white.tolist()
        self._lists_black: list[list[i64]] = black.tolist()
        self._buckets = net.buckets
        self._qa: i64 = net.qa
        self._biases: list[int] = net.out_bias.tolist()
        self._scale = net.scale
        self._divisor = net.qa * net.qb
        self._add_hand = net.base == BASE_HAND

    def evaluate(self, board: Board) -> int:
        """The network's score of the native search board (with this network's
        accumulator: ``board.use_network(self.incremental)``) in cp, side to move's
        view, cached by its key; with BASE_HAND, plus the hand-written score."""
        key = board.key
        slot = key & self._mask
        if self._keys[slot] == key:
            return self._values[slot]
        score = self._output(board)
        if self._add_hand:
            # The hand-written evaluation stores its score in the slot this one
            # overwrites below: the cache keeps the sum.
            score += self._evaluate_uncached(board)
        return self._store(slot, key, score)

    def output(self, board: Board) -> int:
        """The network's own output for the board's accumulator (cp, side to move's
        view): without the hand-written score, unclamped, not cached (UCI ``eval``)."""
        return self._output(board)

    def _output(self, board: Board) -> int:
        """The network's output (cp, side to move's view) for the board's accumulator."""
        acc = board.acc
        white_to_move = board.turn == WHITE
        b = 0
        if self._buckets > 1:
            b = bucket(board.piece_count(), self._buckets)
        if COMPILED:
            weight_list = self._lists_white[b] if white_to_move else self._lists_black[b]
            if self._squared:
                dot = output_dot_squared(acc, self._bytes, weight_list, self._qa) // self._qa
            else:
                dot = output_dot(acc, self._bytes, weight_list, self._qa)
        else:
            weights = self._rows_white[b] if white_to_move else self._rows_black[b]
            lanes = np.frombuffer(acc.to_bytes(self._bytes, "little"), dtype=np.uint16)
            dot = int(np.dot(self._activation.take(lanes), weights))
            if self._squared:
                dot //= self._qa
        return (dot + self._biases[b]) * self._scale // self._divisor

    def _store(self, slot: int, key: int, score: int) -> int:
        """Clamp ``score`` below the mate scores and cache it."""
        if score > MAX_NETWORK_SCORE:
            score = MAX_NETWORK_SCORE
        elif score < -MAX_NETWORK_SCORE:
            score = -MAX_NETWORK_SCORE
        self._keys[slot] = key
        self._values[slot] = score
        return score
