"""Relabel training positions with Cutoff's own static evaluation (distillation).

    python -m scripts.training.distill DATA [DATA ...] --out OUT.gz
        [--eval-file NET.nnue] [--children K] [--seed S] [--max-positions N] [--quiet]

Every position of the data files (datagen's ``FEN;SCORE;RESULT`` lines, gzip or xz)
is written to OUT with SCORE replaced by the score the search's evaluator gives it
statically: the hand-written evaluation, or with ``--eval-file`` that network as the
search uses it (a correction added to the hand-written evaluation where its file
says so, the score clamped as in the search). The score is in centipawns from
White's view and clipped as datagen clips a teacher's; RESULT is kept. Positions of
a finished game (mate, stalemate) are left out and counted. The ``#done`` lines are
kept, so ``train`` holds out the same games as from the source files.

``--children K`` writes, after each position, up to K more: each one or two random
legal moves away from it (seeded by ``--seed``), labelled the same way and given the
position's RESULT. They follow their parent, so ``train`` holds them out with its
game. A child that ends the game is not written; children are not deduplicated.
This multiplies the labelled positions by up to K + 1 at the cost of the evaluation
alone, with positions near real play that a game would not reach.

Its use is to train a network to imitate an evaluation rather than Stockfish's
scores: labels that cost no teacher search, so any number of positions can be
labelled, and whose error says how much of that evaluation a network's inputs and
width can hold. OUT is one gzip member written beside itself and renamed when
complete (``train`` reads it like datagen's files). A progress bar counts the
positions on a terminal.

This module owns that relabelling and the random children. It must not play or
search for positions (datagen and leaves do) nor train (train does).
"""

from __future__ import annotations

import random
import sys
from pathlib import Path
from typing import Optional

import chess
from tqdm import tqdm

from engine.core import nnue
from engine.core.board import Board
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
    read_records,
)

PROG = "distill"
HASH_MB = 1
"""The searcher is used for its evaluator only: its table stays empty."""


def random_child(board: chess.Board, rng: random.Random) -> Optional[chess.Board]:
    """A position one or two random legal moves after ``board``, or None when the game
    ends on the way."""
    child = board.copy(stack=False)
    for _ in range(rng.choice((1, 2))):
        moves = list(child.legal_moves)
        if not moves:
            return None
        child.push(rng.choice(moves))
    return None if child.is_game_over() else child


def distill(
    paths: list[Path],
    eval_file: Optional[Path],
    out: Path,
    limit: Optional[int],
    quiet: bool = False,
    children: int = 0,
    seed: int = 1,
) -> tuple[int, int, int]:
    """Write the relabelled positions to ``out``, each followed by up to ``children``
    random children; (positions written, of which children, skipped as finished
    games)."""
    searcher = Searcher(TranspositionTable(HASH_MB))
    searcher.use_network(nnue.load(eval_file) if eval_file is not None else None)
    evaluator = searcher.evaluator
    rng = random.Random(seed)
    written = kids = skipped = read = 0

    def label(board: chess.Board) -> int:
        """The evaluator's score of ``board`` from White's view, clipped."""
        native = Board.from_chess(board)
        native.use_network(searcher.network)
        score = evaluator.evaluate(native)
        return clip(score if board.turn == chess.WHITE else -score)

    # A progress bar on a terminal only (disable=None), none with --quiet.
    with (
        atomic_output(out, compressed=True) as handle,
        tqdm(total=limit, unit="position", disable=quiet or None) as bar,
    ):
        for path in paths:
            for where, record in read_records(path):
                if not isinstance(record, Sample):
                    # Kept, so that train holds out the same games as from the source.
                    handle.write(DONE + record + "\n")
                    continue
                if limit is not None and read >= limit:
                    return written, kids, skipped
                read += 1
                bar.update()
                sample = record
                board = board_of(sample, where)
                if board.is_game_over():
                    skipped += 1
                    continue
                handle.write(format_sample(Sample(sample.fen, label(board), sample.result)) + "\n")
                written += 1
                for _ in range(children):
                    child = random_child(board, rng)
                    if child is None:
                        continue
                    child_sample = Sample(child.fen(), label(child), sample.result)
                    handle.write(format_sample(child_sample) + "\n")
                    written += 1
                    kids += 1
    return written, kids, skipped


def main(argv: Optional[list[str]] = None) -> int:
    parser = ToolParser(prog=PROG, description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path, nargs="+", help="labelled data files")
    parser.add_argument("--out", type=Path, required=True, help="output data file (.gz)")
    parser.add_argument("--eval-file", type=Path, help="a network file (default: none)")
    parser.add_argument(
        "--children", type=int, default=0, help="random children written after each (default 0)"
    )
    parser.add_argument("--seed", type=int, default=1, help="the children's seed (default 1)")
    parser.add_argument("--max-positions", type=int, help="read at most this many")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    parser.require_positive(args, "max_positions")
    parser.require_non_negative(args, "children")
    inputs = [*args.data, *([args.eval_file] if args.eval_file else [])]
    for path in inputs:
        if not path.is_file():
            parser.error(f"cannot read {str(path)!r}: no such file")
    if args.out.suffix != ".gz":
        parser.error(f"{str(args.out)!r}: the output is a gzip data file (.gz)")
    try:
        written, kids, skipped = distill(
            args.data,
            args.eval_file,
            args.out,
            args.max_positions,
            args.quiet,
            args.children,
            args.seed,
        )
    except (DataError, nnue.NetworkError, UsageError, OSError) as error:
        print(f"{PROG}: {error}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    print(
        f"wrote {written} positions to {args.out} (children: {kids}; skipped, game over: {skipped})"
    )
    return 0 if written else 1


if __name__ == "__main__":
    sys.exit(main())
