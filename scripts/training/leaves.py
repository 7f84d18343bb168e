"""Sample the positions Cutoff's search evaluates, to be labelled as training data.

    python -m scripts.training.leaves DATA.gz [DATA.gz ...] --out LEAVES.fen
        [--roots N] [--nodes K] [--per-root M] [--seed S] [--jobs J]

A network learns the positions it is shown, but the search asks its evaluation about
other ones: the nodes at its horizon (quiescence stand-pats, the static evaluations
that pruning reads), reached by moves no player would make, often a move or a capture
from balance. Game positions are balanced and natural. This tool makes the other
population: it searches ``--roots`` positions drawn (seeded) from training data files
(``FEN;SCORE;RESULT`` gzip, scripts.training.dataset) with Cutoff's search to
``--nodes`` nodes, from an empty table and fresh history, and keeps ``--per-root``
of the positions it evaluated, drawn uniformly over the evaluation calls (a
reservoir), so a position counts as often as the search asks about it.

OUT gets one ``FEN;*`` line per kept position (``*``: no game result), the leaves of
a root together and the roots in the order drawn: the ``--fens`` input of
``datagen``, which drops the positions that are not quiet, labels the rest with the
teacher and deduplicates them. OUT is written beside itself and renamed when
complete. A root's leaves depend only on the root, the seed and the nodes, not on
``--jobs`` or the order of the work.

The search's evaluation is observed by a subclass of ``Evaluator``; interpreted code
cannot subclass a class mypyc compiled, so with a compiled build (``cutoff compile``)
this tool loads the search from its sources. It must not label (datagen does) nor
train (train does).
"""

from __future__ import annotations

import random
import sys
import time
from functools import partial
from pathlib import Path
from typing import Any, NamedTuple, Optional

import chess
from tqdm import tqdm

from engine.analysis.parallel import (
    SchedulerLostError,
    SchedulerUnavailableError,
    run_ordered,
    worker_state,
)

from ..common import REPORTED_FAILURES, ToolParser, UsageError, atomic_output, report_failure
from .dataset import UNKNOWN, DataError, Sample, read_records

PROG = "leaves"
HASH_MB = 4
"""The search's table, cleared before every root: small is quick to clear."""
ROOTS_PER_TASK = 50


class Settings(NamedTuple):
    nodes: int
    per_root: int
    seed: int


class Root(NamedTuple):
    number: int  # the line's place among the source positions: seeds its draw
    fen: str


SOURCES_REASON = "leaves observes the evaluation, which needs its sources"


def _use_sources() -> bool:
    """Load the search from its sources (the evaluation is subclassed below); whether
    a compiled build is passed over for them."""
    from engine import compiled

    if not compiled.use_sources(SOURCES_REASON):
        raise RuntimeError("the compiled search was imported before leaves could observe it")
    return SOURCES_REASON in compiled.build_description()


class _Sampler:
    """A searcher whose evaluation keeps a uniform sample of the positions it scores."""

    def __init__(self) -> None:
        _use_sources()
        from engine.core.board import Board
        from engine.core.evaluate import Evaluator
        from engine.core.search import Searcher
        from engine.core.tt import TranspositionTable

        sampler = self

        class Observed(Evaluator):
            def evaluate(self, board: Board) -> int:
                sampler.seen(board)
                return super().evaluate(board)

        self.searcher = Searcher(TranspositionTable(HASH_MB))
        self.searcher.evaluator = Observed()
        self.calls = 0
        self.kept: list[str] = []
        self.want = 0
        self.rng = random.Random()

    def seen(self, pos: Any) -> None:
        # Reservoir sampling (Algorithm R): after n calls each has probability want/n.
        self.calls += 1
        if len(self.kept) < self.want:
            self.kept.append(pos.fen())
            return
        slot = self.rng.randrange(self.calls)
        if slot < self.want:
            self.kept[slot] = pos.fen()

    def leaves(self, root: Root, settings: Settings) -> list[str]:
        from engine.core.search import SearchControl, SearchParams

        searcher = self.searcher
        # Everything cleared: a root's leaves must not depend on the roots before it.
        searcher.tt.clear()
        searcher.new_game()
        searcher.evaluator.clear()
        self.rng.seed(f"{settings.seed}:{root.number}")
        self.calls = 0
        self.kept = []
        self.want = settings.per_root
        searcher.search(
            chess.Board(root.fen), SearchParams(node_limit=settings.nodes), SearchControl()
        )
        self.want = 0
        return self.kept


def work_chunk(settings: Settings, roots: list[list[Root]]) -> list[list[str]]:
    """The execution layer's task function: the kept positions of each task's roots."""
    state = worker_state()
    sampler = state.get(PROG)
    if sampler is None:
        sampler = state[PROG] = _Sampler()
    return [[fen for root in task for fen in sampler.leaves(root, settings)] for task in roots]


def draw_roots(paths: list[Path], count: int, seed: int) -> list[Root]:
    """``count`` positions of the data files (all of them if fewer), drawn with ``seed``."""
    fens: list[str] = []
    places: list[str] = []  # file:line of each, for a message about its FEN
    for path in paths:
        if not path.is_file():
            raise UsageError(f"cannot read {str(path)!r}: no such file")
        for where, record in read_records(path):
            if isinstance(record, Sample):
                fens.append(record.fen)
                places.append(where)
    chosen = sorted(random.Random(seed).sample(range(len(fens)), min(count, len(fens))))
    roots = []
    for number in chosen:
        try:
            chess.Board(fens[number])
        except ValueError as exc:
            raise DataError(f"{places[number]}: bad FEN: {exc}") from None
        roots.append(Root(number, fens[number]))
    random.Random(seed + 1).shuffle(roots)  # neighbours in a game go to different tasks
    return roots


def parse_args(argv: Optional[list[str]]) -> Any:
    parser = ToolParser(prog=PROG, description=__doc__.splitlines()[0])
    parser.add_argument("data", type=Path, nargs="+", help="training data files (the roots)")
    parser.add_argument("--out", type=Path, required=True, help="output: FEN;* lines")
    parser.add_argument("--roots", type=int, default=10_000, help="roots to search")
    parser.add_argument("--nodes", type=int, default=1000, help="nodes per root")
    parser.add_argument("--per-root", type=int, default=4, help="positions kept per root")
    parser.add_argument("--seed", type=int, default=1, help="seed of the draws")
    parser.add_argument("--jobs", type=int, default=1, help="local worker processes")
    parser.add_argument("--scheduler", help="Dask scheduler: tcp://HOST:PORT or local:N")
    parser.add_argument("--quiet", action="store_true", help="no progress bar")
    args = parser.parse_args(argv)
    parser.require_positive(args, "roots", "nodes", "per_root", "jobs")
    return args


def main(argv: Optional[list[str]] = None) -> int:
    args = parse_args(argv)
    began = time.monotonic()
    settings = Settings(args.nodes, args.per_root, args.seed)
    written = 0
    observed_from_sources = _use_sources()
    try:
        roots = draw_roots(args.data, args.roots, args.seed)
        if observed_from_sources:
            # Said once the data is read, so that an error in it stays one line.
            print(
                f"{PROG}: the compiled build cannot be observed; the search runs from its "
                "sources (the interpreted nodes/s)",
                file=sys.stderr,
            )
        tasks = [roots[i : i + ROOTS_PER_TASK] for i in range(0, len(roots), ROOTS_PER_TASK)]
        with (
            atomic_output(args.out) as handle,
            tqdm(total=len(roots), unit="root", disable=args.quiet or None) as bar,
        ):
            results = run_ordered(
                partial(work_chunk, settings), tasks, jobs=args.jobs, scheduler=args.scheduler
            )
            for task, fens in zip(tasks, results):
                handle.writelines(f"{fen};{UNKNOWN}\n" for fen in fens)
                written += len(fens)
                bar.update(len(task))
    except (SchedulerUnavailableError, SchedulerLostError, DataError) as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2 if isinstance(exc, (SchedulerUnavailableError, DataError)) else 1
    except REPORTED_FAILURES as exc:
        return report_failure(PROG, exc)
    seconds = time.monotonic() - began
    print(f"roots {len(roots)} positions {written} seconds {seconds:.1f} -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
