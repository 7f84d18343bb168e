"""Relabel training positions with Cutoff's own static evaluation (distillation).

    python -m scripts.training.distill DATA [DATA ...] --out OUT.gz
        [--eval-file NET.nnue] [--max-positions N] [--quiet]

Every position of the data files (datagen's ``FEN;SCORE;RESULT`` lines, gzip or xz)
is written to OUT with SCORE replaced by the score the search's evaluator gives it
statically: the hand-written evaluation, or with ``--eval-file`` that network as the
search uses it (a correction added to the hand-written evaluation where its file
says so, the score clamped as in the search). The score is in centipawns from
White's view and clipped as datagen clips a teacher's; RESULT is kept. Positions of
a finished game (mate, stalemate) are left out and counted. The ``#done`` lines are
kept, so ``train`` holds out the same games as from the source files.

Its use is to train a network to imitate an evaluation rather than Stockfish's
scores: labels that cost no teacher search, so any number of positions can be
labelled, and whose error says how much of that evaluation a network's inputs and
width can hold. OUT is one gzip member written beside itself and renamed when
complete (``train`` reads it like datagen's files). A progress bar counts the
positions on a terminal.

This module owns that relabelling. It must not make positions (datagen and leaves
do) nor train (train does).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import chess
from tqdm import tqdm

from engine.core import nnue
from engine.core.position import Position
from engine.core.search import Searcher
from engine.core.tt import TranspositionTable

from ..common import ToolParser, UsageError, atomic_output
from .dataset import (
    DONE,
    DataError,
    Sample,
    board_of,
    clip,
    format_sample,
    parse_line,
    read_lines,
)

PROG = "distill"
HASH_MB = 1
"""The searcher is used for its evaluator only: its table stays empty."""


def distill(
    paths: list[Path],
    eval_file: Optional[Path],
    out: Path,
    limit: Optional[int],
    quiet: bool = False,
) -> tuple[int, int]:
    """Write the relabelled positions to ``out``; (positions written, skipped as
    finished games)."""
    searcher = Searcher(TranspositionTable(HASH_MB))
    searcher.use_network(nnue.load(eval_file) if eval_file is not None else None)
    evaluator = searcher.evaluator
    written = skipped = read = 0
    # A progress bar on a terminal only (disable=None), none with --quiet.
    with (
        atomic_output(out, compressed=True) as handle,
        tqdm(total=limit, unit="position", disable=quiet or None) as bar,
    ):
        for path in paths:
            for where, line in read_lines(path):
                if line.startswith(DONE):
                    # Kept, so that train holds out the same games as from the source.
                    handle.write(line + "\n")
                    continue
                if not line or line.startswith("#"):
                    continue
                if limit is not None and read >= limit:
                    return written, skipped
                read += 1
                bar.update()
                sample = parse_line(line, where)
                board = board_of(sample, where)
                if board.is_game_over():
                    skipped += 1
                    continue
                score = evaluator.evaluate(Position(board, searcher.network))
                white = score if board.turn == chess.WHITE else -score
                handle.write(format_sample(Sample(sample.fen, clip(white), sample.result)) + "\n")
                written += 1
    return written, skipped


def main(argv: Optional[list[str]] = None) -> int:
    parser = ToolParser(prog=PROG, description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path, nargs="+", help="labelled data files")
    parser.add_argument("--out", type=Path, required=True, help="output data file (.gz)")
    parser.add_argument("--eval-file", type=Path, help="a network file (default: none)")
    parser.add_argument("--max-positions", type=int, help="read at most this many")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    parser.require_positive(args, "max_positions")
    inputs = [*args.data, *([args.eval_file] if args.eval_file else [])]
    for path in inputs:
        if not path.is_file():
            parser.error(f"cannot read {str(path)!r}: no such file")
    if args.out.suffix != ".gz":
        parser.error(f"{str(args.out)!r}: the output is a gzip data file (.gz)")
    try:
        written, skipped = distill(
            args.data, args.eval_file, args.out, args.max_positions, args.quiet
        )
    except (DataError, nnue.NetworkError, UsageError, OSError) as error:
        print(f"{PROG}: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    print(f"wrote {written} positions to {args.out} (skipped, game over: {skipped})")
    return 0 if written else 1


if __name__ == "__main__":
    sys.exit(main())
