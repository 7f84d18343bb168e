"""scripts/training/kernel.py, the trainer's arithmetic: its gradients against central
finite differences and against a plain numpy computation, the same numbers with one
thread and two (a race would change them silently), AdamW's step against its
formula, and the integer forward pass against engine.core.nnue's evaluation."""

from __future__ import annotations

import importlib.util
import math
import os
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


def numpy_loss_and_gradient(weights: Any, batch: Any) -> tuple[float, np.ndarray]:
    """The loss and its gradient (laid out as Weights.flat), position by position in
    plain numpy: the reference the kernel is held to."""
    k = kernel()
    grad = k.Weights.zeros(weights.hidden, np.float64)
    hidden = weights.hidden
    total = 0.0
    for i in range(len(batch)):
        rows = slice(batch.offsets[i], batch.offsets[i + 1])
        acc_w = weights.bias + weights.ft[batch.white[rows]].sum(axis=0)
        acc_b = weights.bias + weights.ft[batch.black[rows]].sum(axis=0)
        us, them = (acc_w, acc_b) if batch.white_to_move[i] else (acc_b, acc_w)
        hidden_out = np.clip(np.concatenate([us, them]), 0.0, 1.0)
        z = hidden_out @ weights.out_w + weights.out_b[0] + batch.base[i]
        p = 1.0 / (1.0 + math.exp(-z))
        total += (p - batch.target[i]) ** 2
        d = 2.0 * (p - batch.target[i]) * p * (1.0 - p) / len(batch)
        grad.out_w[...] += d * hidden_out
        grad.out_b[0] += d
        both = np.concatenate([us, them])
        inside = (both > 0.0) & (both < 1.0)
        delta = d * weights.out_w * inside
        d_us, d_them = delta[:hidden], delta[hidden:]
        d_w, d_b = (d_us, d_them) if batch.white_to_move[i] else (d_them, d_us)
        grad.bias[...] += d_w + d_b
        np.add.at(grad.ft, batch.white[rows], d_w)
        np.add.at(grad.ft, batch.black[rows], d_b)
    return total / len(batch), grad.flat


def test_gradients_equal_central_finite_differences() -> None:
    """N = 4, a few real positions, float64: every weight's gradient (all 3,085)
    within 1e-8 of (loss(w + h) - loss(w - h)) / 2h, h = 1e-6 (the differences' own
    error is about h**2 times the third derivative, far below that)."""
    k = kernel()
    rng = np.random.default_rng(5)
    batch = batch_of(random_fens(6, seed=11, max_plies=60), rng)
    weights = k.Weights.initial(4, rng).astype(np.float64)
    # Accumulators spread over (0, 1) and beyond: both sides of the clipped ReLU.
    weights.ft[...] = rng.normal(0.0, 0.3, size=weights.ft.shape)
    optimiser = k.Optimiser(weights, weights.clips(9.0, 9.0))
    loss = optimiser.gradient(batch)
    assert loss == pytest.approx(k.batch_loss(weights, batch), abs=1e-15)
    h = 1e-6
    numeric = np.zeros_like(weights.flat)
    for i in range(len(weights.flat)):
        old = weights.flat[i]
        weights.flat[i] = old + h
        plus = k.batch_loss(weights, batch)
        weights.flat[i] = old - h
        minus = k.batch_loss(weights, batch)
        weights.flat[i] = old
        numeric[i] = (plus - minus) / (2 * h)
    assert np.abs(numeric - optimiser.grad.flat).max() < 1e-8
    # Sparse: only the rows of features some position has get a gradient.
    active = np.union1d(batch.white, batch.black)
    moved = np.flatnonzero(np.abs(optimiser.grad.ft).sum(axis=1))
    assert set(moved.tolist()) <= set(active.tolist()) and len(moved) > len(active) // 2


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="needs two CPUs")
def test_two_threads_give_the_numpy_gradient_exactly_as_one_does() -> None:
    """Every position of the batch has the same pieces (the worst case for a race:
    every slice adds into the same rows at once); with one thread and two the
    gradient is the same bytes, and equal to plain numpy's."""
    import numba

    k = kernel()
    rng = np.random.default_rng(7)
    fens = [chess.STARTING_FEN] * 40 + random_fens(24, seed=3, max_plies=40)
    batch = batch_of(fens, rng)
    weights = k.Weights.initial(16, rng).astype(np.float64)
    weights.ft[...] = rng.normal(0.0, 0.1, size=weights.ft.shape)
    grads = []
    before = numba.get_num_threads()
    try:
        for threads in (1, 2):
            numba.set_num_threads(threads)
            optimiser = k.Optimiser(weights, weights.clips(9.0, 9.0))
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
    loss, expected = numpy_loss_and_gradient(weights, batch)
    assert loss == pytest.approx(k.batch_loss(weights, batch), rel=1e-12)
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


def test_integer_forward_is_the_engines_evaluation() -> None:
    """kernel.quantised_forward, the trainer's report, is engine.core.nnue's integer
    evaluation, position by position, for both sides to move."""
    k = kernel()
    rng = np.random.default_rng(4)
    fens = random_fens(60, seed=9)
    batch = batch_of(fens, rng)
    hidden = 8
    net = nnue.Network(
        hidden, 255, 64, 400,
        rng.integers(-300, 300, size=(768, hidden)).astype(np.int16),
        rng.integers(-100, 200, size=hidden).astype(np.int16),
        rng.integers(-2000, 2000, size=(1, 2 * hidden)).astype(np.int16),
        rng.integers(-5000, 5000, size=1).astype(np.int32),
    )  # fmt: skip
    out = np.empty(len(fens), dtype=np.int64)
    k.quantised_forward(
        net.ft_weights.astype(np.int64), net.ft_bias.astype(np.int64),
        net.out_weights[0].astype(np.int64), int(net.out_bias[0]), net.qa, net.qb, net.scale,
        batch.offsets, batch.white, batch.black, batch.white_to_move, out,
    )  # fmt: skip
    assert out.tolist() == [net.evaluate(chess.Board(fen)) for fen in fens]
    assert len(set(out.tolist())) > 10
