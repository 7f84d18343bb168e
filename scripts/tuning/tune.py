"""Texel tuning of the evaluation weights with numpy.

    python -m scripts.tuning.tune DATA [DATA ...] [--iterations N] [--pull L]
                                  [--score-weight W] [--out FILE | --install]
    python -m scripts.tuning.tune --write-start [--out FILE | --install]

DATA files hold labelled positions in the data format of scripts.training.dataset
(``FEN;SCORE;RESULT`` lines, gzip or xz; RESULT ``1-0``, ``1/2-1/2`` or ``0-1``,
SCORE an engine's score in cp from White's view), as ``make_tuning_data`` writes
them (the playing engine's score) and ``datagen --fens`` relabels them (a deeper
search's), and as the training tools read them. With ``--score-weight w`` the
fitting target is
``(1 - w) * result + w * sigmoid(score)``, the score's own K fitted to the results
first; without it the score is ignored. Every position becomes its feature
vector (``engine.core.features``); the evaluation is then linear in the weights apart
from the endgame scale, which is known per position. The fit:

1. the scaling constant K of the logistic ``p = 1 / (1 + 10 ** (-K * eval / 400))``
   is fitted to the start weights (golden-section search);
2. all weights are fitted by full-batch Adam on the logistic loss (cross-entropy
   between p and the target) plus ``pull * sum((w - w_start) ** 2)``, which
   keeps rarely seen weights near their start values;
3. the weights are rounded and written as a JSON file (``engine/core/weights.json``'s format).

One block of 100 positions in 10 (about a game in ten) is held out and only
measured. The same data and options give the same weights (full batch, fixed
order, no randomness). The start point is PeSTO's tables (``scripts.tuning.pesto``) and
the hand-set values in ``START`` below; ``--write-start`` writes it unfitted.

The weights go to ``--out`` (default ``weights_tuned.json`` in the current directory);
the shipped ``engine/core/weights.json`` is replaced only when asked for, with ``--install``
(or ``--out engine/core/weights.json``), so that a trial fit never overwrites it by accident.
To try a fit in a match, write it into an engine copy (``scripts.matches.variant``)
with ``--out COPY/engine/core/weights.json``.

This script must not be imported by the engine; it writes only that one file.
"""

from __future__ import annotations

import importlib.util
import json
import math
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

import chess
import numpy as np

from engine.core import features as feat

from ..common import ToolParser
from ..training.dataset import DataError, Sample, board_of, read_records
from .pesto import pesto_psqt


def _shipped_weights() -> Path:
    """The weights file beside the module that loads it (``engine.core.weights``), found
    without importing that module: its import fails on weights that no longer fit the
    features, which are what a tuner is run to replace."""
    spec = importlib.util.find_spec("engine.core.weights")
    assert spec is not None and spec.origin is not None, "no engine.core.weights module"
    return Path(spec.origin).resolve().parent / "weights.json"


# The weights the engine ships with: those of the engine package being tuned (the
# checkout's, when run as ``python -m scripts.tuning.tune`` from the repository root).
SHIPPED_WEIGHTS = _shipped_weights()
# Where the weights go without --out or --install: beside the user, not into the engine.
DEFAULT_OUT = Path("weights_tuned.json")

RESULTS = {"1-0": 1.0, "1/2-1/2": 0.5, "0-1": 0.0}
HOLD_OUT_BLOCK = 100
HOLD_OUT_EVERY = 10


def _linear(start: float, step: float, size: int, centre: int) -> list[int]:
    return [round(start + step * (i - centre)) for i in range(size)]


# Hand-set start values (mg, eg) for every block but psqt; tuning moves them.
START: dict[str, tuple[list[int], list[int]]] = {
    "passed": ([0, 5, 10, 15, 30, 50, 80, 0], [0, 10, 15, 25, 45, 75, 120, 0]),
    "passed_blocked": ([0] * 8, [0, -3, -5, -8, -15, -25, -40, 0]),
    "passed_king_distance": ([0] * 8, [0, 0, 3, 5, 8, 10, 12, 0]),
    "connected": ([0, 5, 7, 10, 15, 25, 40, 0], [0, 3, 5, 7, 10, 20, 30, 0]),
    "isolated": ([-10], [-10]),
    "doubled": ([-10], [-20]),
    "backward": ([-8], [-5]),
    "mobility_knight": (_linear(0, 4, 9, 4), _linear(0, 4, 9, 4)),
    "mobility_bishop": (_linear(0, 5, 14, 6), _linear(0, 5, 14, 6)),
    "mobility_rook": (_linear(0, 2, 15, 7), _linear(0, 4, 15, 7)),
    "mobility_queen": (_linear(0, 1, 28, 13), _linear(0, 2, 28, 13)),
    "king_zone_attacks": ([6, 4, 5, 4], [0, 0, 0, 0]),
    "king_attackers": ([0, 0, 10, 30, 60], [0, 0, 0, 0, 0]),
    "king_shield": ([12, 6], [0, 0]),
    "king_open_files": ([-15, -25], [0, 0]),
    "bishop_pair": ([25], [50]),
    "rook_open_file": ([20], [10]),
    "rook_semi_open_file": ([10], [5]),
    "rook_seventh": ([10], [20]),
    "queen_open_file": ([5], [5]),
    "queen_semi_open_file": ([3], [3]),
    "queen_seventh": ([5], [10]),
    "pawn_threat": ([30], [25]),
    "minor_threat": ([30], [20]),
    "rook_threat": ([30], [20]),
    "hanging": ([30], [20]),
    "safe_checks": ([10, 5, 8, 6], [0, 0, 0, 0]),
    "tempo": ([10], [5]),
    "outpost": ([0, 0], [0, 0]),
    "passed_free": ([0] * 8, [0] * 8),
    "rook_behind_passer": ([0], [0]),
    "bad_bishop": ([0], [0]),
    "king_pawn_distance": ([0], [0]),
    "pawn_storm": ([0] * 3, [0] * 3),
    "space": ([0], [0]),
    "minor_on_minor": ([0], [0]),
    "weak_zone": ([0], [0]),
}

# Weights held at their start value: reference buckets of the count tables (each
# piece falls in exactly one bucket, so the tables would otherwise absorb material)
# and pawn squares on the first and last rank, which never occur.
PINNED: dict[str, list[int]] = {
    "mobility_knight": [4],
    "mobility_bishop": [6],
    "mobility_rook": [7],
    "mobility_queen": [13],
    "king_attackers": [0],
    "psqt": [*range(0, 8), *range(56, 64)],
}


def start_weights() -> tuple[np.ndarray, np.ndarray]:
    """The start vectors (mg, eg) in the features layout."""
    mg = np.zeros(feat.FEATURE_COUNT)
    eg = np.zeros(feat.FEATURE_COUNT)
    pesto_mg, pesto_eg = pesto_psqt()
    base = feat.OFFSET["psqt"]
    mg[base : base + 384] = pesto_mg
    eg[base : base + 384] = pesto_eg
    for name, (block_mg, block_eg) in START.items():
        if len(block_mg) != feat.SIZE[name] or len(block_eg) != feat.SIZE[name]:
            raise ValueError(f"START[{name!r}] does not match the block size {feat.SIZE[name]}")
        mg[feat.OFFSET[name] : feat.OFFSET[name] + feat.SIZE[name]] = block_mg
        eg[feat.OFFSET[name] : feat.OFFSET[name] + feat.SIZE[name]] = block_eg
    missing = [name for name, _ in feat.BLOCKS if name != "psqt" and name not in START]
    if missing:
        raise ValueError(f"no start values for {missing}")
    return mg, eg


def free_mask() -> np.ndarray:
    """True for the weights the fit may move."""
    mask = np.ones(feat.FEATURE_COUNT, dtype=bool)
    for name, indices in PINNED.items():
        for i in indices:
            mask[feat.OFFSET[name] + i] = False
    return mask


@dataclass
class Dataset:
    """Positions as a sparse feature matrix (COO) plus per-position constants."""

    rows: np.ndarray
    cols: np.ndarray
    vals: np.ndarray
    phase: np.ndarray  # phase / 24
    scale_white: np.ndarray  # endgame scale / 64 if White is the stronger side
    scale_black: np.ndarray
    result: np.ndarray  # the fitting target: the game result, or a blend with a score
    score: np.ndarray  # the data's score (cp, White's view)
    count: int

    def subset(self, keep: np.ndarray) -> Dataset:
        """The positions where ``keep`` is true, renumbered."""
        new_index = np.cumsum(keep) - 1
        entry_keep = keep[self.rows]
        return Dataset(
            new_index[self.rows[entry_keep]],
            self.cols[entry_keep],
            self.vals[entry_keep],
            self.phase[keep],
            self.scale_white[keep],
            self.scale_black[keep],
            self.result[keep],
            self.score[keep],
            int(keep.sum()),
        )


_Row = tuple[dict[int, int], int, int, int, float, float]


def _position_row(sample: Sample) -> _Row:
    board = chess.Board(sample.fen)
    scale_white, scale_black = feat.scale_factors(board)
    return (
        feat.features(board),
        feat.game_phase(board),
        scale_white,
        scale_black,
        RESULTS[sample.result],
        float(sample.score),
    )


def _rows_of(samples: list[Sample]) -> list[_Row]:
    return [_position_row(sample) for sample in samples]


def load(paths: list[Path], workers: int) -> Dataset:
    """Read and featurise the positions of ``paths`` (in order)."""
    samples: list[Sample] = []
    for path in paths:
        if not path.is_file():
            raise DataError(f"cannot read {str(path)!r}: no such file")
        for where, record in read_records(path):
            if not isinstance(record, Sample):
                continue
            if record.result not in RESULTS:
                raise DataError(f"{where}: no game result ({record.result!r}): tune needs one")
            board_of(record, where)
            samples.append(record)
    chunk = 2000
    chunks = [samples[i : i + chunk] for i in range(0, len(samples), chunk)]
    if workers > 1 and len(chunks) > 1:
        with ProcessPoolExecutor(workers) as pool:
            parts = list(pool.map(_rows_of, chunks))
    else:
        parts = [_rows_of(c) for c in chunks]
    rows: list[int] = []
    cols: list[int] = []
    vals: list[int] = []
    phase: list[float] = []
    scale_white: list[float] = []
    scale_black: list[float] = []
    result: list[float] = []
    score: list[float] = []
    n = 0
    for part in parts:
        for f, ph, sw, sb, res, sc in part:
            rows.extend([n] * len(f))
            cols.extend(f.keys())
            vals.extend(f.values())
            phase.append(ph / feat.MAX_PHASE)
            scale_white.append(sw / feat.SCALE_NORMAL)
            scale_black.append(sb / feat.SCALE_NORMAL)
            result.append(res)
            score.append(sc)
            n += 1
    return Dataset(
        np.array(rows, dtype=np.int64),
        np.array(cols, dtype=np.int64),
        np.array(vals, dtype=np.float64),
        np.array(phase),
        np.array(scale_white),
        np.array(scale_black),
        np.array(result),
        np.array(score),
        n,
    )


class Model:
    """The evaluation of every position of a dataset as a function of the weights."""

    def __init__(self, data: Dataset) -> None:
        self.data = data

    def parts(self, mg_w: np.ndarray, eg_w: np.ndarray) -> tuple[np.ndarray, ...]:
        d = self.data
        mg = np.bincount(d.rows, weights=d.vals * mg_w[d.cols], minlength=d.count)
        eg = np.bincount(d.rows, weights=d.vals * eg_w[d.cols], minlength=d.count)
        scale = np.where(eg > 0, d.scale_white, d.scale_black)
        evaluation = mg * d.phase + eg * scale * (1.0 - d.phase)
        return evaluation, scale

    def evaluate(self, mg_w: np.ndarray, eg_w: np.ndarray) -> np.ndarray:
        return self.parts(mg_w, eg_w)[0]

    def loss(self, mg_w: np.ndarray, eg_w: np.ndarray, k: float) -> float:
        return log_loss(self.evaluate(mg_w, eg_w), self.data.result, k)

    def gradient(
        self, mg_w: np.ndarray, eg_w: np.ndarray, k: float
    ) -> tuple[float, np.ndarray, np.ndarray]:
        """Loss and its gradient with respect to the mg and eg weights."""
        d = self.data
        evaluation, scale = self.parts(mg_w, eg_w)
        p = sigmoid(evaluation, k)
        loss = log_loss(evaluation, d.result, k)
        # d(cross-entropy)/d(eval) = (p - result) * k * ln(10) / 400, averaged.
        g = (p - d.result) * (k * math.log(10) / 400) / d.count
        per_entry = d.vals * g[d.rows]
        mg_grad = np.bincount(
            d.cols, weights=per_entry * d.phase[d.rows], minlength=feat.FEATURE_COUNT
        )
        eg_grad = np.bincount(
            d.cols,
            weights=per_entry * (scale * (1.0 - d.phase))[d.rows],
            minlength=feat.FEATURE_COUNT,
        )
        return loss, mg_grad, eg_grad


def sigmoid(evaluation: np.ndarray, k: float) -> np.ndarray:
    return 1.0 / (1.0 + np.power(10.0, -k * evaluation / 400.0))


def log_loss(evaluation: np.ndarray, result: np.ndarray, k: float) -> float:
    p = np.clip(sigmoid(evaluation, k), 1e-12, 1 - 1e-12)
    return float(-np.mean(result * np.log(p) + (1 - result) * np.log(1 - p)))


def squared_error(evaluation: np.ndarray, result: np.ndarray, k: float) -> float:
    return float(np.mean((sigmoid(evaluation, k) - result) ** 2))


def fit_k(model: Model, mg_w: np.ndarray, eg_w: np.ndarray) -> float:
    """The K that minimises the loss of fixed weights against the fitting target."""
    return best_scale(model.evaluate(mg_w, eg_w), model.data.result)


def best_scale(evaluation: np.ndarray, target: np.ndarray) -> float:
    """Golden-section search for the K minimising ``log_loss(evaluation, target, K)``."""
    low, high = 0.1, 3.0
    ratio = (math.sqrt(5) - 1) / 2
    for _ in range(40):
        a = high - ratio * (high - low)
        b = low + ratio * (high - low)
        if log_loss(evaluation, target, a) < log_loss(evaluation, target, b):
            high = b
        else:
            low = a
    return (low + high) / 2


def blend_targets(data: Dataset, score_weight: float, score_k: float) -> Dataset:
    """``data`` with target (1 - w) * result + w * sigmoid(score, score_k)."""
    target = (1.0 - score_weight) * data.result + score_weight * sigmoid(data.score, score_k)
    return replace(data, result=target)


def adam(
    model: Model,
    mg_w: np.ndarray,
    eg_w: np.ndarray,
    k: float,
    iterations: int,
    rate: float,
    pull: float,
    report: int,
) -> tuple[np.ndarray, np.ndarray]:
    """Full-batch Adam on loss + pull * |w - w_start|^2; pinned weights stay put."""
    start_mg, start_eg = mg_w.copy(), eg_w.copy()
    mask = free_mask().astype(np.float64)
    w = np.concatenate([mg_w, eg_w])
    start = np.concatenate([start_mg, start_eg])
    mask2 = np.concatenate([mask, mask])
    m = np.zeros_like(w)
    v = np.zeros_like(w)
    beta1, beta2, epsilon = 0.9, 0.999, 1e-12
    n = feat.FEATURE_COUNT
    for step in range(1, iterations + 1):
        loss, mg_grad, eg_grad = model.gradient(w[:n], w[n:], k)
        grad = (np.concatenate([mg_grad, eg_grad]) + 2 * pull * (w - start)) * mask2
        m = beta1 * m + (1 - beta1) * grad
        v = beta2 * v + (1 - beta2) * grad * grad
        m_hat = m / (1 - beta1**step)
        v_hat = v / (1 - beta2**step)
        w -= rate * m_hat / (np.sqrt(v_hat) + epsilon)
        if report and (step % report == 0 or step == 1):
            print(f"  step {step:5d}  train loss {loss:.6f}", file=sys.stderr)
    return w[:n].copy(), w[n:].copy()


def format_weights(mg_w: np.ndarray, eg_w: np.ndarray, provenance: list[str]) -> str:
    """The weights file's text (JSON): how they were made, then one line per block.

    Keys follow ``engine.core.features.BLOCKS``; the loader (``engine.core.weights``) checks
    the names and sizes against it, so a file from another layout is refused.
    """
    lines = [
        "{",
        '  "about": "Cutoff\'s evaluation weights, written by python -m scripts.tuning.tune:'
        " centipawns, White's view, blocks as in engine.core.features.BLOCKS (psqt: pawn,"
        ' knight, bishop, rook, queen, king, each a1..h8).",',
        '  "provenance": [',
        ",\n".join(f"    {json.dumps(line)}" for line in provenance),
        "  ],",
    ]
    for phase, vector in (("mg", mg_w), ("eg", eg_w)):
        lines.append(f'  "{phase}": {{')
        rows = []
        for block, size in feat.BLOCKS:
            base = feat.OFFSET[block]
            values = ", ".join(str(round(x)) for x in vector[base : base + size])
            rows.append(f'    "{block}": [{values}]')
        lines.append(",\n".join(rows))
        lines.append("  }," if phase == "mg" else "  }")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = ToolParser(prog="tune", description=__doc__.splitlines()[0])
    parser.add_argument("data", nargs="*", type=Path, help="FEN;RESULT[;SCORE] files")
    destination = parser.add_mutually_exclusive_group()
    destination.add_argument(
        "--out", type=Path, default=None, help=f"weights file to write (default {DEFAULT_OUT})"
    )
    destination.add_argument(
        "--install", action="store_true", help="write the shipped weights, engine/core/weights.json"
    )
    parser.add_argument("--iterations", type=int, default=2000)
    parser.add_argument("--rate", type=float, default=1.0, help="Adam step (cp)")
    parser.add_argument("--pull", type=float, default=1e-7, help="L2 pull toward the start")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--report", type=int, default=100, help="print the loss every N steps")
    parser.add_argument("--write-start", action="store_true", help="write the start weights")
    parser.add_argument(
        "--score-weight",
        type=float,
        default=0.0,
        help="weight of the SCORE field in the target (0: the game result alone)",
    )
    args = parser.parse_args(argv)
    if args.out is None:
        args.out = SHIPPED_WEIGHTS if args.install else DEFAULT_OUT
    if not 0.0 <= args.score_weight <= 1.0:
        parser.error("--score-weight must be between 0 and 1")

    mg_w, eg_w = start_weights()
    if args.write_start:
        text = format_weights(mg_w, eg_w, ["Unfitted start: PeSTO's tables and tune.py's START."])
        args.out.write_text(text)
        print(f"wrote start weights to {args.out}")
        return 0
    if not args.data:
        print("tune: no data files given", file=sys.stderr)
        return 2
    began = time.monotonic()
    try:
        data = load(args.data, args.workers)
    except (OSError, DataError) as error:
        print(f"tune: {error}", file=sys.stderr)
        return 2
    if data.count < 10 * HOLD_OUT_BLOCK:
        print(f"tune: {data.count} positions are too few", file=sys.stderr)
        return 2
    held = (np.arange(data.count) // HOLD_OUT_BLOCK) % HOLD_OUT_EVERY == HOLD_OUT_EVERY - 1
    train, test = Model(data.subset(~held)), Model(data.subset(held))
    print(
        f"{data.count} positions ({train.data.count} train, {test.data.count} held out), "
        f"{len(data.rows)} feature entries, loaded in {time.monotonic() - began:.0f} s"
    )
    games_train, games_test = train, test  # labelled by game results alone
    target = "game results"
    if args.score_weight > 0:
        # The score's own scale, fitted to the results, turns it into an expectation.
        score_k = best_scale(train.data.score, train.data.result)
        train = Model(blend_targets(train.data, args.score_weight, score_k))
        test = Model(blend_targets(test.data, args.score_weight, score_k))
        weight = args.score_weight
        target = f"{1 - weight:g} x result + {weight:g} x score (score K {score_k:.4f})"
        print(f"target: {target}")
    k = fit_k(train, mg_w, eg_w)
    before = (train.loss(mg_w, eg_w, k), test.loss(mg_w, eg_w, k))
    print(f"K = {k:.4f}; loss before: train {before[0]:.6f}, held out {before[1]:.6f}")
    fitted_mg, fitted_eg = adam(
        train, mg_w, eg_w, k, args.iterations, args.rate, args.pull, args.report
    )
    fitted_mg, fitted_eg = np.round(fitted_mg), np.round(fitted_eg)
    after = (train.loss(fitted_mg, fitted_eg, k), test.loss(fitted_mg, fitted_eg, k))
    mse_before = squared_error(test.evaluate(mg_w, eg_w), test.data.result, k)
    mse_after = squared_error(test.evaluate(fitted_mg, fitted_eg), test.data.result, k)
    print(f"loss after:  train {after[0]:.6f}, held out {after[1]:.6f}")
    print(f"held-out squared error {mse_before:.6f} -> {mse_after:.6f}")
    # Against the game results alone, each weight set at its own best K.
    games = []
    for weights in ((mg_w, eg_w), (fitted_mg, fitted_eg)):
        games_k = best_scale(games_train.evaluate(*weights), games_train.data.result)
        games.append(games_test.loss(*weights, games_k))
    print(f"held-out loss against game results: {games[0]:.6f} -> {games[1]:.6f}")
    names = ", ".join(p.name for p in args.data)
    provenance = [
        f"Data: {names}; {data.count} positions, every {HOLD_OUT_EVERY}th block of "
        f"{HOLD_OUT_BLOCK} held out.",
        f"Target: {target}. Fit: K = {k:.4f}, {args.iterations} Adam steps of "
        f"{args.rate:g}, pull {args.pull:g} toward the start.",
        f"Logistic loss, held out: {before[1]:.6f} before, {after[1]:.6f} after "
        f"(train {before[0]:.6f} -> {after[0]:.6f}); against game results "
        f"{games[0]:.6f} -> {games[1]:.6f}.",
        f"Command: python -m scripts.tuning.tune {names} --iterations {args.iterations} "
        f"--rate {args.rate:g} --pull {args.pull:g}"
        + (f" --score-weight {args.score_weight:g}" if args.score_weight else ""),
    ]
    args.out.write_text(format_weights(fitted_mg, fitted_eg, provenance))
    print(f"wrote {args.out} in {time.monotonic() - began:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
