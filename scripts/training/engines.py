"""The UCI engines the data tools drive: self-play games and a teacher's labels.

Responsible for starting an engine as every data tool does (the repository root as
its working directory, one thread, a small hash), the one self-play loop
(``GameRunner``: a game from an opening and seeded random plies to its end by the
rules or by adjudication, with the quiet positions it passed) and a teacher's search
(``Labeller``: one teacher process scoring a position from an empty hash). It plays
and searches; which positions are labelled, and the data file, are datagen's (the
labelling tool, which drives both); scripts.tuning's make_tuning_data uses the
self-play loop. This module writes nothing.
"""

from __future__ import annotations

import random
import shlex
import shutil
from pathlib import Path
from typing import Any, NamedTuple, Optional

import chess
import chess.engine

# The quiet filter uses Cutoff's static exchange evaluation, on its search board.
from engine.core.bitboards import move_promotion
from engine.core.board import Board
from engine.core.exchange import see_ge
from engine.core.movegen import noisy_moves

from ..common import (
    TIMEOUT_ERRORS,
    EngineMoveError,
    UsageError,
    engine_command,
    quit_engine,
)
from ..matches.errors import MatchError

# The match runner's openings reader.
from ..matches.match_openings import load_openings as load_book
from .dataset import clip

STOCKFISH_PATHS = ("stockfish", "/usr/games/stockfish")
TEACHER_HASH_MB = 4
"""The teacher's hash: cleared before every position (ucinewgame), so small is quick."""

# The repository root (this file is scripts/training/engines.py): the engine's
# working directory, so that ``--engine 'python -m engine'`` finds the checkout's engine.
REPO = Path(__file__).resolve().parents[2]

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
        """The play settings of a tool's arguments (datagen's and make_tuning_data's)."""
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
    move it played there (UCI): the labels of ``datagen --label-from-play`` and of
    ``make_tuning_data``.
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
    # No history needed: static exchange reads the position alone.
    native = Board.from_chess(board.copy(stack=False))
    if native.is_check():
        return False
    # The noisy moves are the legal captures and promotions.
    return not any(move_promotion(move) or see_ge(native, move, 1) for move in noisy_moves(native))


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


def load_openings(path: Path) -> list[str]:
    """FENs of the openings file, read as the match runner reads it (FEN/EPD or PGN)."""
    try:
        return [opening.board().fen() for opening in load_book(str(path))]
    except MatchError as exc:
        raise UsageError(str(exc)) from None


class Labeller:
    """One teacher engine process scoring positions from an empty hash."""

    def __init__(
        self,
        teacher: list[str],
        depth: Optional[int] = None,
        nodes: Optional[int] = None,
    ) -> None:
        self.engine = start_engine(teacher)
        if "Hash" in self.engine.options:
            self.engine.configure({"Hash": TEACHER_HASH_MB})
        self.limit = chess.engine.Limit(depth=depth, nodes=nodes)
        self.searches = 0

    def close(self) -> None:
        quit_engine(self.engine)

    def label(self, board: chess.Board) -> tuple[int, Optional[chess.Move]]:
        """The teacher's score (cp, White's view, clipped) and best move."""
        self.searches += 1
        # A new game per search sends ucinewgame: a label never depends on the order.
        info = self.engine.analyse(board, self.limit, game=self.searches)
        pv = info.get("pv")
        return clip(white_cp(info.get("score"))), pv[0] if pv else None


def teacher_command(text: Optional[str]) -> list[str]:
    """The teacher's command: ``text`` split as a shell would, else Stockfish on the
    PATH or where Debian installs it (a usage error if neither)."""
    if text is not None:
        return engine_command(text)
    for candidate in STOCKFISH_PATHS:
        found = shutil.which(candidate)
        if found:
            return [found]
    raise UsageError("no stockfish found (apt install stockfish), give --teacher CMD")
