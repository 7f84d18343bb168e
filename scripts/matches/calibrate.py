"""Calibrate weakened play: measure each anchor setting on Stockfish's scale, write the data.

Usage: python -m scripts.matches.calibrate OUT [--data FILE] [--only NAME ...]
       [--check ELO ...] [--cutoff CMD] [--opponent TEMPLATE] [--perft-rate N]
       [--rounds N] [--concurrency N] [cutoff-ladder / cutoff-match options]

Weakened play (engine/play/weakened.py) maps a ``UCI_Elo`` to a node budget per move,
a number of MultiPV lines and a margin by interpolating between anchors: settings
whose Elo was measured. The anchors are data, ``engine/play/calibration.json``, and
this command remakes them. For each anchor (or those ``--only`` names) it plays one
``cutoff-ladder`` (``OUT/NAME``) of Cutoff with that setting (``UCI_LimitStrength``
on and ``CUTOFF_WEAKNESS=NODES,LINES,MARGIN``; a ``full_strength`` anchor plays
Cutoff as it ships) against Stockfish at the anchor's levels, at 10+0.1 scaled by
the host's python-chess perft, colour-swapped pairs from the shipped openings, and
writes the rating the ladder finds into the data file as soon as it has it.
``--check ELO`` plays ``UCI_Elo`` ELO as users get it (the mapping, not a raw
setting) against Stockfish at ELO and records the result under ``checks``: the
proof that a level plays at its label.

Ladders are resumed (``--resume``): an interrupted calibration loses at most the
level it was playing, and running the command again replays nothing finished.
This module only builds ladder command lines and reads their summaries; games and
statistics are the ladder's and the match runner's; the rule the anchors must keep
(they rise) is weakened play's own (``load_anchors``), and the build measured is the
one Cutoff reported in the games.

Exit status: 0 every ladder played and recorded, 1 bad input, a ladder that could
not play, or a data file that cannot be written, 130 interrupted.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import shlex
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Optional

from engine.analysis.outputs import pgn_tags

from ..common import UsageError, atomic_output
from . import ladder

PROG = "calibrate"
OPENINGS = Path(__file__).with_name("openings") / "noob3_500.epd"
PROTOCOL = (
    "--tc", "10+0.1", "--scale-by-perft", "--order", "random",
    "--openings", str(OPENINGS), "--resign", "3", "400", "--draw", "30", "6", "15",
)  # fmt: skip
"""The ladder options every anchor is played with: docs/strength.md's ladder."""
SETTING_KEYS = ("nodes", "lines", "margin_cp")


def default_data_file() -> Path:
    """``engine/play/calibration.json`` of the engine this interpreter imports."""
    spec = importlib.util.find_spec("engine")
    if spec is None or spec.origin is None:
        raise UsageError("the engine package is not importable: give --data")
    return Path(spec.origin).parent / "play" / "calibration.json"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description=(
            "Measure weakened play's anchor settings against Stockfish's UCI_Elo levels "
            "and write them into the calibration data (engine/play/calibration.json)."
        ),
    )
    parser.add_argument("out", metavar="OUT", help="folder for the ladders (one per anchor)")
    parser.add_argument("--data", metavar="FILE", help="the calibration data to update")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="play only these anchors")
    parser.add_argument(
        "--check", nargs="+", type=int, default=[], metavar="ELO",
        help="play UCI_Elo ELO as mapped against Stockfish at ELO; recorded under checks",
    )  # fmt: skip
    parser.add_argument("--cutoff", default=_cutoff(), metavar="CMD", help="Cutoff's command")
    parser.add_argument(
        "--opponent", default=ladder.DEFAULT_OPPONENT, metavar="TEMPLATE",
        help="engine spec with {elo} for the level (default: Stockfish's UCI_Elo)",
    )  # fmt: skip
    parser.add_argument("--perft-rate", metavar="N", help="the host's python-chess perft rate")
    parser.add_argument("--rounds", type=int, metavar="N", help="pairs per level (default: data)")
    parser.add_argument("--concurrency", type=int, default=1, metavar="N", help="games at once")
    return parser


def _cutoff() -> str:
    launcher = Path(sys.executable).with_name("cutoff")
    return str(launcher) if launcher.exists() else shutil.which("cutoff") or "cutoff"


def load(path: Path) -> dict[str, Any]:
    """The calibration data at ``path``; a UsageError naming the file if it is not."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"cannot read {str(path)!r}: {exc.strerror}") from None
    except ValueError as exc:
        raise UsageError(f"{str(path)!r} is not JSON: {exc}") from None
    if not isinstance(data, dict) or not isinstance(data.get("anchors"), list):
        raise UsageError(f"{str(path)!r} is not calibration data (no anchors)")
    data.setdefault("checks", [])
    return data


def engine_spec(cutoff: str, entry: dict[str, Any]) -> str:
    """Cutoff's spec for the ladder: the anchor's raw setting, full strength, or a
    ``UCI_Elo`` check."""
    spec = f"cmd={shlex.quote(cutoff)} name=Cutoff"
    if "uci_elo" in entry:
        return f"{spec} option.UCI_LimitStrength=true option.UCI_Elo={entry['uci_elo']}"
    if entry.get("full_strength"):
        return spec
    setting = ",".join(str(int(entry[key])) for key in SETTING_KEYS)
    return f"{spec} option.UCI_LimitStrength=true env.CUTOFF_WEAKNESS={setting}"


def ladder_arguments(
    args: argparse.Namespace, entry: dict[str, Any], out: Path, extra: Sequence[str] = ()
) -> list[str]:
    """The ``cutoff-ladder`` command line of one anchor or check."""
    arguments = [
        "--engine", engine_spec(args.cutoff, entry),
        "--opponent", args.opponent,
        "--levels", *(str(level) for level in entry["levels"]),
        "--rounds", str(args.rounds or entry.get("rounds", 20)),
        "--seed", str(entry.get("seed", 240000)),
        "--concurrency", str(args.concurrency),
        "--out", str(out), "--resume", *PROTOCOL,
    ]  # fmt: skip
    if args.perft_rate is not None:
        arguments += ["--perft-rate", str(args.perft_rate)]
    return [*arguments, *extra]


def build_of(pgn: Path) -> str:
    """The build Cutoff said it was in the ladder's games (the match records what each
    engine reports at its start in the ``WhiteEngine`` / ``BlackEngine`` tags)."""
    tags = pgn_tags(pgn) if pgn.exists() else {}
    side = "White" if tags.get("White") == "Cutoff" else "Black"
    return tags.get(f"{side}Engine", "not recorded")


def record(entry: dict[str, Any], summary: dict[str, Any], build: str) -> None:
    """Write a ladder's result into ``entry`` (an anchor or a check)."""
    yardstick = summary.get("yardstick") or {}
    entry["elo"] = None if summary["rating"] is None else round(summary["rating"])
    entry["error"] = None if summary["rating_error"] is None else round(summary["rating_error"])
    entry["games"] = summary["games"]
    entry["results"] = [
        {key: row[key] for key in ("level", "wins", "draws", "losses")} for row in summary["levels"]
    ]
    entry["measured"] = {
        "date": datetime.date.today().isoformat(),
        "clock": yardstick.get("tc"),
        "perft_leaves_per_second": yardstick.get("perft_leaves_per_second"),
        "build": build,
    }


def write(path: Path, data: dict[str, Any]) -> None:
    with atomic_output(path) as handle:
        handle.write(json.dumps(data, indent=2) + "\n")


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Play the selected anchors and checks; the exit status (module docstring)."""
    args, extra = build_parser().parse_known_args(argv)
    try:
        path = Path(args.data) if args.data else default_data_file()
        data = load(path)
        anchors = {anchor["name"]: anchor for anchor in data["anchors"]}
        unknown = [name for name in args.only or [] if name not in anchors]
        if unknown:
            raise UsageError(f"no anchor {unknown[0]!r} in {str(path)!r}: {', '.join(anchors)}")
        jobs: list[tuple[str, dict[str, Any]]] = [
            (name, anchors[name]) for name in (args.only or ([] if args.check else anchors))
        ]
        for elo in args.check:
            check = next((c for c in data["checks"] if c["uci_elo"] == elo), None)
            if check is None:
                check = {"uci_elo": elo, "levels": [elo], "rounds": 40, "seed": 240000 + elo}
                data["checks"].append(check)
            jobs.append((f"check-{elo}", check))
        for name, entry in jobs:
            out = Path(args.out) / name
            print(f"{PROG}: {name}: {engine_spec(args.cutoff, entry)}", file=sys.stderr)
            status = ladder.main(ladder_arguments(args, entry, out, extra))
            if status != 0:
                print(f"{PROG}: {name}: the ladder stopped (exit {status})", file=sys.stderr)
                return status if status >= 128 else 1
            summary = json.loads((out / "ladder.json").read_text(encoding="utf-8"))
            record(entry, summary, build_of(out / f"{entry['levels'][0]}.pgn"))
            data["checks"].sort(key=lambda check: check["uci_elo"])
            write(path, data)
            print(f"{PROG}: {name}: {entry['elo']} ± {entry['error']} written to {path}")
    except UsageError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"{PROG}: error: {exc.filename or ''}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 130
    # Weakened play's own rule: the measured anchors must rise in the order listed.
    from engine.play.weakened import load_anchors

    try:
        load_anchors(path)
    except ValueError as exc:
        print(f"{PROG}: warning: {exc}; weakened play needs rising anchors", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
