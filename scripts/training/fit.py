"""How well evaluations fit labelled positions, as the search computes them.

    python -m scripts.training.fit DATA [DATA ...] [--eval-file NET.nnue ...]
        [--quiescence] [--max-positions N] [--k K] [--quiet]

For every position of the data files (datagen's ``FEN;SCORE;RESULT`` lines, gzip or
xz) it scores the hand-written evaluation and each ``--eval-file`` network through
the search's own evaluators (``Searcher.use_network``: the network's correction
added to the hand-written evaluation where its file says so, the scores clamped as
in the search), and prints each one's loss against the teacher's score: the mean of
(sigmoid(cp / K) - sigmoid(label / K))^2, the loss training minimises at ``--lam
1``, with its standard error, and each network's difference from the hand-written
evaluation's on the same positions (paired, so the positions' own spread cancels).
``--quiescence`` also scores each position after the search's quiescence (captures
resolved: what the search reads at its horizon).

Its use is to judge evaluations on positions the training did not see, above all
the positions the search evaluates (``leaves``, labelled by ``datagen --fens``):
``train`` reports the loss on its own held-out games only. Positions of a finished
game (mate, stalemate) are skipped and counted. A progress bar counts the positions on a terminal.

This module owns that comparison. It must not train, label or choose an evaluation.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Optional

import chess
from tqdm import tqdm

from engine.core import nnue
from engine.core.board import Board
from engine.core.search import Searcher
from engine.core.tt import TranspositionTable

from ..common import ToolParser
from .dataset import DataError, Sample, board_of, read_records

PROG = "fit"
HASH_MB = 4
K = 400.0
"""Centipawns per logistic unit: an expected score is ``sigmoid(cp / K)`` (the default
of fit's and train's ``--k``, and the scale teachers compares labels on)."""


class Fit:
    """One evaluation's squared errors, position by position."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.errors: list[float] = []

    def summary(self, base: Optional[Fit] = None) -> tuple[float, float]:
        """(mean, its standard error) of the errors, or of their differences from
        ``base``'s on the same positions (paired: the positions' own spread cancels)."""
        values = self.errors
        if base is not None:
            values = [mine - theirs for mine, theirs in zip(self.errors, base.errors)]
        count = len(values)
        if count < 2:
            return (values[0] if values else math.nan), math.nan
        mean = sum(values) / count
        variance = sum((value - mean) ** 2 for value in values) / (count - 1)
        return mean, math.sqrt(variance / count)


def sigmoid(cp: int, k: float) -> float:
    return 1.0 / (1.0 + math.exp(-cp / k))


def searchers(eval_files: list[Path]) -> list[tuple[str, Searcher]]:
    """(name, searcher) for the hand-written evaluation and each network file."""
    made = []
    for name, net in [("hand-written", None), *((str(p), nnue.load(p)) for p in eval_files)]:
        searcher = Searcher(TranspositionTable(HASH_MB))
        searcher.use_network(net)
        made.append((name, searcher))
    return made


def fit(
    paths: list[Path],
    eval_files: list[Path],
    quiescence: bool,
    k: float,
    limit: Optional[int],
    quiet: bool = False,
) -> tuple[list[Fit], int]:
    """The fits (each evaluation static, then after quiescence) and the positions
    skipped as finished games."""
    evaluations = searchers(eval_files)
    fits = [Fit(name) for name, _ in evaluations]
    if quiescence:
        fits += [Fit(f"{name}, quiescence") for name, _ in evaluations]
    skipped = read = 0
    # A progress bar on a terminal only (disable=None), none with --quiet.
    with tqdm(total=limit, unit="position", disable=quiet or None) as bar:
        for path in paths:
            for where, record in read_records(path):
                if not isinstance(record, Sample):
                    continue
                if limit is not None and read >= limit:
                    return fits, skipped
                read += 1
                bar.update()
                sample = record
                board = board_of(sample, where)
                if board.is_game_over():
                    skipped += 1
                    continue
                label = sample.score if board.turn == chess.WHITE else -sample.score
                target = sigmoid(label, k)
                for index, (_, searcher) in enumerate(evaluations):
                    native = Board.from_chess(board)
                    native.use_network(searcher.network)
                    static = searcher.evaluator.evaluate(native)
                    fits[index].errors.append((sigmoid(static, k) - target) ** 2)
                    if quiescence:
                        resolved = searcher.quiescence(board)
                        squared = (sigmoid(resolved, k) - target) ** 2
                        fits[len(evaluations) + index].errors.append(squared)
    return fits, skipped


def main(argv: Optional[list[str]] = None) -> int:
    parser = ToolParser(prog=PROG, description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path, nargs="+", help="labelled data files")
    parser.add_argument(
        "--eval-file", type=Path, action="append", default=[], help="a network file"
    )
    parser.add_argument(
        "--quiescence", action="store_true", help="also score after the quiescence search"
    )
    parser.add_argument("--max-positions", type=int, help="read at most this many")
    parser.add_argument("--k", type=float, default=K, help="cp per logistic unit")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    parser.require_positive(args, "max_positions", "k")
    for path in [*args.data, *args.eval_file]:
        if not path.is_file():
            parser.error(f"cannot read {str(path)!r}: no such file")
    try:
        fits, skipped = fit(
            args.data, args.eval_file, args.quiescence, args.k, args.max_positions, args.quiet
        )
    except (DataError, nnue.NetworkError, OSError) as error:
        print(f"{PROG}: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    count = len(fits[0].errors)
    print(f"positions {count} (skipped, game over: {skipped}); loss at K {args.k:g}")
    per_kind = len(args.eval_file) + 1
    width = max(len(one.name) for one in fits)
    for index, one in enumerate(fits):
        mean, spread = one.summary()
        line = f"{one.name:{width}} {mean:.6f} ± {spread:.6f}"
        if index % per_kind:
            # Against the hand-written evaluation scored the same way.
            diff, diff_error = one.summary(fits[index - index % per_kind])
            line += f"   minus hand-written {diff:+.6f} ± {diff_error:.6f}"
        print(line)
    return 0 if count else 1


if __name__ == "__main__":
    sys.exit(main())
