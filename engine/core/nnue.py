"""The learned evaluation's network: its file format, and its evaluation in integers.

A 768 -> N -> 1 network with two perspectives (issue 68, docs/training.md):

* inputs: one per (colour, piece type, square) as seen from a perspective: White's
  sees the board as it is, Black's sees it mirrored vertically with the colours
  swapped, so feature ``own_or_enemy * 384 + piece_type_index * 64 + square``;
* accumulators: per perspective ``bias + sum of the active features' columns``, the
  same weights for both;
* activation: each accumulator value clipped to [0, QA] (clipped ReLU, CReLU), or
  that squared (SCReLU);
* output: the activations of [side to move's accumulator, the other's], a dot product
  with one output bucket's weights plus its bias, scaled to centipawns from the side
  to move's view. The bucket follows the material: with B buckets and ``n`` pieces on
  the board, bucket ``min((n - 2) // ceil(32 / B), B - 1)`` (one bucket: always 0).
  A position and its colour-flipped mirror therefore score the same, exactly.

Everything is an integer (quantised when the network is written by
scripts.training.train), so an evaluation is exact and reproducible:

* CReLU: ``cp = (sum clip(a) * w + bias) * scale // (QA * QB)``;
* SCReLU: ``cp = (sum clip(a)**2 * w // QA + bias) * scale // (QA * QB)``: with QA
  255, int16 weights and 2N = 512 terms the sum reaches 2**40, so it is taken in 64
  bits (Python's integers interpreted, ``i64`` compiled), never in 32.

The file, version 2 (the magic's last byte is the version):

============  =====================================================================
bytes         content (little-endian)
============  =====================================================================
8             magic ``b"CUTNNUE2"``
9 x 4         uint32 inputs (768), hidden N, QA, QB, scale; int32 base (0 or 1);
              uint32 activation (0 CReLU, 1 SCReLU), buckets B; uint32 0 (reserved)
768 x N x 2   int16 feature weights, feature-major (feature f's column is N values)
N x 2         int16 accumulator bias
B x 2N x 2    int16 output weights, bucket by bucket (the first N of a bucket read
              the side to move's accumulator)
B x 4         int32 output biases
============  =====================================================================

with the accumulator in units of 1/QA, the output weights in units of 1/QB. Version
1 (``b"CUTNNUE1"``, the first 6 fields, one bucket, CReLU, one int32 bias) is still
read; a loader of version 1 compares all 8 bytes of the magic, so it refuses a version
2 file instead of misreading it, and this one names the version of a newer file. With
base 1 (BASE_HAND) the cp is a correction added to the hand-written evaluation's
(engine.core.evaluate): the network learnt only that evaluation's error.

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

MAGIC: Final = b"CUTNNUE2"
MAGIC_V1: Final = b"CUTNNUE1"
_MAGIC_STEM: Final = b"CUTNNUE"
INPUTS: Final = 768
_HEADER_V1: Final = struct.Struct("<5Ii")
_HEADER: Final = struct.Struct("<5Ii3I")
CRELU: Final = 0
"""The header's activation field: clipped ReLU, ``clip(a, 0, QA)``."""
SCRELU: Final = 1
"""The header's activation field: squared clipped ReLU, ``clip(a, 0, QA) ** 2``."""
ACTIVATIONS: Final = {"crelu": CRELU, "screlu": SCRELU}
MAX_BUCKETS: Final = 32
BASE_NONE: Final = 0
"""The header's last field: the network's output is the score."""
BASE_HAND: Final = 1
"""The header's last field: the output is added to the hand-written evaluation's score."""
MAX_HIDDEN: Final = 4096
MAX_FILE_BYTES: Final = (
    8
    + _HEADER.size
    + 2 * (INPUTS * MAX_HIDDEN + MAX_HIDDEN + MAX_BUCKETS * 2 * MAX_HIDDEN)
    + 4 * MAX_BUCKETS
)


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


def bucket(pieces: int, buckets: int) -> int:
    """The output bucket of a position with ``pieces`` pieces (kings included)."""
    index = (pieces - 2) // ((32 + buckets - 1) // buckets)
    # Clamped both ways: a test position may have more than 32 pieces or fewer than 2.
    return min(max(index, 0), buckets - 1)


@dataclass(frozen=True)
class Network:
    """A quantised network (see the module docstring for the meaning of each part)."""

    hidden: int
    qa: int
    qb: int
    scale: int
    ft_weights: npt.NDArray[np.int16]  # (768, hidden)
    ft_bias: npt.NDArray[np.int16]  # (hidden,)
    out_weights: npt.NDArray[np.int16]  # (buckets, 2 * hidden)
    out_bias: npt.NDArray[np.int32]  # (buckets,)
    base: int = BASE_NONE
    """BASE_NONE: the output is the score; BASE_HAND: it is added to the hand-written
    evaluation's (the network learnt that evaluation's error)."""
    activation: int = CRELU

    @property
    def buckets(self) -> int:
        return int(self.out_weights.shape[0])

    def describe(self) -> str:
        """One line for people: shape, activation, buckets and what the output is."""
        activation = "SCReLU" if self.activation == SCRELU else "CReLU"
        buckets = f"{self.buckets} output bucket{'s' if self.buckets > 1 else ''}"
        role = (
            "a correction to the hand-written evaluation"
            if self.base == BASE_HAND
            else "the whole evaluation"
        )
        return f"{INPUTS} -> {self.hidden} -> 1, {activation}, {buckets}, {role}"

    def write(self, path: Union[str, Path]) -> None:
        """The file, version 2 (every network is written in the newest version)."""
        with open(path, "wb") as handle:
            handle.write(MAGIC)
            fields = (INPUTS, self.hidden, self.qa, self.qb, self.scale, self.base)
            handle.write(_HEADER.pack(*fields, self.activation, self.buckets, 0))
            handle.write(self.ft_weights.astype("<i2").tobytes())
            handle.write(self.ft_bias.astype("<i2").tobytes())
            handle.write(self.out_weights.astype("<i2").tobytes())
            handle.write(self.out_bias.astype("<i4").tobytes())

    # ------------------------------------------------------- evaluation from scratch

    def accumulator(self, board: chess.Board, perspective: chess.Color) -> list[int]:
        """The accumulator of ``perspective`` (bias plus the active columns)."""
        total = self.ft_bias.astype(np.int64)
        active = features(board, perspective)
        if active:
            total = total + self.ft_weights[active].astype(np.int64).sum(axis=0)
        return [int(value) for value in total]

    def output(self, us: list[int], them: list[int], pieces: int = 32) -> int:
        """Centipawns from the side to move's view, given the two accumulators and
        the number of pieces on the board (which picks the output bucket)."""
        qa = self.qa
        b = bucket(pieces, self.buckets)
        weights = self.out_weights[b].tolist()
        hidden = self.hidden
        square = self.activation == SCRELU
        dot = 0
        for i in range(hidden):
            for value, weight in ((us[i], weights[i]), (them[i], weights[hidden + i])):
                if value > 0:
                    clipped = value if value < qa else qa
                    dot += (clipped * clipped if square else clipped) * weight
        if square:
            dot //= qa
        return (dot + int(self.out_bias[b])) * self.scale // (qa * self.qb)

    def evaluate(self, board: chess.Board) -> int:
        """The network's score of ``board`` in cp from the side to move's view."""
        white = self.accumulator(board, chess.WHITE)
        black = self.accumulator(board, chess.BLACK)
        pieces = chess.popcount(board.occupied)
        if board.turn == chess.WHITE:
            return self.output(white, black, pieces)
        return self.output(black, white, pieces)


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
    stem = len(_MAGIC_STEM)
    if data[:stem] != _MAGIC_STEM or len(data) < len(MAGIC):
        raise NetworkError(f"{path}: not a Cutoff network file (bad magic)")
    version = data[stem : len(MAGIC)]
    if version not in (MAGIC[stem:], MAGIC_V1[stem:]):
        raise NetworkError(
            f"{path}: network format version {version.decode('ascii', 'replace')}: "
            "this Cutoff reads versions 1 and 2"
        )
    offset = len(MAGIC)
    header = _HEADER if version == MAGIC[stem:] else _HEADER_V1
    if len(data) < offset + header.size:
        raise NetworkError(f"{path}: truncated header")
    fields = header.unpack_from(data, offset)
    inputs, hidden, qa, qb, scale, base = fields[:6]
    activation, buckets = fields[6:8] if header is _HEADER else (CRELU, 1)
    offset += header.size
    if inputs != INPUTS or not 1 <= hidden <= MAX_HIDDEN or qa <= 0 or qb <= 0 or scale <= 0:
        raise NetworkError(f"{path}: bad header ({inputs} inputs, {hidden} hidden)")
    if base not in (BASE_NONE, BASE_HAND):
        raise NetworkError(f"{path}: unknown base evaluation {base}")
    if activation not in ACTIVATIONS.values():
        raise NetworkError(f"{path}: unknown activation {activation}")
    if not 1 <= buckets <= MAX_BUCKETS:
        raise NetworkError(f"{path}: {buckets} output buckets (1 to {MAX_BUCKETS})")
    expected = offset + 2 * (INPUTS * hidden + hidden + buckets * 2 * hidden) + 4 * buckets
    if len(data) != expected:
        raise NetworkError(f"{path}: {len(data)} bytes, expected {expected}")

    def take(count: int) -> npt.NDArray[np.int16]:
        nonlocal offset
        array = np.frombuffer(data, dtype="<i2", count=count, offset=offset).astype(np.int16)
        offset += 2 * count
        return array

    ft_weights = take(INPUTS * hidden).reshape(INPUTS, hidden)
    ft_bias = take(hidden)
    out_weights = take(buckets * 2 * hidden).reshape(buckets, 2 * hidden)
    out_bias = np.frombuffer(data, dtype="<i4", count=buckets, offset=offset).astype(np.int32)
    return Network(
        hidden, qa, qb, scale, ft_weights, ft_bias, out_weights, out_bias, base, activation
    )
