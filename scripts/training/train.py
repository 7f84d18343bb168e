"""Train the learned evaluation's network from labelled positions and write its file.

    python -m scripts.training.train DATA.gz [DATA2.gz ...] --out engine/nnue.bin
        [--hidden N] [--epochs E] [--batch-size B] [--lr LR] [--k K] [--lam L]
        [--val-fraction F] [--seed S] [--threads T] [--max-positions M] [--plot PNG]
        [--base hand [--correction-scale C]] [--activation screlu] [--buckets B]
    python -m scripts.training.train --store DIR [DIR ...] --valid DIR --out NET [...]
    python -m scripts.training.train ... --resume NET.ckpt     (the same arguments)
    python -m scripts.training.train --bench [--hidden 256] [--threads 2] [--store DIR]
        [--activation screlu] [--buckets B]

The network is engine.core.nnue's 768 -> N -> 1 with two perspectives (the same feature
weights for White's and Black's view, the board mirrored for Black, the output
reading [side to move, other side]), a clipped ReLU in [0, 1] or its square
(``--activation screlu``), and ``--buckets`` output layers, one picked by the number
of pieces on the board, trained on the CPU by
scripts.training.kernel (numba: the optional ``train`` extra). The target of a
position, from the side to move's view, is ``lam * sigmoid(score / K) + (1 - lam) *
result`` (``result`` 1, 0.5 or 0; positions whose result is unknown use the score
alone), the loss the mean squared error of ``sigmoid(output)`` against it, so the
network's output times K is centipawns.

The positions are text data (scripts.training.dataset: whole games, datagen's work
units, held out for validation) or, for tens of millions, stores of 32-byte records
(scripts.training.store: ``--store``, with the validation store ``--valid``),
memory-mapped and gathered batch by batch from a permutation of all the records,
drawn anew every epoch. Fixed seed: the same data and arguments give the same
network, with any ``--threads``.

It prints the train and validation loss after every epoch (and plots them with
``--plot``), writes a checkpoint after every epoch (``--resume`` continues it to the
same network as an uninterrupted run), writes the quantised network (feature weights
and bias times QA = 255, output weights times QB = 64, int16, see engine.core.nnue),
then reports on the validation positions the quantised network's loss and the
hand-written evaluation's (engine.core.evaluate) on the same labels, with K as given
and with the K that suits it best, since its centipawns need not be Stockfish's, and
the run's peak memory. The file is engine.core.nnue's version 2 (its header names the
activation and the buckets).

With ``--base hand`` (text data only) the network learns a correction added to the
hand-written evaluation; ``--correction-scale C`` writes it at C times its fitted size
(the file's cp per unit is K times C). The fitted correction is the one that predicts
the labels best, not the one the search plays best with: n16 played even with the
hand-written evaluation at 5,000 nodes a move, and +121 Elo ahead at half its size
(docs/training.md).

This tool writes only ``--out``, its checkpoint and ``--plot``. It must not make data
(datagen and scripts.training.store do); the arithmetic is scripts.training.kernel's.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional

import numpy as np
import numpy.typing as npt

from engine.core.nnue import (
    ACTIVATIONS,
    BASE_HAND,
    BASE_NONE,
    CRELU,
    INPUTS,
    MAX_BUCKETS,
    MAX_HIDDEN,
    MIRROR,
    SCRELU,
    Network,
    bucket,
)

from ..common import ToolParser, UsageError
from . import records, store
from .dataset import DataError, Sample, read_records, read_samples
from .fit import K
from .records import RecordError

if TYPE_CHECKING:
    from . import kernel

PROG = "train"
QA = 255
QB = 64
PAD = INPUTS
"""Index of the all-zero feature row that pads a position's list to MAX_PIECES."""
MAX_PIECES = 32
WEIGHT_CLIP = 1.98
"""Feature weights and bias stay within this, so an accumulator (bias plus at most 32
columns) stays within 16 bits after quantisation by QA."""
HAND_EVAL_MAX = 20_000
"""Validation positions the (slow) hand-written evaluation is measured on, at most."""
_PIECES = {c: (0 if c.isupper() else 1, "pnbrqk".index(c.lower())) for c in "PNBRQKpnbrqk"}
_RESULT = {"1-0": 1.0, "1/2-1/2": 0.5, "0-1": 0.0}


def fen_features(fen: str) -> tuple[list[int], bool]:
    """White's-perspective feature indices of a FEN, and whether White is to move."""
    board, turn = fen.split(" ", 2)[:2]
    square = 56
    active = []
    for char in board:
        if char == "/":
            square -= 16
        elif char.isdigit():
            square += int(char)
        else:
            colour, kind = _PIECES[char]
            active.append(colour * 384 + kind * 64 + square)
            square += 1
    return active, turn == "w"


class Data:
    """Positions as arrays: padded White-perspective features, side to move, labels."""

    def __init__(self, paths: list[Path], limit: Optional[int]) -> None:
        rows: list[list[int]] = []
        turns: list[bool] = []
        scores: list[int] = []
        results: list[float] = []
        units: list[int] = []
        unit = 0
        for path in paths:
            if not path.exists():
                raise UsageError(f"cannot read {str(path)!r}: no such file")
            for _, record in read_records(path):
                if limit is not None and len(rows) >= limit:
                    break
                if not isinstance(record, Sample):  # a #done line: the unit ends
                    unit += 1
                    continue
                sample = record
                try:
                    active, white = fen_features(sample.fen)
                except (KeyError, ValueError, IndexError):
                    raise DataError(f"{path}: bad FEN {sample.fen[:70]!r}") from None
                if len(active) > MAX_PIECES:
                    raise DataError(f"{path}: more than {MAX_PIECES} pieces: {sample.fen!r}")
                rows.append(active + [PAD] * (MAX_PIECES - len(active)))
                turns.append(white)
                scores.append(sample.score)
                results.append(_RESULT.get(sample.result, math.nan))
                units.append(unit)
            unit += 1
        if not rows:
            raise UsageError("no positions in the data")
        self.white = np.array(rows, dtype=np.int16)
        table = np.array([*MIRROR, PAD], dtype=np.int16)
        self.black = table[self.white]
        self.white_to_move = np.array(turns, dtype=bool)
        self.score = np.array(scores, dtype=np.float32)  # White's view
        self.result = np.array(results, dtype=np.float32)  # White's view, nan = unknown
        self.unit = np.array(units, dtype=np.int64)
        """The work unit (a game, a chunk of a FEN file) of each position: datagen
        writes ``#done UNIT`` after each unit's positions."""

    def split(self, fraction: float, seed: int) -> tuple[Any, Any]:
        """(validation, training) indexes: whole work units held out, so that no game
        has positions on both sides (neighbouring positions of a game are nearly the
        same); by position when the data has a single unit."""
        rng = np.random.default_rng(seed)
        units = np.unique(self.unit)
        if len(units) < 2:
            order = rng.permutation(len(self))
            n_val = max(1, int(len(self) * fraction))
            return order[:n_val], order[n_val:]
        held = rng.permutation(units)[: max(1, int(len(units) * fraction))]
        mask = np.isin(self.unit, held)
        val = np.flatnonzero(mask)
        trn = rng.permutation(np.flatnonzero(~mask))
        return val, trn

    def __len__(self) -> int:
        return len(self.white)

    def target(self, k: float, lam: float) -> npt.NDArray[np.float32]:
        """The side to move's target probability of every position."""
        sign = np.where(self.white_to_move, 1.0, -1.0).astype(np.float32)
        from_score = 1.0 / (1.0 + np.exp(-sign * self.score / k))
        result = np.where(self.white_to_move, self.result, 1.0 - self.result)
        blended = np.where(np.isnan(result), from_score, lam * from_score + (1 - lam) * result)
        out: npt.NDArray[np.float32] = blended.astype(np.float32)
        return out


def quantise(weights: Any, k: float, base: int = BASE_NONE, activation: int = CRELU) -> Network:
    """The float network ``weights`` (kernel.Weights) as the integer file's network."""
    # The output biases are not clipped in training (nothing else bounds them): one
    # that would not fit the file's int32 (or a nan) is an error, not a wrapped number.
    out_bias = np.round(weights.out_b.astype(np.float64) * QA * QB)
    if not np.all(np.abs(out_bias) <= np.iinfo(np.int32).max):
        raise UsageError(
            f"an output bias of {np.abs(weights.out_b).max():g} logistic units does not "
            "fit the file's int32 once quantised"
        )
    return Network(
        hidden=len(weights.bias),
        qa=QA,
        qb=QB,
        scale=round(k),
        ft_weights=np.round(weights.ft * QA).astype(np.int16),
        ft_bias=np.round(weights.bias * QA).astype(np.int16),
        out_weights=np.round(weights.out_w * QB).astype(np.int16).reshape(weights.buckets, -1),
        out_bias=out_bias.astype(np.int32),
        base=base,
        activation=activation,
    )


def quantised_cp(net: Network, data: Data, index: npt.NDArray[np.int64]) -> Any:
    """The integer network's cp (side to move's view) of the positions ``index``, as
    engine.core.nnue computes them, vectorised (the reference of small sets: it holds
    32 columns of every position at once)."""
    table = np.vstack([net.ft_weights, np.zeros((1, net.hidden), np.int16)]).astype(np.int64)
    white = table[data.white[index]].sum(axis=1) + net.ft_bias
    black = table[data.black[index]].sum(axis=1) + net.ft_bias
    stm = data.white_to_move[index][:, None]
    us = np.clip(np.where(stm, white, black), 0, net.qa)
    them = np.clip(np.where(stm, black, white), 0, net.qa)
    if net.activation == SCRELU:
        us, them = us * us, them * them
    # engine.core.nnue.bucket of each position's piece count, through a table of it.
    pieces = (data.white[index] != PAD).sum(axis=1)
    which = np.array([bucket(n, net.buckets) for n in range(INPUTS + 1)])[pieces]
    weights = net.out_weights.astype(np.int64)[which]
    dot = (us * weights[:, : net.hidden]).sum(axis=1) + (them * weights[:, net.hidden :]).sum(
        axis=1
    )
    if net.activation == SCRELU:
        dot //= net.qa
    dot += net.out_bias.astype(np.int64)[which]
    return dot * net.scale // (net.qa * net.qb)


def mse(cp: Any, target: Any, k: float) -> float:
    return float(np.mean((1.0 / (1.0 + np.exp(-np.asarray(cp, np.float64) / k)) - target) ** 2))


def best_k_mse(cp: Any, target: Any) -> tuple[float, float]:
    """(K, loss) with the K in 50..1000 that gives ``cp`` the lowest loss."""
    best = min((mse(cp, target, k), k) for k in range(50, 1001, 10))
    return best[1], best[0]


def hand_eval_cp(
    index: npt.NDArray[np.int64], fens: list[str], progress: bool = False
) -> list[int]:
    """engine.core.evaluate's cp (side to move's view) of the positions ``index``."""
    import chess

    from engine.core.board import Board
    from engine.core.evaluate import Evaluator

    evaluator = Evaluator()
    began = time.monotonic()
    scores = []
    for count, i in enumerate(index, 1):
        scores.append(evaluator.evaluate(Board.from_chess(chess.Board(fens[i]))))
        if progress and count % 100_000 == 0:
            print(
                f"hand-written evaluation: {count}/{len(index)} positions "
                f"({time.monotonic() - began:.0f} s)",
                flush=True,
            )
    return scores


def hand_eval_records(chunk: Any) -> list[int]:
    """engine.core.evaluate's cp (side to move's view) of store records."""
    from engine.core.board import Board
    from engine.core.evaluate import Evaluator

    evaluator = Evaluator()
    return [evaluator.evaluate(Board.from_chess(records.decode(r)[0])) for r in chunk]


# ---------------------------------------------------------------- batches


def _target(
    score_stm: npt.NDArray[np.float64],
    result_white: npt.NDArray[np.float64],
    white_to_move: npt.NDArray[np.bool_],
    k: float,
    lam: float,
) -> npt.NDArray[np.float32]:
    """``lam * sigmoid(score / K) + (1 - lam) * result`` from the side to move's view
    (the score alone where the result is unknown: nan)."""
    from_score = 1.0 / (1.0 + np.exp(-score_stm / k))
    result = np.where(white_to_move, result_white, 1.0 - result_white)
    blended = np.where(np.isnan(result), from_score, lam * from_score + (1 - lam) * result)
    out: npt.NDArray[np.float32] = blended.astype(np.float32)
    return out


class TextSource:
    """The text data's positions (``Data``) as the kernels' batches."""

    def __init__(self, data: Data, target: Any, base: Any) -> None:
        self.data = data
        self.target = target
        self.base = base

    def __len__(self) -> int:
        return len(self.data)

    def batch(self, index: Any) -> kernel.Batch:
        from . import kernel

        white = self.data.white[index]
        active = white != PAD
        offsets = np.zeros(len(index) + 1, dtype=np.int64)
        np.cumsum(active.sum(axis=1), out=offsets[1:])
        return kernel.Batch(
            offsets,
            white[active],
            self.data.black[index][active],
            self.data.white_to_move[index],
            self.target[index],
            self.base[index],
        )


class StoreSource:
    """The records of stores (scripts.training.store), memory-mapped chunk by chunk,
    gathered into batches by their global index (0 .. len - 1, the chunks in order):
    nothing but the batch is ever copied into memory."""

    def __init__(
        self, folders: list[Path], k: float, lam: float, limit: Optional[int] = None
    ) -> None:
        self.k = k
        self.lam = lam
        self.chunks: list[Any] = []
        self.side: list[int] = []
        for folder in folders:
            if not folder.is_dir():
                raise UsageError(f"{folder}: no such store folder")
            opened = store.open_chunks(store.Store.at(folder))
            if not opened:
                raise UsageError(f"{folder}: no chunks (a store has chunk-*.json manifests)")
            for header, chunk in opened:
                self.chunks.append(chunk)
                self.side.append(header.score_side)
        self.ends = np.cumsum([len(chunk) for chunk in self.chunks], dtype=np.int64)
        self.count = int(self.ends[-1]) if len(self.ends) else 0
        if limit is not None:
            self.count = min(self.count, limit)

    def __len__(self) -> int:
        return self.count

    def records(self, index: Any) -> Any:
        """The records ``index`` (global indices), in that order."""
        index = np.asarray(index, dtype=np.int64)
        out = np.empty(len(index), dtype=records.RECORD)
        which = np.searchsorted(self.ends, index, side="right")
        for number in np.unique(which):
            inside = which == number
            start = int(self.ends[number - 1]) if number else 0
            out[inside] = self.chunks[number][index[inside] - start]
        return out

    def scores_from_side_to_move(self, index: Any, chunk: Any) -> npt.NDArray[np.float64]:
        """The records' scores from the side to move's view, whatever side their
        chunk's header says they are from."""
        which = np.searchsorted(self.ends, np.asarray(index, dtype=np.int64), side="right")
        from_white = np.asarray(self.side, dtype=np.int64)[which] == records.SCORE_WHITE
        black = (np.asarray(chunk["flags"]) & records.BLACK_TO_MOVE).astype(bool)
        score = np.asarray(chunk["score"], dtype=np.float64)
        return np.where(from_white & black, -score, score)

    def batch(self, index: Any) -> kernel.Batch:
        from . import kernel

        chunk = self.records(index)
        features = records.features(chunk)
        offsets = np.empty(len(chunk) + 1, dtype=np.int64)
        offsets[:-1] = features.offsets
        offsets[-1] = len(features.white)
        white_to_move = ~features.black_to_move
        result = np.asarray(chunk["result"], dtype=np.float64)
        result_white = np.where(result == records.RESULT_UNKNOWN, np.nan, (result + 1) / 2)
        score = self.scores_from_side_to_move(index, chunk)
        return kernel.Batch(
            offsets,
            features.white,
            features.black,
            white_to_move,
            _target(score, result_white, white_to_move, self.k, self.lam),
            np.zeros(len(chunk), dtype=np.float32),
        )


def synthetic_records(count: int, seed: int) -> Any:
    """``count`` records of seeded random games (at most 120 plies each), for the
    benchmark: real positions' piece counts, made in seconds."""
    import random

    import chess

    rng = random.Random(seed)
    encoded: list[bytes] = []
    while len(encoded) < count:
        board = chess.Board()
        for _ in range(rng.randrange(1, 120)):
            moves = list(board.legal_moves)
            if not moves:
                break
            board.push(rng.choice(moves))
            encoded.append(records.encode(board, rng.randrange(-600, 601), rng.choice((-1, 0, 1))))
    return records.from_bytes(b"".join(encoded[:count]))


class MemorySource(StoreSource):
    """Records in memory as a source (the benchmark's)."""

    def __init__(self, chunk: Any, k: float, lam: float) -> None:
        self.k = k
        self.lam = lam
        self.chunks = [chunk]
        self.side = [records.SCORE_WHITE]
        self.ends = np.array([len(chunk)], dtype=np.int64)
        self.count = len(chunk)


# ---------------------------------------------------------------- command line


def parse_args(argv: Optional[list[str]]) -> Any:
    parser = ToolParser(prog=PROG, description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path, nargs="*", help="datagen output files (text)")
    parser.add_argument(
        "--store", type=Path, nargs="+", help="train on these stores' records instead"
    )
    parser.add_argument(
        "--valid", type=Path, help="with --store: the validation store (store split's --valid)"
    )
    parser.add_argument("--out", type=Path, help="network file to write")
    parser.add_argument("--hidden", type=int, default=128, help="hidden width N")
    parser.add_argument(
        "--activation",
        choices=tuple(ACTIVATIONS),
        default="crelu",
        help="the accumulators' activation: clipped ReLU, or its square (screlu)",
    )
    parser.add_argument(
        "--buckets",
        type=int,
        default=1,
        help=f"output buckets, picked by the pieces on the board (1 to {MAX_BUCKETS})",
    )
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=4096)
    parser.add_argument("--lr", type=float, default=2e-3, help="Adam's learning rate")
    parser.add_argument(
        "--weight-decay", type=float, default=0.0, help="AdamW's decoupled weight decay"
    )
    parser.add_argument("--k", type=float, default=K, help="cp per logistic unit")
    parser.add_argument("--lam", type=float, default=0.75, help="weight of the score")
    parser.add_argument(
        "--val-fraction", type=float, default=0.05, help="share of the games held out (text)"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--threads",
        type=int,
        default=2,
        help="numba threads (at most the CPUs; the network is the same with any number)",
    )
    parser.add_argument("--max-positions", type=int, help="read at most this many")
    parser.add_argument("--max-steps", type=int, help="stop after this many batches")
    parser.add_argument("--plot", type=Path, help="plot the losses to this image")
    parser.add_argument(
        "--checkpoint",
        type=Path,
        help="the checkpoint written after every epoch (default: --out's name + .ckpt)",
    )
    parser.add_argument("--resume", type=Path, help="continue the run of this checkpoint")
    parser.add_argument(
        "--stop-after",
        type=int,
        metavar="EPOCH",
        help="stop after this epoch's checkpoint, writing no network (--resume goes on)",
    )
    parser.add_argument(
        "--bench",
        action="store_true",
        help="measure training steps a second (synthetic records, or --store's) and exit",
    )
    parser.add_argument(
        "--bench-seconds", type=float, default=20.0, help="--bench: how long to measure"
    )
    parser.add_argument(
        "--base",
        choices=("none", "hand"),
        default="none",
        help="'hand': the network learns a correction added to the hand-written "
        "evaluation (scored for every position before training; the file says so)",
    )
    parser.add_argument(
        "--scale",
        default="k",
        help="cp per output unit in the file: 'k' (--k: the labels' centipawns), 'hand' "
        "(the K that fits the hand-written evaluation best on the validation positions: "
        "the network's cp then in its units) or a number",
    )
    parser.add_argument(
        "--correction-scale",
        type=float,
        default=1.0,
        help="with --base hand: the file's correction is this fraction of the fitted one "
        "(its cp per unit K times it; n16 played 121 Elo a node better at 0.5 than at 1)",
    )
    args = parser.parse_args(argv)
    if not 0 < args.val_fraction < 1:
        parser.error("--val-fraction must be between 0 and 1")
    if not 0 <= args.lam <= 1:
        parser.error("--lam must be between 0 and 1")
    parser.require_positive(args, "hidden", "epochs", "batch_size", "threads")
    parser.require_non_negative(args, "weight_decay")
    if args.k <= 0 or args.lr <= 0:
        parser.error("--k and --lr must be positive")
    if args.hidden > MAX_HIDDEN:
        parser.error(f"--hidden must be at most {MAX_HIDDEN}")
    if not 1 <= args.buckets <= MAX_BUCKETS:
        parser.error(f"--buckets must be 1 to {MAX_BUCKETS}")
    if args.bench:
        if args.data or args.resume:
            parser.error("--bench takes no data files nor --resume (--store to use records)")
        return args
    if args.out is None:
        parser.error("the following arguments are required: --out")
    if bool(args.data) == bool(args.store):
        parser.error("give either data files or --store DIR... (with --valid DIR)")
    if args.store and args.valid is None:
        parser.error("--store needs --valid DIR (the validation store: store split's --valid)")
    if args.valid is not None and not args.store:
        parser.error("--valid goes with --store (text data holds out --val-fraction)")
    if args.store and args.base == "hand":
        parser.error(
            "--base hand reads text data: with --store every record would first be scored "
            "by the hand-written evaluation (hours for tens of millions); train a network alone"
        )
    if args.base == "hand" and args.scale != "k":
        parser.error("--base hand keeps the labels' centipawns: --scale must be 'k'")
    if args.correction_scale <= 0:
        parser.error("--correction-scale must be positive")
    if args.base != "hand" and args.correction_scale != 1:
        parser.error("--correction-scale needs --base hand")
    if args.stop_after is not None and not 1 <= args.stop_after < args.epochs:
        parser.error("--stop-after must be an epoch before the last")
    if args.scale not in ("k", "hand"):
        try:
            if float(args.scale) <= 0:
                raise ValueError
        except ValueError:
            parser.error("--scale must be 'k', 'hand' or a positive number")
    return args


def _shape(args: Any) -> str:
    """The network's shape as the output names it: "hidden 256, screlu, 8 output buckets"."""
    plural = "s" if args.buckets != 1 else ""
    return f"hidden {args.hidden}, {args.activation}, {args.buckets} output bucket{plural}"


def _fens(paths: list[Path], limit: Optional[int]) -> list[str]:
    fens = [sample.fen for path in paths for sample in read_samples(path)]
    return fens[:limit] if limit is not None else fens


def _needs_numba() -> None:
    if importlib.util.find_spec("numba") is None:
        from engine.extras import install_hint

        raise UsageError(f"training needs numba: {install_hint('train')}")


def _set_threads(threads: int) -> int:
    """numba's threads: ``threads``, at most the CPUs numba found."""
    import numba

    config: Any = numba.config  # NUMBA_NUM_THREADS: the CPUs it may use
    used = min(threads, int(config.NUMBA_NUM_THREADS))
    numba.set_num_threads(used)
    return used


def peak_memory_mb() -> float:
    """This process's peak resident memory (max RSS) in MB; nan where unknown."""
    try:
        import resource
    except ImportError:  # Windows
        return math.nan
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # kB on Linux, bytes on macOS.
    return float(peak) / (1 << 20 if sys.platform == "darwin" else 1 << 10)


def _progress(total: int, epoch: int) -> Any:
    """A progress bar with positions a second on a terminal (stderr), else nothing."""
    from tqdm import tqdm

    return tqdm(
        total=total,
        desc=f"epoch {epoch}",
        unit="pos",
        unit_scale=True,
        leave=False,
        disable=not sys.stderr.isatty(),
    )


# ---------------------------------------------------------------- checkpoints

SETTINGS = (
    "data", "store", "valid", "hidden", "epochs", "batch_size", "lr", "weight_decay", "k",
    "lam", "val_fraction", "seed", "max_positions", "max_steps", "base", "activation",
    "buckets",
)  # fmt: skip
"""The arguments a checkpoint's run must share with the run that resumes it."""
SETTINGS_BEFORE = {"activation": "crelu", "buckets": 1}
"""The settings a checkpoint written before they existed was made with (so a run of
that trainer still resumes)."""
CHECKPOINT_FORMAT = "cutoff-train-checkpoint-1"


def _settings(args: Any) -> dict[str, Any]:
    def plain(value: Any) -> Any:
        if isinstance(value, list):
            return [str(item) for item in value]
        return str(value) if isinstance(value, Path) else value

    return {name: plain(getattr(args, name)) for name in SETTINGS}


class State:
    """Everything a run is between two epochs: the weights, Adam's state, the best
    epoch's weights, the losses so far and the permutations' generator."""

    def __init__(self, weights: Any, optimiser: Any, rng: np.random.Generator) -> None:
        self.weights = weights
        self.optimiser = optimiser
        self.rng = rng
        self.epoch = 0
        self.steps = 0
        self.history: list[tuple[int, float, float]] = []
        self.best = weights.copy()
        self.best_loss = math.inf
        self.best_epoch = 0

    def save(self, path: Path, settings: dict[str, Any]) -> None:
        """The checkpoint, written under a temporary name and renamed (a run stopped
        while writing it leaves the previous one)."""
        meta = {
            "format": CHECKPOINT_FORMAT,
            "settings": settings,
            "epoch": self.epoch,
            "steps": self.steps,
            "adam_steps": self.optimiser.step_count,
            "history": self.history,
            "best_loss": self.best_loss,
            "best_epoch": self.best_epoch,
            "rng": self.rng.bit_generator.state,
        }
        arrays: dict[str, Any] = {"meta": np.array(json.dumps(meta))}
        for prefix, weights in (
            ("w", self.weights),
            ("best", self.best),
            ("m", self.optimiser.m),
            ("v", self.optimiser.v),
        ):
            for name, array in zip(WEIGHT_NAMES, weights.arrays()):
                arrays[f"{prefix}_{name}"] = array
        tmp = path.with_name(f".{path.name}.tmp")
        with tmp.open("wb") as handle:
            np.savez(handle, **arrays)
        os.replace(tmp, path)

    def load(self, path: Path, settings: dict[str, Any]) -> None:
        try:
            with np.load(path, allow_pickle=False) as saved:
                meta = json.loads(str(saved["meta"]))
                if meta.get("format") != CHECKPOINT_FORMAT:
                    raise ValueError("not a checkpoint of this trainer")
                for name, value in settings.items():
                    made = meta["settings"].get(name, SETTINGS_BEFORE.get(name))
                    if made != value:
                        raise UsageError(
                            f"{path}: made with --{name.replace('_', '-')} "
                            f"{made}, this run has {value}"
                        )
                for prefix, weights in (
                    ("w", self.weights),
                    ("best", self.best),
                    ("m", self.optimiser.m),
                    ("v", self.optimiser.v),
                ):
                    for name, array in zip(WEIGHT_NAMES, weights.arrays()):
                        array[...] = saved[f"{prefix}_{name}"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise UsageError(f"{path}: cannot resume from it: {exc}") from None
        self.epoch = int(meta["epoch"])
        self.steps = int(meta["steps"])
        self.optimiser.step_count = int(meta["adam_steps"])
        self.history = [(int(e), float(t), float(v)) for e, t, v in meta["history"]]
        self.best_loss = float(meta["best_loss"])
        self.best_epoch = int(meta["best_epoch"])
        self.rng.bit_generator.state = meta["rng"]


def _checkpoint_epoch(path: Path) -> int:
    """The epoch a checkpoint file holds; 0 if there is none to read."""
    try:
        with np.load(path, allow_pickle=False) as saved:
            return int(json.loads(str(saved["meta"]))["epoch"])
    except (OSError, ValueError, KeyError, TypeError):
        return 0


WEIGHT_NAMES = ("ft", "bias", "out_w", "out_b")
OUT_CLIP = 32767 / QB
"""Output weights times QB must fit int16 (feature weights and bias stay within
WEIGHT_CLIP: 16-bit accumulators)."""


# ---------------------------------------------------------------- training


def _blocks(index: Any, size: int) -> Any:
    for start in range(0, len(index), size):
        yield index[start : start + size]


def _prefetched(source: Any, order: Any, size: int) -> Iterator[Any]:
    """The batches of ``order``'s blocks of ``size``, each made (gathered, decoded) in
    another thread while the caller trains on the one before: the kernels release
    the GIL, so a batch's numpy work overlaps the last one's training. The batches
    are the same as made one after the other."""
    from concurrent.futures import ThreadPoolExecutor

    def make(index: Any) -> Any:
        # Sorted, the gather reads each chunk's pages in order; which positions make
        # the batch is what the permutation chose.
        return source.batch(np.sort(index))

    blocks = list(_blocks(order, size))
    if not blocks:
        return
    with ThreadPoolExecutor(max_workers=1) as pool:
        pending = pool.submit(make, blocks[0])
        for following in [*blocks[1:], None]:
            batch = pending.result()
            if following is not None:
                pending = pool.submit(make, following)
            yield batch


def _validation_loss(weights: Any, source: Any, index: Any, activation: int) -> float:
    from . import kernel

    total = 0.0
    for block in _blocks(index, VALIDATION_BLOCK):
        total += kernel.batch_loss(weights, source.batch(block), activation) * len(block)
    return total / len(index)


def _quantised_cp(net: Network, source: Any, index: Any) -> Any:
    """The integer network's cp (side to move's view) of ``source``'s positions
    ``index``, with engine.core.nnue's arithmetic (kernel.quantised_forward)."""
    from . import kernel

    out = np.empty(len(index), dtype=np.int64)
    ft = net.ft_weights.astype(np.int64)
    for start in range(0, len(index), VALIDATION_BLOCK):
        batch = source.batch(index[start : start + VALIDATION_BLOCK])
        kernel.quantised_forward(
            ft, net.ft_bias.astype(np.int64), net.out_weights.astype(np.int64),
            net.out_bias.astype(np.int64), net.activation, net.qa, net.qb, net.scale,
            batch.offsets, batch.white, batch.black, batch.white_to_move,
            out[start : start + len(batch)],
        )  # fmt: skip
    return out


VALIDATION_BLOCK = 65536
BENCH_RECORDS = 65536
"""Synthetic records the benchmark cycles through (fewer with --max-positions)."""


def train(args: Any) -> int:
    if args.data:
        for path in args.data:
            if not path.is_file():
                raise UsageError(f"cannot read {str(path)!r}: no such file")
    if args.plot is not None:
        # Checked before the training, not found out after it.
        if importlib.util.find_spec("matplotlib") is None:
            from engine.extras import install_hint

            raise UsageError(f"--plot needs matplotlib: {install_hint('plot')}")
        from engine.analysis.plots import plot_problem

        problem = plot_problem(args.plot)
        if problem is not None:
            raise UsageError(f"--plot {problem}")
    _needs_numba()
    from . import kernel

    checkpoint = args.checkpoint or args.out.with_name(args.out.name + ".ckpt")
    if args.resume is not None and not args.resume.is_file():
        raise UsageError(f"cannot resume from {str(args.resume)!r}: no such file")
    began = time.monotonic()
    threads = _set_threads(args.threads)
    correction = args.base == "hand"
    # The positions: text data (held out by whole games) or stores (the validation
    # store given), and the indices each epoch permutes.
    data: Optional[Data] = None
    base_cp: Optional[npt.NDArray[np.int64]] = None
    if args.store:
        source: Any = StoreSource(args.store, args.k, args.lam, args.max_positions)
        valid_source: Any = StoreSource([args.valid], args.k, args.lam)
        if len(source) == 0 or len(valid_source) == 0:
            raise UsageError("no records in the training or the validation store")
        # int32 indices halve the permutation's memory (30 M records: 120 MB).
        dtype = np.int32 if len(source) < 2**31 else np.int64
        trn: Any = np.arange(len(source), dtype=dtype)
        val: Any = np.arange(len(valid_source), dtype=np.int64)
        target_val = None
    else:
        data = Data(args.data, args.max_positions)
        target = data.target(args.k, args.lam)
        val, trn = data.split(args.val_fraction, args.seed)
        if len(trn) < 1:
            raise UsageError(f"{len(data)} positions: too few to hold out a validation set")
        target_val = target[val]
        # The base every output is added to, in cp from the side to move's view: none, or
        # the hand-written evaluation (the network then learns only its error).
        base_cp = np.zeros(len(data), dtype=np.int64)
        if correction:
            fens = _fens(args.data, args.max_positions)
            base_cp[:] = hand_eval_cp(np.arange(len(data)), fens, progress=True)
        source = valid_source = TextSource(data, target, (base_cp / args.k).astype(np.float32))
    print(
        f"positions {len(trn) + len(val)} (train {len(trn)}, validation {len(val)}) "
        f"read in {time.monotonic() - began:.1f} s, {threads} threads",
        flush=True,
    )
    rng = np.random.default_rng(args.seed)
    activation = ACTIVATIONS[args.activation]
    weights = kernel.Weights.initial(args.hidden, rng, correction, args.buckets)
    optimiser = kernel.Optimiser(weights, weights.clips(WEIGHT_CLIP, OUT_CLIP), activation)
    state = State(weights, optimiser, rng)
    settings = _settings(args)
    if args.resume is not None:
        state.load(args.resume, settings)
        print(f"resumed after epoch {state.epoch} from {args.resume}", flush=True)
    else:
        # Early stopping: the epoch with the lowest validation loss is the one written.
        state.best_loss = _validation_loss(weights, valid_source, val, activation)
        print(f"before training: validation {state.best_loss:.6f}", flush=True)
    done = args.max_steps is not None and state.steps >= args.max_steps
    written = args.resume is not None  # whether the checkpoint is this run's
    try:
        while state.epoch < args.epochs and not done:
            epoch = state.epoch + 1
            # torch's CosineAnnealingLR over the epochs.
            lr = args.lr * (1 + math.cos(math.pi * (epoch - 1) / args.epochs)) / 2
            order = state.rng.permutation(trn)
            total, count = 0.0, 0
            epoch_began = time.monotonic()
            with _progress(len(order), epoch) as bar:
                for batch in _prefetched(source, order, args.batch_size):
                    loss = optimiser.step(batch, lr, args.weight_decay)
                    total += loss * len(batch)
                    count += len(batch)
                    state.steps += 1
                    bar.update(len(batch))
                    if args.max_steps is not None and state.steps >= args.max_steps:
                        done = True
                        break
            rate = count / max(time.monotonic() - epoch_began, 1e-9)
            state.epoch = epoch
            state.history.append(
                (epoch, total / count, _validation_loss(weights, valid_source, val, activation))
            )
            print(
                f"epoch {epoch} train {state.history[-1][1]:.6f} "
                f"validation {state.history[-1][2]:.6f} "
                f"({time.monotonic() - began:.0f} s, {rate:,.0f} positions/s)",
                flush=True,
            )
            if state.history[-1][2] < state.best_loss:
                state.best_loss, state.best_epoch = state.history[-1][2], epoch
                state.best = weights.copy()
            written = True
            state.save(checkpoint, settings)
            if args.stop_after is not None and epoch >= args.stop_after and epoch < args.epochs:
                print(
                    f"stopped after epoch {epoch}: continue with --resume {checkpoint} "
                    f"(peak memory {peak_memory_mb():.0f} MB)",
                    flush=True,
                )
                return 0
    except KeyboardInterrupt:
        # The checkpoint of the last finished epoch stays as it was (it is written
        # under another name and renamed): say how to go on from it. Its epoch is read
        # from the file, since Ctrl-C may come between the rename and any bookkeeping.
        saved = _checkpoint_epoch(checkpoint) if written else 0
        if saved:
            raise KeyboardInterrupt(
                f"interrupted: continue after epoch {saved} with --resume {checkpoint}"
            ) from None
        raise
    print(f"kept epoch {state.best_epoch} (validation {state.best_loss:.6f})", flush=True)
    if state.best_epoch == 0:
        # Still written (the run is reproducible), but what training learnt did not
        # hold on other games: say so where the run is read.
        start = (
            "the hand-written evaluation plus a near-zero correction" if correction else "random"
        )
        print(
            f"{PROG}: warning: no epoch did better on the held-out games than before "
            f"training: the file is the untrained network ({start})",
            file=sys.stderr,
            flush=True,
        )
    hand_index = val[:HAND_EVAL_MAX]
    if target_val is None:
        target_val = np.concatenate(
            [valid_source.batch(block).target for block in _blocks(val, VALIDATION_BLOCK)]
        )
    if base_cp is not None and correction:
        hand_cp = base_cp[hand_index].tolist()
    elif data is not None:
        hand_cp = hand_eval_cp(hand_index, _fens(args.data, args.max_positions))
    else:
        hand_cp = hand_eval_records(valid_source.records(hand_index))
    hand_target = target_val[: len(hand_index)]
    hand_k, hand_best = best_k_mse(hand_cp, hand_target)
    scale = {"k": args.k, "hand": hand_k}.get(args.scale) or float(args.scale)
    if correction:
        # A damped correction: its loss is worse, its play was better (docs/training.md).
        scale = args.k * args.correction_scale
    net = quantise(state.best, scale, BASE_HAND if correction else BASE_NONE, activation)
    net.write(args.out)
    size = args.out.stat().st_size
    net_cp = _quantised_cp(net, valid_source, val)
    if base_cp is not None and correction:
        net_cp = net_cp + base_cp[val]
    added = ", added to the hand-written evaluation" if correction else ""
    if correction and args.correction_scale != 1:
        added += f" at {args.correction_scale:g} of its fitted size"
    print(f"wrote {args.out} ({size} bytes, {_shape(args)}, {net.scale} cp per unit{added})")
    # The loss of sigmoid(output / K): a correction's cp are the labels' (K is --k),
    # a network alone's in the units its file gives them.
    loss_k = args.k if correction else net.scale
    print(f"validation loss, quantised network: {mse(net_cp, target_val, loss_k):.6f}")
    on_same = mse(net_cp[: len(hand_index)], hand_target, loss_k)
    print(
        f"on {len(hand_index)} validation positions: network {on_same:.6f}, "
        f"hand-written evaluation {mse(hand_cp, hand_target, args.k):.6f} at K {args.k:g}, "
        f"{hand_best:.6f} at its best K {hand_k:g}"
    )
    if args.plot is not None:
        plot(state.history, args.plot, args.hidden)
    print(f"seconds {time.monotonic() - began:.1f}")
    print(f"peak memory {peak_memory_mb():.0f} MB (max RSS)")
    return 0


def bench(args: Any) -> int:
    """Training steps a second at ``--hidden`` on ``--threads``: batches gathered,
    decoded (records.features) and trained on, as in training (the next batch made
    while the kernels run); the kernels' compile time left out (a first step before
    the clock starts)."""
    _needs_numba()
    from . import kernel

    threads = _set_threads(args.threads)
    if args.store:
        source: Any = StoreSource(args.store, args.k, args.lam, args.max_positions)
        what = f"{len(source)} records of {', '.join(map(str, args.store))}"
    else:
        made = time.monotonic()
        count = min(BENCH_RECORDS, args.max_positions or BENCH_RECORDS)
        source = MemorySource(synthetic_records(count, args.seed), args.k, args.lam)
        what = f"{len(source)} synthetic records ({time.monotonic() - made:.1f} s to make)"
    if len(source) == 0:
        raise UsageError("no records to measure on")
    rng = np.random.default_rng(args.seed)
    weights = kernel.Weights.initial(args.hidden, rng, buckets=args.buckets)
    clips = weights.clips(WEIGHT_CLIP, OUT_CLIP)
    optimiser = kernel.Optimiser(weights, clips, ACTIVATIONS[args.activation])
    order = rng.permutation(np.arange(len(source), dtype=np.int64))
    compiled = time.monotonic()
    optimiser.step(source.batch(np.sort(order[: args.batch_size])), args.lr, args.weight_decay)
    compiled = time.monotonic() - compiled
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else math.nan
    positions, steps, in_kernel = 0, 0, 0.0
    began, cpu = time.monotonic(), time.process_time()
    running = True
    while running:
        # Epochs over the records as training goes through them, the next batch
        # made while the kernels train on this one.
        for batch in _prefetched(source, order, args.batch_size):
            step_began = time.monotonic()
            optimiser.step(batch, args.lr, args.weight_decay)
            in_kernel += time.monotonic() - step_began
            positions += len(batch)
            steps += 1
            if time.monotonic() - began >= args.bench_seconds and steps >= 3:
                running = False
                break
    seconds = time.monotonic() - began
    cpu = time.process_time() - cpu
    print(
        f"bench: {_shape(args)}, {threads} threads, batch {args.batch_size}, {what}: "
        f"{positions / seconds:,.0f} positions/s ({steps} steps in {seconds:.1f} s; "
        f"kernels {in_kernel / seconds:.0%} of it, waiting for batches the rest; "
        f"compile {compiled:.1f} s not counted; load average {load:.2f} before)"
    )
    # On a shared machine the threads may not get their CPUs: the CPU time says how
    # many they had, and the rate per CPU second what the code does with one.
    print(
        f"bench: CPU time {cpu:.1f} s, {cpu / seconds:.2f} CPUs busy on average: "
        f"{positions / max(cpu, 1e-9):,.0f} positions per CPU second"
    )
    print(f"peak memory {peak_memory_mb():.0f} MB (max RSS)")
    return 0


def plot(history: list[tuple[int, float, float]], path: Path, hidden: int) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(6, 4))
    epochs = [h[0] for h in history]
    axes.plot(epochs, [h[1] for h in history], marker="o", label="train")
    axes.plot(epochs, [h[2] for h in history], marker="o", label="validation")
    axes.set_xlabel("epoch")
    axes.set_ylabel("loss (MSE of win probability)")
    axes.set_title(f"768 -> {hidden} -> 1")
    axes.legend()
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)


def main(argv: Optional[list[str]] = None) -> int:
    args = parse_args(argv)
    try:
        return bench(args) if args.bench else train(args)
    except (UsageError, DataError, RecordError) as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as exc:
        print(f"{PROG}: {exc or 'interrupted'}", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
