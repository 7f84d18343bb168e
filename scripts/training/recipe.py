"""One command from nothing to a trained network: the data recipe of issue 68.

    python -m scripts.training.recipe DIR [--games N] [--roots R] [--pgn FILE ...]
        [--leaves] [--jobs J | --scheduler ADDR]
    python -m scripts.training.recipe DIR --data FILE.gz [FILE.gz ...]

Two steps, or up to five (one with ``--data``), each the project's own tool called
with the arguments printed before it runs (so any step can be rerun, or changed, by
hand):

1. ``DIR/games.gz``: Stockfish self-play at ``--play-nodes`` a move, every kept
   position labelled by a separate ``--label-nodes`` Stockfish search (datagen);
2. with ``--pgn FILE ...`` only, ``DIR/matches.gz``: the quiet positions of those
   games (Cutoff's own matches, say), labelled as in step 1 (datagen);
3. with ``--leaves`` only, ``DIR/leaves.fen``: ``--per-root`` positions Cutoff's own
   search evaluates, from each of ``--roots`` positions of step 1 searched to
   ``--leaf-nodes`` (leaves);
4. with ``--leaves`` only, ``DIR/leaves.gz``: those positions, the quiet ones
   labelled as in step 1 (datagen);
5. ``DIR/network.nnue``: a ``--hidden``-wide correction of the hand-written
   evaluation trained on all of the labelled files (train, ``--base hand``), written
   at ``--correction-scale`` of its fitted size (default 0.5: n16, the fitted
   correction of 16,500 games, was even with the hand-written evaluation at 5,000
   nodes a move, and +121 Elo ahead at half its size).

With ``--data`` the labelled files given (datagen's format) take the place of steps
1 to 4, and the recipe is step 5 alone: ``--data
scripts/training/data/positions.gz`` remakes the shipped network in about two
minutes from the positions it was trained on (the output of steps 1 and 2 for
``--games 16500 --pgn`` the 988 games kept until the ninth session, which take about
2.4 hours of two cores to make again): byte for byte on a CPU like the one that made
it, within a few cp elsewhere (float32 sums taken in another order: docs/training.md).

The leaves are off by default because both networks trained with them played clearly
worse per node than the same recipe without them, though they fitted Stockfish's
labels better (r1 −61 and r16 −67 Elo against the hand-written evaluation at 5,000
nodes a move, r1n +26 and n16 0 without them: docs/training.md).

Every step is deterministic for its arguments (node-limited one-thread searches,
seeded draws), whatever ``--jobs`` or scheduler. ``DIR/recipe.json`` records each
step's arguments and the sizes of the files it read, and whether it finished: run
the same command again after an interruption and the finished steps are skipped and
the interrupted one resumes (datagen appends; the others start over). Raising
``--games`` extends step 1 and redoes what depends on it; fewer games, or other
changed arguments of step 1, are refused (its file would mix two recipes: use another
folder), and a later step whose arguments or inputs changed (a PGN file that grew,
say) is redone.

This module owns the order of the steps, their arguments and the record of what is
done. It must not make, label or train anything itself: the tools do.
"""

from __future__ import annotations

import argparse
import importlib
import json
import shlex
import sys
import time
from pathlib import Path
from typing import Any, NamedTuple, Optional

from ..common import ToolParser, UsageError, atomic_output, report_failure
from .engines import teacher_command

PROG = "recipe"
STAMP = "recipe.json"
GROWING = "--games"
"""The one argument of step 1 that may change between runs: more games extend it."""
TRAINING = (
    *("--lr", "1e-3", "--weight-decay", "0.01", "--lam", "1.0", "--batch-size", "1024"),
    *("--seed", "1", "--threads", "1", "--base", "hand"),
)
"""The trainer's settings of every network since d32 (docs/training.md)."""


class Step(NamedTuple):
    name: str
    tool: str  # a module of this package with ``main(argv) -> int``
    argv: list[str]  # the tool's arguments, without the execution ones
    output: Path
    inputs: list[Path]


def steps(args: Any) -> list[Step]:
    folder: Path = args.folder
    stockfish = shlex.join(teacher_command(args.stockfish))
    games, matches = folder / "games.gz", folder / "matches.gz"
    fens, leaves = folder / "leaves.fen", folder / "leaves.gz"
    label = ["--teacher", stockfish, "--label-nodes", str(args.label_nodes)]
    play = ["--engine", stockfish, "--nodes", str(args.play_nodes), "--seed", str(args.seed)]
    made = [str(games), GROWING, str(args.games), *play, *label]
    # With --data nothing is made (run() refused --pgn and --leaves beside it).
    plan = [] if args.data else [Step("games", "datagen", made, games, [])]
    if args.pgn:
        pgn = [*map(str, args.pgn)]
        plan.append(
            Step("matches", "datagen", [str(matches), "--pgn", *pgn, *label], matches, args.pgn)
        )
    if args.leaves:
        search = ["--roots", str(args.roots), "--nodes", str(args.leaf_nodes)]
        search += ["--per-root", str(args.per_root), "--seed", str(args.seed + 10)]
        plan.append(
            Step("leaves", "leaves", [str(games), "--out", str(fens), *search], fens, [games])
        )
        plan.append(
            Step("labels", "datagen", [str(leaves), "--fens", str(fens), *label], leaves, [fens])
        )
    trained = [step.output for step in plan if step.output.suffix == ".gz"]  # not leaves.fen
    trained += args.data
    network = folder / "network.nnue"
    fit = ["--hidden", str(args.hidden), "--epochs", str(args.epochs), *TRAINING]
    fit += ["--correction-scale", f"{args.correction_scale:g}"]
    plan.append(
        Step(
            "network", "train", [*map(str, trained), "--out", str(network), *fit], network, trained
        )
    )
    return plan


def _execution(step: Step, args: Any) -> list[str]:
    if step.tool == "train":
        return []
    where = ["--scheduler", args.scheduler] if args.scheduler else ["--jobs", str(args.jobs)]
    return where + (["--quiet"] if args.quiet else [])


def _key(step: Step) -> dict[str, Any]:
    """What a step's output depends on: its arguments, the folder's files named
    without the folder (a moved folder is the same recipe), and its inputs' sizes."""
    folder = step.output.parent
    argv = [Path(a).name if Path(a).parent == folder else a for a in step.argv]
    return {"argv": argv, "inputs": {p.name: p.stat().st_size for p in step.inputs}}


def _split_count(argv: list[str]) -> tuple[list[str], int]:
    """Step 1's arguments without ``--games N``, and N."""
    at = argv.index(GROWING)
    return argv[:at] + argv[at + 2 :], int(argv[at + 1])


def _read_stamp(path: Path) -> dict[str, Any]:
    if not path.exists():
        return {}
    try:
        stamp = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        raise UsageError(f"{path}: unreadable record of the steps ({exc}): remove it") from None
    if not isinstance(stamp, dict):
        raise UsageError(f"{path}: not a record of the steps: remove it")
    return stamp


def _write_stamp(path: Path, stamp: dict[str, Any]) -> None:
    with atomic_output(path) as handle:
        handle.write(json.dumps(stamp, indent=1) + "\n")


def _fresh(step: Step, old: Optional[dict[str, Any]], key: dict[str, Any]) -> bool:
    """Whether ``step`` must start over rather than continue or extend its output."""
    if old is None or old.get("key") == key:
        return False
    if step.name != "games":
        return True
    try:
        before, made = _split_count(old["key"]["argv"])
    except (KeyError, TypeError, ValueError):
        raise UsageError(f"{STAMP} in {step.output.parent}: not a record of the steps") from None
    now, wanted = _split_count(key["argv"])
    if before != now:
        raise UsageError(
            f"{step.output} was made with other arguments ({shlex.join(old['key']['argv'])}): "
            "use another folder, or remove it"
        )
    if wanted < made:
        raise UsageError(f"{step.output} holds {made} games: {GROWING} can only grow")
    return False


def run(args: Any) -> int:
    for path in args.pgn:
        if not path.is_file():
            raise UsageError(f"{path}: no such PGN file")
    for path in args.data:
        if not path.is_file():
            raise UsageError(f"{path}: no such data file")
    if args.data and (args.pgn or args.leaves):
        raise UsageError("--data trains on the given files alone: drop --pgn and --leaves")
    args.folder.mkdir(parents=True, exist_ok=True)
    stamp_path = args.folder / STAMP
    stamp = _read_stamp(stamp_path)
    plan = steps(args)
    for number, step in enumerate(plan, 1):
        key = _key(step)
        old = stamp.get(step.name)
        if old is not None and old.get("key") == key and old.get("done") and step.output.exists():
            print(f"{PROG}: step {number}/{len(plan)} {step.name}: done ({step.output})")
            continue
        if _fresh(step, old, key):
            step.output.unlink(missing_ok=True)
        stamp[step.name] = {"key": key, "done": False}
        _write_stamp(stamp_path, stamp)
        argv = step.argv + _execution(step, args)
        print(
            f"{PROG}: step {number}/{len(plan)} {step.name}: "
            f"python -m {__package__}.{step.tool} {shlex.join(argv)}",
            flush=True,
        )
        began = time.monotonic()
        status = int(importlib.import_module(f"{__package__}.{step.tool}").main(argv))
        sys.stdout.flush()
        if status != 0:
            print(f"{PROG}: step {step.name} failed (exit status {status})", file=sys.stderr)
            return status
        stamp[step.name] = {"key": key, "done": True, "seconds": round(time.monotonic() - began)}
        _write_stamp(stamp_path, stamp)
    network = plan[-1].output
    print(
        f"{PROG}: network {network}: use it with `setoption name Use NNUE value true` and "
        f"`setoption name EvalFile value {network.resolve()}`"
    )
    return 0


def parse_args(argv: Optional[list[str]]) -> Any:
    parser = ToolParser(prog=PROG, description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="the recipe's folder (its files and record)")
    data = parser.add_argument_group("data")
    data.add_argument("--games", type=int, default=8000, help="Stockfish self-play games")
    data.add_argument("--play-nodes", type=int, default=1000, help="self-play nodes a move")
    data.add_argument("--label-nodes", type=int, default=5000, help="teacher nodes a label")
    data.add_argument("--roots", type=int, default=25_000, help="positions searched for leaves")
    data.add_argument("--leaf-nodes", type=int, default=1000, help="Cutoff's nodes a root")
    data.add_argument("--per-root", type=int, default=4, help="leaves kept a root")
    data.add_argument("--seed", type=int, default=1, help="seed of the games (leaves: +10)")
    data.add_argument("--stockfish", help="player and teacher command (default: stockfish)")
    data.add_argument(
        "--pgn", type=Path, nargs="+", default=[], help="games whose positions are labelled too"
    )
    data.add_argument(
        "--leaves",
        action=argparse.BooleanOptionalAction,
        default=False,
        help="add positions of Cutoff's own search (default: off; they played worse)",
    )
    data.add_argument(
        "--data",
        type=Path,
        nargs="+",
        default=[],
        help="labelled files to train on instead of making them (skips steps 1-4)",
    )
    net = parser.add_argument_group("network")
    net.add_argument("--hidden", type=int, default=32, help="hidden width")
    net.add_argument("--epochs", type=int, default=6, help="training epochs (the best kept)")
    net.add_argument(
        "--correction-scale",
        type=float,
        default=0.5,
        help="the written correction's share of the fitted one (train's option)",
    )
    run_group = parser.add_argument_group("execution")
    run_group.add_argument("--jobs", type=int, default=1, help="local worker processes")
    run_group.add_argument("--scheduler", help="Dask scheduler: tcp://HOST:PORT or local:N")
    run_group.add_argument("--quiet", action="store_true", help="no progress bars")
    args = parser.parse_args(argv)
    parser.require_positive(
        args, "games", "play_nodes", "label_nodes", "roots", "leaf_nodes", "per_root"
    )
    parser.require_positive(args, "hidden", "epochs", "jobs", "correction_scale")
    return args


def main(argv: Optional[list[str]] = None) -> int:
    args = parse_args(argv)
    try:
        return run(args)
    except UsageError as exc:
        return report_failure(PROG, exc)
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted: run the same command again to go on", file=sys.stderr)
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
