"""Write opening positions (EPD or FEN lines) as PGN games played from the start.

Usage: python -m scripts.matches.opening_lines OPENINGS.epd -o OPENINGS.pgn [--plies N]

An openings file of positions (like the shipped ``noob3_500.epd``) says where a game
starts but not how it got there; a Polyglot book needs the moves. For each position
this finds a sequence of legal moves from the standard start position that reaches
it (same pieces, side to move, castling rights; at most ``--plies`` plies, default
8) by a depth-first search that only follows moves which can still reach the target
(those leaving the fewest squares to fix first):
a move changes two squares (three for en passant, four for castling, once per side),
so a branch with more differing squares than the remaining plies can fix is dropped. The
first sequence found is written, not necessarily the most natural move order. Each
game's result is ``1/2-1/2`` so that ``polyglot_book`` (which weighs moves by their
points) keeps every move of a balanced opening.

A line that is not a position, or a position no sequence within the ply limit
reaches, is reported with its file and line and skipped. Each game's ``Annotator``
tag is ``Cutoff opening_lines``: an existing ``-o`` file is replaced only when it
has that mark (an earlier run's), never when it is another file. This script writes
the PGN file only; it does not judge or evaluate the openings.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Optional

import chess
import chess.pgn

from engine.analysis.outputs import CUTOFF_PGN, MARK, overwrite_problem, replace_problem

from ..common import ToolParser


def _most_changed(plies: int) -> int:
    """Most squares ``plies`` plies can change: two per move, three for en passant,
    and castling's four only once per side (two more squares each)."""
    return 3 * plies + 2 if plies else 0


def _masks(board: chess.Board) -> list[int]:
    return [
        board.pieces_mask(piece, color) for piece in chess.PIECE_TYPES for color in chess.COLORS
    ]


def _differing_squares(board: chess.Board, target: list[int]) -> int:
    differ = 0
    for mine, theirs in zip(_masks(board), target):
        differ |= mine ^ theirs
    return chess.popcount(differ)


def _reaches(board: chess.Board, target: chess.Board) -> bool:
    return (
        board.board_fen() == target.board_fen()
        and board.turn == target.turn
        and board.clean_castling_rights() == target.clean_castling_rights()
    )


def find_line(target: chess.Board, most_plies: int) -> Optional[list[chess.Move]]:
    """Moves from the start position that reach ``target``, or None within ``most_plies``."""
    masks = _masks(target)
    start = chess.Board()
    # The side to move fixes the parity of the number of plies.
    for plies in range(0, most_plies + 1):
        if (plies % 2 == 0) != (target.turn == chess.WHITE):
            continue
        line = _search(start, target, masks, plies)
        if line is not None:
            return line
    return None


def _search(
    board: chess.Board, target: chess.Board, masks: list[int], plies: int
) -> Optional[list[chess.Move]]:
    if plies == 0:
        return [] if _reaches(board, target) else None
    # Moves that leave fewer squares to fix first: the search finds a line sooner,
    # and it tends to be the direct one.
    candidates = []
    for move in board.legal_moves:
        board.push(move)
        differing = _differing_squares(board, masks)
        board.pop()
        if differing <= _most_changed(plies - 1):
            candidates.append((differing, move))
    candidates.sort(key=lambda candidate: candidate[0])
    for _, move in candidates:
        board.push(move)
        rest = _search(board, target, masks, plies - 1)
        board.pop()
        if rest is not None:
            return [move, *rest]
    return None


def main(argv: Optional[list[str]] = None) -> int:
    parser = ToolParser(prog="opening_lines", description=__doc__.splitlines()[0])
    parser.add_argument("openings", type=Path, metavar="OPENINGS.epd")
    parser.add_argument("-o", "--out", type=Path, required=True, metavar="OPENINGS.pgn")
    parser.add_argument("--plies", type=int, default=8, help="longest line searched (default 8)")
    args = parser.parse_args(argv)
    if not 0 <= args.plies <= 12:
        parser.error("--plies must be 0..12")
    problem = overwrite_problem([("-o", args.out)], [args.openings]) or replace_problem(
        [("-o", args.out, CUTOFF_PGN)]
    )
    if problem:
        parser.error(problem)
    try:
        lines = args.openings.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError as exc:
        print(
            f"opening_lines: {args.openings}: cannot read: {exc.strerror or exc}", file=sys.stderr
        )
        return 1
    failures = written = 0
    with args.out.open("w", encoding="utf-8") as out:
        for number, text in enumerate(lines, 1):
            if not text.strip() or text.lstrip().startswith("#"):
                continue
            where = f"{args.openings}:{number}"
            try:
                target, _ = chess.Board.from_epd(" ".join(text.split()[:4]))
            except ValueError as exc:
                print(f"opening_lines: {where}: not a position: {exc}", file=sys.stderr)
                failures += 1
                continue
            line = find_line(target, args.plies)
            if line is None:
                print(
                    f"opening_lines: {where}: not reached within {args.plies} plies",
                    file=sys.stderr,
                )
                failures += 1
                continue
            game = chess.pgn.Game()
            game.headers["Event"] = f"{args.openings.name} line {number}"
            game.headers["Result"] = "1/2-1/2"
            # Who found the moves; also how a later run knows the file as its own.
            game.headers["Annotator"] = f"{MARK} opening_lines"
            game.add_line(line)
            print(game, file=out, end="\n\n", flush=True)
            written += 1
    print(f"wrote {written} games to {args.out}")
    return 1 if failures or not written else 0


if __name__ == "__main__":
    sys.exit(main())
