"""The trainer's arithmetic in numba: the network's forward pass, its gradients, Adam.

The network is engine.core.nnue's 768 -> N -> 1 with two perspectives: per
perspective the accumulator ``bias + sum of the active features' columns`` of the
shared 768 x N weights (Black's features are already mirrored by whoever made the
batch: scripts.training.records.features or train.Data, as engine.core.nnue does),
an activation (``activation``: CRELU, ``clip(x, 0, 1)``, or SCRELU, its square), and
``out_w[b] . [side to move's, other's] + out_b[b]`` with the output bucket ``b`` of
the position's piece count (``bucket``, engine.core.nnue's formula; one position has
one input per piece). The loss of a batch is the mean squared error of
``sigmoid(output + base)`` against the target (``base``, in logistic units, is 0 or
the hand-written evaluation's score / K). Its gradients are written out by hand:
only the active feature rows of the first layer get any, and only the position's
bucket of the output layer.

A batch is given in the compressed-row form scripts.training.records.features makes:
the inputs of position ``i`` are ``white[offsets[i]:offsets[i + 1]]`` as White sees
them and ``black[...]`` as Black does.

Races and determinism: the batch is cut into ``CHUNKS`` fixed slices, spread over the
threads with ``prange``; each slice sums its gradients into its own buffers, and the
slices are added in order afterwards. No two threads write the same number, and
the sums are taken in the same order with one thread or two: a fixed seed gives
the same network whatever ``--threads`` is.

The training kernels release the GIL, so that the trainer can make the next batch
(numpy) while they run.

Adam is plain (dense) Adam, torch.optim.AdamW's arithmetic (bias-corrected, decoupled
weight decay, ``eps`` added to the corrected root): in batches of thousands of
positions nearly every feature row is active at every step, so the sparse variant
would save little and change the optimiser.

Any float dtype works (the arrays' own: float32 for training, float64 for the
tests' finite differences). This module owns that arithmetic; it must not read
data, choose hyperparameters or write files (scripts.training.train does).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from numba import njit, prange

INPUTS = 768
CRELU = 0
"""``activation``: clipped ReLU, ``clip(x, 0, 1)`` (engine.core.nnue.CRELU)."""
SCRELU = 1
"""``activation``: squared clipped ReLU, ``clip(x, 0, 1) ** 2`` (engine.core.nnue.SCRELU)."""
CHUNKS = 8
"""The batch's slices: gradient buffers are per slice, not per thread, so the sums
and the network are the same with any number of threads."""
ADAM_BETAS = (0.9, 0.999)
ADAM_EPS = 1e-8

Array = npt.NDArray[Any]


class Weights:
    """The float network, one flat array: feature weights (768 x N), their bias (N),
    the output weights (B x 2N, bucket by bucket; in each the side to move's
    accumulator first) and the output biases (B), in that order; ``ft``, ``bias``,
    ``out_w`` (B x 2N) and ``out_b`` are views of it. One array, so that one pass of
    the optimiser updates every weight."""

    def __init__(self, flat: Array, hidden: int, buckets: int = 1) -> None:
        self.flat = flat
        self.hidden = hidden
        self.buckets = buckets
        cut = np.cumsum([INPUTS * hidden, hidden, buckets * 2 * hidden])
        self.ft = flat[: cut[0]].reshape(INPUTS, hidden)
        self.bias = flat[cut[0] : cut[1]]
        self.out_w = flat[cut[1] : cut[2]].reshape(buckets, 2 * hidden)
        self.out_b = flat[cut[2] :]

    @staticmethod
    def size(hidden: int, buckets: int = 1) -> int:
        return INPUTS * hidden + hidden + buckets * (2 * hidden + 1)

    @staticmethod
    def zeros(hidden: int, dtype: Any = np.float32, buckets: int = 1) -> Weights:
        return Weights(np.zeros(Weights.size(hidden, buckets), dtype=dtype), hidden, buckets)

    @staticmethod
    def initial(
        hidden: int, rng: np.random.Generator, correction: bool = False, buckets: int = 1
    ) -> Weights:
        """PyTorch's initialisation of the former trainer: feature weights normal with
        standard deviation 0.1, bias 0.1, every bucket's output layer uniform in
        +-1/sqrt(2N); with ``correction`` the output starts near zero (it is added to
        the hand-written evaluation, which it should first leave alone). One bucket
        draws the numbers it drew before buckets existed."""
        weights = Weights.zeros(hidden, buckets=buckets)
        weights.ft[...] = rng.normal(0.0, 0.1, size=(INPUTS, hidden))
        weights.bias[...] = 0.1
        bound = 1.0 / math.sqrt(2 * hidden)
        weights.out_w[...] = rng.uniform(-bound, bound, size=(buckets, 2 * hidden))
        weights.out_b[...] = rng.uniform(-bound, bound, size=buckets)
        if correction:
            weights.out_w *= 0.01
            weights.out_b[...] = 0.0
        return weights

    def arrays(self) -> list[Array]:
        return [self.ft, self.bias, self.out_w, self.out_b]

    def copy(self) -> Weights:
        return Weights(self.flat.copy(), self.hidden, self.buckets)

    def astype(self, dtype: Any) -> Weights:
        return Weights(self.flat.astype(dtype), self.hidden, self.buckets)

    def clips(self, ft: float, out_w: float) -> Array:
        """Each weight's clip: ``ft`` for the feature weights and their bias, ``out_w``
        for the output weights, none for the output biases."""
        clip = np.full(len(self.flat), float(ft))
        clip[INPUTS * self.hidden + self.hidden :] = out_w
        clip[len(self.flat) - self.buckets :] = np.inf
        return clip


@njit(cache=True)
def bucket(pieces: int, buckets: int) -> int:
    """The output bucket of a position with ``pieces`` pieces (kings included):
    engine.core.nnue.bucket's formula, compiled."""
    index = (pieces - 2) // ((32 + buckets - 1) // buckets)
    result: int = min(max(index, 0), buckets - 1)
    return result


@njit(cache=True)
def _accumulate(acc: Array, bias: Array, ft: Array, index: Array, start: int, end: int) -> None:
    hidden = acc.shape[0]
    for j in range(hidden):
        acc[j] = bias[j]
    for k in range(start, end):
        f = index[k]
        for j in range(hidden):
            acc[j] += ft[f, j]


@njit(cache=True)
def _output(us: Array, them: Array, out_w: Array, out_b: float, activation: int) -> float:
    """The output of one bucket (its weights ``out_w``, 2N, and bias ``out_b``)."""
    hidden = us.shape[0]
    total = 0.0
    # The activation tested once, not in the loop: each loop stays a plain one.
    if activation == SCRELU:
        for j in range(hidden):
            a = min(max(us[j], 0.0), 1.0)
            b = min(max(them[j], 0.0), 1.0)
            total += a * a * out_w[j] + b * b * out_w[hidden + j]
    else:
        for j in range(hidden):
            a = min(max(us[j], 0.0), 1.0)
            b = min(max(them[j], 0.0), 1.0)
            total += a * out_w[j] + b * out_w[hidden + j]
    result: float = total + out_b
    return result


@njit(parallel=True, fastmath=False, cache=True)
def forward(
    ft: Array,
    bias: Array,
    out_w: Array,
    out_b: Array,
    activation: int,
    offsets: Array,
    white: Array,
    black: Array,
    white_to_move: Array,
    out: Array,
) -> None:
    """``out[i]``: the network's output (logistic units, before any base) of position
    ``i``, from the side to move's view."""
    count = out.shape[0]
    hidden = ft.shape[1]
    buckets = out_w.shape[0]
    for c in prange(CHUNKS):
        acc_w = np.empty(hidden, dtype=ft.dtype)
        acc_b = np.empty(hidden, dtype=ft.dtype)
        for i in range(c * count // CHUNKS, (c + 1) * count // CHUNKS):
            _accumulate(acc_w, bias, ft, white, offsets[i], offsets[i + 1])
            _accumulate(acc_b, bias, ft, black, offsets[i], offsets[i + 1])
            k = bucket(offsets[i + 1] - offsets[i], buckets)
            if white_to_move[i]:
                out[i] = _output(acc_w, acc_b, out_w[k], out_b[k], activation)
            else:
                out[i] = _output(acc_b, acc_w, out_w[k], out_b[k], activation)


@njit(cache=True)
def _backward_row(g_ft: Array, index: Array, start: int, end: int, delta: Array) -> None:
    hidden = delta.shape[0]
    for k in range(start, end):
        f = index[k]
        for j in range(hidden):
            g_ft[f, j] += delta[j]


@njit(parallel=True, fastmath=False, cache=True, nogil=True)
def gradients(
    ft: Array,
    bias: Array,
    out_w: Array,
    out_b: Array,
    activation: int,
    offsets: Array,
    white: Array,
    black: Array,
    white_to_move: Array,
    target: Array,
    base: Array,
    parts_ft: Array,
    parts_rest: Array,
) -> float:
    """The batch's mean loss; the gradient of each slice ``c`` of the batch into
    ``parts_ft[c]`` (the feature weights') and ``parts_rest[c]`` (the rest of
    Weights.flat: N + B(2N + 1)), zeroed here, to be added by ``update``."""
    count = target.shape[0]
    hidden = ft.shape[1]
    buckets = out_w.shape[0]
    losses = np.zeros(CHUNKS)
    for c in prange(CHUNKS):
        g_ft = parts_ft[c]
        g_ft[:] = 0.0
        # The small gradients in arrays of the slice's own, stored once at the end.
        g_bias = np.zeros(hidden, dtype=ft.dtype)
        g_out = np.zeros((buckets, 2 * hidden), dtype=ft.dtype)
        # The output biases' sums in float64, as the single bias's were.
        g_b = np.zeros(buckets)
        acc_w = np.empty(hidden, dtype=ft.dtype)
        acc_b = np.empty(hidden, dtype=ft.dtype)
        d_w = np.empty(hidden, dtype=ft.dtype)
        d_b = np.empty(hidden, dtype=ft.dtype)
        total = 0.0
        for i in range(c * count // CHUNKS, (c + 1) * count // CHUNKS):
            start, end = offsets[i], offsets[i + 1]
            _accumulate(acc_w, bias, ft, white, start, end)
            _accumulate(acc_b, bias, ft, black, start, end)
            k = bucket(end - start, buckets)
            w = out_w[k]
            g_w = g_out[k]
            stm_white = white_to_move[i]
            us = acc_w if stm_white else acc_b
            them = acc_b if stm_white else acc_w
            z = _output(us, them, w, out_b[k], activation) + base[i]
            p = 1.0 / (1.0 + math.exp(-z))
            error = p - target[i]
            total += error * error
            # d(mean loss)/d(output)
            d = 2.0 * error * p * (1.0 - p) / count
            g_b[k] += d
            d_us = d_w if stm_white else d_b
            d_them = d_b if stm_white else d_w
            # Both activations pass a gradient only strictly inside (0, 1): CReLU's
            # slope there is 1, SCReLU's 2x.
            if activation == SCRELU:
                for j in range(hidden):
                    a = us[j]
                    b = them[j]
                    ca = min(max(a, 0.0), 1.0)
                    cb = min(max(b, 0.0), 1.0)
                    g_w[j] += d * ca * ca
                    g_w[hidden + j] += d * cb * cb
                    d_us[j] = 2.0 * d * w[j] * a if 0.0 < a < 1.0 else 0.0
                    d_them[j] = 2.0 * d * w[hidden + j] * b if 0.0 < b < 1.0 else 0.0
            else:
                for j in range(hidden):
                    a = us[j]
                    b = them[j]
                    g_w[j] += d * min(max(a, 0.0), 1.0)
                    g_w[hidden + j] += d * min(max(b, 0.0), 1.0)
                    d_us[j] = d * w[j] if 0.0 < a < 1.0 else 0.0
                    d_them[j] = d * w[hidden + j] if 0.0 < b < 1.0 else 0.0
            for j in range(hidden):
                g_bias[j] += d_w[j] + d_b[j]
            _backward_row(g_ft, white, start, end, d_w)
            _backward_row(g_ft, black, start, end, d_b)
        rest = parts_rest[c]
        rest[:hidden] = g_bias
        rest[hidden : hidden + buckets * 2 * hidden] = g_out.ravel()
        rest[hidden + buckets * 2 * hidden :] = g_b
        losses[c] = total
    loss = 0.0
    for c in range(CHUNKS):
        loss += losses[c]
    mean: float = loss / max(count, 1)
    return mean


@njit(parallel=True, fastmath=False, cache=True, nogil=True)
def update(
    param: Array,
    parts_ft: Array,
    parts_rest: Array,
    grad: Array,
    m: Array,
    v: Array,
    clip: Array,
    lr: float,
    step: int,
    weight_decay: float,
) -> None:
    """The gradient (the slices' ``parts_ft``, 768N wide, and ``parts_rest`` added
    in slice order, into ``grad``) and one AdamW step of every weight, then each
    clipped to +-``clip``."""
    beta1, beta2 = ADAM_BETAS
    correction1 = 1.0 - beta1**step
    root2 = math.sqrt(1.0 - beta2**step)
    decay = 1.0 - lr * weight_decay
    size_ft = parts_ft.shape[1]
    for i in prange(param.shape[0]):
        if i < size_ft:
            total = parts_ft[0, i]
            for c in range(1, CHUNKS):
                total += parts_ft[c, i]
        else:
            total = parts_rest[0, i - size_ft]
            for c in range(1, CHUNKS):
                total += parts_rest[c, i - size_ft]
        grad[i] = total
        m[i] = beta1 * m[i] + (1.0 - beta1) * total
        v[i] = beta2 * v[i] + (1.0 - beta2) * total * total
        p = param[i] * decay
        p -= lr / correction1 * m[i] / (math.sqrt(v[i]) / root2 + ADAM_EPS)
        param[i] = min(max(p, -clip[i]), clip[i])


@njit(parallel=True, cache=True)
def quantised_forward(
    ft: Array,
    bias: Array,
    out_w: Array,
    out_b: Array,
    activation: int,
    qa: int,
    qb: int,
    scale: int,
    offsets: Array,
    white: Array,
    black: Array,
    white_to_move: Array,
    out: Array,
) -> None:
    """``out[i]``: the integer network's cp of position ``i`` from the side to move's
    view, as engine.core.nnue computes it (int64 sums, floor division; ``out_w`` B x 2N
    and ``out_b`` B, int64)."""
    count = out.shape[0]
    hidden = ft.shape[1]
    buckets = out_w.shape[0]
    for c in prange(CHUNKS):
        acc_w = np.empty(hidden, dtype=np.int64)
        acc_b = np.empty(hidden, dtype=np.int64)
        for i in range(c * count // CHUNKS, (c + 1) * count // CHUNKS):
            for j in range(hidden):
                acc_w[j] = bias[j]
                acc_b[j] = bias[j]
            for k in range(offsets[i], offsets[i + 1]):
                fw = white[k]
                fb = black[k]
                for j in range(hidden):
                    acc_w[j] += ft[fw, j]
                    acc_b[j] += ft[fb, j]
            us = acc_w if white_to_move[i] else acc_b
            them = acc_b if white_to_move[i] else acc_w
            k = bucket(offsets[i + 1] - offsets[i], buckets)
            w = out_w[k]
            dot = np.int64(0)
            for j in range(hidden):
                a = min(max(us[j], 0), qa)
                b = min(max(them[j], 0), qa)
                if activation == SCRELU:
                    a *= a
                    b *= b
                dot += a * np.int64(w[j]) + b * np.int64(w[hidden + j])
            if activation == SCRELU:
                # Floor division, as Python's and the engine's: the sum may be negative.
                dot //= qa
            out[i] = (dot + np.int64(out_b[k])) * scale // (qa * qb)


class Optimiser:
    """AdamW over ``weights`` (one flat array), with the per-slice gradient buffers of
    ``gradients``; each weight clipped after its step (``clip``, as Weights.clips).
    ``activation``: the network's, CRELU or SCRELU."""

    def __init__(self, weights: Weights, clip: Array, activation: int = CRELU) -> None:
        self.weights = weights
        self.activation = activation
        self.clip = clip.astype(weights.flat.dtype)
        hidden, buckets, dtype = weights.hidden, weights.buckets, weights.flat.dtype
        self.m = Weights.zeros(hidden, dtype, buckets)
        self.v = Weights.zeros(hidden, dtype, buckets)
        self.step_count = 0
        self.parts_ft = np.zeros((CHUNKS, INPUTS, hidden), dtype=dtype)
        self.parts_rest = np.zeros((CHUNKS, hidden + buckets * (2 * hidden + 1)), dtype=dtype)
        self.grad = Weights.zeros(hidden, dtype, buckets)

    def loss(self, batch: Batch) -> float:
        """The batch's mean loss; its gradient per slice into ``self.parts_*``."""
        w = self.weights
        loss = gradients(
            w.ft, w.bias, w.out_w, w.out_b, self.activation, batch.offsets, batch.white,
            batch.black, batch.white_to_move, batch.target, batch.base, self.parts_ft,
            self.parts_rest,
        )  # fmt: skip
        return float(loss)

    def gradient(self, batch: Batch) -> float:
        """The batch's mean loss, its gradient into ``self.grad`` (no step)."""
        loss = self.loss(batch)
        self.grad.ft[...] = self.parts_ft.sum(axis=0)
        self.grad.flat[INPUTS * self.weights.hidden :] = self.parts_rest.sum(axis=0)
        return loss

    def step(self, batch: Batch, lr: float, weight_decay: float) -> float:
        """One training step on ``batch`` (its gradient then in ``self.grad``); its
        loss before the step."""
        loss = self.loss(batch)
        self.step_count += 1
        update(
            self.weights.flat, self.parts_ft.reshape(CHUNKS, -1), self.parts_rest,
            self.grad.flat, self.m.flat, self.v.flat, self.clip, lr, self.step_count,
            weight_decay,
        )  # fmt: skip
        return loss


@dataclass
class Batch:
    """A batch in the kernels' form: ``offsets`` (count + 1, int64), ``white`` and
    ``black`` (the inputs, int16), ``white_to_move`` (bool), ``target`` (the side to
    move's target probability) and ``base`` (logistic units added to the output)."""

    offsets: Array
    white: Array
    black: Array
    white_to_move: Array
    target: Array
    base: Array

    def __len__(self) -> int:
        return len(self.target)


def outputs(weights: Weights, batch: Batch, activation: int = CRELU) -> Array:
    """The float network's outputs of ``batch`` (logistic units, without the base)."""
    out = np.empty(len(batch), dtype=np.float64)
    w = weights
    forward(
        w.ft, w.bias, w.out_w, w.out_b, activation, batch.offsets, batch.white, batch.black,
        batch.white_to_move, out,
    )  # fmt: skip
    return out


def batch_loss(weights: Weights, batch: Batch, activation: int = CRELU) -> float:
    """The mean loss of ``batch`` (without a gradient)."""
    z = outputs(weights, batch, activation) + batch.base
    p = 1.0 / (1.0 + np.exp(-z))
    return float(np.mean((p - batch.target) ** 2))


def warm_up() -> None:
    """Compile (or load from numba's cache) the kernels for the trainer's types: a
    first training step on two positions, float32, as the trainer's are."""
    offsets = np.array([0, 1, 2], dtype=np.int64)
    features = np.array([0, 1], dtype=np.int16)
    batch = Batch(
        offsets, features, features, np.array([True, False]),
        np.full(2, 0.5, dtype=np.float32), np.zeros(2, dtype=np.float32),
    )  # fmt: skip
    weights = Weights.initial(2, np.random.default_rng(0))
    Optimiser(weights, weights.clips(1.0, 1.0)).step(batch, 1e-3, 0.0)
    batch_loss(weights, batch)
    quantised_forward(
        np.zeros((INPUTS, 2), np.int64), np.zeros(2, np.int64), np.zeros((1, 4), np.int64),
        np.zeros(1, np.int64), CRELU, 255, 64, 400, offsets, features, features,
        batch.white_to_move, np.zeros(2, np.int64),
    )  # fmt: skip
