"""The UCI engines the data tools drive: self-play games and a teacher's labels.

Responsible for starting an engine as every data tool does (the repository root as
its working directory, one thread, a small hash), the one self-play loop
(``GameRunner``: a game from an opening and seeded random plies to its end by the
rules or by adjudication, with the quiet positions it passed; ``Game`` keeps its
repetitions, ``UciPlayer`` drives its engine through the engine's text, ``UciPipe``,
as python-chess's client would, without its thread) and a teacher's labels
(``Labeller``: one teacher process's search, its hash cleared at each work unit;
``StaticLabeller``: Stockfish's static evaluation, its ``eval`` command). It plays
and searches; which positions are labelled, and the data file, are datagen's (the
labelling tool, which drives both); scripts.tuning's make_tuning_data uses the
self-play loop. This module writes nothing.
"""

from __future__ import annotations

import collections
import contextlib
import math
import os
import queue
import random
import re
import shlex
import shutil
import subprocess
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple, Optional, Union

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
"""The teacher's hash: cleared at every work unit (ucinewgame), so small is quick, and
a label depends little on the positions of its unit searched before it."""
QUIT_SECONDS = 5.0
"""How long a static teacher may take to quit before it is killed."""

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


Key = tuple[int, int, int, int, int, int, int, int, bool, int, Optional[int]]


def position_key(board: chess.Board) -> Key:
    """What makes two positions the same for the repetition rules: python-chess's
    transposition key (pieces, side to move, castling rights, an en passant square
    only when the capture is legal), from its public attributes."""
    return (
        board.pawns,
        board.knights,
        board.bishops,
        board.rooks,
        board.queens,
        board.kings,
        board.occupied_co[chess.WHITE],
        board.occupied_co[chess.BLACK],
        board.turn,
        board.clean_castling_rights(),
        board.ep_square if board.has_legal_en_passant() else None,
    )


class Game:
    """A game's board and how often each position since its last irreversible move
    occurred, kept as moves are made, so that ``outcome`` is
    ``board.outcome(claim_draw=True)`` without replaying the game at every ply
    (python-chess's repetition tests pop and push every move back to the last
    irreversible one, and every legal move: a fifth of datagen's time)."""

    def __init__(self, board: chess.Board) -> None:
        self.board = board
        self.seen: collections.Counter[Key] = collections.Counter([position_key(board)])

    def push(self, move: chess.Move) -> None:
        board = self.board
        # python-chess's rule: a pawn move, a capture, a move that loses castling
        # rights or one from a position with a legal en passant capture is irreversible,
        # and no position before it can occur again.
        if board.is_irreversible(move):
            self.seen.clear()
        board.push(move)
        self.seen[position_key(board)] += 1

    def outcome(self) -> Optional[chess.Outcome]:
        """``board.outcome(claim_draw=True)``, its tests in its order, the repetitions
        counted from ``seen`` (standard chess: no variant ends)."""
        board = self.board
        termination = chess.Termination
        if board.is_checkmate():
            return chess.Outcome(termination.CHECKMATE, not board.turn)
        if board.is_insufficient_material():
            return chess.Outcome(termination.INSUFFICIENT_MATERIAL, None)
        if not any(board.generate_legal_moves()):
            return chess.Outcome(termination.STALEMATE, None)
        if board.is_seventyfive_moves():
            return chess.Outcome(termination.SEVENTYFIVE_MOVES, None)
        here = self.seen[position_key(board)]
        if here >= 5:
            return chess.Outcome(termination.FIVEFOLD_REPETITION, None)
        if board.can_claim_fifty_moves():
            return chess.Outcome(termination.FIFTY_MOVES, None)
        if here >= 3:
            return chess.Outcome(termination.THREEFOLD_REPETITION, None)
        # A legal move that makes a position of the segment occur a third time: only
        # possible if one occurred twice already (then tried as python-chess does).
        if any(count >= 2 for count in self.seen.values()):
            for move in board.generate_legal_moves():
                board.push(move)
                try:
                    if self.seen[position_key(board)] >= 2:
                        return chess.Outcome(termination.THREEFOLD_REPETITION, None)
                finally:
                    board.pop()
        return None


class GameRunner:
    """Plays games with one engine process; one runner per worker process."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.engine = UciPlayer(config.engine_argv)

    def close(self) -> None:
        self.engine.close()

    def play(self, index: int) -> GameRecord:
        """Play game ``index`` from its opening and random plies to the end."""
        config = self.config
        game = Game(chess.Board(config.openings[index % len(config.openings)]))
        board = game.board
        rng = random.Random(config.seed * SEED_STRIDE + index)
        for _ in range(config.random_plies):
            outcome = game.outcome()
            if outcome is not None:
                return GameRecord(index, outcome.result(), [])
            game.push(rng.choice(list(board.legal_moves)))

        fens: list[str] = []
        scores: list[int] = []
        moves: list[str] = []
        streak_side = 0
        streak = 0
        plies = 0
        while True:
            outcome = game.outcome()
            if outcome is not None:
                result = outcome.result()
                break
            if plies >= config.max_plies:
                result = DRAW
                break
            kept = plies >= config.skip_plies and is_quiet(board)
            if kept:
                fens.append(board.fen())
            # A new game number sends ucinewgame before the game's first move, so no
            # game sees the previous game's hash.
            move, score = self.engine.play(board, config.nodes, index)
            if move is None or not board.is_legal(move):
                raise EngineMoveError(f"game {index}: no legal move for {board.fen()}")
            if kept:
                scores.append(white_cp(score))
                moves.append(move.uci())
            game.push(move)
            plies += 1
            side = winning_side(score)
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
    """One teacher engine process's search of positions, work unit by work unit.

    The teacher's hash and history are cleared (``ucinewgame``) when a work unit
    starts (``new_unit``: a game, a chunk of a FEN file), not before every position:
    clearing Stockfish's tables costs more than a depth-5 search (datagen made 286
    positions/s at depth 5 on one core with a clear per position, 517 with one per
    unit). So a label may depend on the positions
    searched before it *in its unit* (through a ``TEACHER_HASH_MB`` hash and the
    move-ordering history), never on another unit's: a unit's labels are the same
    whichever process, run or ``--jobs`` labels it, as long as it gets the same
    positions in the same order.
    """

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
        self.unit = 0

    def close(self) -> None:
        quit_engine(self.engine)

    def new_unit(self) -> None:
        """The next positions are a new work unit's: ``ucinewgame`` before the next."""
        self.unit += 1

    def label(self, board: chess.Board) -> Optional[tuple[int, Optional[chess.Move]]]:
        """The teacher's score (cp, White's view, clipped) and best move."""
        # python-chess sends ucinewgame when ``game`` differs from the last search's.
        info = self.engine.analyse(board, self.limit, game=self.unit)
        pv = info.get("pv")
        return clip(white_cp(info.get("score"))), pv[0] if pv else None


STATIC_TIMEOUT = 30.0
"""Seconds a static teacher may take to start, or to answer one position."""
_FINAL_EVALUATION = re.compile(r"^Final evaluation\s*:?\s*(\S+)(.*)$")
_WHITE_SIDE = re.compile(r"^\s*\(white side\)")


def stockfish_static_pawns(lines: Sequence[str]) -> Optional[float]:
    """Stockfish 15.1's ``eval`` output as pawns from White's view; None in check
    (``Final evaluation: none (in check)``). ``ValueError`` when no line reads."""
    for line in lines:
        found = _FINAL_EVALUATION.match(line.strip())
        if found is None:
            continue
        value, rest = found.groups()
        if value == "none" and "in check" in rest:
            return None
        try:
            pawns = float(value)
        except ValueError:
            pawns = math.nan
        if not math.isfinite(pawns) or not _WHITE_SIDE.match(rest):
            raise ValueError(f"cannot read a static evaluation from {line.strip()!r}")
        return pawns
    raise ValueError("no 'Final evaluation' line after eval")


class UciPipe:
    """An engine process driven through its text: started with the repository root as
    its working directory and stdin a pipe (so it ends when this process does, even
    if ``close`` never runs: engines quit at the end of their input), a thread
    reading what it writes, so that a silent engine is a time-out (``timeout``
    seconds an answer), not a hang. ``role`` names it in messages (``teacher``).
    Failures are ``EngineMoveError``s naming the command and the line."""

    def __init__(self, argv: list[str], timeout: float, role: str) -> None:
        self.argv = argv
        self.name = shlex.join(argv)
        self.timeout = timeout
        self.role = role
        # The reader thread hands over what the engine wrote as it comes, a block at a
        # time (not a line: ``eval`` writes some 70 lines a position, and a queue
        # operation a line cost a tenth of datagen's time); ``_line`` cuts the lines.
        self.blocks: queue.Queue[Optional[bytes]] = queue.Queue()
        self.ready: collections.deque[str] = collections.deque()
        self.partial = b""
        self.ended = False
        try:
            self.process = subprocess.Popen(
                argv,
                cwd=str(REPO),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                bufsize=0,
            )
        except OSError as exc:
            raise UsageError(f"cannot start engine {self.name!r}: {exc}") from None
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        with contextlib.suppress(OSError, ValueError):
            while block := os.read(stdout.fileno(), 1 << 16):
                self.blocks.put(block)
        self.blocks.put(None)  # end of output: the process is gone

    def _line(self, deadline: float) -> Optional[str]:
        """The teacher's next line (None: it ended); queue.Empty after ``deadline``."""
        while not self.ready:
            if self.ended:
                return None
            block = self.blocks.get(timeout=max(0.0, deadline - time.monotonic()))
            if block is None:
                self.ended = True
                if self.partial:
                    self.ready.append(self.partial.decode("utf-8", "replace").rstrip("\r"))
                    self.partial = b""
                continue
            *lines, self.partial = (self.partial + block).split(b"\n")
            self.ready.extend(line.decode("utf-8", "replace").rstrip("\r") for line in lines)
        return self.ready.popleft()

    def _send(self, *lines: str) -> None:
        stdin = self.process.stdin
        assert stdin is not None
        try:
            # One write for the lines of a position: a system call each cost more.
            stdin.write("".join(line + "\n" for line in lines).encode("utf-8"))
            stdin.flush()
        except (OSError, ValueError):
            raise EngineMoveError(
                f"{self.role} {self.name!r} is gone (sending {lines[0]!r})"
            ) from None

    def _until(self, token: str) -> list[str]:
        """The lines before the line ``token``."""
        seen: list[str] = []
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                line = self._line(deadline)
            except queue.Empty:
                raise EngineMoveError(
                    f"{self.role} {self.name!r} did not say {token!r} within {self.timeout:g} s"
                ) from None
            if line is None:
                last = next((text for text in reversed(seen) if text.strip()), "")
                raise EngineMoveError(
                    f"{self.role} {self.name!r} ended before {token!r} (last line {last!r})"
                )
            if line.strip() == token:
                return seen
            seen.append(line)

    def close(self) -> None:
        """Quit the engine (kill it if it does not within a few seconds)."""
        with contextlib.suppress(EngineMoveError):
            self._send("quit")
        with contextlib.suppress(OSError, ValueError):
            assert self.process.stdin is not None
            self.process.stdin.close()
        try:
            self.process.wait(QUIT_SECONDS)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.reader.join(QUIT_SECONDS)
        if self.process.stdout is not None:
            self.process.stdout.close()


PLAY_TIMEOUT = 60.0
"""Seconds a self-play engine may take to start, or to answer one move."""


def _uci_options(lines: list[str]) -> dict[str, dict[str, str]]:
    """The options an engine declares (its ``option name N type T ...`` lines before
    ``uciok``), by lower-case name: each option's name, type, default, min and max."""
    found: dict[str, dict[str, str]] = {}
    keys = ("name", "type", "default", "min", "max", "var")
    for line in lines:
        words = line.split()
        if not words or words[0] != "option":
            continue
        fields: dict[str, list[str]] = {}
        current = None
        for word in words[1:]:
            if word in keys and (current != "name" or word == "type"):
                current = word
                fields.setdefault(word, [])
            elif current is not None:
                fields[current].append(word)
        name = " ".join(fields.get("name", []))
        if name:
            found[name.lower()] = {key: " ".join(value) for key, value in fields.items()}
            found[name.lower()]["name"] = name
    return found


class UciPlayer(UciPipe):
    """A self-play engine's moves, sent as python-chess's ``SimpleEngine.play`` with a
    node limit, a game and ``INFO_SCORE`` sends them (the same commands, so the same
    games), without python-chess's event-loop thread, whose round trip cost as much
    as Stockfish's own search at 300 nodes (0.5 ms a move each, measured).

    At the start: ``uci``, then, as ``start_engine`` configures, ``Threads`` 1 and a
    ``ENGINE_HASH_MB`` hash if declared; before the first search the options
    python-chess's ``play`` sets if declared (``UCI_AnalyseMode`` and ``Ponder``
    off, ``MultiPV`` its default); ``ucinewgame`` and ``isready`` when the game
    changes; ``UCI_Chess960`` off before the first position; then ``position fen
    ROOT moves ...`` (``startpos`` for the standard start) and ``go nodes N``. The
    score is the last ``score`` of the search's ``info`` lines, as python-chess reads
    it. An engine that dies, is silent for ``PLAY_TIMEOUT`` seconds or plays no move
    is an ``EngineMoveError``."""

    def __init__(self, argv: list[str]) -> None:
        super().__init__(argv, PLAY_TIMEOUT, "engine")
        try:
            self._send("uci")
            said = self._until("uciok")
        except EngineMoveError as exc:
            self.close()
            raise UsageError(f"cannot start engine {self.name!r}: {exc}") from None
        options = _uci_options(said)
        setup = []
        if "threads" in options:
            setup.append("setoption name Threads value 1")
        if "hash" in options:
            spec = options["hash"]
            try:
                low = int(spec.get("min", ENGINE_HASH_MB))
                high = int(spec.get("max", ENGINE_HASH_MB))
            except ValueError:
                low = high = ENGINE_HASH_MB
            setup.append(f"setoption name Hash value {min(max(ENGINE_HASH_MB, low), high)}")
        if setup:
            self._send(*setup)
        self.before_first: list[str] = []
        if "uci_analysemode" in options:
            self.before_first.append("setoption name UCI_AnalyseMode value false")
        if "ponder" in options:
            self.before_first.append("setoption name Ponder value false")
        if "multipv" in options:
            default = options["multipv"].get("default", "")
            value = f" value {int(default)}" if default.lstrip("-").isdigit() else ""
            self.before_first.append(f"setoption name MultiPV{value}")
        self.before_position: list[str] = []
        if "uci_chess960" in options:
            self.before_position.append("setoption name UCI_Chess960 value false")
        self.game: Optional[int] = None

    def play(
        self, board: chess.Board, nodes: int, game: int
    ) -> tuple[Optional[chess.Move], Optional[chess.engine.PovScore]]:
        """The engine's move in ``board`` (game ``game``) at ``go nodes``, and its score."""
        if self.game != game:
            lines, self.before_first = self.before_first, []
            self.game = game
            self._send(*lines, "ucinewgame", "isready")
            self._until("readyok")
        root = board.root().fen(en_passant="fen")
        command = "position startpos" if root == chess.STARTING_FEN else f"position fen {root}"
        if board.move_stack:
            command += " moves " + " ".join(move.uci() for move in board.move_stack)
        lines, self.before_position = self.before_position, []
        self._send(*lines, command, f"go nodes {nodes}")
        score: Optional[chess.engine.PovScore] = None
        deadline = time.monotonic() + self.timeout
        while True:
            try:
                line = self._line(deadline)
            except queue.Empty:
                raise EngineMoveError(
                    f"engine {self.name!r} did not move within {self.timeout:g} s"
                ) from None
            if line is None:
                raise EngineMoveError(f"engine {self.name!r} ended before its move")
            parts = line.split(maxsplit=1)
            token = parts[0] if parts else ""
            rest = parts[1] if len(parts) == 2 else ""
            if token == "info":
                found = _info_score(rest, board.turn)
                score = found if found is not None else score
            elif token == "bestmove":
                words = rest.split()
                if not words or words[0] in ("(none)", "NULL"):
                    return None, score
                try:
                    return board.parse_uci(words[0].lower()), score
                except ValueError:
                    return None, score


def _info_score(text: str, turn: chess.Color) -> Optional[chess.engine.PovScore]:
    """The score of an ``info`` line (None if it has none), as python-chess reads it:
    ``score cp N`` or ``score mate N``, from the side to move; ``string`` ends it."""
    tokens = text.split(" ")
    found = None
    for at, token in enumerate(tokens):
        if token == "string":
            break
        if token == "score" and at + 2 < len(tokens):
            kind, value = tokens[at + 1], tokens[at + 2]
            try:
                if kind == "cp":
                    found = chess.engine.PovScore(chess.engine.Cp(int(value)), turn)
                elif kind == "mate":
                    found = chess.engine.PovScore(chess.engine.Mate(int(value)), turn)
            except ValueError:
                pass
    return found


class StaticLabeller(UciPipe):
    """One teacher process's static evaluation of positions: Stockfish's ``eval``.

    ``eval`` is not UCI, so python-chess cannot send it: this class drives the
    process's text itself, and owns nothing else. It starts the teacher (the
    repository root as working directory, stdin a pipe, so the teacher ends when
    this process does even if ``close`` never runs: Stockfish quits at the end of
    its input), waits for ``uciok``/``readyok``, and for each position sends
    ``position fen FEN``, ``eval`` and ``isready``, and reads up to ``readyok``. The
    label is the line ``Final evaluation +0.25 (white side)``: pawns from White's
    view, times 100 (Stockfish 15.1 prints its UCI centipawns divided by 100). A
    position in check has no static evaluation (``Final evaluation: none (in
    check)``): ``label`` returns None. Anything else, or no answer within
    ``STATIC_TIMEOUT`` seconds, is an ``EngineMoveError`` naming the teacher command
    and the line. A static evaluation reads no table: labels do not depend on order.
    """

    def __init__(self, teacher: list[str], timeout: float = STATIC_TIMEOUT) -> None:
        super().__init__(teacher, timeout, "teacher")
        self.id_name = ""
        """The teacher's ``id name`` (``Stockfish 15.1``), for the data's provenance."""
        try:
            self._send("uci")
            said = self._until("uciok")
            names = [line.split(None, 2)[2:] for line in said if line.startswith("id name")]
            self.id_name = names[0][0].strip() if names and names[0] else ""
            self._send("isready")
            self._until("readyok")
        except EngineMoveError:
            self.close()
            raise

    def new_unit(self) -> None:
        """Nothing to clear: a static evaluation reads no table."""

    def label(self, board: chess.Board) -> Optional[tuple[int, Optional[chess.Move]]]:
        """The static evaluation (cp, White's view, clipped) and no move; None in check."""
        self._send(f"position fen {board.fen()}", "eval", "isready")
        lines = self._until("readyok")
        try:
            pawns = stockfish_static_pawns(lines)
        except ValueError as exc:
            last = next((line for line in reversed(lines) if line.strip()), "")
            raise EngineMoveError(
                f"teacher {self.name!r}: {exc} (last line {last!r}) for {board.fen()}"
            ) from None
        return None if pawns is None else (clip(round(pawns * 100)), None)


Teacher = Union[Labeller, StaticLabeller]
"""What labels a position: a teacher's search or its static evaluation."""


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
