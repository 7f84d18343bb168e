"""SPSA over Cutoff's tunable constants, against a fixed outside opponent.

Usage: python -m scripts.tuning.spsa --engine SPEC --params NAME [NAME ...]
       [--opponent SPEC] [--iterations N] [--out DIR] [--resume] [--plot FILE]
       [--seed S] [--rate R] [--step-scale S] [cutoff-match options]
       (installed: cutoff-tune ...)
       python -m scripts.tuning.spsa report DIR [--plot FILE] [--keep FILE] [--min-z Z]

Simultaneous perturbation stochastic approximation, as engine testing frameworks run
it: at iteration k every constant ``i`` is moved by ``+c_k,i`` or ``-c_k,i`` at once
(a random sign ``d_i`` each), the engine with the ``+`` set and the engine with the
``-`` set each play the same colour-swapped pairs against the opponent (by default
Stockfish at ``UCI_Elo`` 2000), and every constant moves towards the better side:

    theta_i += a_k * c_k,i * d_i * (score_plus - score_minus)

with ``c_k,i = scale * step_i / (k + 1) ** 0.101`` (``--step-scale``, default 1) and
``a_k = rate * (A + 1) ** 0.602 / (A + k + 1) ** 0.602``, ``A`` a tenth of the
iterations (Spall's exponents). Scores are
fractions of the points. The constants, their defaults, ranges and steps are the
engine's own (engine/core/tunables.py); each engine reads its set from a JSON file
named by ``CUTOFF_TUNE`` (an ``env.`` token added to ``--engine``), so nothing is
rebuilt and the compiled build is tuned as it plays.

Each iteration's games are one ``cutoff-match`` per side (everything that is not
listed here passes through to it: ``--tc``/``--nodes``, ``--rounds``, ``--openings``,
``--concurrency``, ``--scheduler`` for Dask, adjudication), with openings drawn from
``--seed`` and the iteration's number, the same for both sides. After every
iteration ``DIR/spsa.json`` holds the settings, the constants and the history;
``--resume`` goes on from it after an interruption (the iteration that was playing
is played again: its finished games leave ``DIR/plus.pgn`` and ``minus.pgn``, whose
Event tags name each game's iteration), and ``DIR/tuned.json`` holds the constants so
far, ready for ``CUTOFF_TUNE``. ``--plot FILE`` draws each constant over the
iterations. ``report DIR`` says, for a run so far or finished, which constants moved
beyond the games' noise and which have settled (scripts.tuning.spsa_history; printed
at the end of a run too).

This module only builds the matches' command lines, reads their summaries and keeps
the tuner's state: games and statistics are the match runner's, the constants the
engine's. Exit status: 0 done, 1 bad input, a match that could not be played or a
file that could not be written (a full disk: one line; ``--resume`` goes on),
130/143 interrupted (the finished iterations are kept).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import math
import random
import re
import shlex
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Optional, TextIO

from engine.analysis.outputs import json_kind, write_failure
from engine.analysis.plots import plot_file
from engine.core.tunables import ENV, TUNABLES, Tunable

from ..common import UsageError, atomic_output, print_stdout
from ..matches import match
from ..matches.drivers import outputs_problem, own_option_problem
from ..matches.ladder import STOCKFISH
from ..matches.match_pgn import MATCH_PGN
from ..matches.tally import SUMMARY
from . import spsa_history
from .spsa_history import CONSTANTS, plot_history, report_lines

PROG = "cutoff-tune"
DEFAULT_OPPONENT = (
    f"cmd={STOCKFISH} name=Stockfish option.UCI_LimitStrength=true option.UCI_Elo=2000"
)
OWN_OPTIONS = (
    "--pgn",
    "--json",
    "--engine",
    "--seed",
    "--order",
    "--games",
    "--sprt",
    "--event",
)
"""Match options the tuner sets itself for every match."""
ALPHA = 0.602
GAMMA = 0.101
STATE = json_kind("a cutoff-tune state", ("settings", "theta", "history"))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description=(
            "Tune Cutoff's constants by SPSA against a fixed opponent. Options not listed "
            "here go to every match (see cutoff-match --help): give a limit (--tc or "
            "--nodes), --rounds (game pairs per side and iteration) and --openings. "
            "'cutoff-tune report --help': what a run says so far."
        ),
    )
    parser.add_argument(
        "--engine", required=True, metavar="SPEC", help="Cutoff, as cutoff-match takes it"
    )
    parser.add_argument(
        "--params",
        nargs="+",
        required=True,
        metavar="NAME",
        help=f"the constants to tune (any of: {', '.join(TUNABLES)}), or 'all'",
    )
    parser.add_argument(
        "--opponent",
        default=DEFAULT_OPPONENT,
        metavar="SPEC",
        help="the fixed opponent (default: Stockfish at UCI_Elo 2000)",
    )
    parser.add_argument("--iterations", type=int, default=200, help="SPSA iterations (200)")
    parser.add_argument(
        "--rate",
        type=float,
        default=1.0,
        help="a_0: a full point's difference moves a constant by rate x its step (1.0)",
    )
    parser.add_argument(
        "--step-scale",
        type=float,
        default=1.0,
        help="perturb by this many steps (1.0); a larger one sees smaller effects per game",
    )
    parser.add_argument("--seed", type=int, default=1, help="signs and openings (1)")
    parser.add_argument("--out", default="spsa", help="folder for the state (default spsa)")
    parser.add_argument("--resume", action="store_true", help="go on from DIR/spsa.json")
    parser.add_argument(
        "--plot", metavar="FILE", help="each constant over the iterations (needs matplotlib)"
    )
    return parser


def _params(names: Sequence[str]) -> list[Tunable] | str:
    """The named tunables, or why not."""
    if list(names) == ["all"]:
        return list(TUNABLES.values())
    unknown = [name for name in names if name not in TUNABLES]
    if unknown:
        return f"no tunable constant {unknown[0]!r} (known: {', '.join(TUNABLES)})"
    if len(set(names)) != len(names):
        return "a constant is named twice in --params"
    return [TUNABLES[name] for name in names]


def gains(k: int, iterations: int, rate: float, scale: float = 1.0) -> tuple[float, float]:
    """(a_k, the factor of each step that gives c_k) at iteration ``k`` (from 0);
    ``scale`` is ``--step-scale``, the perturbation's size in steps at the start."""
    big_a = iterations / 10
    a_k = rate * (big_a + 1) ** ALPHA / (big_a + k + 1) ** ALPHA
    return a_k, scale / (k + 1) ** GAMMA


def perturbation(seed: int, k: int, count: int) -> list[int]:
    """The signs of iteration ``k``: the same for a resumed run."""
    generator = random.Random(seed * 1_000_003 + k)
    return [generator.choice((-1, 1)) for _ in range(count)]


def updated(
    theta: dict[str, float],
    params: Sequence[Tunable],
    signs: Sequence[int],
    a_k: float,
    c_factor: float,
    difference: float,
) -> dict[str, float]:
    """The constants after an iteration whose ``+`` side scored ``difference`` (a
    fraction of the points) more than its ``-`` side; kept in their ranges."""
    new = dict(theta)
    for tunable, sign in zip(params, signs):
        step = a_k * tunable.step * c_factor * sign * difference
        new[tunable.name] = tunable.within(theta[tunable.name] + step)
    return new


def sides(
    theta: dict[str, float], params: Sequence[Tunable], signs: Sequence[int], c_factor: float
) -> dict[str, dict[str, float]]:
    """The constants of the ``plus`` and ``minus`` engines (the engine clamps and rounds
    them as it reads them: engine/core/tunables.py)."""
    return {
        side: {
            t.name: t.within(theta[t.name] + sign * s * t.step * c_factor)
            for t, s in zip(params, signs)
        }
        for side, sign in (("plus", 1), ("minus", -1))
    }


class OutputFailedError(Exception):
    """A file of the run could not be written (a full disk): the one line that says
    so. What was written before stays whole, and ``--resume`` goes on from it."""


@contextlib.contextmanager
def _output(path: Path) -> Iterator[TextIO]:
    """``atomic_output`` whose failure is an ``OutputFailedError`` naming ``path``."""
    try:
        with atomic_output(path) as handle:
            yield handle
    except UsageError as err:
        raise OutputFailedError(str(err)) from None
    except OSError as err:
        raise OutputFailedError(write_failure(path, err)) from None


def _write_json(path: Path, data: Any) -> None:
    """Written whole or not at all: an interruption leaves the previous file."""
    with _output(path) as handle:
        handle.write(json.dumps(data, indent=1) + "\n")


EVENT = "cutoff-tune iteration {}"
"""Each game's PGN Event tag: the iteration (from 1) that played it."""
_GAME_START = re.compile(r'^(?=\[Event ")', re.MULTILINE)
_ITERATION = re.compile(r'\A\[Event "' + re.escape(EVENT.format("")) + r'(\d+)"\]')


def drop_unfinished_games(pgn: Path, finished: int) -> int:
    """Remove from ``pgn`` the games of iterations after the first ``finished`` (an
    interrupted iteration's, played again on resume) so that the file holds the
    state's games; returns how many went. Games without the tuner's Event tag are
    kept: nothing says which iteration played them."""
    if not pgn.exists():
        return 0
    games = [game for game in _GAME_START.split(pgn.read_text(encoding="utf-8")) if game]
    kept = []
    for game in games:
        match_ = _ITERATION.match(game)
        if match_ is None or int(match_.group(1)) <= finished:
            kept.append(game)
    if len(kept) < len(games):
        with _output(pgn) as handle:
            handle.write("".join(kept))
    return len(games) - len(kept)


def _score(summary: dict[str, Any]) -> float:
    """The tuned engine's score (a fraction of the points) in a match summary."""
    return float(summary["engines"][0]["score"])


SETTINGS_ADDED = {"step_scale": 1.0}
"""Settings that states written before them lack, with the value those runs used."""
RESUME_MAY_CHANGE = ("iterations", "engine")
"""Settings a resumed run may change: a longer run, and the engine's place (the same
build on another machine or folder; said on stderr)."""
EXECUTION_OPTIONS = ("--concurrency", "--scheduler")
"""Match options that say where the games run, not which games: a resumed run may
change them (more cores, a cluster)."""


def _game_options(passthrough: Sequence[str]) -> list[str]:
    """The match options without EXECUTION_OPTIONS and their values."""
    kept: list[str] = []
    skip = False
    for option in passthrough:
        if skip:
            skip = False
            continue
        name = option.split("=", 1)[0]
        if name in EXECUTION_OPTIONS:
            skip = "=" not in option
            continue
        kept.append(option)
    return kept


def _progress(k: int, total: int, plus: float, minus: float, theta: dict[str, float]) -> str:
    shown = " ".join(f"{name} {value:.3g}" for name, value in theta.items())
    return f"[{k + 1}/{total}] plus {plus:.1%} minus {minus:.1%} | {shown}"


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Tune as the arguments say; the exit status (module docstring)."""
    try:
        return _tune(argv)
    except OutputFailedError as err:
        print(f"{PROG}: error: {err}", file=sys.stderr)
        return 1


def _tune(argv: Optional[Sequence[str]]) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == ["report"]:
        return spsa_history.main(arguments[1:])
    args, passthrough = build_parser().parse_known_args(arguments)
    params = _params(args.params)
    if isinstance(params, str):
        print(f"{PROG}: error: {params}", file=sys.stderr)
        return 1
    if args.iterations < 1 or not all(
        math.isfinite(x) and x > 0 for x in (args.rate, args.step_scale)
    ):
        print(
            f"{PROG}: error: --iterations, --rate and --step-scale must be positive",
            file=sys.stderr,
        )
        return 1
    names = [t.name for t in params]
    out = Path(args.out)
    state_path, tuned_path = out / "spsa.json", out / "tuned.json"
    constants = CONSTANTS
    kinds = {"spsa.json": STATE, "tuned.json": constants}
    for side in ("plus", "minus"):
        kinds |= {f"{side}.pgn": MATCH_PGN, f"{side}.json": SUMMARY}
        kinds[f"{side}-constants.json"] = constants
    problem = own_option_problem(
        passthrough, OWN_OPTIONS, "is set by the tuner"
    ) or outputs_problem(out, kinds, args.plot, passthrough)
    if problem:
        print(f"{PROG}: error: {problem}", file=sys.stderr)
        return 1
    settings = {
        "engine": args.engine,
        "opponent": args.opponent,
        "params": names,
        "iterations": args.iterations,
        "rate": args.rate,
        "step_scale": args.step_scale,
        "seed": args.seed,
        "match": _game_options(passthrough),
    }
    state: dict[str, Any]
    if state_path.exists() and state_path.stat().st_size:
        if not args.resume:
            print(
                f"{PROG}: error: {state_path} holds a run: --resume to go on, or another --out",
                file=sys.stderr,
            )
            return 1
        state = json.loads(state_path.read_text(encoding="utf-8"))
        changed = [
            key
            for key, value in settings.items()
            if state["settings"].get(key, SETTINGS_ADDED.get(key)) != value
        ]
        refused = [key for key in changed if key not in RESUME_MAY_CHANGE]
        if refused:
            print(
                f"{PROG}: error: --resume with other settings than {state_path} "
                f"({', '.join(refused)})",
                file=sys.stderr,
            )
            return 1
        if "engine" in changed:
            print(
                f"{PROG}: --resume: the engine is now {args.engine!r} "
                f"(was {state['settings']['engine']!r})",
                file=sys.stderr,
            )
        state["settings"].update(iterations=args.iterations, engine=args.engine)
    else:
        start = {t.name: t.default for t in params}
        state = {"settings": settings, "start": start, "theta": dict(start), "history": []}
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        print(f"{PROG}: error: cannot create {str(out)!r}: {err.strerror}", file=sys.stderr)
        return 1
    _write_json(state_path, state)
    _write_json(tuned_path, state["theta"])
    for side in ("plus", "minus"):
        dropped = drop_unfinished_games(out / f"{side}.pgn", len(state["history"]))
        if dropped:
            print(
                f"{PROG}: --resume: dropped {dropped} game(s) of the interrupted "
                f"iteration from {side}.pgn (it is played again)",
                file=sys.stderr,
            )
    for k in range(len(state["history"]), args.iterations):
        theta = state["theta"]
        signs = perturbation(args.seed, k, len(params))
        a_k, c_factor = gains(k, args.iterations, args.rate, args.step_scale)
        scores: dict[str, float] = {}
        for side, values in sides(theta, params, signs, c_factor).items():
            file = out / f"{side}-constants.json"
            _write_json(file, values)
            engine = f"{args.engine} name={side} env.{ENV}={shlex.quote(str(file.resolve()))}"
            # Every iteration's games are added to one PGN per side; the summary is
            # this match's alone.
            pgn, summary_path = out / f"{side}.pgn", out / f"{side}.json"
            summary_path.unlink(missing_ok=True)
            with contextlib.redirect_stdout(io.StringIO()):  # its summary: in the file
                status = match.main(
                    [
                        "--engine",
                        engine,
                        "--engine",
                        args.opponent,
                        *passthrough,
                        "--order",
                        "random",
                        "--seed",
                        str(args.seed * 100_003 + k),
                        "--quiet",
                        "--event",
                        EVENT.format(k + 1),
                        "--pgn",
                        str(pgn),
                        "--json",
                        str(summary_path),
                    ]
                )
            if status == 1:
                print(
                    f"{PROG}: iteration {k + 1}: the {side} match could not be played",
                    file=sys.stderr,
                )
                return 1
            if status not in (0, 2):
                print(
                    f"{PROG}: interrupted in iteration {k + 1}; --resume goes on", file=sys.stderr
                )
                return status
            try:
                scores[side] = _score(json.loads(summary_path.read_text(encoding="utf-8")))
            except (OSError, ValueError, KeyError) as err:
                print(f"{PROG}: error: no summary in {summary_path}: {err}", file=sys.stderr)
                return 1
        difference = scores["plus"] - scores["minus"]
        state["theta"] = updated(theta, params, signs, a_k, c_factor, difference)
        state["history"].append(
            {
                "iteration": k,
                "signs": signs,
                "a": a_k,
                "c_factor": c_factor,
                "plus": scores["plus"],
                "minus": scores["minus"],
                "theta": state["theta"],
            }
        )
        _write_json(state_path, state)
        _write_json(tuned_path, state["theta"])
        if args.plot:
            try:
                plot_history(state, args.plot)
            except OSError as err:
                raise OutputFailedError(write_failure(plot_file(args.plot), err)) from None
        _say(_progress(k, args.iterations, scores["plus"], scores["minus"], state["theta"]))
    _say(f"{PROG}: {len(state['history'])} iterations; the constants: {tuned_path}")
    _say("\n".join(report_lines(state)))
    return 0


def _say(text: str) -> None:
    """A line on stdout; ``OutputFailedError`` when stdout cannot take it (the state
    is written already: ``--resume`` goes on)."""
    failed = print_stdout(text)
    if failed is not None:
        raise OutputFailedError(write_failure("stdout", failed))


if __name__ == "__main__":
    sys.exit(main())
