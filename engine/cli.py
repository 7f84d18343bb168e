"""The ``cutoff`` subcommands on argparse: analyse, annotate, stats, bench, compile.

Each subcommand is a thin layer over an API: ``analyse`` reads positions
(engine.analysis.inputs), analyses them in this process or in ``--jobs`` worker processes
(engine.analysis.parallel, engine.analysis.batch) and writes a table, JSON Lines or CSV as each
position finishes, with a progress bar on stderr when stderr is a terminal;
``annotate`` analyses every position of each game of a PGN file
(engine.analysis.api) and writes it annotated (engine.analysis.annotate); ``bench`` runs
engine.play.bench; ``compile`` runs engine.compiled. Bad input is reported on stderr,
one line each, with its file and line or game, and the rest goes on; output paths
are checked before any work starts (an output that is one of the inputs, even through
a link, is refused: engine.analysis.outputs), and a write that fails later (a full
disk) is one line too. Exit status: 0 all done, 1 some input or position failed (or
there was none) or an output could not be written, 2 bad command line or output path, 130
interrupted, 143 terminated (what was finished is written either way; a second
Ctrl-C or SIGTERM ends the process at once). This module is imported only when
``cutoff`` has arguments, so the UCI start-up does not pay for argparse.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Any, NoReturn, Optional

import chess.engine

from engine import __version__
from engine.analysis.outputs import GuardedOutput, OutputWriteError
from engine.play.options import HASH_MAX_MB, MAX_THREADS

if TYPE_CHECKING:
    import chess.pgn
    from tqdm import tqdm
    from typing_extensions import Never

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 128 + signal.SIGTERM
DEFAULT_DEPTH = 8
DASK_CHUNK_SIZE = 4
"""Positions per task sent to a Dask worker: each task costs the scheduler ~10 ms.
(Local ``--jobs`` workers get one position at a time, so each is written as it ends.)"""
MAX_JOBS = 2 * (os.cpu_count() or 1)
"""More worker processes than this only share the same cores (and memory)."""
WORKER_MEMORY_MB = 80
"""What a worker process takes besides its hash table (Python, python-chess, Cutoff)."""


class Terminated(BaseException):
    """SIGTERM, raised in the main thread so that what was finished is written."""


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (``cutoff analyse: error: ...``) and exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def _positive(text: str) -> int:
    """A whole number above zero (argparse type)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: '{text}'") from None
    if value <= 0:
        raise argparse.ArgumentTypeError(f"must be above zero: '{text}'")
    return value


def _at_most(limit: int, why: str) -> Callable[[str], int]:
    """An argparse type: a whole number from 1 to ``limit``."""

    def parse(text: str) -> int:
        value = _positive(text)
        if value > limit:
            raise argparse.ArgumentTypeError(f"at most {limit} ({why}), not {value}")
        return value

    return parse


_hash_mb = _at_most(HASH_MAX_MB, "the Hash option's maximum")


def _add_limits(parser: argparse.ArgumentParser, mate: bool = True) -> None:
    group = parser.add_argument_group("search limits (the first one reached ends a search)")
    group.add_argument("--depth", type=_positive, help=f"plies (default {DEFAULT_DEPTH})")
    group.add_argument("--nodes", type=_positive, help="nodes per position")
    group.add_argument("--movetime", type=_positive, metavar="MS", help="ms per position")
    if mate:
        group.add_argument("--mate", type=_positive, metavar="N", help="look for mate in N")
    parser.add_argument("--hash", type=_hash_mb, default=16, metavar="MB", help="TT size")
    _add_evaluation(parser)


def _add_evaluation(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--nnue",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="evaluate with the network, the default; --no-nnue: the hand-written "
        "evaluation alone (UCI: Use NNUE)",
    )
    parser.add_argument(
        "--eval-file",
        default="",
        metavar="FILE",
        help="the network for --nnue (default: the shipped one; UCI: EvalFile); "
        "checked with --no-nnue too",
    )


def _network(args: argparse.Namespace, errors: Callable[[str], None]) -> tuple[bool, Optional[str]]:
    """(usable, the network file or None for the hand-written evaluation); a file that
    cannot be a network is one error line, before any work. A named file is checked
    with ``--no-nnue`` too, which then leaves it unused: a typo must not pass unseen
    until the flag is dropped."""
    if not args.nnue and not args.eval_file:
        return True, None
    from engine.core.nnue import NetworkError, load, network_file

    path = str(network_file(args.eval_file))
    try:
        load(path)
    except NetworkError as exc:
        errors(f"--eval-file: {exc}")
        return False, None
    return True, path if args.nnue else None


def _limit(args: argparse.Namespace) -> chess.engine.Limit:
    limit = chess.engine.Limit(
        depth=args.depth,
        nodes=args.nodes,
        time=args.movetime / 1000 if args.movetime else None,
        mate=getattr(args, "mate", None),
    )
    if limit.depth is None and limit.nodes is None and limit.time is None and limit.mate is None:
        limit.depth = DEFAULT_DEPTH
    return limit


def _command(
    commands: argparse._SubParsersAction[_Parser],
    name: str,
    run: Callable[[argparse.Namespace], int],
    quiet: bool = True,
    **texts: Any,
) -> argparse.ArgumentParser:
    """A subcommand that runs ``run``; ``quiet``: it has a progress bar to turn off."""
    parser = commands.add_parser(name, **texts)
    if quiet:
        parser.add_argument("--quiet", action="store_true", help="no progress bar")
    parser.set_defaults(run=run)
    return parser


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="cutoff",
        description="Cutoff, a UCI chess engine in Python. "
        "Without a command: the UCI protocol on stdin/stdout (what GUIs start).",
    )
    from engine.compiled import build_description

    parser.add_argument(
        "--version", action="version", version=f"Cutoff {__version__}, {build_description()}"
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    analyse = _command(
        commands,
        "analyse",
        _analyse,
        aliases=["analyze"],
        help="analyse positions: FENs, EPD/PGN files, stdin",
        description="Analyse positions and print a table, JSON Lines or CSV, one result "
        "per position as it finishes.",
        epilog="POSITION: a FEN (one quoted word or its words), 'startpos', either "
        "followed by 'moves' and UCI moves; a file of FEN/EPD lines (EPD operations such "
        "as id and bm are echoed); a .pgn file (every position of every game); '-' for "
        "stdin. Default: the start position. Every position is searched from an empty "
        "hash table, so results do not depend on order, --jobs or --resume.",
    )
    analyse.add_argument("positions", nargs="*", metavar="POSITION")
    _add_limits(analyse)
    analyse.add_argument(
        "--multipv",
        type=_positive,
        default=1,
        metavar="K",
        help="best lines per position (default 1)",
    )
    analyse.add_argument(
        "--moves",
        metavar="RANGE",
        help="PGN input: only positions of these full moves (N, A-B, A-)",
    )
    form = analyse.add_mutually_exclusive_group()
    form.add_argument(
        "--json",
        action="store_const",
        const="json",
        dest="form",
        help="JSON Lines: one object per position",
    )
    form.add_argument(
        "--csv",
        action="store_const",
        const="csv",
        dest="form",
        help="CSV: one row per line of analysis",
    )
    analyse.add_argument("-o", "--output", type=Path, metavar="FILE", help="write here")
    analyse.add_argument(
        "--resume",
        action="store_true",
        help="skip the positions already in --output (JSON or CSV, as this command wrote "
        "it) and add the others; refused if its rows were analysed with other limits, "
        "--multipv, evaluation or network",
    )
    analyse.add_argument(
        "--resume-any-settings",
        action="store_true",
        help="with --resume: add to the file even if its rows were analysed with other "
        "settings (each row records its own)",
    )
    analyse.add_argument(
        "--jobs",
        type=_at_most(MAX_JOBS, "twice the CPUs here"),
        default=1,
        metavar="N",
        help="worker processes (default 1)",
    )
    analyse.add_argument(
        "--threads",
        type=_positive,
        default=1,
        metavar="N",
        help="Lazy SMP: N processes search each position (default 1); per job with --jobs",
    )
    analyse.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="run on Dask: tcp://HOST:PORT, or local:N for N local workers "
        "(needs the 'dask' extra)",
    )
    analyse.set_defaults(form="table")

    annotate = _command(
        commands,
        "annotate",
        _annotate,
        help="annotate the games of a PGN file",
        description="Analyse every position of every game and write the games annotated: "
        "[%eval] comments, ?!/?/?? by the drop in winning chances (lichess's rule), the "
        "better line, and each side's accuracy and average centipawn loss, overall and by "
        "phase.",
    )
    annotate.add_argument("pgn", type=Path, metavar="GAMES.pgn")
    annotate.add_argument(
        "-o", "--output", type=Path, metavar="OUT.pgn", help="write here (default: stdout)"
    )
    annotate.add_argument(
        "--plot",
        type=Path,
        metavar="OUT.png",
        help="evaluation graph (needs the 'plot' extra; one file per game, "
        "numbered from the second game)",
    )
    annotate.add_argument(
        "--json",
        type=Path,
        metavar="OUT.jsonl",
        help="also write each game's figures (accuracy, ACPL by phase, each move's "
        "judgement) as one JSON line",
    )
    annotate.add_argument(
        "--win-model",
        choices=("cutoff", "lichess"),  # annotate.WIN_MODELS, not imported at start-up
        default="cutoff",
        help="winning chances from Cutoff's own WDL model (default) or lichess's formula "
        "(figures comparable with lichess's)",
    )
    _add_limits(annotate, mate=False)

    stats = _command(
        commands,
        "stats",
        _stats,
        help="what alpha-beta saves, measured: textbook searches against Cutoff's",
        description="Count the leaves of minimax, alpha-beta (fail-hard, fail-soft; "
        "random and Cutoff's move order) and PVS, and the nodes of Cutoff's full search, "
        "at depths 1..N, beside the textbook formulas; node types, first-move cut rates, "
        "PVS re-searches, and speed per position class.",
    )
    stats.add_argument(
        "positions",
        nargs="?",
        metavar="FILE.epd",
        help="positions (default: 12 built-in ones of four classes)",
    )
    stats.add_argument("--depth", type=_positive, default=4, help="deepest depth (default 4)")
    stats.add_argument(
        "--minimax-depth",
        type=_positive,
        default=3,
        metavar="N",
        help="deepest depth for plain minimax (default 3: it grows as b^d)",
    )
    stats.add_argument("--json", action="store_true", help="the figures as JSON")
    stats.add_argument("--plot", type=Path, metavar="OUT.png", help="nodes against depth")

    bench = _command(
        commands,
        "bench",
        _bench,
        quiet=False,
        help="the fixed bench: node count and speed",
        description="Search the bench positions to a fixed depth: the node count (the "
        "engine's signature), nodes per second and the effective branching factor.",
    )
    bench.add_argument("--depth", type=_positive, help="default 8")
    bench.add_argument("--hash", type=_hash_mb, default=16, metavar="MB")
    bench.add_argument("--positions", type=_positive, metavar="K", help="the first K only")
    bench.add_argument("--plain", action="store_true", help="every pruning and reduction off")
    bench.add_argument(
        "--threads",
        type=_at_most(MAX_THREADS, "the Threads option's maximum: the CPUs here"),
        default=1,
        metavar="N",
        help="searchers (Lazy SMP helpers beyond 1; nodes then vary)",
    )
    _add_evaluation(bench)
    compile_ = _command(
        commands,
        "compile",
        _compile,
        quiet=False,
        help="compile the search with mypyc (several times the nodes/s)",
        description="Compile the search's hot modules (its own board, move ordering, "
        "evaluation, network, transposition table) to C with mypyc, installed beside "
        "their sources: the same search, several times faster, in the cutoff process, "
        "the processes it starts and scripts that import engine. Needs a C compiler, "
        "the Python headers and the 'compile' extra (mypy, setuptools). If a source "
        "changes later, Cutoff runs interpreted (and says so on stderr) until compiled "
        "again.",
    )
    compile_.add_argument(
        "--remove", action="store_true", help="delete the compiled modules (run interpreted)"
    )
    compile_.add_argument(
        "--status", action="store_true", help="say whether the search runs compiled"
    )
    return parser


def main(argv: list[str]) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return EXIT_USAGE
    try:
        return int(args.run(args))
    except KeyboardInterrupt:
        sys.stderr.write("cutoff: interrupted; what was finished is written\n")
        return EXIT_INTERRUPTED
    except Terminated:
        sys.stderr.write("cutoff: terminated; what was finished is written\n")
        return EXIT_TERMINATED
    except BrokenPipeError:
        return EXIT_OK
    except OutputWriteError as exc:
        # A full disk: what was written stays (a --resume goes on from it).
        sys.stderr.write(f"cutoff {args.command}: {exc}\n")
        return EXIT_FAILED
    except MemoryError:
        sys.stderr.write(f"cutoff {args.command}: out of memory (try a smaller --hash)\n")
        return EXIT_FAILED


@contextlib.contextmanager
def _signals_stop_the_run() -> Iterator[None]:
    """Ctrl-C raises KeyboardInterrupt and SIGTERM ``Terminated`` in the main thread,
    once: the run stops its workers and writes what was finished. A second signal
    meets the default action and ends the process at once, whatever it waits for.
    A signal that was ignored when the command started (``nohup``) stays ignored."""

    def stop(signum: int, frame: Optional[FrameType]) -> None:
        for name in installed:
            signal.signal(name, signal.SIG_DFL)
        if signum == signal.SIGTERM:
            raise Terminated
        raise KeyboardInterrupt

    installed: list[signal.Signals] = []
    previous = {}
    for name in (signal.SIGINT, signal.SIGTERM):
        if signal.getsignal(name) != signal.SIG_IGN:
            previous[name] = signal.signal(name, stop)
            installed.append(name)
    try:
        yield
    finally:
        # After a signal the default action stays: a second one must end the process.
        for name, handler in previous.items():
            if signal.getsignal(name) == stop:
                signal.signal(name, handler)


def _writable(path: Path) -> Optional[str]:
    """Why ``path`` cannot be written (None if it can), found before any work starts:
    it is a directory, its directory is missing, or it cannot be created there."""
    if path.is_dir():
        return f"{path}: is a directory"
    existed = path.exists()
    try:
        with path.open("ab"):
            pass
    except OSError as exc:
        return f"{path}: cannot write: {exc.strerror or exc}"
    if not existed:
        path.unlink()
    return None


# ------------------------------------------------------------------ analyse


class _Errors:
    def __init__(self, prog: str) -> None:
        self.prog = prog
        self.count = 0

    def __call__(self, message: str) -> None:
        self.count += 1
        sys.stderr.write(f"{self.prog}: {message}\n")
        sys.stderr.flush()


def _progress(total: int, quiet: bool, unit: str) -> Optional[tqdm[Never]]:
    """A tqdm bar on stderr, or None when stderr is not a terminal or --quiet."""
    if quiet or not sys.stderr.isatty():
        return None
    from tqdm import tqdm

    return tqdm(total=total, unit=unit, file=sys.stderr, dynamic_ncols=True)


def _beside(bar: Optional[tqdm[Never]]) -> contextlib.AbstractContextManager[object]:
    """Where a line goes to the terminal while ``bar`` is shown: the bar is cleared
    first and drawn again after, so the line never lands on the bar's line."""
    if bar is None:
        return contextlib.nullcontext()
    return type(bar).external_write_mode(file=sys.stdout)


def _enough_memory(jobs: int, hash_mb: int) -> Optional[str]:
    """Why ``jobs`` analysers of ``hash_mb`` do not fit in the memory available."""
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            fields = dict(line.split(":", 1) for line in handle if ":" in line)
        available_mb = int(fields["MemAvailable"].split()[0]) // 1024
    except (OSError, KeyError, ValueError):
        return None  # not Linux, or no figure: let the system decide
    needed_mb = jobs * (hash_mb + WORKER_MEMORY_MB)
    if needed_mb <= available_mb:
        return None
    return (
        f"--jobs {jobs} with --hash {hash_mb} needs about {needed_mb} MB, "
        f"{available_mb} MB are available"
    )


def _analyse(args: argparse.Namespace) -> int:
    from engine.analysis.batch import (
        ANALYSIS_OUTPUT,
        BatchSettings,
        ExistingOutput,
        OutputFileError,
        Writer,
        analyse_chunk,
        failed_records,
        read_output,
        settings_fields,
        settings_problem,
    )
    from engine.analysis.inputs import input_files, parse_move_range, read_positions
    from engine.analysis.outputs import overwrite_problem, replace_problem
    from engine.analysis.parallel import (
        SchedulerLostError,
        SchedulerUnavailableError,
        TaskFailedError,
        run,
    )

    prog = "cutoff analyse"
    errors = _Errors(prog)
    if args.resume and (args.output is None or args.form == "table"):
        errors(f"--resume needs --output FILE with --json or --csv (see {prog} --help)")
        return EXIT_USAGE
    if args.resume_any_settings and not args.resume:
        errors(f"--resume-any-settings goes with --resume (see {prog} --help)")
        return EXIT_USAGE
    try:
        moves = parse_move_range(args.moves) if args.moves else None
    except ValueError as exc:
        errors(f"--moves: {exc}")
        return EXIT_USAGE
    problem = (
        overwrite_problem([("-o", args.output)], input_files(args.positions))
        # Written afresh (not resumed), the file must be an earlier output of ours.
        or (None if args.resume else replace_problem([("-o", args.output, ANALYSIS_OUTPUT)]))
        or (_writable(args.output) if args.output is not None else None)
        or _enough_memory(args.jobs if args.scheduler is None else 1, args.hash)
    )
    if problem:
        errors(problem)
        return EXIT_USAGE
    # Before any work: to resume, the file must be this command's output in this form.
    existing: Optional[ExistingOutput] = None
    try:
        if args.resume:
            existing = read_output(args.output, args.form)
    except OutputFileError as exc:
        errors(str(exc))
        return EXIT_USAGE
    except OSError as exc:
        errors(f"{args.output}: cannot read: {exc.strerror or exc}")
        return EXIT_USAGE
    tasks = list(read_positions(args.positions, errors, moves))
    if not tasks:
        if not errors.count:
            errors("no positions to analyse")
        return EXIT_FAILED
    done = existing.done if existing is not None else {}
    total = len(tasks)
    if done:
        for task in tasks:
            if task.index in done and done[task.index] != task.fen:
                errors(
                    f"{args.output}: position {task.index} is {done[task.index]}, not "
                    f"{task.fen}: the input changed; resume with the same input"
                )
                return EXIT_USAGE
        tasks = [task for task in tasks if task.index not in done]
    usable, network = _network(args, errors)
    if not usable:
        return EXIT_USAGE
    settings = BatchSettings(_limit(args), args.multipv, args.hash, args.threads, network)
    recorded = settings_fields(settings)
    if existing is not None and not args.resume_any_settings:
        problem = settings_problem(existing, recorded)
        if problem:
            errors(problem)
            return EXIT_USAGE
    try:
        if existing is not None:
            existing.cut_partial_line()
            if not tasks:
                # Silence would look like a run that did nothing by mistake.
                what = "the one position is" if total == 1 else f"all {total} positions are"
                sys.stderr.write(f"{prog}: {what} already in {args.output}; nothing to do\n")
                return EXIT_FAILED if errors.count else EXIT_OK
        stream = _open_output(args.output, append=existing is not None)
        close = stream.close
    except OSError as exc:
        errors(f"{args.output}: cannot write: {exc.strerror or exc}")
        return EXIT_USAGE
    try:
        header = bool(tasks) and (existing is None or existing.whole == 0)
        writer = Writer(stream, args.form, header=header, settings=recorded)
    except OutputWriteError:
        close()
        raise
    bar = _progress(len(tasks), args.quiet or len(tasks) < 2, "pos")

    def write(record: dict[str, Any]) -> None:
        with _beside(bar if stream.stream is sys.stdout else None):
            writer.write(record)
        if "error" in record:
            with _beside(bar):
                errors(f"{record['source']}: {record['error']}")
        if bar is not None:
            bar.update(1)

    results = run(
        partial(analyse_chunk, settings),
        tasks,
        jobs=min(args.jobs, len(tasks)),
        chunk_size=DASK_CHUNK_SIZE if args.scheduler else 1,
        scheduler=args.scheduler,
        ordered=False,
        on_failure=failed_records,
    )
    # Records are written in input order; one that finished while an earlier one
    # still runs waits here, and is written at once if the run is stopped.
    waiting: dict[int, dict[str, Any]] = {}
    following = 0
    try:
        with _signals_stop_the_run():
            try:
                for place, record in results:
                    waiting[place] = record
                    while following in waiting:
                        write(waiting.pop(following))
                        following += 1
            finally:
                results.close()  # stops the workers: searches in flight end now
                for place in sorted(waiting):
                    write(waiting.pop(place))
    except (SchedulerUnavailableError, SchedulerLostError, TaskFailedError) as exc:
        errors(str(exc))
        return EXIT_USAGE if isinstance(exc, SchedulerUnavailableError) else EXIT_FAILED
    finally:
        if bar is not None:
            bar.close()
        close()
    return EXIT_FAILED if errors.count else EXIT_OK


def _open_output(path: Optional[Path], append: bool = False) -> GuardedOutput:
    """The stream to write to (``close`` leaves stdout open), saying in one line why
    a write failed (``OutputWriteError``)."""
    if path is None:
        return GuardedOutput(sys.stdout, "stdout")
    return GuardedOutput(path.open("a" if append else "w", encoding="utf-8", newline=""), path)


# ----------------------------------------------------------------- annotate


def _games(
    path: Path, on_error: Callable[[str], None], on_read_error: Callable[[str], None]
) -> Iterator[tuple[int, chess.pgn.Game]]:
    """The games of ``path`` one at a time (a database of many games is never held
    whole); one whose main line breaks (an illegal move...) is reported to ``on_error``
    and kept up to the break, as ``cutoff analyse`` keeps it; a file that cannot be
    read is reported to ``on_read_error``. Annotate reads the file twice: once before
    any work, to count the games (one graph per game: every output is known and
    checked first) and collect what to report, then game by game."""
    from engine.analysis.inputs import read_games

    try:
        with path.open(encoding="utf-8", errors="replace") as handle:
            for number, game, _ in read_games(str(path), handle, on_error, keep_prefix=True):
                yield number, game
    except OSError as exc:
        on_read_error(f"{path}: cannot read: {exc.strerror or exc}")


def _annotate(args: argparse.Namespace) -> int:

    from engine.analysis.annotate import annotate_game, game_report, plot_evaluation
    from engine.analysis.api import Analyser
    from engine.analysis.inputs import stopped_at
    from engine.analysis.outputs import (
        CUTOFF_PGN,
        PLOT,
        json_lines_kind,
        overwrite_problem,
        replace_problem,
        write_failure,
    )
    from engine.analysis.plots import PlotUnavailableError, plot_file, plot_problem
    from engine.extras import install_hint

    errors = _Errors("cutoff annotate")
    # The report's lines, as written below: the game's number and players first.
    report_kind = json_lines_kind("a cutoff annotate --json report", ("game", "white", "black"))
    if args.plot is not None and not _has_matplotlib():
        errors(f"--plot needs matplotlib: {install_hint('plot')}")
        return EXIT_USAGE
    if not args.pgn.is_file():
        errors(f"{args.pgn}: {'not a file' if args.pgn.exists() else 'no such file'}")
        return EXIT_USAGE
    # The input's problems are said once the outputs are known to be fine.
    reading: list[str] = []
    count = sum(1 for _ in _games(args.pgn, reading.append, reading.append))
    plots = [] if args.plot is None else [plot_file(args.plot)]
    if plots:
        # One graph per game: the second game's is PLOT-2.png, and so on.
        plots += [_numbered(plots[0], number) for number in range(2, count + 1)]
    outputs = [("-o", args.output), *(("--plot", path) for path in plots), ("--json", args.json)]
    problem = overwrite_problem(outputs, [args.pgn]) or replace_problem(
        [
            ("-o", args.output, CUTOFF_PGN),
            *(("--plot", path, PLOT) for path in plots),
            ("--json", args.json, report_kind),
        ]
    )
    for _, path in outputs:
        problem = problem or (_writable(path) if path is not None else None)
    if args.plot is not None and not problem:
        # After the others: an input named as the graph is said as such.
        unwritable = plot_problem(args.plot)
        problem = f"--plot {unwritable}" if unwritable else None
    if problem:
        errors(problem)
        return EXIT_USAGE
    usable, network = _network(args, errors)
    if not usable:
        return EXIT_USAGE
    for message in reading:
        errors(message)
    limit = _limit(args)
    label = f"Cutoff {__version__}, " + _describe(limit)
    with contextlib.ExitStack() as closing:
        try:
            stream = _open_output(args.output)
            closing.callback(stream.close)
            report = None
            if args.json is not None:
                report = _open_output(args.json)
                closing.callback(report.close)
        except OSError as exc:
            errors(f"{exc.filename or args.output}: cannot write: {exc.strerror or exc}")
            return EXIT_USAGE
        done = 0
        with (
            _signals_stop_the_run(),
            Analyser(args.hash, use_nnue=network is not None, eval_file=network) as analyser,
        ):
            # Read again game by game; its messages were collected by the count.
            games = _games(args.pgn, lambda _: None, errors) if count else iter(())
            for number, game in games:
                if done == count:
                    break  # the file grew since it was counted: no output was checked
                plies = sum(1 for _ in game.mainline_moves()) + 1
                bar = _progress(plies, args.quiet, "pos")
                positions = []
                started = time.monotonic()
                analyser.clear()
                for position in analyser.iter_game(game, limit):
                    positions.append(position)
                    if bar is not None:
                        bar.update(1)
                if bar is not None:
                    bar.close()
                annotated = annotate_game(
                    game, positions, label, args.win_model, stopped=stopped_at(game)
                )
                stream.write(str(annotated) + "\n\n")
                stream.flush()
                if report is not None:
                    record = {
                        "game": number,
                        "white": game.headers.get("White", "?"),
                        "black": game.headers.get("Black", "?"),
                        **game_report(positions, args.win_model),
                    }
                    report.write(json.dumps(record) + "\n")
                    report.flush()
                if not args.quiet:
                    sys.stderr.write(
                        f"cutoff annotate: game {number}: {plies} positions in "
                        f"{time.monotonic() - started:.1f} s\n"
                    )
                if plots:
                    path = plots[done]
                    try:
                        plot_evaluation(positions, path, _title(game), args.win_model)
                    except PlotUnavailableError as exc:
                        errors(str(exc))
                        return EXIT_USAGE
                    except OSError as exc:
                        errors(f"--plot: {write_failure(path, exc)}")
                done += 1
    if not count and errors.count == 0:
        errors(f"{args.pgn}: no games")
    return EXIT_FAILED if errors.count else EXIT_OK


def _numbered(path: Path, number: int) -> Path:
    return path.with_name(f"{path.stem}-{number}{path.suffix}")


def _title(game: chess.pgn.Game) -> str:
    headers = game.headers
    white, black = headers.get("White", "?"), headers.get("Black", "?")
    parts = [f"{white} - {black}"]
    for key in ("Event", "Date"):
        value = headers.get(key, "?")
        if value and "?" not in value:
            parts.append(value)
    return ", ".join(parts)


def _describe(limit: chess.engine.Limit) -> str:
    if limit.depth is not None:
        return f"depth {limit.depth}"
    if limit.nodes is not None:
        return f"{limit.nodes} nodes"
    return f"{limit.time} s"


# -------------------------------------------------------------------- stats


def _stats(args: argparse.Namespace) -> int:
    import json

    from engine import compiled

    errors = _Errors("cutoff stats")
    # The measurement observes the search through subclasses of its position and
    # table, which a compiled build's classes do not allow: it runs the sources
    # (the same tree, at the interpreted speed).
    reason = "`cutoff stats` observes the search, which needs its sources"
    if not compiled.use_sources(reason):
        errors("the compiled modules are loaded already; run `cutoff stats` on its own")
        return EXIT_FAILED
    from engine.analysis import stats

    if args.plot is not None:
        problem = _plot_problem(args.plot, [args.positions] if args.positions else [])
        if problem:
            errors(problem)
            return EXIT_USAGE
    positions = list(stats.DEFAULT_POSITIONS)
    if args.positions:
        from engine.analysis.inputs import read_positions

        name = Path(args.positions).stem
        positions = []
        for task in read_positions([args.positions], errors):
            if task.error is not None:
                errors(f"{task.source}: {task.error}")
            else:
                positions.append((name, task.fen))
        if not positions:
            errors(f"{args.positions}: no positions")
            return EXIT_FAILED
    if reason in compiled.build_description():
        # Said once the arguments are good, so that a usage error stays one line.
        sys.stderr.write(
            "cutoff stats: the compiled build cannot be observed; the search runs from "
            "its sources (the same tree, the interpreted nodes/s)\n"
        )
    bar = _progress(len(positions), args.quiet, "pos")

    def advance(_: int) -> None:
        if bar is not None:
            bar.update(1)

    runs = stats.measure(positions, args.depth, args.minimax_depth, advance)
    if bar is not None:
        bar.close()
    data = stats.summary(runs, args.depth)
    out = _open_output(None)
    out.write(json.dumps(data, indent=1) + "\n" if args.json else stats.markdown(data))
    out.close()
    if args.plot is not None:
        from engine.analysis.plots import plot_file

        stats.plot(data, plot_file(args.plot))
    return EXIT_FAILED if errors.count or data["value_mismatches"] else EXIT_OK


def _plot_problem(path: Path, inputs: list[str]) -> Optional[str]:
    """Why one graph cannot be written at ``path`` (see ``_annotate``'s checks)."""
    from engine.analysis.outputs import PLOT, overwrite_problem, replace_problem
    from engine.analysis.plots import plot_file, plot_problem
    from engine.extras import install_hint

    if not _has_matplotlib():
        return f"--plot needs matplotlib: {install_hint('plot')}"
    plot = plot_file(path)
    unwritable = plot_problem(path)
    return (
        overwrite_problem([("--plot", plot)], inputs)
        or replace_problem([("--plot", plot, PLOT)])
        or _writable(plot)
        or (f"--plot {unwritable}" if unwritable else None)
    )


def _has_matplotlib() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


# -------------------------------------------------------------------- bench


def _write_line(line: str) -> None:
    """Bench and compile report line by line, flushed (they run for a while)."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def _bench(args: argparse.Namespace) -> int:
    from engine.compiled import build_description
    from engine.play.bench import BENCH_FENS, run_bench

    fens = BENCH_FENS[: args.positions] if args.positions else None
    usable, network = _network(args, _Errors("cutoff bench"))
    if not usable:
        return EXIT_USAGE
    _write_line(f"Build: {build_description()}" + (f"; network {network}" if network else ""))
    from engine.core import tunables

    if tunables.TUNED:
        # Not the signature's constants: a different node count is expected.
        names = ", ".join(f"{name} {v:g}" for name, v in sorted(tunables.TUNED.items()))
        _write_line(f"Tuned ({tunables.ENV}): {names}")
    run_bench(
        depth=args.depth,
        hash_mb=args.hash,
        out=_write_line,
        selective=not args.plain,
        fens=fens,
        threads=args.threads,
        network=network,
    )
    return EXIT_OK


# ------------------------------------------------------------------ compile


def _compile(args: argparse.Namespace) -> int:
    from engine import compiled

    if args.status:
        _write_line(f"{compiled.package_dir()}: {compiled.build_description()}")
        return EXIT_OK
    if args.remove:
        removed = compiled.remove()
        _write_line(f"removed {len(removed)} files: the search runs interpreted")
        return EXIT_OK
    try:
        written = compiled.build(out=_write_line)
    except compiled.CompileError as error:
        sys.stderr.write(f"cutoff compile: {error}\n")
        return EXIT_FAILED
    _write_line(f"compiled {len(compiled.COMPILED_MODULES)} modules into {compiled.package_dir()}")
    _write_line(f"({len(written)} files); `cutoff bench` checks the node count and the speed")
    return EXIT_OK
