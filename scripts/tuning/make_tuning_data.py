"""Make labelled positions for Texel tuning from self-play games of a UCI engine.

Each game starts from an opening of an EPD/FEN file (game i takes opening
i mod count), plays ``--random-plies`` uniformly random legal moves seeded by
the game number, then lets the engine play both sides at ``go nodes K`` until
the game ends by the rules or by adjudication (a score of at least 1000 cp or a
mate for one side over 6 consecutive plies; a draw after ``--max-plies``
engine plies). Every position before an engine move, after the first
``--skip-plies`` of them, that is not in check and is quiet (no capture or
promotion wins material by static exchange) is written as ``FEN;SCORE;RESULT``
(the data format of scripts.training.dataset, gzip'd): SCORE the playing
engine's own score of it (cp, White's view, clipped to +-2000; ``python -m
scripts.training.datagen OUT.gz --fens FILE.gz`` replaces it with a deeper
search's), RESULT the game's final result from White's view (``1-0``,
``1/2-1/2``, ``0-1``). The games are played by the training data's self-play loop
(scripts.training.engines).

The same arguments give a byte-identical file: lines come in game order
whatever ``--workers`` is, every game starts the engine afresh with
``ucinewgame``, and node-limited searches with one thread do not depend on
the clock.

This script only makes data: it does not tune anything and it does not change
the engine. It writes nothing into the repository except the ``--out`` file.

Usage: python -m scripts.tuning.make_tuning_data --engine CMD --games N --nodes K --out FILE.gz
       [--seed S] [--openings EPD] [--random-plies R] [--workers W]
       [--max-plies P] [--skip-plies M]
"""

from __future__ import annotations

import argparse
import multiprocessing
import multiprocessing.util
import os
import signal
import sys
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Optional

from ..common import REPORTED_FAILURES, ToolParser, UsageError, report_failure
from ..matches.match_openings import DEFAULT_OPENINGS

# The self-play loop is the training data's (datagen plays the same games).
from ..training.dataset import Sample, clip, encode_member, format_sample
from ..training.engines import Config, GameRecord, GameRunner

PROG = "make_tuning_data"
PROGRESS_EVERY_GAMES = 50
RESULTS = ("1-0", "1/2-1/2", "0-1")


# Per-process state of pool workers: the config from the initializer, and the
# runner started on the first game (an initializer that raised would make the
# pool respawn workers forever).
_worker_config: Optional[Config] = None
_worker_runner: Optional[GameRunner] = None


def _worker_init(config: Config) -> None:
    global _worker_config
    _worker_config = config
    # Ctrl-C is handled once, by the parent, which then terminates the pool.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _worker_play(index: int) -> GameRecord:
    global _worker_runner
    if _worker_runner is None:
        assert _worker_config is not None
        _worker_runner = GameRunner(_worker_config)
        # Pool workers skip atexit; multiprocessing finalizers run when a
        # worker exits after pool.close(), so the engine gets its "quit".
        multiprocessing.util.Finalize(None, _worker_runner.close, exitpriority=10)
    return _worker_runner.play(index)


def parse_args(argv: Optional[list[str]]) -> argparse.Namespace:
    parser = ToolParser(prog=PROG, description=__doc__.splitlines()[0])
    parser.add_argument(
        "--engine", required=True, help="UCI engine command line (shlex-split; cwd = repo root)"
    )
    parser.add_argument("--games", type=int, required=True, help="number of games")
    parser.add_argument("--nodes", type=int, required=True, help="nodes per move (go nodes)")
    parser.add_argument(
        "--out", type=Path, required=True, help="output data file (.gz): FEN;SCORE;RESULT lines"
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the random plies")
    parser.add_argument(
        "--openings", default=str(DEFAULT_OPENINGS), help="EPD/FEN file of start positions"
    )
    parser.add_argument("--random-plies", type=int, default=4, help="random moves after opening")
    parser.add_argument("--workers", type=int, default=1, help="parallel games (processes)")
    parser.add_argument(
        "--first-game",
        type=int,
        default=0,
        help="number of the first game (runs over disjoint ranges concatenate to one longer run)",
    )
    parser.add_argument("--max-plies", type=int, default=400, help="engine plies before a draw")
    parser.add_argument("--skip-plies", type=int, default=8, help="engine plies not recorded")
    args = parser.parse_args(argv)
    parser.require_positive(args, "games", "nodes", "workers", "max_plies")
    parser.require_non_negative(args, "random_plies", "skip_plies", "first_game")
    if args.out.suffix != ".gz":
        parser.error(f"{str(args.out)!r}: the output is a gzip data file (.gz)")
    return args


def _play_all(config: Config, games: int, workers: int, first: int) -> Iterator[GameRecord]:
    """Game records in game order. The engine is started (and checked) first."""
    # The first engine is started here, in the parent, so that a bad --engine
    # is reported before any worker exists.
    runner = GameRunner(config)
    if workers == 1:
        try:
            for index in range(first, first + games):
                yield runner.play(index)
        finally:
            runner.close()
        return
    # Close before forking: the engine's I/O thread must not be copied.
    runner.close()
    pool = multiprocessing.Pool(min(workers, games), _worker_init, (config,))
    try:
        yield from pool.imap(_worker_play, range(first, first + games), chunksize=1)
        pool.close()
    except BaseException:
        pool.terminate()
        raise
    finally:
        pool.join()


def _write(records: Iterable[GameRecord], out_path: Path, games: int) -> tuple[int, list[int]]:
    """Write the records' samples, a gzip member a game (so that the files of disjoint
    ranges of games concatenate to the file of them all); positions written and W/D/L
    counts. The file is written beside itself and renamed when complete."""
    positions = 0
    tally = [0, 0, 0]  # indexed like RESULTS
    tmp_path = out_path.with_name(out_path.name + ".tmp")
    try:
        handle = tmp_path.open("wb")
    except OSError as exc:
        raise UsageError(f"cannot write {str(out_path)!r}: {exc.strerror or exc}") from None
    try:
        with handle:
            for done, record in enumerate(records, 1):
                tally[RESULTS.index(record.result)] += 1
                handle.write(
                    encode_member(
                        format_sample(Sample(fen, clip(score), record.result))
                        for fen, score in zip(record.fens, record.scores)
                    )
                )
                positions += len(record.fens)
                if done % PROGRESS_EVERY_GAMES == 0:
                    print(
                        f"{PROG}: {done}/{games} games, {positions} positions, "
                        f"W/D/L {tally[0]}/{tally[1]}/{tally[2]}",
                        file=sys.stderr,
                        flush=True,
                    )
        os.replace(tmp_path, out_path)
    except BaseException:
        tmp_path.unlink(missing_ok=True)
        raise
    return positions, tally


def main(argv: Optional[list[str]] = None) -> int:
    args = parse_args(argv)
    start = time.monotonic()
    try:
        config = Config.from_args(args)
        records = _play_all(config, args.games, args.workers, args.first_game)
        positions, tally = _write(records, args.out, args.games)
    except REPORTED_FAILURES as exc:
        return report_failure(PROG, exc)
    seconds = time.monotonic() - start
    print(
        f"games {args.games} positions {positions} "
        f"W/D/L {tally[0]}/{tally[1]}/{tally[2]} seconds {seconds:.1f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
