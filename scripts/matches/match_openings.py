"""Opening books: the starting positions of a match, read and checked.

Responsible for reading EPD/FEN lines or PGN games into ``Opening`` values and for
rejecting, with the file and line, every entry that cannot start a game (not a position,
illegal, or a game already over). ``DEFAULT_OPENINGS`` is the shipped set beside this
module (``openings/noob3_500.epd``, installed with the package). It must not choose the
order of the openings or play them: the command line and the game loop do.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from pathlib import Path

import chess
import chess.pgn

from engine.analysis.inputs import TolerantGameBuilder

from .errors import MatchError

DEFAULT_OPENINGS = Path(__file__).resolve().parent / "openings" / "noob3_500.epd"


@dataclass(frozen=True)
class Opening:
    """A starting position: the root board plus the book moves played from it."""

    root_fen: str
    moves: tuple[chess.Move, ...]
    label: str

    def board(self) -> chess.Board:
        board = chess.Board(self.root_fen)
        for move in self.moves:
            board.push(move)
        return board


def load_openings(path: str) -> list[Opening]:
    """Read EPD/FEN lines or PGN games; raise MatchError naming the first bad entry."""
    file = Path(path)
    try:
        text = file.read_text(encoding="utf-8", errors="replace")
    except OSError as err:
        raise MatchError(f"cannot read openings {path!r}: {err.strerror or err}") from None
    openings = _load_pgn(text, path) if file.suffix.lower() == ".pgn" else _load_epd(text, path)
    if not openings:
        raise MatchError(f"no opening positions in {path!r}")
    return openings


def _load_epd(text: str, path: str) -> list[Opening]:
    openings = []
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        try:
            board = chess.Board(line)
        except ValueError:
            try:
                board, _ = chess.Board.from_epd(line)
            except ValueError as err:
                raise MatchError(f"{path}:{number}: not a FEN/EPD position: {err}") from None
        if not board.is_valid():
            raise MatchError(f"{path}:{number}: invalid position {board.fen()}")
        _check_not_over(board, f"{path}:{number}")
        openings.append(Opening(board.fen(), (), f"{path}:{number}"))
    return openings


def _check_not_over(board: chess.Board, where: str) -> None:
    """MatchError if the game would end before a move: it would be scored, unplayed."""
    outcome = board.outcome(claim_draw=True)
    if outcome is not None:
        reason = outcome.termination.name.lower().replace("_", " ")
        raise MatchError(f"{where}: the game is already over ({reason}): {board.fen()}")


_NON_SPACE = re.compile(r"\S")


class _GameBuilder(TolerantGameBuilder[chess.pgn.Game]):
    """The engine's tolerant builder, quiet (the first error is raised as a
    MatchError)."""

    def handle_error(self, error: Exception) -> None:
        self.game.errors.append(error)


def _load_pgn(text: str, path: str) -> list[Opening]:
    openings = []
    stream = io.StringIO(text)
    number = 0
    # Line of the stream position, counted incrementally (a book may hold many games).
    offset, line = 0, 1
    while True:
        found = _NON_SPACE.search(text, offset)
        start = found.start() if found else len(text)
        first_line = line + text.count("\n", offset, start)
        try:
            game = chess.pgn.read_game(stream, Visitor=_GameBuilder)
        except (ValueError, IndexError, AssertionError) as err:
            raise MatchError(f"{path}:{first_line}: game {number + 1}: unreadable: {err}") from None
        if game is None:
            break
        number += 1
        line = first_line + text.count("\n", start, stream.tell())
        offset = stream.tell()
        where = f"{path}:{first_line}: game {number}"
        if game.errors:
            raise MatchError(f"{where}: {game.errors[0]}")
        root = game.board()
        if not root.is_valid():
            raise MatchError(f"{where}: invalid start position {root.fen()}")
        _check_not_over(game.end().board(), where)
        openings.append(Opening(root.fen(), tuple(game.mainline_moves()), f"{path}#{number}"))
    return openings
