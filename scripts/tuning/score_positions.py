"""Add a UCI engine's search score to labelled positions (a second label for tuning).

    python -m scripts.tuning.score_positions IN --engine CMD --nodes K --out FILE [--workers W]

IN holds ``FEN;RESULT`` lines as ``make_tuning_data`` writes them.
Each position is searched with ``go nodes K`` from an empty hash (``ucinewgame``
before every position) and written as ``FEN;RESULT;SCORE``, SCORE being the
engine's score in centipawns from White's view, mates and larger scores clipped
to +-``SCORE_CLIP_CP``. ``tune --score-weight`` blends this score
with the game result as the fitting target: a search score says how good *this*
position is, where the result of a game played hundreds of moves on is a noisy
witness of it.

The same input and arguments give a byte-identical file whatever ``--workers``
is (lines keep their order; a node-limited search with one thread and an empty
hash does not depend on the clock or on the previous position).

This script only labels data: it does not tune anything, and it writes nothing
but the ``--out`` file.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.util
import signal
import sys
import time
from pathlib import Path
from typing import Optional

import chess
import chess.engine

from ..common import (
    REPORTED_FAILURES,
    ToolParser,
    UsageError,
    atomic_output,
    engine_command,
    report_failure,
)

# The one labeller of the data tools (datagen's), and the results make_tuning_data writes.
from ..training.engines import Labeller
from .make_tuning_data import RESULTS

PROG = "score_positions"
CHUNK = 500
PROGRESS_EVERY = 20_000


def read_positions(path: Path) -> list[str]:
    """The ``FEN;RESULT`` lines of ``path``, checked (a bad line is a UsageError)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot read {str(path)!r}: {exc.strerror or exc}") from None
    lines = []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line:
            continue
        fields = line.split(";")
        if len(fields) != 2 or fields[1] not in RESULTS:
            raise UsageError(f"{path}:{number}: expected FEN;RESULT, got {line[:60]!r}")
        try:
            chess.Board(fields[0])
        except ValueError as exc:
            raise UsageError(f"{path}:{number}: bad FEN: {exc}") from None
        lines.append(line)
    return lines


class Scorer:
    """The teacher of one worker: its label added to a line."""

    def __init__(self, engine_argv: list[str], nodes: int) -> None:
        # start_engine's hash (16 MB), not datagen's 4: the labels made so far used it.
        self.labeller = Labeller(engine_argv, nodes=nodes, hash_mb=None)

    def close(self) -> None:
        self.labeller.close()

    def score(self, line: str) -> str:
        cp, _ = self.labeller.label(chess.Board(line.split(";", 1)[0]))
        return f"{line};{cp}"


_worker: Optional[Scorer] = None
_worker_args: Optional[tuple[list[str], int]] = None


def _init(engine_argv: list[str], nodes: int) -> None:
    global _worker_args
    _worker_args = (engine_argv, nodes)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _score_chunk(lines: list[str]) -> list[str]:
    global _worker
    if _worker is None:
        assert _worker_args is not None
        _worker = Scorer(*_worker_args)
        multiprocessing.util.Finalize(None, _worker.close, exitpriority=10)
    return [_worker.score(line) for line in lines]


def score_all(
    lines: list[str], engine_argv: list[str], nodes: int, workers: int, out: Path
) -> None:
    """Score ``lines`` in order into ``out`` (written to a temporary file, then renamed)."""
    chunks = [lines[i : i + CHUNK] for i in range(0, len(lines), CHUNK)]
    # Start one engine here so that a bad --engine is reported before any worker exists.
    Scorer(engine_argv, nodes).close()
    done = 0
    with (
        atomic_output(out) as handle,
        multiprocessing.Pool(workers, _init, (engine_argv, nodes)) as pool,
    ):
        for scored in pool.imap(_score_chunk, chunks):
            handle.writelines(f"{line}\n" for line in scored)
            done += len(scored)
            if done % PROGRESS_EVERY < CHUNK:
                print(f"{PROG}: {done}/{len(lines)} positions", file=sys.stderr, flush=True)
        pool.close()
        pool.join()


def main(argv: Optional[list[str]] = None) -> int:
    parser = ToolParser(prog=PROG, description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path, help="FEN;RESULT file")
    parser.add_argument("--engine", required=True, help="UCI engine command line (shlex-split)")
    parser.add_argument("--nodes", type=int, required=True, help="nodes per search (go nodes)")
    parser.add_argument("--out", type=Path, required=True, help="output, FEN;RESULT;SCORE")
    parser.add_argument("--workers", type=int, default=1, help="engine processes")
    args = parser.parse_args(argv)
    if args.nodes <= 0 or args.workers <= 0:
        parser.error("--nodes and --workers must be positive")
    began = time.monotonic()
    try:
        engine_argv = engine_command(args.engine)
        lines = read_positions(args.data)
        score_all(lines, engine_argv, args.nodes, args.workers, args.out)
    except REPORTED_FAILURES as exc:
        return report_failure(PROG, exc)
    print(f"positions {len(lines)} seconds {time.monotonic() - began:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
