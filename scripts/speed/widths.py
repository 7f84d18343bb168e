"""Bench nodes/s of one build at several network widths, before training at them.

    python -m scripts.speed.widths BUILD [--widths 32,64,128,256] [--base hand|none]
                                   [--depth D] [--rounds N] [--cpu C]

A wider network evaluates more slowly, and a fixed-node match hides that; this
measures what a width costs the search before any network of that width is
trained. For each width it writes a network of random weights (seeded, within the
16-bit lanes engine.core.nnue requires) to a temporary folder and runs
scripts.speed.compare_nps on BUILD with ``--eval-file`` set to each, alternating
within each round, the shipped network first as the base. The node counts differ
(random weights make other trees); nodes/s is what is compared, and only the
evaluation's cost differs between the runs. Use a compiled build (``cutoff
compile`` in BUILD) for the figures users see.

It writes only temporary files; it must not train or change the engine.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Optional

import numpy as np

from engine.core.nnue import BASE_HAND, BASE_NONE, INPUTS, Network

from ..common import ToolParser, UsageError
from . import compare_nps

PROG = "widths"
QA = 255
QB = 64
WEIGHT_RANGE = 200
"""Random feature weights lie in [-WEIGHT_RANGE, WEIGHT_RANGE]: bias plus 32 columns
stays far inside a 16-bit lane, as a trained network's clipped weights do."""


def random_network(hidden: int, base: int, seed: int = 1) -> Network:
    """A network of ``hidden`` neurons with seeded random weights."""
    rng = np.random.default_rng(seed + hidden)
    return Network(
        hidden=hidden,
        qa=QA,
        qb=QB,
        scale=400,
        ft_weights=rng.integers(-WEIGHT_RANGE, WEIGHT_RANGE + 1, (INPUTS, hidden), dtype=np.int16),
        ft_bias=rng.integers(0, QA + 1, hidden, dtype=np.int16),
        out_weights=rng.integers(-QB, QB + 1, 2 * hidden, dtype=np.int16),
        out_bias=0,
        base=base,
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
    parser.add_argument("--base", choices=("hand", "none"), default="none")
    parser.add_argument("--depth", type=int, default=6)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cpu", type=int, default=None, help="pin every run to this core")
    args = parser.parse_args(argv)
    try:
        widths = parse_widths(args.widths)
    except UsageError as error:
        parser.error(str(error))
    base = BASE_HAND if args.base == "hand" else BASE_NONE
    build = str(args.build.resolve())
    with tempfile.TemporaryDirectory(prefix="cutoff-widths-") as folder:
        specs = [build]
        for width in widths:
            path = Path(folder) / f"w{width}.nnue"
            random_network(width, base).write(path)
            specs.append(f"{build}::--eval-file {path}")
        print(f"base: the shipped network; then widths {', '.join(map(str, widths))} ({args.base})")
        command = [*specs, "--depth", str(args.depth), "--rounds", str(args.rounds)]
        if args.cpu is not None:
            command += ["--cpu", str(args.cpu)]
        return compare_nps.main(command)


if __name__ == "__main__":
    raise SystemExit(main())
