"""Make labelled training positions for the learned evaluation (issue 68).

    python -m scripts.training.datagen (OUT.gz | --store DIR [--manifests M]
        [--games-per-chunk G]) [--games N --engine CMD --nodes K ...]
        [--pgn FILE ...] [--fens FILE ...] (--label-depth D | --label-nodes K |
        --label-static | --label-from-play) [--teacher CMD] [--jobs N | --scheduler ADDR]

Positions come from three sources, in this order:

* ``--games N``: self-play games of ``--engine`` (default: the ``cutoff`` engine of
  this checkout) at ``go nodes K``, from the shipped openings plus ``--random-plies``
  seeded random moves, played by scripts.training.engines' self-play loop (which
  also adjudicates and keeps only positions not in check where no capture or
  promotion wins material by Cutoff's static exchange evaluation);
* ``--pgn FILE``: every position of every game of match PGNs, gzip'd ones too (the
  games kept by scripts.training.games), with the result from the ``Result``
  header, after the first ``--skip-plies`` plies, put through the same quiet test;
* ``--fens FILE``: a text file of one position a line, a FEN or an EPD line, with
  the result after it (``FEN;RESULT``, ``FEN;*``: the lists ``leaves`` writes) or
  after a score (``FEN;SCORE;RESULT``), through the same quiet test; or a data file
  (``.gz`` or ``.xz``: scripts.training.dataset's format, datagen's or
  make_tuning_data's output), *relabelled whole*: every position kept, in its order,
  with its RESULT, and each work unit (a game) kept one, its ``#done`` line after it
  (the positions after the last ``#done`` are relabelled in chunks, each one a unit),
  so ``train`` holds out the same games. This is how the project relabels data
  (a deeper teacher, the tuner's target: docs/tuning.md).

Every position of the other sources must also pass Cutoff's quiescence search: its
score must not have the opposite sign of the static evaluation
(``--no-qsearch-check`` skips this).

Every position is labelled by the teacher (``--teacher``, default Debian's Stockfish)
at ``--label-depth`` or ``--label-nodes``, its hash cleared when a work unit (a game,
200 lines of a FEN file, a data file's unit) starts, not before every position (1.8
times faster at depth 5 on one core): a label may depend on the positions of its unit labelled
before it, never on another unit's, so the same command writes the same file with
any ``--jobs``, and a resumed run what an uninterrupted one would. With
``--label-static`` it is the teacher's static evaluation (Stockfish's ``eval``
command, no search and no best move; a position in check has none and is dropped,
counted as not quiet, from a data file too). With ``--label-from-play`` it is the
score of the self-play search that played from it (no second search: the fast road
when the self-play engine is the teacher). Positions whose best move (the
teacher's, or the move played) is a capture or a promotion are dropped too, as the
usual trainers do (not those of a data file). Positions are deduplicated by Zobrist
key (python-chess's polyglot key) against everything in the file (a data file's are
all kept); one already sent to the teacher by an earlier unit of the same command is
not labelled again.

The output is the gzip'd ``FEN;SCORE;RESULT`` format of scripts.training.dataset,
appended a batch (a gzip member) at a time with ``#done TASK`` lines: run the same
command again after an interruption and it cuts a torn last batch, skips the games
and chunks already done and appends the rest. The work runs through the project's
execution layer (engine.analysis.parallel): in this process, in ``--jobs`` local processes or
on a Dask scheduler (``--scheduler tcp://HOST:8786`` or ``local:N``).

With ``--store DIR`` the output is a store instead (scripts.training.store: 32-byte
records, a chunk file and a JSON manifest per chunk, ``--manifests M`` a copy of the
manifests to commit). The work units, in command-line order (the games from
``--first-game``, then the PGN games, then the FEN units), are cut into chunks of
``--games-per-chunk``: chunk k is units [k*G, (k+1)*G), a rule of the command line
alone. A chunk is written, chunk then manifest, when its last unit is in; a rerun of
the command skips every chunk whose manifest has the same settings and units and
whose bytes match it, and remakes the others (torn, missing, damaged, or a failed
unit's); a larger ``--games`` adds chunks. A store made with other settings (every
option but ``--games`` and the execution options) is refused. Positions are kept
once in the whole store (records' position bytes, as ``store dedup``): the positions
of the chunks kept are read at start, a chunk's join them when it is written, so a
resumed run makes the store an uninterrupted one makes.

It is the project's one tool that labels positions with a teacher engine: it chooses
the positions, filters, deduplicates and writes them; the engines themselves (the
self-play loop, the teacher's search) are driven through scripts.training.engines.
The positions the search evaluates are made by ``leaves``; the store's format and
commands are records' and store's. This tool writes nothing but OUT or the store.
It must not train (train does).
"""

from __future__ import annotations

import shlex
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple, Optional, Union

import chess
import chess.engine
import chess.polyglot
import numpy as np
from tqdm import tqdm

from engine.analysis.parallel import (
    SchedulerLostError,
    SchedulerUnavailableError,
    run_ordered,
    worker_state,
)

from ..common import (
    REPORTED_FAILURES,
    EngineMoveError,
    ToolParser,
    UsageError,
    quit_engine,
    report_failure,
)
from ..matches.match_openings import DEFAULT_OPENINGS
from . import records
from .dataset import (
    DONE,
    RESULTS,
    UNKNOWN,
    DataError,
    Sample,
    append_member,
    board_of,
    clip,
    format_sample,
    read_lines,
    read_records,
    recover,
    refuse_archive,
)
from .engines import (
    Config,
    GameRunner,
    Labeller,
    StaticLabeller,
    Teacher,
    is_quiet,
    start_engine,
    teacher_command,
)
from .games import open_pgn
from .records import Header, RecordError
from .store import (
    PositionIndex,
    Store,
    chunk_name,
    manifest_name,
    record_hashes,
    sha256_of,
    stored_hashes,
)

PROG = "datagen"
FENS_PER_TASK = 200
"""Positions of a ``--fens`` file (or after a data file's last ``#done``) per work unit."""
FLUSH_SECONDS = 5.0
"""How often finished work is appended (a gzip member): what an interruption can lose."""
QSEARCH_HASH_MB = 1
"""The quiet check's table: a quiescence search of a quiet position is small."""
DEFAULT_ENGINE = f"{shlex.quote(sys.executable)} -m engine"
"""The self-play engine by default: this checkout's cutoff."""
GAMES_PER_CHUNK = 1000
"""Work units a store chunk by default: about 44,000 positions of Stockfish self-play
at 300 nodes (1.4 MB), about a minute of two cores: what an interruption can lose."""


class Task(NamedTuple):
    """A work unit: one self-play game (``game`` >= 0) or a list of positions."""

    ident: str
    game: int
    positions: tuple[tuple[str, str], ...]  # (FEN, result)
    whole: bool = False  # a data file's unit: relabelled whole, none dropped


class TaskResult(NamedTuple):
    """What a work unit gave: samples with their Zobrist keys, and what it dropped."""

    ident: str
    samples: list[Sample]
    keys: list[int]
    not_quiet: int
    noisy_best: int
    error: str = ""
    whole: bool = False


class Settings(NamedTuple):
    """Everything a worker needs, picklable."""

    play: Optional[Config]
    teacher: list[str]
    label_depth: Optional[int]
    label_nodes: Optional[int]
    label_from_play: bool
    qsearch_check: bool = True
    label_static: bool = False


def _noisy(board: chess.Board, move: Optional[chess.Move]) -> bool:
    return move is not None and (move.promotion is not None or board.is_capture(move))


class QuietCheck:
    """Cutoff's quiescence search against its static evaluation, from an empty table."""

    def __init__(self) -> None:
        from engine.core.search import Searcher
        from engine.core.tt import TranspositionTable

        self.searcher = Searcher(TranspositionTable(QSEARCH_HASH_MB))

    def agrees(self, board: chess.Board) -> bool:
        """Whether the quiescence score has the static evaluation's sign (or either is 0)."""
        from engine.core.board import Board

        # Cleared each time: a verdict must not depend on what was checked before.
        self.searcher.tt.clear()
        quiet = self.searcher.quiescence(board)
        static = self.searcher.evaluator.evaluate(Board.from_chess(board))
        return quiet * static >= 0


@dataclass
class _Worker:
    settings: Settings
    runner: Optional[GameRunner] = None
    labeller: Optional[Teacher] = None
    checker: Optional[QuietCheck] = None

    def quiet(self) -> QuietCheck:
        if self.checker is None:
            self.checker = QuietCheck()
        return self.checker

    def close(self) -> None:
        for engine in (self.runner, self.labeller):
            if engine is not None:
                engine.close()
        self.runner = self.labeller = None

    def play(self) -> GameRunner:
        if self.runner is None:
            assert self.settings.play is not None
            self.runner = GameRunner(self.settings.play)
        return self.runner

    def teacher(self) -> Teacher:
        if self.labeller is None:
            settings = self.settings
            if settings.label_static:
                self.labeller = StaticLabeller(settings.teacher)
            else:
                self.labeller = Labeller(
                    settings.teacher, settings.label_depth, settings.label_nodes
                )
        return self.labeller


def _worker(settings: Settings) -> _Worker:
    """This process's engines for ``settings`` (started on first use, kept between chunks)."""
    state = worker_state()
    worker: Optional[_Worker] = state.get(PROG)
    if worker is not None and worker.settings != settings:
        worker.close()
        worker = None
    if worker is None:
        import multiprocessing.util

        worker = state[PROG] = _Worker(settings)
        # Pool workers skip atexit; multiprocessing's finalizers run as they exit, so
        # the engines get their "quit".
        multiprocessing.util.Finalize(None, worker.close, exitpriority=10)
    return worker


def close_workers() -> None:
    """Quit the engines this process started (the in-process run, --jobs 1)."""
    worker = worker_state().pop(PROG, None)
    if worker is not None:
        worker.close()


def _run_task(worker: _Worker, task: Task) -> TaskResult:
    settings = worker.settings
    samples: list[Sample] = []
    keys: list[int] = []
    not_quiet = noisy = 0
    if task.game >= 0:
        record = worker.play().play(task.game)
        positions: list[tuple[str, str]] = [(fen, record.result) for fen in record.fens]
        played = list(zip(record.scores, record.moves))
    else:
        positions = list(task.positions)
        played = []
    if worker.labeller is not None:
        # A work unit's labels depend on its own positions only (engines.Labeller).
        worker.labeller.new_unit()
    for index, (fen, result) in enumerate(positions):
        board = chess.Board(fen)
        # A data file's positions were chosen by the tool that made them; self-play
        # positions passed the same quiet test in the game loop.
        kept = task.whole or (
            (task.game >= 0 or is_quiet(board))
            and (not settings.qsearch_check or worker.quiet().agrees(board))
        )
        if not kept:
            not_quiet += 1
            continue
        if settings.label_from_play:
            score, uci = played[index]
            label: Optional[tuple[int, Optional[chess.Move]]] = (
                clip(score),
                chess.Move.from_uci(uci),
            )
        else:
            label = worker.teacher().label(board)
        if label is None:
            # In check: no static evaluation (--label-static), not quiet by is_quiet's rule.
            not_quiet += 1
            continue
        cp, best = label
        if _noisy(board, best) and not task.whole:
            noisy += 1
            continue
        samples.append(Sample(fen, cp, result))
        keys.append(chess.polyglot.zobrist_hash(board))
    return TaskResult(task.ident, samples, keys, not_quiet, noisy, whole=task.whole)


def work_chunk(settings: Settings, tasks: list[Task]) -> list[TaskResult]:
    """The execution layer's task function: run ``tasks`` with this process's engines."""
    worker = _worker(settings)
    return [_run_task(worker, task) for task in tasks]


def failed_chunk(tasks: list[Any], error: BaseException) -> list[Any]:
    """A chunk that failed on every attempt: results that say so (not marked done)."""
    message = f"{type(error).__name__}: {error}"
    return [TaskResult(task.ident, [], [], 0, 0, message) for task in tasks]


# ----------------------------------------------------------------- the sources


def pgn_tasks(path: Path, skip_plies: int, errors: list[str]) -> Iterator[Task]:
    """One task per game of a PGN file (gzip'd or not): its positions before each move."""
    for number, game in open_pgn(path, errors.append):
        result = game.headers.get("Result", UNKNOWN)
        result = result if result in RESULTS else UNKNOWN
        board = game.board()
        positions = []
        for ply, move in enumerate(game.mainline_moves()):
            if ply >= skip_plies:
                positions.append((board.fen(), result))
            board.push(move)
        yield Task(f"pgn:{path.name}:{number}", -1, tuple(positions))


def _board(text: str) -> chess.Board:
    """A full FEN, or an EPD line (its operations dropped)."""
    try:
        return chess.Board(text)
    except ValueError:
        return chess.Board.from_epd(text)[0]


def _result(fields: list[str]) -> str:
    """The result of a text line's fields: ``FEN;RESULT[;...]`` or ``FEN;SCORE;RESULT``."""
    if len(fields) > 1 and fields[1] in RESULTS:
        return fields[1]
    if len(fields) > 2 and fields[2] in RESULTS and fields[1].lstrip("-").isdigit():
        return fields[2]
    return UNKNOWN


def data_tasks(path: Path) -> Iterator[Task]:
    """A data file's tasks, relabelled whole: one per work unit (its positions up to its
    ``#done`` line, named after it), then chunks of ``FENS_PER_TASK`` of the positions
    after the last ``#done``."""
    if not path.is_file():
        raise UsageError(f"cannot read {str(path)!r}: no such file")
    positions: list[tuple[str, str]] = []
    first = 0
    for where, record in read_records(path):
        if isinstance(record, Sample):
            board_of(record, where)
            if not positions:
                first = int(where.rsplit(":", 1)[1])
            positions.append((record.fen, record.result))
        else:
            yield Task(f"data:{path.name}:{record}", -1, tuple(positions), whole=True)
            positions = []
    for at in range(0, len(positions), FENS_PER_TASK):
        chunk = tuple(positions[at : at + FENS_PER_TASK])
        yield Task(f"data:{path.name}:{first}+{at}", -1, chunk, whole=True)


def fen_tasks(path: Path) -> Iterator[Task]:
    """Tasks of ``FENS_PER_TASK`` lines of a text file of positions (FEN or EPD, with a
    result: see ``_result``), or a data file's (``data_tasks``)."""
    if path.suffix in (".gz", ".xz"):
        yield from data_tasks(path)
        return
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot read {str(path)!r}: {exc.strerror or exc}") from None
    positions: list[tuple[str, str]] = []
    first = 1
    for number, line in enumerate(text.splitlines(), 1):
        fields = [field.strip() for field in line.split(";")]
        if not fields[0] or fields[0].startswith("#"):
            continue
        result = _result(fields)
        try:
            board = _board(fields[0])
        except ValueError as exc:
            raise UsageError(f"{path}:{number}: bad FEN: {exc}") from None
        if not positions:
            first = number
        positions.append((board.fen(), result))
        if len(positions) == FENS_PER_TASK:
            yield Task(f"fens:{path.name}:{first}", -1, tuple(positions))
            positions = []
    if positions:
        yield Task(f"fens:{path.name}:{first}", -1, tuple(positions))


# ----------------------------------------------------------------- the run


@dataclass
class Tally:
    tasks: int = 0
    games: int = 0
    written: int = 0
    duplicates: int = 0
    not_quiet: int = 0
    noisy_best: int = 0
    failed: int = 0
    pending: list[str] = field(default_factory=list)
    chunks: int = 0
    chunks_skipped: int = 0
    chunks_failed: int = 0
    unstorable: int = 0


def existing(out: Path) -> tuple[set[str], set[int], int]:
    """Done tasks, Zobrist keys and sample count of an existing output (cut to its last
    complete member first)."""
    cut = recover(out)
    if cut:
        print(f"{PROG}: {out}: cut a torn last batch ({cut} bytes)", file=sys.stderr)
    done: set[str] = set()
    keys: set[int] = set()
    count = 0
    if not out.exists():
        return done, keys, count
    for where, line in read_lines(out):
        if line.startswith(DONE):
            done.add(line[len(DONE) :])
        elif line and not line.startswith("#"):
            fen = line.split(";", 1)[0]
            try:
                keys.add(chess.polyglot.zobrist_hash(chess.Board(fen)))
            except ValueError:
                raise DataError(f"{where}: bad FEN {fen[:70]!r}") from None
            count += 1
    return done, keys, count


def parse_args(argv: Optional[list[str]]) -> Any:
    parser = ToolParser(prog=PROG, description=__doc__.splitlines()[0])
    parser.add_argument(
        "out", type=Path, nargs="?", help="output file, gzip'd FEN;SCORE;RESULT lines"
    )
    src = parser.add_argument_group("sources")
    src.add_argument("--games", type=int, default=0, help="self-play games (default 0)")
    src.add_argument(
        "--engine",
        default=DEFAULT_ENGINE,
        help="self-play engine command (default: this checkout's cutoff)",
    )
    src.add_argument("--nodes", type=int, default=2000, help="self-play nodes per move")
    src.add_argument("--seed", type=int, default=1, help="seed of the random plies")
    src.add_argument("--openings", default=str(DEFAULT_OPENINGS), help="EPD/FEN/PGN openings")
    src.add_argument("--random-plies", type=int, default=4, help="random moves after opening")
    src.add_argument("--first-game", type=int, default=0, help="number of the first game")
    src.add_argument("--max-plies", type=int, default=400, help="engine plies before a draw")
    src.add_argument("--skip-plies", type=int, default=8, help="plies of a game not recorded")
    src.add_argument("--pgn", type=Path, nargs="+", default=[], help="match PGN files")
    src.add_argument(
        "--fens",
        type=Path,
        nargs="+",
        default=[],
        help="FEN/EPD files (FEN;RESULT lines too), or data files (.gz/.xz) to relabel whole",
    )
    src.add_argument(
        "--no-qsearch-check",
        action="store_true",
        help="skip the check that Cutoff's quiescence score has its static score's sign",
    )
    lab = parser.add_argument_group("labels")
    lab.add_argument("--teacher", help="labelling engine command (default: stockfish)")
    how = lab.add_mutually_exclusive_group(required=True)
    how.add_argument("--label-depth", type=int, help="teacher search depth")
    how.add_argument("--label-nodes", type=int, help="teacher search nodes")
    how.add_argument(
        "--label-static",
        action="store_true",
        help="the teacher's static evaluation (Stockfish's eval command; no search)",
    )
    how.add_argument(
        "--label-from-play",
        action="store_true",
        help="label self-play positions by the playing search's score (no second search)",
    )
    out = parser.add_argument_group("store output (instead of OUT)")
    out.add_argument("--store", type=Path, help="write a store (scripts.training.store) here")
    out.add_argument(
        "--manifests",
        type=Path,
        help="also write each chunk's manifest here (the committed copies)",
    )
    out.add_argument(
        "--games-per-chunk",
        type=int,
        help=f"work units (games, PGN games, FEN units) a chunk (default {GAMES_PER_CHUNK})",
    )
    run = parser.add_argument_group("execution")
    run.add_argument("--jobs", type=int, default=1, help="local worker processes")
    run.add_argument("--scheduler", help="Dask scheduler: tcp://HOST:PORT or local:N")
    run.add_argument("--chunk-size", type=int, default=1, help="work units per task")
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    parser.require_positive(args, "nodes", "jobs", "chunk_size", "max_plies")
    parser.require_non_negative(args, "games", "random_plies", "skip_plies", "first_game")
    parser.require_positive(args, "label_depth", "label_nodes", "games_per_chunk")
    if (args.out is None) == (args.store is None):
        parser.error("give an output: OUT.gz or --store DIR (not both)")
    if args.store is None and (args.manifests is not None or args.games_per_chunk is not None):
        parser.error("--manifests and --games-per-chunk go with --store")
    if args.games_per_chunk is None:
        args.games_per_chunk = GAMES_PER_CHUNK
    for folder in (args.store, args.manifests):
        if folder is not None and folder.exists() and not folder.is_dir():
            parser.error(f"{folder}: not a folder")
    if args.label_from_play and (args.pgn or args.fens):
        parser.error("--label-from-play labels self-play only: not with --pgn or --fens")
    if not (args.games or args.pgn or args.fens):
        parser.error("no source: give --games, --pgn or --fens")
    if args.out is not None:
        try:
            refuse_archive(args.out)
        except DataError as error:
            parser.error(str(error))
    return args


def _tasks(args: Any, errors: list[str]) -> list[Task]:
    tasks = [
        Task(f"game:{args.seed}:{index}", index, ())
        for index in range(args.first_game, args.first_game + args.games)
    ]
    for path in args.pgn:
        tasks.extend(pgn_tasks(path, args.skip_plies, errors))
    for path in args.fens:
        tasks.extend(fen_tasks(path))
    return tasks


def _known(task: Task, seen: set[int], tally: Tally) -> Task:
    """``task`` without the positions already in ``seen`` (saves their labels); a data
    file's unit is relabelled whole."""
    if task.game >= 0 or task.whole:
        return task
    fresh = []
    for fen, result in task.positions:
        key = chess.polyglot.zobrist_hash(chess.Board(fen))
        if key not in seen:
            seen.add(key)
            fresh.append((fen, result))
        else:
            tally.duplicates += 1
    return task._replace(positions=tuple(fresh))


def _todo(tasks: list[Task], done: Callable[[int, Task], bool], tally: Tally) -> Iterator[Task]:
    """The tasks not ``done``, each without the positions of the tasks before it.

    The keys of positions sent for labelling grow with every task of the command line,
    done or not, from nothing, so that the positions a unit sends to the teacher, and
    with them its labels (which depend on its positions before them:
    engines.Labeller), are the same in a resumed run as in an uninterrupted one. What
    the file held before (``existing``) decides what is written, not what is sent.
    """
    sent: set[int] = set()
    for index, task in enumerate(tasks):
        if done(index, task):
            _known(task, sent, Tally())
        else:
            yield _known(task, sent, tally)


def _start_checks(settings: Settings) -> dict[str, str]:
    """Start each engine once, so that a bad --engine or --teacher is one message
    before any worker exists, not a failure per work unit; their ``id name``s."""
    names: dict[str, str] = {}
    if settings.play is not None:
        engine = start_engine(settings.play.engine_argv)
        names["self-play"] = str(engine.id.get("name", ""))
        quit_engine(engine)
    if settings.teacher and settings.label_static:
        # Its first evaluation too: a teacher without ``eval`` is one message here.
        try:
            static = StaticLabeller(settings.teacher)
            try:
                static.label(chess.Board())
                names["teacher"] = static.id_name
            finally:
                static.close()
        except EngineMoveError as exc:
            raise UsageError(f"--label-static: {exc}") from None
    elif settings.teacher:
        engine = start_engine(settings.teacher)
        names["teacher"] = str(engine.id.get("name", ""))
        quit_engine(engine)
    return names


class TextSink:
    """The gzip'd text output: appended a member at a time, ``#done`` after each unit."""

    def __init__(self, out: Path, tally: Tally) -> None:
        self.out = out
        self.tally = tally
        self.finished, self.seen, _ = existing(out)
        self.last_flush = time.monotonic()

    def done(self, index: int, task: Task) -> bool:
        return task.ident in self.finished

    def take(self, index: int, result: TaskResult) -> None:
        _take(result, self.seen, self.tally)
        if time.monotonic() - self.last_flush >= FLUSH_SECONDS:
            self.close()
            self.last_flush = time.monotonic()

    def close(self) -> None:
        append_member(self.out, self.tally.pending)
        self.tally.pending = []


@dataclass
class _Chunk:
    """A store chunk being filled: its records, their position hashes, its counts."""

    number: int
    units: int
    received: int = 0
    failed: bool = False
    data: list[bytes] = field(default_factory=list)
    keys: set[int] = field(default_factory=set)
    duplicates: int = 0
    not_quiet: int = 0
    noisy_best: int = 0


def _file_id(path: Path) -> dict[str, str]:
    """A file as the settings name it: its name and content, not where it is."""
    try:
        return {"name": path.name, "sha256": sha256_of(path)}
    except OSError as exc:
        raise UsageError(f"cannot read {str(path)!r}: {exc.strerror or exc}") from None


def label_name(args: Any) -> str:
    if args.label_static:
        return "static"
    if args.label_from_play:
        return "from-play"
    if args.label_depth is not None:
        return f"depth={args.label_depth}"
    return f"nodes={args.label_nodes}"


def store_settings(args: Any) -> dict[str, Any]:
    """What decides a store's records, as its manifests record it: the sources, the
    filters and the teacher; not ``--games`` (a larger one extends the store) nor how
    the work runs (``--jobs``, ``--scheduler``, ``--chunk-size``)."""
    play = None
    if args.games:
        play = {
            "engine": "cutoff (this checkout)" if args.engine == DEFAULT_ENGINE else args.engine,
            "nodes": args.nodes,
            "seed": args.seed,
            "openings": _file_id(Path(args.openings)),
            "random_plies": args.random_plies,
            "max_plies": args.max_plies,
            "skip_plies": args.skip_plies,
            "first_game": args.first_game,
        }
    return {
        "games_per_chunk": args.games_per_chunk,
        "self_play": play,
        "pgn": [_file_id(path) for path in args.pgn],
        "pgn_skip_plies": args.skip_plies if args.pgn else None,
        "fens": [_file_id(path) for path in args.fens],
        "qsearch_check": not args.no_qsearch_check,
        "teacher": None if args.label_from_play else (args.teacher or "stockfish"),
        "label": label_name(args),
    }


EXECUTION_OPTIONS = {"--jobs": True, "--scheduler": True, "--chunk-size": True, "--quiet": False}
"""Options that say how the work runs, not what it makes (True: it takes a value)."""


def remake_command(argv: Sequence[str]) -> str:
    """The command line ``argv`` without its execution options: what remakes a
    store's chunks on any machine (``--jobs N`` to taste)."""
    kept: list[str] = []
    skip = False
    for word in argv:
        if skip:
            skip = False
            continue
        name = word.split("=", 1)[0]
        if name in EXECUTION_OPTIONS:
            skip = EXECUTION_OPTIONS[name] and "=" not in word
            continue
        kept.append(word)
    return shlex.join(["python", "-m", f"scripts.training.{PROG}", *kept])


def _differences(old: Any, new: Any) -> str:
    if not isinstance(old, dict) or not isinstance(new, dict):
        return f"{old!r} there, {new!r} here"
    for key in sorted(set(old) | set(new)):
        if old.get(key) != new.get(key):
            return f"{key}: {_differences(old.get(key), new.get(key))}"
    return "the same"


class StoreSink:
    """A store (scripts.training.store) as the output: the work units cut into
    chunks of ``--games-per-chunk`` in command-line order, each chunk written whole
    (chunk, then manifest) once its last unit is in, its positions each once in the
    whole store; a chunk that has a good manifest of the same settings and units is
    skipped, any other is (re)made."""

    def __init__(
        self, args: Any, argv: Sequence[str], tasks: list[Task], names: dict[str, str], tally: Tally
    ) -> None:
        self.store = Store(args.store, args.store, args.manifests)
        self.tasks = tasks
        self.per_chunk: int = args.games_per_chunk
        self.tally = tally
        self.settings = store_settings(args)
        self.command = shlex.join(["python", "-m", f"scripts.training.{PROG}", *argv])
        self.remake = remake_command(argv)
        self.names = names
        if args.label_from_play:
            source = f"{names.get('self-play') or 'self-play'} play nodes={args.nodes}"
        else:
            teacher = names.get("teacher") or Path(teacher_command(args.teacher)[0]).name
            source = f"{teacher} {label_name(args)}"
        self.header = Header(records.SCORE_WHITE, source)
        self.complete: set[int] = set()
        found = self.store.indices() if args.store.is_dir() else []
        for number in found:
            manifest = self.store.manifest(number)
            if manifest is None:
                continue  # unreadable: remade if it is one of this command's
            made_by = manifest.get("made_by")
            made_by = made_by if isinstance(made_by, dict) else {}
            where = self.store.manifests / manifest_name(number)
            if made_by.get("tool") != PROG:
                raise UsageError(
                    f"{args.store}: its chunks were not made by {PROG} ({where}): "
                    "give another --store"
                )
            if made_by.get("settings") != self.settings:
                raise UsageError(
                    f"{args.store}: its chunks were made by another command "
                    f"({_differences(made_by.get('settings'), self.settings)}; {where}): "
                    "give another --store"
                )
            covered = number < self.chunk_count() and self._covers(number, made_by)
            if covered and self.store.is_complete(number):
                self.complete.add(number)
        # The positions of the chunks kept, this command's or not: each once in the store.
        kept = [
            n
            for n in found
            if n in self.complete or (n >= self.chunk_count() and self.store.is_complete(n))
        ]
        self.index = PositionIndex(stored_hashes(self.store, kept))
        tally.chunks_skipped = len(self.complete)
        self.current: Optional[_Chunk] = None

    def chunk_count(self) -> int:
        return -(-len(self.tasks) // self.per_chunk)

    def _units(self, number: int) -> list[Task]:
        return self.tasks[number * self.per_chunk : (number + 1) * self.per_chunk]

    def _covers(self, number: int, made_by: dict[str, Any]) -> bool:
        """Whether a chunk made with ``made_by`` holds the units this command's chunk
        ``number`` would (the same first unit, at least as many: a smaller ``--games``
        keeps the larger run's last chunk)."""
        units = self._units(number)
        count = made_by.get("units")
        return (
            made_by.get("first") == units[0].ident
            and isinstance(count, int)
            and count >= len(units)
        )

    def done(self, index: int, task: Task) -> bool:
        return index // self.per_chunk in self.complete

    def take(self, index: int, result: TaskResult) -> None:
        number = index // self.per_chunk
        if self.current is None or self.current.number != number:
            self.current = _Chunk(number, len(self._units(number)))
        chunk = self.current
        chunk.received += 1
        tally = self.tally
        if result.error:
            tally.failed += 1
            chunk.failed = True
            print(f"{PROG}: {result.ident} failed: {result.error}", file=sys.stderr)
        else:
            self._add(chunk, result)
        if chunk.received == chunk.units:
            self._finish(chunk)
            self.current = None

    def _add(self, chunk: _Chunk, result: TaskResult) -> None:
        tally = self.tally
        tally.tasks += 1
        tally.games += result.ident.startswith("game:")
        tally.not_quiet += result.not_quiet
        tally.noisy_best += result.noisy_best
        chunk.not_quiet += result.not_quiet
        chunk.noisy_best += result.noisy_best
        encoded = []
        for sample in result.samples:
            try:
                encoded.append(
                    records.encode(
                        chess.Board(sample.fen), sample.score, records.RESULT_OF_TEXT[sample.result]
                    )
                )
            except RecordError as exc:
                tally.unstorable += 1
                print(f"{PROG}: {result.ident}: {sample.fen}: not stored: {exc}", file=sys.stderr)
        if not encoded:
            return
        hashes = record_hashes(records.from_bytes(b"".join(encoded)))
        stored = self.index.known(hashes)
        for data, value, old in zip(encoded, hashes.tolist(), stored.tolist()):
            # A data file's unit is relabelled whole (as in the text output).
            if (old or value in chunk.keys) and not result.whole:
                tally.duplicates += 1
                chunk.duplicates += 1
                continue
            chunk.keys.add(value)
            chunk.data.append(data)
            tally.written += 1

    def _finish(self, chunk: _Chunk) -> None:
        tally = self.tally
        if chunk.failed:
            tally.chunks_failed += 1
            tally.written -= len(chunk.data)
            print(
                f"{PROG}: {chunk_name(chunk.number)} not written (a unit failed): "
                "run the command again to make it",
                file=sys.stderr,
            )
            return
        units = self._units(chunk.number)
        made_by = {
            "tool": PROG,
            "settings": self.settings,
            "first": units[0].ident,
            "last": units[-1].ident,
            "units": len(units),
            "dropped": {
                "duplicates": chunk.duplicates,
                "not_quiet": chunk.not_quiet,
                "noisy_best": chunk.noisy_best,
            },
            "engines": self.names,
            "command": self.command,
        }
        self.store.write_chunk(
            chunk.number, self.header, b"".join(chunk.data), made_by, self.remake
        )
        self.index.add(np.fromiter(chunk.keys, np.uint64, len(chunk.keys)))
        tally.chunks += 1

    def close(self) -> None:
        """Nothing: a chunk not finished has no manifest, and the next run makes it."""


Sink = Union[TextSink, StoreSink]


def _postfix(tally: Tally, seconds: float, done: int, remaining: int) -> str:
    """Positions so far, their rate a second and an hour, and the time left."""
    rate = tally.written / max(seconds, 1e-9)
    left = seconds / done * remaining if done else 0.0
    return (
        f"positions {tally.written:,}, {rate:,.0f}/s, {rate * 3600 / 1e6:.2f} M/h, "
        f"ETA {tqdm.format_interval(left)}"
    )


def generate(args: Any, argv: Sequence[str]) -> Tally:
    play = None
    if args.games:
        play = Config.from_args(args)
    settings = Settings(
        play,
        teacher_command(args.teacher) if not args.label_from_play else [],
        args.label_depth,
        args.label_nodes,
        args.label_from_play,
        not args.no_qsearch_check,
        args.label_static,
    )
    names = _start_checks(settings)
    errors: list[str] = []
    tasks = _tasks(args, errors)
    for message in errors:
        print(f"{PROG}: {message}", file=sys.stderr)
    tally = Tally()
    sink: Sink
    if args.store is not None:
        sink = StoreSink(args, argv, tasks, names, tally)
    else:
        sink = TextSink(args.out, tally)
    todo = [index for index, task in enumerate(tasks) if not sink.done(index, task)]
    bar = tqdm(
        total=len(todo),
        unit="task",
        disable=args.quiet or None,
        file=sys.stderr,
        smoothing=0.05,
    )
    began = time.monotonic()
    try:
        results = run_ordered(
            partial(work_chunk, settings),
            _todo(tasks, sink.done, tally),
            jobs=args.jobs,
            chunk_size=args.chunk_size,
            scheduler=args.scheduler,
            on_failure=failed_chunk,
        )
        for count, (index, result) in enumerate(zip(todo, results), 1):
            sink.take(index, result)
            bar.update(1)
            seconds = time.monotonic() - began
            bar.set_postfix_str(_postfix(tally, seconds, count, len(todo) - count), refresh=False)
    finally:
        sink.close()
        bar.close()
        close_workers()
    return tally


def _take(result: TaskResult, seen: set[int], tally: Tally) -> None:
    if result.error:
        tally.failed += 1
        print(f"{PROG}: {result.ident} failed (not marked done): {result.error}", file=sys.stderr)
        return
    tally.tasks += 1
    tally.games += result.ident.startswith("game:")
    tally.not_quiet += result.not_quiet
    tally.noisy_best += result.noisy_best
    for sample, key in zip(result.samples, result.keys):
        if key in seen and not result.whole:
            tally.duplicates += 1
            continue
        seen.add(key)
        tally.pending.append(format_sample(sample))
        tally.written += 1
    tally.pending.append(DONE + result.ident)


def main(argv: Optional[list[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv)
    began = time.monotonic()
    try:
        tally = generate(args, argv)
    except (SchedulerUnavailableError, SchedulerLostError, DataError) as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2 if isinstance(exc, (SchedulerUnavailableError, DataError)) else 1
    except REPORTED_FAILURES as exc:
        return report_failure(PROG, exc)
    seconds = time.monotonic() - began
    rate = tally.written / max(seconds, 1e-9)
    chunks = ""
    if args.store is not None:
        chunks = (
            f" chunks {tally.chunks} chunks-skipped {tally.chunks_skipped} "
            f"chunks-failed {tally.chunks_failed} unstorable {tally.unstorable}"
        )
    print(
        f"tasks {tally.tasks} games {tally.games} positions {tally.written} "
        f"duplicates {tally.duplicates} not-quiet {tally.not_quiet} "
        f"noisy-best {tally.noisy_best} failed {tally.failed} seconds {seconds:.1f} "
        f"positions/s {rate:.1f} positions/h {rate * 3600:.0f} "
        f"games/s {tally.games / max(seconds, 1e-9):.2f}{chunks}"
    )
    return 1 if tally.failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
