"""Put relabelled positions back into the games they came from.

    python -m scripts.training.regroup SOURCE.gz LABELLED.gz [LABELLED.gz ...] --out OUT.gz

Relabelling a data file through ``datagen --fens`` (a deeper teacher for the same
positions) loses its games: a FEN file has no games, so datagen cuts it into work
units of consecutive lines, and when the positions were split across several runs
(a third now, the rest later) one game's positions land in different files. The
trainer holds out whole work units for validation, so a held-out unit then has the
neighbouring positions of its games in the training set, and the validation loss
flatters the network.

This tool writes OUT in SOURCE's order and SOURCE's work units (its ``#done TASK``
lines, one per game): each position of SOURCE that some LABELLED file has (same FEN)
gets that file's label; positions no LABELLED file has are left out (the teacher
dropped them, or they were not relabelled yet), and so are LABELLED positions that
SOURCE does not have. It reports those counts. OUT is written beside itself and
renamed when complete, so an interrupted run leaves no half file.

It must not label or train (datagen and train do).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Iterator
from pathlib import Path

from .dataset import DONE, DataError, append_member, parse_line, read_lines, refuse_archive

UNITS_PER_MEMBER = 500
"""Work units written per gzip member (a member is the unit of recovery)."""


class UsageError(Exception):
    """A bad command line or unreadable file: one line, exit status 2."""


def _labels(paths: list[Path]) -> tuple[dict[str, str], int]:
    """FEN -> its data line, over all LABELLED files (the first file's wins), and the
    number of lines that repeated an earlier FEN."""
    labels: dict[str, str] = {}
    repeated = 0
    for path in paths:
        for where, line in read_lines(path):
            if not line or line.startswith("#"):
                continue
            fen = parse_line(line, where).fen
            if fen in labels:
                repeated += 1
            else:
                labels[fen] = line
    return labels, repeated


def _units(source: Path) -> Iterator[tuple[list[str], str]]:
    """(the FENs of a work unit, its ``#done`` line) for every unit of SOURCE; data
    lines after the last ``#done`` make a last unit named after the file."""
    fens: list[str] = []
    for where, line in read_lines(source):
        if line.startswith(DONE):
            yield fens, line
            fens = []
        elif line and not line.startswith("#"):
            fens.append(parse_line(line, where).fen)
    if fens:
        yield fens, f"{DONE}{source.name}:rest"


def regroup(source: Path, labelled: list[Path], out: Path) -> dict[str, int]:
    """Write OUT (see the module docstring); the counts it reports."""
    labels, repeated = _labels(labelled)
    counts = {"units": 0, "kept": 0, "unlabelled": 0, "repeated": repeated}
    used: set[str] = set()
    partial = out.with_name(out.name + ".partial")
    partial.unlink(missing_ok=True)
    batch: list[str] = []
    for fens, done in _units(source):
        kept = []
        for fen in fens:
            # A position met again (in another game) keeps its first place only.
            if fen in labels and fen not in used:
                kept.append(labels[fen])
            used.add(fen)
        counts["unlabelled"] += len(fens) - len(kept)
        counts["kept"] += len(kept)
        if kept:
            counts["units"] += 1
            batch += [*kept, done]
        if counts["units"] % UNITS_PER_MEMBER == 0 and batch:
            append_member(partial, batch)
            batch = []
    append_member(partial, batch)
    if not partial.exists():
        raise UsageError(f"no position of {source} is in the labelled files")
    os.replace(partial, out)
    counts["not in source"] = len(labels) - counts["kept"]
    return counts


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m scripts.training.regroup",
        description="Give relabelled positions back the work units (games) of the file "
        "they came from, so that training holds out whole games.",
    )
    parser.add_argument("source", type=Path, help="the data file the positions came from")
    parser.add_argument("labelled", type=Path, nargs="+", help="data files with the new labels")
    parser.add_argument("--out", type=Path, required=True, help="the regrouped data file")
    args = parser.parse_args(argv)
    try:
        for path in [args.source, *args.labelled]:
            if not path.is_file():
                raise UsageError(f"cannot read {str(path)!r}: no such file")
        if args.out.resolve() in {p.resolve() for p in [args.source, *args.labelled]}:
            raise UsageError(f"--out {args.out} is one of the input files")
        refuse_archive(args.out)
        counts = regroup(args.source, args.labelled, args.out)
    except (UsageError, DataError, OSError, UnicodeDecodeError) as error:
        print(f"regroup: {error}", file=sys.stderr)
        return 2
    print(
        f"wrote {args.out}: {counts['kept']} positions in {counts['units']} work units; "
        f"left out {counts['unlabelled']} source positions without a label and "
        f"{counts['not in source']} labelled positions not in the source "
        f"({counts['repeated']} repeated labels ignored)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
