"""Write a Polyglot opening book (``.bin``) from the first moves of PGN games.

Usage: python -m scripts.matches.polyglot_book GAMES.pgn [...] -o BOOK.bin
       [--plies N] [--min-games K]

Every game's first ``--plies`` moves (default 16) are entered, from the game's own
start position, so games that start from the shipped openings (their ``FEN``
headers) give a book for those positions. A move's weight is the points its side
scored with it, counting a win 2 and a draw 1 (as ``polyglot make-book`` does),
capped at 65,535; moves played in fewer than ``--min-games`` games are left out.
The file is sorted by key, in the documented Polyglot format (castling written as
the king taking its rook), so any Polyglot reader and Cutoff's ``BookFile`` read it.
A game that cannot be read is reported with its file and number, and skipped.
A book has no room for a mark, so an existing ``-o`` file is replaced only when it
is a Polyglot book (whole 16-byte entries sorted by key, as every book is), never
when it is another file. This script writes the book file only.
"""

from __future__ import annotations

import struct
import sys
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Optional

import chess
import chess.polyglot

from engine.analysis.inputs import read_games
from engine.analysis.outputs import POLYGLOT_BOOK, overwrite_problem, replace_problem

from ..common import ToolParser

ENTRY = struct.Struct(">QHHI")
PROMOTION_CODES = {chess.KNIGHT: 1, chess.BISHOP: 2, chess.ROOK: 3, chess.QUEEN: 4}
MAX_WEIGHT = 0xFFFF


def polyglot_move(board: chess.Board, move: chess.Move) -> int:
    """The move in Polyglot's encoding: to, from, promotion; castling as king takes rook."""
    to_square = move.to_square
    if board.is_castling(move) and not board.chess960:
        rank = chess.square_rank(move.from_square)
        to_square = chess.square(7 if chess.square_file(to_square) == 6 else 0, rank)
    code = to_square | (move.from_square << 6)
    if move.promotion:
        code |= PROMOTION_CODES[move.promotion] << 12
    return code


def collect(
    paths: list[Path], plies: int, report: Callable[[str], None]
) -> dict[tuple[int, int], list[int]]:
    """``{(key, move): [points, games]}`` over the games' first ``plies`` moves."""
    counts: dict[tuple[int, int], list[int]] = defaultdict(lambda: [0, 0])
    for path in paths:
        try:
            handle = path.open(encoding="utf-8", errors="replace")
        except OSError as exc:
            report(f"{path}: cannot read: {exc.strerror or exc}")
            continue
        with handle:
            for _, game, board in read_games(str(path), handle, report):
                result = game.headers.get("Result", "*")
                for ply, move in enumerate(game.mainline_moves()):
                    if ply >= plies:
                        break
                    points = _points(result, board.turn)
                    key = chess.polyglot.zobrist_hash(board)
                    entry = counts[(key, polyglot_move(board, move))]
                    entry[0] += points
                    entry[1] += 1
                    board.push(move)
    return counts


def _points(result: str, side: chess.Color) -> int:
    if result == "1/2-1/2":
        return 1
    won = "1-0" if side == chess.WHITE else "0-1"
    return 2 if result == won else 0


def write_book(counts: dict[tuple[int, int], list[int]], path: Path, min_games: int) -> int:
    """Write the entries with enough games; returns how many were written."""
    entries = sorted(
        (key, move, min(MAX_WEIGHT, points))
        for (key, move), (points, games) in counts.items()
        if games >= min_games and points > 0
    )
    path.write_bytes(b"".join(ENTRY.pack(key, move, weight, 0) for key, move, weight in entries))
    return len(entries)


def main(argv: Optional[list[str]] = None) -> int:
    parser = ToolParser(prog="polyglot_book", description=__doc__.splitlines()[0])
    parser.add_argument("pgn", nargs="+", type=Path, metavar="GAMES.pgn")
    parser.add_argument("-o", "--out", type=Path, required=True, metavar="BOOK.bin")
    parser.add_argument("--plies", type=int, default=16, help="moves per game (default 16)")
    parser.add_argument("--min-games", type=int, default=1, help="least games per move")
    args = parser.parse_args(argv)
    if args.plies < 1 or args.min_games < 1:
        parser.error("--plies and --min-games must be at least 1")
    problem = overwrite_problem([("-o", args.out)], args.pgn) or replace_problem(
        [("-o", args.out, POLYGLOT_BOOK)]
    )
    if problem:
        parser.error(problem)
    failures = 0

    def report(message: str) -> None:
        nonlocal failures
        failures += 1
        print(f"polyglot_book: {message}", file=sys.stderr)

    counts = collect(args.pgn, args.plies, report)
    written = write_book(counts, args.out, args.min_games)
    print(f"wrote {written} entries to {args.out}")
    return 1 if failures or not written else 0


if __name__ == "__main__":
    raise SystemExit(main())
