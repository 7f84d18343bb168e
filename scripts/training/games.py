"""Keep match games as training data, compactly.

    python -m scripts.training.games OUT.pgn.gz IN.pgn [IN.pgn ...]

Cutoff's own games are training positions that take hours of a machine to play
again, and a session's match PGNs do not outlive its machine. This tool appends the
games of PGN files to a gzip'd PGN that can be committed: each game's main line
only, without comments, variations or clock data, and with only the tags the data
needs (``Event``, ``Date``, ``White``, ``Black``, ``Result``, ``TimeControl``,
``SetUp``, ``FEN``): about 300 bytes a game compressed. A game already in OUT (the
same start position, moves and result) is skipped, so adding a match's PGN again,
or one that went on, adds only its new games. OUT is rewritten whole under a
temporary name, so an interrupted run leaves the old file.

``datagen --pgn`` and ``recipe --pgn`` read OUT as they read a PGN file.

This module owns that format; it must not label, train or play.
"""

from __future__ import annotations

import gzip
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Optional

import chess
import chess.pgn

from engine.analysis.inputs import ErrorReport, read_games

from ..common import ToolParser, UsageError, report_failure

PROG = "games"
TAGS = ("Event", "Date", "White", "Black", "Result", "TimeControl", "SetUp", "FEN")
"""The tags kept, in this order (the seven-tag roster's Site and Round say nothing here)."""


def open_pgn(path: Path, on_error: ErrorReport) -> Iterator[tuple[int, chess.pgn.Game]]:
    """The replayable games of a PGN file, gzip'd (by its ``.gz`` ending) or not, with
    their numbers from 1; a broken game is reported, with the file and its number, and
    skipped."""
    try:
        if path.suffix == ".gz":
            handle = gzip.open(path, "rt", encoding="utf-8", errors="replace")  # noqa: SIM115
        else:
            handle = path.open(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise UsageError(f"cannot read {str(path)!r}: {exc.strerror or exc}") from None
    with handle:
        try:
            for number, game, _ in read_games(str(path), handle, on_error):
                yield number, game
        except (OSError, EOFError) as exc:
            # A gzip stream cut short: the games before the cut were kept.
            on_error(f"{path}: unreadable after some games: {exc}")


def _report(message: str) -> None:
    print(f"{PROG}: {message}", file=sys.stderr)


def _identity(game: chess.pgn.Game) -> tuple[str, tuple[str, ...], str]:
    moves = tuple(move.uci() for move in game.mainline_moves())
    return game.board().fen(), moves, game.headers.get("Result", "*")


def compact(game: chess.pgn.Game) -> str:
    """``game`` as PGN text: the kept tags and the main line, nothing else."""
    tags = "".join(
        f'[{tag} "{_quoted(game.headers[tag])}"]\n' for tag in TAGS if tag in game.headers
    )
    exporter = chess.pgn.StringExporter(headers=False, variations=False, comments=False)
    return f"{tags}\n{game.accept(exporter)}\n\n"


def _quoted(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


def add(out: Path, sources: list[Path]) -> tuple[int, int]:
    """Append the new games of ``sources`` to ``out``: (games added, games skipped)."""
    old = out.read_bytes() if out.exists() else b""
    damage: list[str] = []
    seen = {_identity(game) for _, game in open_pgn(out, damage.append)} if old else set()
    if damage:
        # Games appended after a damaged part could not be read back either.
        raise UsageError(f"{damage[0]}: mend or move {out} first")
    texts, skipped = [], 0
    for path in sources:
        for _, game in open_pgn(path, _report):
            identity = _identity(game)
            if identity in seen:
                skipped += 1
                continue
            seen.add(identity)
            texts.append(compact(game))
    if texts:
        tmp = out.with_name(out.name + ".tmp")
        try:
            # A gzip file may hold several members: the old bytes stay as they are.
            tmp.write_bytes(old + gzip.compress("".join(texts).encode("utf-8"), mtime=0))
            tmp.replace(out)
        except OSError as exc:
            tmp.unlink(missing_ok=True)
            raise UsageError(f"cannot write {str(out)!r}: {exc.strerror or exc}") from None
    return len(texts), skipped


def main(argv: Optional[list[str]] = None) -> int:
    parser = ToolParser(prog=PROG, description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="the kept games, a gzip'd PGN (.pgn.gz)")
    parser.add_argument("pgn", type=Path, nargs="+", help="PGN files whose games are added")
    args = parser.parse_args(argv)
    if args.out.suffix != ".gz":
        parser.error(f"{args.out}: the kept games are gzip'd: name the file *.pgn.gz")
    try:
        added, skipped = add(args.out, args.pgn)
    except UsageError as exc:
        return report_failure(PROG, exc)
    print(f"{PROG}: {added} games added to {args.out} ({skipped} already there)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
