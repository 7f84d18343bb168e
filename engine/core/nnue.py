"""The learned evaluation's network: its file format, and its evaluation in integers.

A 768 -> N -> 1 network with two perspectives (issue 68, docs/training.md):

* inputs: one per (colour, piece type, square) as seen from a perspective: White's
  sees the board as it is, Black's sees it mirrored vertically with the colours
  swapped, so feature ``own_or_enemy * 384 + piece_type_index * 64 + square``;
* accumulators: per perspective ``bias + sum of the active features' columns``, the
  same weights for both;
* output: clipped ReLU of [side to move's accumulator, the other's], a dot product
  with the output weights plus a bias, scaled to centipawns from the side to move's
  view. A position and its colour-flipped mirror therefore score the same, exactly.

Everything is an integer (quantised when the network is written by
scripts.training.train), so an evaluation is exact and reproducible. The file:

============  =====================================================================
bytes         content (little-endian)
============  =====================================================================
8             magic ``b"CUTNNUE1"``
6 x 4         uint32 inputs (768), hidden N, QA, QB, scale; int32 base (0 or 1)
768 x N x 2   int16 feature weights, feature-major (feature f's column is N values)
N x 2         int16 accumulator bias
2N x 2        int16 output weights (the first N read the side to move's accumulator)
4             int32 output bias
============  =====================================================================

with the accumulator in units of 1/QA (clipped to [0, QA]), the output weights in
units of 1/QB, and ``cp = (dot + bias) * scale // (QA * QB)``. With base 1 (BASE_HAND)
that cp is a correction added to the hand-written evaluation's (engine.core.evaluate):
the network learnt only that evaluation's error.

This module owns the format, loading and writing it, and evaluating a position with
it: from scratch (``Network.evaluate``), and the columns from which the search board
(engine.core.board) keeps the search's accumulators in its make and unmake
(``Incremental``; engine.core.nnue_eval reads them). It must not search, and it does
not decide which evaluation plays (the ``Use NNUE`` option does).
"""

from __future__ import annotations

import importlib.resources
import os
import stat
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Union

import chess
import numpy as np
import numpy.typing as npt

MAGIC: Final = b"CUTNNUE1"
INPUTS: Final = 768
_HEADER: Final = struct.Struct("<5Ii")
BASE_NONE: Final = 0
"""The header's last field: the network's output is the score."""
BASE_HAND: Final = 1
"""The header's last field: the output is added to the hand-written evaluation's score."""
MAX_HIDDEN: Final = 4096
MAX_FILE_BYTES: Final = 8 + 24 + 2 * (INPUTS * MAX_HIDDEN + 3 * MAX_HIDDEN) + 4


class NetworkError(ValueError):
    """A network file that cannot be read; the message names the file."""


def feature(perspective: chess.Color, colour: chess.Color, piece_type: int, square: int) -> int:
    """The input index of a piece as ``perspective`` sees it."""
    own = 0 if colour == perspective else 1
    if perspective == chess.BLACK:
        square ^= 56
    return own * 384 + (piece_type - 1) * 64 + square


def features(board: chess.Board, perspective: chess.Color) -> list[int]:
    """The active inputs of ``board`` as ``perspective`` sees it."""
    return [
        feature(perspective, piece.color, piece.piece_type, square)
        for square, piece in board.piece_map().items()
    ]


MIRROR: Final = [
    feature(chess.BLACK, c, t, s) for c in (True, False) for t in range(1, 7) for s in range(64)
]
"""White's feature index -> Black's for the same piece (a White-perspective index is
``(0 if white else 1) * 384 + type * 64 + square``)."""


@dataclass(frozen=True)
class Network:
    """A quantised network (see the module docstring for the meaning of each part)."""

    hidden: int
    qa: int
    qb: int
    scale: int
    ft_weights: npt.NDArray[np.int16]  # (768, hidden)
    ft_bias: npt.NDArray[np.int16]  # (hidden,)
    out_weights: npt.NDArray[np.int16]  # (2 * hidden,)
    out_bias: int
    base: int = BASE_NONE
    """BASE_NONE: the output is the score; BASE_HAND: it is added to the hand-written
    evaluation's (the network learnt that evaluation's error)."""

    def write(self, path: Union[str, Path]) -> None:
        with open(path, "wb") as handle:
            handle.write(MAGIC)
            handle.write(_HEADER.pack(INPUTS, self.hidden, self.qa, self.qb, self.scale, self.base))
            handle.write(self.ft_weights.astype("<i2").tobytes())
            handle.write(self.ft_bias.astype("<i2").tobytes())
            handle.write(self.out_weights.astype("<i2").tobytes())
            handle.write(struct.pack("<i", self.out_bias))

    # ------------------------------------------------------- evaluation from scratch

    def accumulator(self, board: chess.Board, perspective: chess.Color) -> list[int]:
        """The accumulator of ``perspective`` (bias plus the active columns)."""
        total = self.ft_bias.astype(np.int64)
        active = features(board, perspective)
        if active:
            total = total + self.ft_weights[active].astype(np.int64).sum(axis=0)
        return [int(value) for value in total]

    def output(self, us: list[int], them: list[int]) -> int:
        """Centipawns from the side to move's view, given the two accumulators."""
        qa = self.qa
        weights = self.out_weights.tolist()
        hidden = self.hidden
        dot = self.out_bias
        for i in range(hidden):
            a = us[i]
            b = them[i]
            if a > 0:
                dot += (a if a < qa else qa) * weights[i]
            if b > 0:
                dot += (b if b < qa else qa) * weights[hidden + i]
        return dot * self.scale // (qa * self.qb)

    def evaluate(self, board: chess.Board) -> int:
        """The network's score of ``board`` in cp from the side to move's view."""
        white = self.accumulator(board, chess.WHITE)
        black = self.accumulator(board, chess.BLACK)
        if board.turn == chess.WHITE:
            return self.output(white, black)
        return self.output(black, white)


# ----------------------------------------------------------------- incremental form

LANE_BITS: Final = 16
LANE_OFFSET: Final = 1 << (LANE_BITS - 1)
"""Each lane of a packed accumulator holds value + LANE_OFFSET in [0, 2**16): the
feature weights are clipped in training so that |value| < 2**15."""


def check_lanes(net: Network) -> None:
    """NetworkError unless every accumulator fits its 16-bit lane.

    A lane holds its value + 2**15: the widest accumulator (bias and 32 pieces) must
    stay below 2**15 in magnitude, which training's weight clipping ensures."""
    bound = int(np.abs(net.ft_bias.astype(np.int64)).max()) + 32 * int(
        np.abs(net.ft_weights.astype(np.int64)).max()
    )
    if bound >= LANE_OFFSET:
        raise NetworkError(f"weights too large for 16-bit lanes (up to {bound})")


def pack(values: list[int]) -> int:
    """Signed lane values as one integer, ``sum(v_i << 16 i)`` (no offset)."""
    return sum(value << (LANE_BITS * i) for i, value in enumerate(values))


# ------------------------------------------------------------------- in the search


class Incremental:
    """The network's feature columns as the search board adds them.

    The two perspectives' accumulators live in one integer: White's view in the low
    ``hidden`` lanes, Black's in the high ones (16-bit lanes, see ``pack``), so a
    move's update is one big-integer addition per column, not two. ``columns[i]`` is
    the piece with the board's psqt index ``i = (2 * (type - 1) + colour) * 64 + square``
    (MG_TABLE's order, colour 1 for White), as White sees it in the low lanes and as
    Black sees it in the high ones: a move's update is the same index arithmetic as
    the piece-square sums'. Every lane of a whole accumulator stays in [0, 2**16), so
    the halves never borrow from each other.
    """

    __slots__ = ("bias", "columns")

    def __init__(self, net: Network) -> None:
        check_lanes(net)
        packed = [pack(column) for column in net.ft_weights.tolist()]
        shift = LANE_BITS * net.hidden  # where Black's half begins
        self.columns = [0] * INPUTS
        for colour in (chess.WHITE, chess.BLACK):
            for piece_type in range(1, 7):
                for square in range(64):
                    index = (2 * (piece_type - 1) + int(colour)) * 64 + square
                    white = packed[feature(chess.WHITE, colour, piece_type, square)]
                    black = packed[feature(chess.BLACK, colour, piece_type, square)]
                    self.columns[index] = white + (black << shift)
        half = pack(net.ft_bias.tolist()) + pack([LANE_OFFSET] * net.hidden)
        self.bias = half + (half << shift)

    def accumulator(self, board: chess.Board) -> int:
        """Both perspectives' accumulator of ``board``, from scratch."""
        acc = self.bias
        for square, piece in board.piece_map().items():
            acc += self.columns[(2 * (piece.piece_type - 1) + int(piece.color)) * 64 + square]
        return acc


SHIPPED_NETWORK: Final = Path(str(importlib.resources.files("engine.core"))) / "cutoff.nnue"
"""The network the package ships (the ``EvalFile`` option's default), found through the
package (a frozen or zipped install has no ``__file__`` folder to read it from)."""


def network_file(name: str) -> Path:
    """Where ``EvalFile``'s value points: the shipped network for an empty value, the
    path itself when it exists, else a bare file name in the shipped network's folder
    (as Stockfish looks beside its binary); else the path as given, which ``load``
    then reports."""
    name = name.strip()
    if not name or name == "<default>":
        return SHIPPED_NETWORK
    path = Path(name).expanduser()
    if path.exists():
        return path
    if path.name == name and SHIPPED_NETWORK.with_name(name).exists():
        return SHIPPED_NETWORK.with_name(name)
    return path


def load(path: Union[str, Path]) -> Network:
    """Read a network file; NetworkError with the file's name when it is not one."""
    try:
        info = os.stat(path)
        # Never open a FIFO or a device (it could block), nor read a huge file.
        if not stat.S_ISREG(info.st_mode):
            raise NetworkError(f"{path}: not a regular file")
        if info.st_size > MAX_FILE_BYTES:
            raise NetworkError(f"{path}: {info.st_size} bytes, too large for a network")
        data = Path(path).read_bytes()
    except OSError as exc:
        raise NetworkError(f"{path}: cannot read: {exc.strerror or exc}") from None
    if data[: len(MAGIC)] != MAGIC:
        raise NetworkError(f"{path}: not a Cutoff network file (bad magic)")
    offset = len(MAGIC)
    if len(data) < offset + _HEADER.size:
        raise NetworkError(f"{path}: truncated header")
    inputs, hidden, qa, qb, scale, base = _HEADER.unpack_from(data, offset)
    offset += _HEADER.size
    if inputs != INPUTS or not 1 <= hidden <= MAX_HIDDEN or qa <= 0 or qb <= 0 or scale <= 0:
        raise NetworkError(f"{path}: bad header ({inputs} inputs, {hidden} hidden)")
    if base not in (BASE_NONE, BASE_HAND):
        raise NetworkError(f"{path}: unknown base evaluation {base}")
    expected = offset + 2 * (INPUTS * hidden + hidden + 2 * hidden) + 4
    if len(data) != expected:
        raise NetworkError(f"{path}: {len(data)} bytes, expected {expected}")

    def take(count: int) -> npt.NDArray[np.int16]:
        nonlocal offset
        array = np.frombuffer(data, dtype="<i2", count=count, offset=offset).astype(np.int16)
        offset += 2 * count
        return array

    ft_weights = take(INPUTS * hidden).reshape(INPUTS, hidden)
    ft_bias = take(hidden)
    out_weights = take(2 * hidden)
    (out_bias,) = struct.unpack_from("<i", data, offset)
    return Network(hidden, qa, qb, scale, ft_weights, ft_bias, out_weights, int(out_bias), base)
