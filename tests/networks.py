"""Networks for tests: seeded random ones, of any width, that the engine loads."""

from __future__ import annotations

import numpy as np

from engine.core.nnue import CRELU, Network


def random_network(
    hidden: int, seed: int = 1, activation: int = CRELU, buckets: int = 1
) -> Network:
    """A seeded random network ``hidden`` wide, its weights well inside the
    accumulators' 16-bit lanes: a file to load and search with, not to play with."""
    rng = np.random.default_rng(seed)
    return Network(
        hidden,
        255,
        64,
        400,
        rng.integers(-300, 300, (768, hidden)).astype(np.int16),
        rng.integers(-200, 400, hidden).astype(np.int16),
        rng.integers(-100, 100, (buckets, 2 * hidden)).astype(np.int16),
        rng.integers(-3000, 3000, buckets).astype(np.int32)
        if buckets > 1
        else np.array([1234], dtype=np.int32),
        activation=activation,
    )
