"""Bench what a network of each width costs the search, before training at it.

    python -m scripts.speed.widths BUILD [--widths 32,64,128,256] [--depth D]
                                   [--rounds N] [--cpu C]
                                   [--activation crelu|screlu] [--buckets B]

A wider network evaluates more slowly, and a fixed-node match hides that. To
measure the cost alone, every run must search the same tree: for each width this
writes a network with seeded random feature weights but zero output weights, as a
correction to the hand-written evaluation, so its score is the hand-written one
exactly while the search still pays for all of it (both perspectives' accumulators
in make and unmake, the output layer at every evaluation). It then runs
scripts.speed.compare_nps on BUILD with ``--eval-file`` set to each, alternating
within each round, the hand-written evaluation alone (``--no-nnue``) as the base:
every run searches the base's node count, and the nodes/s ratios are the network's
cost at each width. A network that is the whole evaluation also saves the
hand-written one's cost, which this does not show. ``--activation`` and
``--buckets`` cost the network's output layer as the trained file would have it
(SCReLU squares each lane; buckets pick the weights by material). Use a compiled
build (``cutoff compile`` in BUILD) for the figures users see.

It writes only temporary files; it must not train or change the engine.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Optional

import numpy as np

from engine.core.nnue import ACTIVATIONS, BASE_HAND, CRELU, INPUTS, MAX_BUCKETS, Network

from ..common import ToolParser, UsageError
from . import compare_nps

PROG = "widths"
QA = 255
QB = 64
WEIGHT_RANGE = 200
"""Random feature weights lie in [-WEIGHT_RANGE, WEIGHT_RANGE]: bias plus 32 columns
stays far inside a 16-bit lane, as a trained network's clipped weights do."""


def costing_network(
    hidden: int, seed: int = 1, activation: int = CRELU, buckets: int = 1
) -> Network:
    """A correction ``hidden`` wide that always adds zero: seeded random feature
    weights and bias, zero output weights and biases (every bucket's)."""
    rng = np.random.default_rng(seed + hidden)
    return Network(
        hidden=hidden,
        qa=QA,
        qb=QB,
        scale=400,
        ft_weights=rng.integers(-WEIGHT_RANGE, WEIGHT_RANGE + 1, (INPUTS, hidden), dtype=np.int16),
        ft_bias=rng.integers(0, QA + 1, hidden, dtype=np.int16),
        out_weights=np.zeros((buckets, 2 * hidden), dtype=np.int16),
        out_bias=np.zeros(buckets, dtype=np.int32),
        base=BASE_HAND,
        activation=activation,
    )


def parse_widths(text: str) -> list[int]:
    try:
        widths = [int(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise UsageError(f"--widths: not a list of integers: {text!r}") from None
    if not widths or any(not 1 <= width <= 4096 for width in widths):
        raise UsageError(f"--widths: each width must be in 1..4096: {text!r}")
    return widths


def main(argv: Optional[list[str]] = None) -> int:
    parser = ToolParser(prog=PROG, description=__doc__.splitlines()[0])
    parser.add_argument("build", type=Path, help="build directory (a compiled clone)")
    parser.add_argument("--widths", default="32,64,128,256", help="comma-separated widths")
    parser.add_argument("--depth", type=int, default=6)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cpu", type=int, default=None, help="pin every run to this core")
    parser.add_argument("--activation", choices=sorted(ACTIVATIONS), default="crelu")
    parser.add_argument("--buckets", type=int, default=1, help="output buckets (1..32)")
    args = parser.parse_args(argv)
    try:
        widths = parse_widths(args.widths)
    except UsageError as error:
        parser.error(str(error))
    if not 1 <= args.buckets <= MAX_BUCKETS:
        parser.error(f"--buckets: must be in 1..{MAX_BUCKETS}: {args.buckets}")
    activation = ACTIVATIONS[args.activation]
    build = str(args.build.resolve())
    with tempfile.TemporaryDirectory(prefix="cutoff-widths-") as folder:
        specs = [f"{build}::--no-nnue"]
        for width in widths:
            path = Path(folder) / f"w{width}.nnue"
            costing_network(width, activation=activation, buckets=args.buckets).write(path)
            specs.append(f"{build}::--eval-file {path}")
        print(
            f"base: --no-nnue; then zero-output networks {', '.join(map(str, widths))} wide "
            f"({args.activation}, {args.buckets} output bucket{'s' if args.buckets > 1 else ''})"
        )
        command = [*specs, "--depth", str(args.depth), "--rounds", str(args.rounds)]
        if args.cpu is not None:
            command += ["--cpu", str(args.cpu)]
        return compare_nps.main(command)


if __name__ == "__main__":
    raise SystemExit(main())
