"""Which teacher to label with: each candidate's label error against machine time.

    python -m scripts.training.teachers TEACHER [TEACHER ...] [--data FILE]
        [--positions N] [--seed S] [--reference SPEC] [--cache FILE] [--plot PNG]
        [--stockfish CMD] [--cutoff CMD] [--quiet]

A teacher is ``ENGINE:LIMIT``: ENGINE ``stockfish`` (``--stockfish CMD``, default
Debian's) or ``cutoff`` (``--cutoff CMD``, default this checkout's engine, as
datagen's ``--engine``), LIMIT ``depth=D``, ``nodes=K`` or ``static``: the search
datagen runs for ``--label-depth``/``--label-nodes``, or ``--label-static``
(Stockfish's ``eval``; ``cutoff:static`` is Cutoff's own static evaluation, its
network included, in this process, as ``distill`` labels).

It draws ``--positions`` quiet positions (seeded; not in check, no capture or
promotion that wins material by static exchange) from ``--data`` (default the
committed scripts/training/data/positions-5.xz), labels them with the reference
teacher (``--reference``, default ``stockfish:depth=14``), whose labels are kept in a
cache file (``--cache``, default under ~/.cache/cutoff) so that a rerun with the same
data, positions, seed and reference does not search them again, and then with each
TEACHER, in units of datagen's 200 positions (the teacher's hash cleared at each, as
datagen does). For each it reports the seconds it took (the labelling alone, not the
engine's start), positions per second, and how far its labels are from the
reference's: the mean absolute difference of the expected score ``sigmoid(cp / K)``
with fit's K, and the correlation of the expected scores. Run it on one core
(``taskset -c 0``) for a per-core rate. ``--plot`` draws error against seconds per
position (log scale; the ``plot`` extra).

This module owns that comparison. It labels no data file (datagen does) and must not
choose a teacher for datagen: it reports.
"""

from __future__ import annotations

import hashlib
import importlib.util
import math
import os
import random
import shlex
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple, Optional, Protocol

import chess
from tqdm import tqdm

from engine.extras import install_hint

from ..common import (
    REPORTED_FAILURES,
    ToolParser,
    UsageError,
    atomic_output,
    engine_command,
    print_stdout,
    report_failure,
)
from .datagen import FENS_PER_TASK
from .dataset import DataError, Sample, board_of, clip, read_records
from .engines import REPO, Labeller, StaticLabeller, is_quiet, teacher_command
from .fit import K, sigmoid

PROG = "teachers"
DEFAULT_DATA = REPO / "scripts" / "training" / "data" / "positions-5.xz"
DEFAULT_REFERENCE = "stockfish:depth=14"
ENGINES = ("stockfish", "cutoff")
LIMITS = ("depth", "nodes")
CACHE_HEADER = "# teachers reference"
HOURS_FOR = 30_000_000
"""The data set the report's hours are for: 30 M positions, on two cores."""


class Spec(NamedTuple):
    """A teacher: an engine and its limit (``kind`` depth, nodes or static)."""

    engine: str
    kind: str
    value: int = 0

    def __str__(self) -> str:
        if self.kind == "static":
            return f"{self.engine}:static"
        return f"{self.engine}:{self.kind}={self.value}"


def parse_spec(text: str) -> Spec:
    """``ENGINE:LIMIT`` as a Spec; a ValueError saying what is wrong."""
    engine, _, limit = text.partition(":")
    if engine not in ENGINES:
        raise ValueError(f"teacher {text!r}: the engine is one of {', '.join(ENGINES)}")
    if limit == "static":
        return Spec(engine, "static")
    kind, _, value = limit.partition("=")
    if kind not in LIMITS or not value.isdigit() or int(value) <= 0:
        raise ValueError(
            f"teacher {text!r}: the limit is static, depth=D or nodes=K (D, K positive)"
        )
    return Spec(engine, kind, int(value))


class Scorer(Protocol):
    def new_unit(self) -> None: ...

    def label(self, board: chess.Board) -> Optional[tuple[int, Optional[chess.Move]]]: ...

    def close(self) -> None: ...


class CutoffStatic:
    """Cutoff's static evaluation (its network included) in this process, as distill's."""

    def __init__(self) -> None:
        from engine.core import nnue
        from engine.core.search import Searcher
        from engine.core.tt import TranspositionTable

        self.searcher = Searcher(TranspositionTable(1))
        self.searcher.use_network(nnue.load(nnue.SHIPPED_NETWORK))

    def new_unit(self) -> None:
        """Nothing to clear."""

    def label(self, board: chess.Board) -> Optional[tuple[int, Optional[chess.Move]]]:
        from engine.core.board import Board

        native = Board.from_chess(board)
        native.use_network(self.searcher.network)
        score = self.searcher.evaluator.evaluate(native)
        return clip(score if board.turn == chess.WHITE else -score), None

    def close(self) -> None:
        """Nothing to end."""


def start(spec: Spec, commands: dict[str, list[str]]) -> Scorer:
    """The running teacher of ``spec``."""
    if spec.kind == "static":
        if spec.engine == "cutoff":
            return CutoffStatic()
        return StaticLabeller(commands[spec.engine])
    depth = spec.value if spec.kind == "depth" else None
    nodes = spec.value if spec.kind == "nodes" else None
    return Labeller(commands[spec.engine], depth, nodes)


class Result(NamedTuple):
    spec: Spec
    labels: list[int]
    seconds: float


def label_all(spec: Spec, commands: dict[str, list[str]], fens: list[str], quiet: bool) -> Result:
    """``spec``'s labels of ``fens`` (cp, White's view, clipped) and the seconds they
    took, in units of datagen's size."""
    scorer = start(spec, commands)
    labels: list[int] = []
    seconds = 0.0
    try:
        with tqdm(
            total=len(fens), unit="pos", desc=str(spec), disable=quiet or None, file=sys.stderr
        ) as bar:
            for at, fen in enumerate(fens):
                board = chess.Board(fen)
                began = time.perf_counter()
                if at % FENS_PER_TASK == 0:
                    scorer.new_unit()
                label = scorer.label(board)
                seconds += time.perf_counter() - began
                # Quiet positions are not in check: every teacher has a label.
                if label is None:
                    raise UsageError(f"{spec}: no label for {fen} (in check?)")
                labels.append(label[0])
                bar.update()
    finally:
        scorer.close()
    return Result(spec, labels, seconds)


def draw_positions(path: Path, count: int, seed: int) -> list[str]:
    """``count`` quiet positions of the data file ``path``, drawn with ``seed``."""
    if not path.is_file():
        raise UsageError(f"cannot read {str(path)!r}: no such file")
    samples: list[tuple[str, Sample]] = [
        (where, record) for where, record in read_records(path) if isinstance(record, Sample)
    ]
    order = list(range(len(samples)))
    random.Random(seed).shuffle(order)
    fens: list[str] = []
    keys: set[str] = set()
    for index in order:
        where, sample = samples[index]
        board = board_of(sample, where)
        placement = board.epd()
        if placement in keys or board.is_game_over() or not is_quiet(board):
            continue
        keys.add(placement)
        fens.append(board.fen())
        if len(fens) == count:
            break
    if len(fens) < count:
        raise UsageError(f"{path}: only {len(fens)} quiet positions, {count} asked")
    return fens


def cache_path(data: Path, count: int, seed: int, reference: Spec) -> Path:
    """The default cache file of a reference's labels."""
    key = f"{data.resolve()}:{data.stat().st_size}:{count}:{seed}:{reference}"
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "cutoff" / f"teachers-{digest}.txt"


def cache_header(reference: Spec, data: Path, count: int, seed: int) -> str:
    return f"{CACHE_HEADER} {reference} data {data.name} positions {count} seed {seed}"


def read_cache(path: Path, header: str, fens: list[str]) -> Optional[list[int]]:
    """The cached reference labels of ``fens``, or None if ``path`` has not got them."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    if not lines or lines[0] != header or len(lines) != len(fens) + 1:
        return None
    labels = []
    for fen, line in zip(fens, lines[1:]):
        cached, _, score = line.rpartition(";")
        if cached != fen or not score.lstrip("-").isdigit():
            return None
        labels.append(int(score))
    return labels


def write_cache(path: Path, header: str, fens: list[str], labels: list[int]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_output(path) as handle:
        handle.write(header + "\n")
        for fen, score in zip(fens, labels):
            handle.write(f"{fen};{score}\n")


class Row(NamedTuple):
    """One teacher's line of the report."""

    spec: Spec
    per_second: float
    error: float
    correlation: float


def compare(result: Result, reference: list[int]) -> Row:
    """Speed and error of ``result`` against the reference's labels."""
    ours = [sigmoid(cp, K) for cp in result.labels]
    theirs = [sigmoid(cp, K) for cp in reference]
    error = sum(abs(a - b) for a, b in zip(ours, theirs)) / len(ours)
    return Row(result.spec, len(ours) / max(result.seconds, 1e-9), error, correlation(ours, theirs))


def correlation(xs: list[float], ys: list[float]) -> float:
    """Pearson's correlation of ``xs`` and ``ys`` (nan when either is constant)."""
    count = len(xs)
    mean_x, mean_y = sum(xs) / count, sum(ys) / count
    cov = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys))
    var_x = sum((x - mean_x) ** 2 for x in xs)
    var_y = sum((y - mean_y) ** 2 for y in ys)
    if var_x == 0 or var_y == 0:
        return math.nan
    return cov / math.sqrt(var_x * var_y)


def table(rows: list[Row], reference: Spec, count: int) -> Iterator[str]:
    """The report, a Markdown table."""
    yield (
        f"{count} quiet positions; reference {reference}; error = mean |sigmoid(cp/{K:g}) "
        "- reference's|; hours for 30 M positions on 2 cores"
    )
    yield "| teacher | positions/s | ms/position | error | correlation | hours for 30 M |"
    yield "| --- | ---: | ---: | ---: | ---: | ---: |"
    for row in rows:
        hours = HOURS_FOR / (2 * row.per_second) / 3600
        yield (
            f"| {row.spec} | {row.per_second:,.0f} | {1000 / row.per_second:.2f} | "
            f"{row.error:.4f} | {row.correlation:.3f} | {hours:,.1f} |"
        )


def plot(rows: list[Row], reference: Spec, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(6, 4))
    for row in rows:
        axes.scatter([1 / row.per_second], [row.error])
        axes.annotate(str(row.spec), (1 / row.per_second, row.error), fontsize=7)
    axes.set_xscale("log")
    axes.set_xlabel("seconds per position (one core)")
    axes.set_ylabel(f"mean |expected score - {reference}'s|")
    axes.set_title("label error against machine time")
    figure.tight_layout()
    figure.savefig(path)
    plt.close(figure)


def parse_args(argv: Optional[list[str]]) -> tuple[ToolParser, Any]:
    parser = ToolParser(prog=PROG, description=__doc__.splitlines()[0])
    parser.add_argument("teachers", nargs="+", help="ENGINE:LIMIT, e.g. stockfish:depth=5")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="a data file")
    parser.add_argument("--positions", type=int, default=2000, help="quiet positions drawn")
    parser.add_argument("--seed", type=int, default=1, help="seed of the draw")
    parser.add_argument("--reference", default=DEFAULT_REFERENCE, help="reference teacher")
    parser.add_argument("--cache", type=Path, help="the reference's labels (default: ~/.cache)")
    parser.add_argument("--stockfish", help="Stockfish's command (default: found as datagen's)")
    parser.add_argument(
        "--cutoff",
        default=f"{shlex.quote(sys.executable)} -m engine",
        help="Cutoff's command (default: this checkout's)",
    )
    parser.add_argument("--plot", type=Path, help="error against time, a PNG (plot extra)")
    parser.add_argument("--quiet", action="store_true", help="no progress bars")
    return parser, parser.parse_args(argv)


def run(argv: Optional[list[str]]) -> int:
    parser, args = parse_args(argv)
    ns = vars(args)
    parser.require_positive(args, "positions")
    try:
        reference = parse_spec(ns["reference"])
        specs = [parse_spec(text) for text in ns["teachers"]]
    except ValueError as error:
        parser.error(str(error))
    if ns["plot"] is not None and importlib.util.find_spec("matplotlib") is None:
        parser.error(f"--plot needs matplotlib: {install_hint('plot')}")
    engines = {spec.engine for spec in [reference, *specs]}
    commands = {
        "stockfish": teacher_command(ns["stockfish"]) if "stockfish" in engines else [],
        "cutoff": engine_command(ns["cutoff"]),
    }
    data: Path = ns["data"]
    count: int = ns["positions"]
    seed: int = ns["seed"]
    quiet: bool = ns["quiet"]
    fens = draw_positions(data, count, seed)
    cache = ns["cache"] or cache_path(data, count, seed, reference)
    header = cache_header(reference, data, count, seed)
    truth = read_cache(cache, header, fens)
    if truth is None:
        truth = label_all(reference, commands, fens, quiet).labels
        write_cache(cache, header, fens, truth)
        print(f"{PROG}: the reference's labels are in {cache}", file=sys.stderr)
    else:
        print(f"{PROG}: the reference's labels from {cache}", file=sys.stderr)
    rows = []
    for spec in specs:
        rows.append(compare(label_all(spec, commands, fens, quiet), truth))
    failed = print_stdout("\n".join(table(rows, reference, count)))
    if failed is not None:
        print(f"{PROG}: cannot write the report: {failed}", file=sys.stderr)
        return 1
    if ns["plot"] is not None:
        plot(rows, reference, ns["plot"])
    return 0


def main(argv: Optional[list[str]] = None) -> int:
    try:
        return run(argv)
    except DataError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    except REPORTED_FAILURES as exc:
        return report_failure(PROG, exc)


if __name__ == "__main__":
    raise SystemExit(main())
