"""Label tuning positions with a UCI engine's search score (the tuner's target).

    python -m scripts.tuning.score_positions IN.gz --engine CMD --nodes K --out OUT.gz
        [--workers W]

IN is a data file (``FEN;SCORE;RESULT``, gzip or xz: scripts.training.dataset's
format) as ``make_tuning_data`` writes it. Each position is searched with ``go
nodes K`` from an empty hash (``ucinewgame`` before every position) by the data
tools' one labeller (scripts.training.engines.Labeller) and written to OUT with
SCORE replaced by the engine's score in centipawns from White's view, mates and
larger scores clipped to +-``SCORE_CLIP_CP``; RESULT is kept. ``tune
--score-weight`` blends this score with the game result as the fitting target: a
search score says how good *this* position is, where the result of a game played
hundreds of moves on is a noisy witness of it.

The same input and arguments give a byte-identical file whatever ``--workers``
is (lines keep their order; a node-limited search with one thread and an empty
hash does not depend on the clock or on the previous position).

This script only labels data: it does not tune anything, and it writes nothing
but the ``--out`` file.
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.util
import os
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
    engine_command,
    report_failure,
)

# The one labeller of the data tools (datagen's), and the results make_tuning_data writes.
from ..training.dataset import (
    DataError,
    Sample,
    board_of,
    encode_member,
    format_sample,
    read_records,
)
from ..training.engines import Labeller

PROG = "score_positions"
CHUNK = 500
PROGRESS_EVERY = 20_000


def read_positions(path: Path) -> list[Sample]:
    """The samples of the data file ``path``, checked (a bad line is a DataError)."""
    if not path.is_file():
        raise UsageError(f"cannot read {str(path)!r}: no such file")
    samples = []
    for where, record in read_records(path):
        if isinstance(record, Sample):
            board_of(record, where)
            samples.append(record)
    return samples


class Scorer:
    """The teacher of one worker: its label added to a line."""

    def __init__(self, engine_argv: list[str], nodes: int) -> None:
        # start_engine's hash (16 MB), not datagen's 4: the labels made so far used it.
        self.labeller = Labeller(engine_argv, nodes=nodes, hash_mb=None)

    def close(self) -> None:
        self.labeller.close()

    def score(self, sample: Sample) -> str:
        cp, _ = self.labeller.label(chess.Board(sample.fen))
        return format_sample(sample._replace(score=cp))


_worker: Optional[Scorer] = None
_worker_args: Optional[tuple[list[str], int]] = None


def _init(engine_argv: list[str], nodes: int) -> None:
    global _worker_args
    _worker_args = (engine_argv, nodes)
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _score_chunk(samples: list[Sample]) -> list[str]:
    global _worker
    if _worker is None:
        assert _worker_args is not None
        _worker = Scorer(*_worker_args)
        multiprocessing.util.Finalize(None, _worker.close, exitpriority=10)
    return [_worker.score(sample) for sample in samples]


def score_all(
    samples: list[Sample], engine_argv: list[str], nodes: int, workers: int, out: Path
) -> None:
    """Score ``samples`` in order into ``out``, a gzip member a chunk (written to a
    temporary file, then renamed)."""
    chunks = [samples[i : i + CHUNK] for i in range(0, len(samples), CHUNK)]
    # Start one engine here so that a bad --engine is reported before any worker exists.
    Scorer(engine_argv, nodes).close()
    done = 0
    tmp_path = out.with_name(out.name + ".tmp")
    try:
        with (
            tmp_path.open("wb") as handle,
            multiprocessing.Pool(workers, _init, (engine_argv, nodes)) as pool,
        ):
            for scored in pool.imap(_score_chunk, chunks):
                handle.write(encode_member(scored))
                done += len(scored)
                if done % PROGRESS_EVERY < CHUNK:
                    print(f"{PROG}: {done}/{len(samples)} positions", file=sys.stderr, flush=True)
            pool.close()
            pool.join()
        os.replace(tmp_path, out)
    except BaseException:
        tmp_path.unlink(missing_ok=True)
        raise


def main(argv: Optional[list[str]] = None) -> int:
    parser = ToolParser(prog=PROG, description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path, help="data file (gzip or xz FEN;SCORE;RESULT)")
    parser.add_argument("--engine", required=True, help="UCI engine command line (shlex-split)")
    parser.add_argument("--nodes", type=int, required=True, help="nodes per search (go nodes)")
    parser.add_argument("--out", type=Path, required=True, help="output data file (.gz)")
    parser.add_argument("--workers", type=int, default=1, help="engine processes")
    args = parser.parse_args(argv)
    if args.nodes <= 0 or args.workers <= 0:
        parser.error("--nodes and --workers must be positive")
    if args.out.suffix != ".gz":
        parser.error(f"{str(args.out)!r}: the output is a gzip data file (.gz)")
    began = time.monotonic()
    try:
        engine_argv = engine_command(args.engine)
        samples = read_positions(args.data)
        score_all(samples, engine_argv, args.nodes, args.workers, args.out)
    except DataError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    except REPORTED_FAILURES as exc:
        return report_failure(PROG, exc)
    print(f"positions {len(samples)} seconds {time.monotonic() - began:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
