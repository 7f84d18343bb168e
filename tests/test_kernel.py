"""scripts/training/kernel.py, the trainer's arithmetic: its gradients against central
finite differences and against a plain numpy computation, the same numbers with one
thread and two (a race would change them silently), AdamW's step against its
formula, and the integer forward pass against engine.core.nnue's evaluation; each for
CReLU and SCReLU, one output bucket and several."""

from __future__ import annotations

import importlib.util
import math
import os
import random
from typing import Any

import chess
import numpy as np
import pytest

from engine.core import nnue
from scripts.training import records
from tests.test_records import random_fens

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("numba") is None, reason="numba (the [train] extra) is not installed"
)


def kernel() -> Any:
    from scripts.training import kernel as module

    return module


def varied_material_fens(count: int, seed: int) -> list[str]:
    """Positions of random games with a random number of their pieces (kings kept)
    taken off: piece counts from 2 to 32, so every output bucket has positions."""
    rng = random.Random(seed)
    fens = []
    for fen in random_fens(count, seed=seed, max_plies=60):
        board = chess.Board(fen)
        squares = [s for s, piece in board.piece_map().items() if piece.piece_type != chess.KING]
        for square in rng.sample(squares, rng.randint(0, len(squares))):
            board.remove_piece_at(square)
        fens.append(board.fen())
    return fens


def batch_of(fens: list[str], rng: np.random.Generator, dtype: Any = np.float64) -> Any:
    """The kernels' batch of real positions (records.features' inputs), random targets
    and bases."""
    k = kernel()
    chunk = records.from_bytes(b"".join(records.encode(chess.Board(f), 0, 0) for f in fens))
    features = records.features(chunk)
    offsets = np.append(features.offsets, len(features.white)).astype(np.int64)
    return k.Batch(
        offsets,
        features.white,
        features.black,
        ~features.black_to_move,
        rng.random(len(fens)).astype(dtype),
        (rng.normal(size=len(fens)) * 0.3).astype(dtype),
    )


def numpy_loss_and_gradient(
    weights: Any, batch: Any, activation: int = 0
) -> tuple[float, np.ndarray]:
    """The loss and its gradient (laid out as Weights.flat), position by position in
    plain numpy: the reference the kernel is held to."""
    k = kernel()
    grad = k.Weights.zeros(weights.hidden, np.float64, weights.buckets)
    hidden = weights.hidden
    total = 0.0
    for i in range(len(batch)):
        rows = slice(batch.offsets[i], batch.offsets[i + 1])
        b = nnue.bucket(batch.offsets[i + 1] - batch.offsets[i], weights.buckets)
        acc_w = weights.bias + weights.ft[batch.white[rows]].sum(axis=0)
        acc_b = weights.bias + weights.ft[batch.black[rows]].sum(axis=0)
        us, them = (acc_w, acc_b) if batch.white_to_move[i] else (acc_b, acc_w)
        both = np.concatenate([us, them])
        clipped = np.clip(both, 0.0, 1.0)
        hidden_out = clipped**2 if activation == nnue.SCRELU else clipped
        z = hidden_out @ weights.out_w[b] + weights.out_b[b] + batch.base[i]
        p = 1.0 / (1.0 + math.exp(-z))
        total += (p - batch.target[i]) ** 2
        d = 2.0 * (p - batch.target[i]) * p * (1.0 - p) / len(batch)
        grad.out_w[b] += d * hidden_out
        grad.out_b[b] += d
        inside = (both > 0.0) & (both < 1.0)
        slope = 2.0 * both if activation == nnue.SCRELU else 1.0
        delta = d * weights.out_w[b] * inside * slope
        d_us, d_them = delta[:hidden], delta[hidden:]
        d_w, d_b = (d_us, d_them) if batch.white_to_move[i] else (d_them, d_us)
        grad.bias[...] += d_w + d_b
        np.add.at(grad.ft, batch.white[rows], d_w)
        np.add.at(grad.ft, batch.black[rows], d_b)
    return total / len(batch), grad.flat


def test_buckets_are_the_engines() -> None:
    k = kernel()
    for buckets in range(1, nnue.MAX_BUCKETS + 1):
        for pieces in range(41):
            assert k.bucket(pieces, buckets) == nnue.bucket(pieces, buckets), (pieces, buckets)


@pytest.mark.parametrize(
    ("activation", "buckets"),
    [(nnue.CRELU, 1), (nnue.SCRELU, 1), (nnue.CRELU, 4), (nnue.SCRELU, 4)],
)
def test_gradients_equal_central_finite_differences(activation: int, buckets: int) -> None:
    """N = 4, a few real positions, float64: every weight's gradient (all 3,085 with one
    bucket) within 1e-8 of (loss(w + h) - loss(w - h)) / 2h, h = 1e-6 (the differences'
    own error is about h**2 times the third derivative, far below that). With buckets,
    positions of every amount of material, one bucket left without any."""
    k = kernel()
    rng = np.random.default_rng(5)
    fens = random_fens(6, seed=11, max_plies=60)
    if buckets > 1:
        # Buckets 0 to 2 have positions (2 to 25 pieces); bucket 3 (26 or more) none.
        fens = [f for f in varied_material_fens(40, seed=3) if len(chess.Board(f).piece_map()) < 26]
        fens = fens[:8]
    batch = batch_of(fens, rng)
    used = {nnue.bucket(len(chess.Board(f).piece_map()), buckets) for f in fens}
    assert used == set(range(max(buckets - 1, 1)))
    weights = k.Weights.initial(4, rng, buckets=buckets).astype(np.float64)
    # Accumulators spread over (0, 1) and beyond: both sides of the clipped ReLU.
    weights.ft[...] = rng.normal(0.0, 0.3, size=weights.ft.shape)
    optimiser = k.Optimiser(weights, weights.clips(9.0, 9.0), activation)
    loss = optimiser.gradient(batch)
    assert loss == pytest.approx(k.batch_loss(weights, batch, activation), abs=1e-15)
    h = 1e-6
    numeric = np.zeros_like(weights.flat)
    for i in range(len(weights.flat)):
        old = weights.flat[i]
        weights.flat[i] = old + h
        plus = k.batch_loss(weights, batch, activation)
        weights.flat[i] = old - h
        minus = k.batch_loss(weights, batch, activation)
        weights.flat[i] = old
        numeric[i] = (plus - minus) / (2 * h)
    assert np.abs(numeric - optimiser.grad.flat).max() < 1e-8
    # Sparse: only the rows of features some position has get a gradient.
    active = np.union1d(batch.white, batch.black)
    moved = np.flatnonzero(np.abs(optimiser.grad.ft).sum(axis=1))
    assert set(moved.tolist()) <= set(active.tolist()) and len(moved) > len(active) // 2
    # Only the buckets of the batch's positions: the others' output weights get none.
    for b in range(buckets):
        assert bool(np.any(optimiser.grad.out_w[b])) == (b in used)
        assert bool(optimiser.grad.out_b[b]) == (b in used)


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="needs two CPUs")
@pytest.mark.parametrize(("activation", "buckets"), [(nnue.CRELU, 1), (nnue.SCRELU, 8)])
def test_two_threads_give_the_numpy_gradient_exactly_as_one_does(
    activation: int, buckets: int
) -> None:
    """Most positions of the batch have the same pieces (the worst case for a race:
    every slice adds into the same rows at once), the others every amount of material
    (every output bucket); with one thread and two the gradient is the same bytes,
    and equal to plain numpy's."""
    import numba

    k = kernel()
    rng = np.random.default_rng(7)
    fens = [chess.STARTING_FEN] * 40 + random_fens(24, seed=3, max_plies=40)
    fens += varied_material_fens(40, seed=8)
    batch = batch_of(fens, rng)
    weights = k.Weights.initial(16, rng, buckets=buckets).astype(np.float64)
    weights.ft[...] = rng.normal(0.0, 0.1, size=weights.ft.shape)
    # A bias that puts the accumulators across (0, 1): the activation's slope matters.
    weights.bias[...] = rng.uniform(0.0, 1.0, size=weights.bias.shape)
    grads = []
    before = numba.get_num_threads()
    try:
        for threads in (1, 2):
            numba.set_num_threads(threads)
            optimiser = k.Optimiser(weights, weights.clips(9.0, 9.0), activation)
            optimiser.loss(batch)
            k.update(
                weights.copy().flat, optimiser.parts_ft.reshape(k.CHUNKS, -1),
                optimiser.parts_rest, optimiser.grad.flat, optimiser.m.flat,
                optimiser.v.flat, optimiser.clip, 1e-3, 1, 0.0,
            )  # fmt: skip
            grads.append(optimiser.grad.flat.copy())
    finally:
        numba.set_num_threads(before)
    assert grads[0].tobytes() == grads[1].tobytes()
    loss, expected = numpy_loss_and_gradient(weights, batch, activation)
    assert loss == pytest.approx(k.batch_loss(weights, batch, activation), rel=1e-12)
    assert np.count_nonzero(np.abs(expected[-buckets:])) == buckets  # every bucket learns
    assert np.abs(grads[1] - expected).max() < 1e-15 + 1e-12 * np.abs(expected).max()


def test_adam_steps_as_adamw_does() -> None:
    """Two steps of the kernel's AdamW against its formula (bias-corrected moments,
    decoupled weight decay, eps outside the root), and the clip."""
    k = kernel()
    rng = np.random.default_rng(2)
    batch = batch_of(random_fens(8, seed=1, max_plies=30), rng)
    weights = k.Weights.initial(4, rng).astype(np.float64)
    start = weights.flat.copy()
    optimiser = k.Optimiser(weights, weights.clips(0.25, 9.0))
    lr, decay = 0.01, 0.1
    m = np.zeros_like(start)
    v = np.zeros_like(start)
    expected = start.copy()
    for step in (1, 2):
        optimiser.step(batch, lr, decay)
        g = optimiser.grad.flat
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        expected = expected * (1 - lr * decay)
        expected -= lr / (1 - 0.9**step) * m / (np.sqrt(v) / math.sqrt(1 - 0.999**step) + 1e-8)
        expected = np.clip(expected, -optimiser.clip, optimiser.clip)
    assert np.allclose(weights.flat, expected, rtol=1e-12, atol=1e-15)
    assert np.abs(weights.ft).max() <= 0.25 and np.abs(weights.ft).max() == 0.25


@pytest.mark.parametrize(("activation", "buckets"), [(nnue.CRELU, 1), (nnue.SCRELU, 8)])
def test_integer_forward_is_the_engines_evaluation(activation: int, buckets: int) -> None:
    """kernel.quantised_forward, the trainer's report, is engine.core.nnue's integer
    evaluation, position by position, for both sides to move and every bucket."""
    k = kernel()
    rng = np.random.default_rng(4)
    fens = random_fens(60, seed=9) + varied_material_fens(60, seed=10)
    batch = batch_of(fens, rng)
    hidden = 8
    net = nnue.Network(
        hidden, 255, 64, 400,
        rng.integers(-300, 300, size=(768, hidden)).astype(np.int16),
        rng.integers(-100, 200, size=hidden).astype(np.int16),
        rng.integers(-2000, 2000, size=(buckets, 2 * hidden)).astype(np.int16),
        rng.integers(-5000, 5000, size=buckets).astype(np.int32),
        activation=activation,
    )  # fmt: skip
    out = np.empty(len(fens), dtype=np.int64)
    k.quantised_forward(
        net.ft_weights.astype(np.int64), net.ft_bias.astype(np.int64),
        net.out_weights.astype(np.int64), net.out_bias.astype(np.int64), net.activation,
        net.qa, net.qb, net.scale, batch.offsets, batch.white, batch.black,
        batch.white_to_move, out,
    )  # fmt: skip
    assert out.tolist() == [net.evaluate(chess.Board(fen)) for fen in fens]
    assert len(set(out.tolist())) > 10
    pieces = [len(chess.Board(fen).piece_map()) for fen in fens]
    assert {nnue.bucket(n, buckets) for n in pieces} == set(range(buckets))
