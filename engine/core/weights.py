"""The tuned evaluation weights: ``engine/core/weights.json``, checked and flattened.

``MG_WEIGHTS`` and ``EG_WEIGHTS`` are the middlegame and endgame weight vectors,
laid out by ``engine.core.features.BLOCKS`` (centipawns, White's view). The numbers live
in ``weights.json`` beside this module, written by ``python -m scripts.tuning.tune``
with a record of the data and command that made them; data is kept out of the
code so that a fit is reviewed as data. The file's block names and sizes must
match the feature layout, or the import fails with the first mismatch named: an
evaluation with shifted weights would play, badly, without telling anyone.

This module must hold nothing but the two vectors and their loading.
"""

from __future__ import annotations

import json
from pathlib import Path

from engine.core.features import BLOCKS

WEIGHTS_FILE = Path(__file__).resolve().parent / "weights.json"


def load_weights(path: Path) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(middlegame, endgame) vectors of a weights file; ValueError if it does not fit."""
    data = json.loads(path.read_text(encoding="utf-8"))
    vectors = []
    for phase in ("mg", "eg"):
        blocks = data[phase]
        if list(blocks) != [name for name, _ in BLOCKS]:
            raise ValueError(f"{path}: the {phase} blocks are not engine.core.features.BLOCKS")
        vector: list[int] = []
        for name, size in BLOCKS:
            values = blocks[name]
            if len(values) != size or not all(type(v) is int for v in values):
                raise ValueError(f"{path}: {phase} block {name!r} needs {size} integers")
            vector.extend(values)
        vectors.append(tuple(vector))
    return vectors[0], vectors[1]


MG_WEIGHTS, EG_WEIGHTS = load_weights(WEIGHTS_FILE)
