"""Make labelled positions for Texel tuning from self-play games of a UCI engine.

Each game starts from an opening of an EPD/FEN file (game i takes opening
i mod count), plays ``--random-plies`` uniformly random legal moves seeded by
the game number, then lets the engine play both sides at ``go nodes K`` until
the game ends by the rules or by adjudication (a score of at least 1000 cp or a
mate for one side over 6 consecutive plies; a draw after ``--max-plies``
engine plies). Every position before an engine move, after the first
``--skip-plies`` of them, that is not in check and is quiet (no capture or
promotion wins material by static exchange) is written as ``FEN;RESULT``,
with the game's final result from White's view (``1-0``, ``1/2-1/2``, ``0-1``).

The same arguments give a byte-identical file: lines come in game order
whatever ``--workers`` is, every game starts the engine afresh with
``ucinewgame``, and node-limited searches with one thread do not depend on
the clock.

This script only makes data: it does not tune anything and it does not change
the engine. It writes nothing into the repository except the ``--out`` file.

Usage: python -m scripts.tuning.make_tuning_data --engine CMD --games N --nodes K --out FILE
       [--seed S] [--openings EPD] [--random-plies R] [--workers W]
       [--max-plies P] [--skip-plies M]
"""

from __future__ import annotations

import argparse
import multiprocessing
import multiprocessing.util
import random
import shlex
import signal
import sys
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, NamedTuple, Optional

import chess
import chess.engine

# The quiet filter uses Cutoff's static exchange evaluation.
from engine.core.see import see_ge

from ..common import (
    REPORTED_FAILURES,
    TIMEOUT_ERRORS,
    EngineMoveError,
    ToolParser,
    UsageError,
    atomic_output,
    engine_command,
    quit_engine,
    report_failure,
)
from ..matches.errors import MatchError

# The match runner's openings reader and shipped openings.
from ..matches.match_openings import DEFAULT_OPENINGS
from ..matches.match_openings import load_openings as load_book

# The repository root (this file is scripts/tuning/make_tuning_data.py): the engine's
# working directory, so that ``--engine 'python -m engine'`` finds the checkout's engine.
REPO = Path(__file__).resolve().parents[2]

PROG = "make_tuning_data"

# Adjudication: a side is winning when the engine's score for it is at least
# this, and the game is called after that many consecutive plies of it.
ADJUDICATE_WIN_CP = 1000
ADJUDICATE_WIN_PLIES = 6
MATE_AS_CP = 100_000
# Small engine hash: searches of a few thousand nodes never fill it, and many
# workers must not multiply a large default.
ENGINE_HASH_MB = 16
# Multiplier that keeps the per-game random streams of nearby seeds apart.
SEED_STRIDE = 1_000_003
PROGRESS_EVERY_GAMES = 50

RESULTS = ("1-0", "1/2-1/2", "0-1")
DRAW = "1/2-1/2"


class Config(NamedTuple):
    """Everything a worker needs to play any game, picklable for the pool."""

    engine_argv: list[str]
    openings: list[str]  # FENs
    nodes: int
    seed: int
    random_plies: int
    max_plies: int
    skip_plies: int

    @classmethod
    def from_args(cls, args: Any) -> Config:
        """The play settings of this tool's arguments (datagen takes the same ones)."""
        return cls(
            engine_argv=engine_command(args.engine),
            openings=load_openings(Path(args.openings)),
            nodes=args.nodes,
            seed=args.seed,
            random_plies=args.random_plies,
            max_plies=args.max_plies,
            skip_plies=args.skip_plies,
        )


class GameRecord(NamedTuple):
    """One finished game: its result and the FENs of its kept positions.

    ``scores`` and ``moves`` run beside ``fens``: the engine's score of each kept
    position from White's view (mates as +-``MATE_AS_CP``, no score as 0) and the
    move it played there (UCI). The training data (scripts.training.datagen) can
    use them as labels; this script writes only the FENs and the result.
    """

    game: int
    result: str
    fens: list[str]
    scores: tuple[int, ...] = ()
    moves: tuple[str, ...] = ()


def start_engine(argv: list[str]) -> chess.engine.SimpleEngine:
    """Start the UCI engine with cwd = repository root (so ``-m engine`` works)."""
    try:
        engine = chess.engine.SimpleEngine.popen_uci(argv, cwd=str(REPO))
    except (OSError, chess.engine.EngineError, *TIMEOUT_ERRORS) as exc:
        raise UsageError(f"cannot start engine {shlex.join(argv)!r}: {exc}") from None
    try:
        options: dict[str, int] = {}
        # Threads=1 makes node-limited searches deterministic; set options only
        # if declared, since engines reject unknown ones.
        if "Threads" in engine.options:
            options["Threads"] = 1
        if "Hash" in engine.options:
            spec = engine.options["Hash"]
            low = spec.min if spec.min is not None else ENGINE_HASH_MB
            high = spec.max if spec.max is not None else ENGINE_HASH_MB
            options["Hash"] = min(max(ENGINE_HASH_MB, low), high)
        engine.configure(options)
    except (OSError, chess.engine.EngineError) as exc:
        engine.close()
        raise UsageError(f"engine {shlex.join(argv)!r} rejected its options: {exc}") from None
    return engine


def winning_side(score: Optional[chess.engine.PovScore]) -> int:
    """+1 when White is winning by the adjudication rule, -1 for Black, else 0."""
    if score is None:
        return 0
    # Mates map beyond any cp threshold, with their sign (also for mate 0).
    cp = white_cp(score)
    if cp >= ADJUDICATE_WIN_CP:
        return 1
    if cp <= -ADJUDICATE_WIN_CP:
        return -1
    return 0


def white_cp(score: Optional[chess.engine.PovScore]) -> int:
    """The score in cp from White's view, mates as +-``MATE_AS_CP`` (no score: 0)."""
    if score is None:
        return 0
    cp = score.white().score(mate_score=MATE_AS_CP)
    assert cp is not None
    return cp


def is_quiet(board: chess.Board) -> bool:
    """Not in check, and no capture or promotion wins material by static exchange.

    The test uses fixed exchange values, not the evaluation being tuned, so the
    data (and the weights fitted to it) do not depend on the weights in force
    when it was made.
    """
    if board.is_check():
        return False
    return not any(
        move.promotion or see_ge(board, move, 1)
        for move in board.generate_legal_moves()
        if move.promotion or board.is_capture(move)
    )


class GameRunner:
    """Plays games with one engine process; one runner per worker process."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.limit = chess.engine.Limit(nodes=config.nodes)
        self.engine = start_engine(config.engine_argv)

    def close(self) -> None:
        quit_engine(self.engine)

    def play(self, index: int) -> GameRecord:
        """Play game ``index`` from its opening and random plies to the end."""
        config = self.config
        board = chess.Board(config.openings[index % len(config.openings)])
        rng = random.Random(config.seed * SEED_STRIDE + index)
        for _ in range(config.random_plies):
            outcome = board.outcome(claim_draw=True)
            if outcome is not None:
                return GameRecord(index, outcome.result(), [])
            board.push(rng.choice(list(board.legal_moves)))

        fens: list[str] = []
        scores: list[int] = []
        moves: list[str] = []
        streak_side = 0
        streak = 0
        plies = 0
        while True:
            outcome = board.outcome(claim_draw=True)
            if outcome is not None:
                result = outcome.result()
                break
            if plies >= config.max_plies:
                result = DRAW
                break
            kept = plies >= config.skip_plies and is_quiet(board)
            if kept:
                fens.append(board.fen())
            # game=index makes python-chess send ucinewgame before the first
            # move of each game, so no game sees the previous game's hash.
            played = self.engine.play(board, self.limit, game=index, info=chess.engine.INFO_SCORE)
            if played.move is None or not board.is_legal(played.move):
                raise EngineMoveError(f"game {index}: no legal move for {board.fen()}")
            if kept:
                scores.append(white_cp(played.info.get("score")))
                moves.append(played.move.uci())
            board.push(played.move)
            plies += 1
            side = winning_side(played.info.get("score"))
            streak = streak + 1 if side != 0 and side == streak_side else int(side != 0)
            streak_side = side
            if streak >= ADJUDICATE_WIN_PLIES:
                result = "1-0" if side > 0 else "0-1"
                break
        return GameRecord(index, result, fens, tuple(scores), tuple(moves))


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


def load_openings(path: Path) -> list[str]:
    """FENs of the openings file, read as the match runner reads it (FEN/EPD or PGN)."""
    try:
        return [opening.board().fen() for opening in load_book(str(path))]
    except MatchError as exc:
        raise UsageError(str(exc)) from None


def parse_args(argv: Optional[list[str]]) -> argparse.Namespace:
    parser = ToolParser(prog=PROG, description=__doc__.splitlines()[0])
    parser.add_argument(
        "--engine", required=True, help="UCI engine command line (shlex-split; cwd = repo root)"
    )
    parser.add_argument("--games", type=int, required=True, help="number of games")
    parser.add_argument("--nodes", type=int, required=True, help="nodes per move (go nodes)")
    parser.add_argument("--out", required=True, help="output file, one FEN;RESULT per line")
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
    """Write the records' lines; returns positions written and W/D/L counts."""
    positions = 0
    tally = [0, 0, 0]  # indexed like RESULTS
    with atomic_output(out_path) as handle:
        for done, record in enumerate(records, 1):
            tally[RESULTS.index(record.result)] += 1
            handle.writelines(f"{fen};{record.result}\n" for fen in record.fens)
            positions += len(record.fens)
            if done % PROGRESS_EVERY_GAMES == 0:
                print(
                    f"{PROG}: {done}/{games} games, {positions} positions, "
                    f"W/D/L {tally[0]}/{tally[1]}/{tally[2]}",
                    file=sys.stderr,
                    flush=True,
                )
    return positions, tally


def main(argv: Optional[list[str]] = None) -> int:
    args = parse_args(argv)
    start = time.monotonic()
    try:
        config = Config.from_args(args)
        records = _play_all(config, args.games, args.workers, args.first_game)
        positions, tally = _write(records, Path(args.out), args.games)
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
