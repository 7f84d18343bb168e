"""Positions to analyse, read from command-line words, EPD/FEN files, PGN files and stdin.

``read_positions`` turns what a user types after ``cutoff analyse`` into a stream
of ``PositionTask``s in input order, each with where it came from (``file:line``,
``file: game N``, or ``argument N``) for messages and output. What it accepts:

* a FEN, as one quoted word or as its six (or four) words; ``startpos``; either
  followed by ``moves`` and UCI moves, as in the UCI ``position`` command;
* a file of lines, each a FEN, an EPD line (its operations such as ``id`` and
  ``bm`` are kept and echoed in the output) or a ``startpos|fen ... moves ...``
  line; blank lines and lines starting with ``#`` are skipped;
* a PGN file (by its ``.pgn`` ending, or by content on stdin): every position of
  every game's main line before each move, or only those of a move range;
* ``-``: standard input, read as lines or as PGN.

Bad input never stops the stream: an invalid line, a broken game or an unreadable
file is reported through ``on_error`` with its place and skipped; a ``{`` comment never
closed is reported with its line and ends before the next game's tags, so that it
cannot swallow the games after it. ``read_games`` is
that PGN reader on its own, for the tools that take whole games (``cutoff annotate``,
the opening-book builder). This module reads files; it must not search or write output.
"""

from __future__ import annotations

import io
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Optional, TextIO, TypeVar, cast

import chess
import chess.pgn

from engine.play.boards import PositionError, parse_position

_FEN_BOARD = re.compile(r"^[1-8pnbrqkPNBRQK]+(/[1-8pnbrqkPNBRQK]+){7}$")
_UCI_MOVE = re.compile(r"^[a-h][1-8][a-h][1-8][qrbnQRBN]?$|^0000$")
_FEN_FIELDS = (
    re.compile(r"^[wb]$"),
    re.compile(r"^(-|[KQkqA-Ha-h]{1,4})$"),
    re.compile(r"^(-|[a-h][36])$"),
    re.compile(r"^\d+$"),
    re.compile(r"^\d+$"),
)

ErrorReport = Callable[[str], None]

MAX_INPUT_BYTES = 256 << 20
"""Largest input file read (it is read whole, and its positions listed)."""


@dataclass(frozen=True)
class MoveRange:
    """Full-move numbers ``first..last`` (inclusive) of a game's positions to take."""

    first: int
    last: Optional[int]

    def __str__(self) -> str:
        if self.last == self.first:
            return str(self.first)
        return f"{self.first}-{self.last if self.last is not None else ''}"

    def contains(self, board: chess.Board) -> bool:
        return self.first <= board.fullmove_number and (
            self.last is None or board.fullmove_number <= self.last
        )


def parse_move_range(text: str) -> MoveRange:
    """``N``, ``A-B`` or ``A-``: full-move numbers; ValueError otherwise."""
    match = re.fullmatch(r"(\d+)(?:-(\d*))?", text.strip())
    if not match:
        raise ValueError(f"a move range is N, A-B or A-, not '{text}'")
    first = int(match.group(1))
    if match.group(2) is None:
        return MoveRange(first, first)
    last = int(match.group(2)) if match.group(2) else None
    if last is not None and last < first:
        raise ValueError(f"move range {text}: the end comes before the start")
    return MoveRange(first, last)


@dataclass(frozen=True)
class PositionTask:
    """One position to analyse, in input order (or, with ``error``, one that cannot be)."""

    index: int
    """1-based place in the input (stable across runs: ``--resume`` keys on it)."""
    source: str
    """Where it came from: ``file:line``, ``file: game N, ply P`` or ``argument N``."""
    fen: str
    """The position to analyse (for an input ``error``: the text that is not one)."""
    start_fen: Optional[str] = None
    """With ``moves``: the position they are played from (a game's start)."""
    moves: tuple[str, ...] = ()
    """UCI moves played from ``start_fen`` to reach ``fen`` (its game history)."""
    ops: dict[str, str] = field(default_factory=dict)
    """EPD operations as text (``id``, ``bm``...), echoed in the output."""
    error: Optional[str] = None
    """Why this input is not a position that can be analysed."""

    def board(self) -> chess.Board:
        """The position, with its moves pushed (so repetitions are known)."""
        if self.error is not None:
            raise ValueError(self.error)
        board = chess.Board(self.start_fen if self.moves and self.start_fen else self.fen)
        for move in self.moves:
            board.push_uci(move)
        return board


def _parse_line(text: str) -> tuple[chess.Board, dict[str, str]]:
    """A FEN, EPD or ``startpos|fen ... moves ...`` line; ValueError with the reason."""
    words = text.split()
    if words[0].lower() in ("startpos", "fen") or "moves" in words:
        if words[0].lower() not in ("startpos", "fen"):
            words = ["fen", *words]
        try:
            return parse_position(words, chess960=False), {}
        except PositionError as exc:
            raise ValueError(str(exc)) from None
    if len(words) == 6 and all(p.match(w) for p, w in zip(_FEN_FIELDS, words[1:])):
        return _checked(chess.Board(text)), {}
    board, ops = chess.Board.from_epd(text)
    return _checked(board), {name: _op_text(board, value) for name, value in ops.items()}


def _checked(board: chess.Board) -> chess.Board:
    """``board``, unless it is one no engine can search (no kings, opposite check...)."""
    from engine.play.boards import unplayable_problems

    problems = unplayable_problems(board)
    if problems:
        raise ValueError(f"impossible position ({problems})")
    return board


def _op_text(board: chess.Board, value: object) -> str:
    """An EPD operand as text: moves in SAN (as EPD writes them), others as they are."""
    if isinstance(value, chess.Move):
        return board.san(value)
    if isinstance(value, list):
        return " ".join(_op_text(board, item) for item in value)
    return str(value)


def _task(index: int, source: str, board: chess.Board, ops: dict[str, str]) -> PositionTask:
    moves = tuple(move.uci() for move in board.move_stack)
    start = board.root().fen() if moves else None
    return PositionTask(index, source, board.fen(), start, moves, ops)


def _bad(index: int, source: str, text: str, reason: str) -> PositionTask:
    return PositionTask(index, source, text, error=reason)


class _Counter:
    def __init__(self) -> None:
        self.value = 0

    def next(self) -> int:
        self.value += 1
        return self.value


def _looks_like_pgn(text: str) -> bool:
    for line in text.splitlines():
        stripped = line.strip()
        if stripped:
            return stripped.startswith("[") or bool(re.match(r"^1\.", stripped))
    return False


def _lines(
    name: str, text: str, counter: _Counter, on_error: ErrorReport
) -> Iterator[PositionTask]:
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        try:
            board, ops = _parse_line(stripped)
        except ValueError as exc:
            yield _bad(counter.next(), f"{name}:{number}", stripped, str(exc))
            continue
        yield _task(counter.next(), f"{name}:{number}", board, ops)


class _ReadGame(chess.pgn.Game):
    """A game as read, with what ``read_games`` needs to judge it."""

    tags_read = 0
    """Tag pairs in the file (python-chess fills in the seven it requires)."""
    broken_at: Optional[int] = None
    """Ply of the main line at which its first error (an illegal move...) came."""
    broken_move: Optional[str] = None
    """What the main line stopped at, as a reader would say it ("illegal move Ke3")."""


_GameT = TypeVar("_GameT", bound=chess.pgn.Game)


class TolerantGameBuilder(chess.pgn.GameBuilder[_GameT]):
    """python-chess's game builder, safe from unbalanced parentheses: python-chess
    1.11 can close one variation more than it opened after an error inside one
    ("1. e4 e5 (*) )") and then fails with an IndexError; here the main line stays.
    Every PGN reader of the project builds on it."""

    def end_variation(self) -> None:
        if len(self.variation_stack) > 1:
            self.variation_stack.pop()

    def visit_nag(self, nag: int) -> None:
        if self.variation_stack:
            super().visit_nag(nag)


class _QuietGameBuilder(TolerantGameBuilder[_ReadGame]):
    """The tolerant builder without python-chess's log line per error (the errors
    stay in ``Game.errors``, which ``read_games`` reports as one line per game),
    which notes where the main line broke."""

    def __init__(self) -> None:
        super().__init__(Game=_ReadGame)
        self._san: Optional[str] = None

    def visit_header(self, tagname: str, tagvalue: str) -> None:
        self.game.tags_read += 1
        super().visit_header(tagname, tagvalue)

    def parse_san(self, board: chess.Board, san: str) -> chess.Move:
        # python-chess hands handle_error the exception alone; the move as written
        # is kept here so that the place where a game stops can name it.
        self._san = san
        return super().parse_san(board, san)

    def handle_error(self, error: Exception) -> None:
        if len(self.variation_stack) == 1 and self.game.broken_at is None:
            # Counted by hand: GameNode.ply() needs the start position, and the
            # error may be that the FEN header is not one.
            node, plies = self.variation_stack[0], 0
            while node.parent is not None:
                node, plies = node.parent, plies + 1
            self.game.broken_at = plies
            self.game.broken_move = _bad_move(error, self._san)
        self.game.errors.append(error)


def _bad_move(error: Exception, san: Optional[str]) -> str:
    """``error`` (on the move ``san`` as written) in a reader's words."""
    kinds = (
        (chess.IllegalMoveError, "illegal move"),
        (chess.AmbiguousMoveError, "ambiguous move"),
        (chess.InvalidMoveError, "unreadable move"),
    )
    for kind, words in kinds:
        if isinstance(error, kind) and san is not None:
            return f"{words} {san}"
    return str(error)


def stopped_at(game: chess.pgn.Game) -> Optional[str]:
    """Why ``read_games(..., keep_prefix=True)`` cut ``game``'s main line ("illegal
    move Ke3"), or None when the game is whole."""
    if isinstance(game, _ReadGame) and game.broken_at is not None:
        return game.broken_move
    return None


def _mainline_cut(game: chess.pgn.Game, plies: int) -> None:
    """Drop what follows ``plies`` moves of ``game``'s main line."""
    node: chess.pgn.GameNode = game
    for _ in range(plies):
        following = node.next()
        if following is None:
            return
        node = following
    node.variations.clear()


_COMMENT_START = re.compile(r"[{;]")


class _Lines:
    """A PGN stream handed to python-chess line by line (``readline``, all it calls)
    that keeps a comment left open from swallowing the games after it.

    python-chess reads a ``{`` comment until a ``}``, across any number of lines: one
    never closed (``{unclosed`` in junk between two games) takes every later game
    with it. Here the lines handed out are followed as PGN reads them (``{`` opens a
    comment, ``}`` closes it; ``;`` comments out the rest of a line, ``%`` a whole
    line; tag lines hold no comment), and when a comment is still open at a line
    that is a tag pair, the comment is closed and the game ended just before it
    (``}`` and an empty line are handed out first), so that the next game is read
    from its tags. Each such comment is noted in ``runaways``."""

    def __init__(self, handle: TextIO) -> None:
        self._handle = handle
        self._queued: list[str] = []
        self.number = 0
        """Lines of the file read so far."""
        self._open_at: Optional[int] = None
        """The line of the ``{`` whose comment is open, if one is."""
        self.runaways: list[tuple[int, Optional[int]]] = []
        """(line of a ``{`` left open, line of the tags it was closed before, or None
        when it ran to the end of the file), in order, until read by the caller."""

    def readline(self) -> str:
        if self._queued:
            return self._queued.pop(0)
        line = self._handle.readline()
        if not line:
            if self._open_at is not None:
                self.runaways.append((self._open_at, None))
                self._open_at = None
            return line
        self.number += 1
        if self._open_at is not None and chess.pgn.TAG_REGEX.match(line):
            self.runaways.append((self._open_at, self.number))
            self._open_at = None
            self._queued = ["\n", line]
            return "}\n"
        self._follow(line)
        return line

    def _follow(self, line: str) -> None:
        """Note whether a comment is open at the end of ``line``."""
        if self._open_at is None and (
            line.startswith("%") or chess.pgn.TAG_REGEX.match(line) is not None
        ):
            return
        place = 0
        while True:  # by str.find, not char by char: a database may be large
            if self._open_at is not None:
                place = line.find("}", place) + 1
                if not place:
                    return
                self._open_at = None
            else:
                opens = _COMMENT_START.search(line, place)
                if opens is None or opens.group() == ";":
                    return
                self._open_at = self.number
                place = opens.end()


def _runaway_report(name: str, opened: int, closed: Optional[int]) -> str:
    if closed is None:
        return f"{name}:{opened}: a comment opened here with '{{' is never closed"
    return (
        f"{name}:{opened}: a comment opened here with '{{' is not closed before the tags "
        f"at line {closed}; it is taken to end there"
    )


def read_games(
    name: str, handle: TextIO, on_error: ErrorReport, keep_prefix: bool = False
) -> Iterator[tuple[int, chess.pgn.Game, chess.Board]]:
    """The games of a PGN stream that can be replayed: (number from 1, game, its
    start position). A game whose main line has an illegal or unparsable move is
    reported as ``NAME: game N: ...``, then skipped, or with ``keep_prefix`` cut
    to the moves before it (``stopped_at`` says why); an error only inside a
    variation is reported and the game kept. A bad ``FEN`` header, or text that is
    no game at all (no tag pairs, no moves), skips the game; text that python-chess
    cannot read ends the stream with a report. A ``{`` comment never closed is
    reported with its line and ends before the next game's tags (``_Lines``), so no
    game after it is lost."""
    number = 0
    lines = _Lines(handle)
    while True:
        try:
            # python-chess asks for a TextIO and calls only its readline.
            game = chess.pgn.read_game(cast(TextIO, lines), Visitor=_QuietGameBuilder)
        except (ValueError, UnicodeDecodeError, IndexError, AssertionError) as exc:
            on_error(f"{name}: game {number + 1}: unreadable: {type(exc).__name__}: {exc}")
            return
        for opened, closed in lines.runaways:
            on_error(_runaway_report(name, opened, closed))
        lines.runaways.clear()
        if game is None:
            return
        number += 1
        where = f"{name}: game {number}"
        if game.tags_read == 0 and not game.variations:
            on_error(f"{where}: not a PGN game (no tag pairs and no moves); skipped")
            continue
        try:
            board = game.board()
        except ValueError as exc:
            on_error(f"{where}: bad FEN header: {exc}; game skipped")
            continue
        if game.errors:
            first = game.errors[0]
            if game.broken_at is None:
                on_error(f"{where}: in a variation: {first}; the variation is ignored")
            elif keep_prefix:
                _mainline_cut(game, game.broken_at)
                on_error(
                    f"{where}: after ply {game.broken_at}: {first}; the rest of the game "
                    "is not analysed"
                )
            else:
                on_error(f"{where}: {first}; game skipped")
                continue
        yield number, game, board


def _games(
    name: str,
    handle: TextIO,
    counter: _Counter,
    on_error: ErrorReport,
    moves: Optional[MoveRange],
) -> Iterator[PositionTask]:
    for number, game, board in read_games(name, handle, on_error, keep_prefix=True):
        played = list(game.mainline_moves())
        # Every position: before each move, and the one the game ends in.
        for ply in range(len(played) + 1):
            if moves is None or moves.contains(board):
                yield _task(counter.next(), f"{name}: game {number}, ply {ply}", board, {})
            if ply < len(played):
                board.push(played[ply])


def _file(
    path: str, counter: _Counter, on_error: ErrorReport, moves: Optional[MoveRange]
) -> Iterator[PositionTask]:
    try:
        if path == "-":
            text = sys.stdin.read(MAX_INPUT_BYTES + 1)
        else:
            with open(path, "rb") as handle:
                text = handle.read(MAX_INPUT_BYTES + 1).decode("utf-8", errors="replace")
    except OSError as exc:
        on_error(f"{path}: cannot read: {exc.strerror or exc}")
        return
    if len(text) > MAX_INPUT_BYTES:
        # /dev/zero, or a database that must be split: not a MemoryError later.
        on_error(f"{path}: larger than {MAX_INPUT_BYTES >> 20} MB; split it into smaller files")
        return
    name = "stdin" if path == "-" else Path(path).name
    reports: list[str] = []

    def report(message: str) -> None:
        reports.append(message)
        on_error(message)

    is_pgn = path.lower().endswith(".pgn") or (path == "-" and _looks_like_pgn(text))
    if is_pgn:
        tasks = _games(name, io.StringIO(text), counter, report, moves)
    else:
        tasks = _lines(name, text, counter, report)
    found = 0
    for task in tasks:
        found += 1
        yield task
    if found == 0 and not reports:
        # An empty file, or a move range past every game's end: say so, not nothing.
        if is_pgn and moves is not None and text.strip():
            on_error(f"{name}: no position of any game is in moves {moves}")
        else:
            on_error(f"{name}: no positions")


def _arguments(words: list[str]) -> Iterator[tuple[str, str]]:
    """``words`` cut into arguments, in order: ``("position", TEXT)`` for a FEN or
    ``startpos`` (with its moves), ``("file", NAME)`` for a file or ``-``, and
    ``("unknown", WORD)`` for anything else."""
    tokens = [token for word in words for token in (word.split() or [word])]
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token.lower() in ("startpos", "fen") or _FEN_BOARD.match(token):
            end = i + 1
            if token.lower() != "startpos":
                board_at = i + 1 if token.lower() == "fen" else i
                end = board_at + 1
                # The FEN's other fields, as many as there are (four or six in all).
                while (
                    end < len(tokens)
                    and end - board_at <= len(_FEN_FIELDS)
                    and _FEN_FIELDS[end - board_at - 1].match(tokens[end])
                ):
                    end += 1
            if end < len(tokens) and tokens[end].lower() == "moves":
                end += 1
                while end < len(tokens) and _UCI_MOVE.match(tokens[end]):
                    end += 1
            yield "position", " ".join(tokens[i:end])
            i = end
        else:
            i += 1
            yield ("file" if token == "-" or Path(token).exists() else "unknown"), token


def input_files(words: list[str]) -> list[str]:
    """The files (``-``: stdin) that ``read_positions(words, ...)`` reads."""
    return [text for kind, text in _arguments(words) if kind == "file"]


def read_positions(
    words: list[str], on_error: ErrorReport, moves: Optional[MoveRange] = None
) -> Iterator[PositionTask]:
    """The positions named by ``words`` (see the module docstring), in order.

    No words means the start position. ``moves`` restricts PGN games to a range of
    full-move numbers.
    """
    counter = _Counter()
    if not words:
        yield _task(counter.next(), "startpos", chess.Board(), {})
        return
    for argument, (kind, text) in enumerate(_arguments(words), 1):
        if kind == "position":
            try:
                board, ops = _parse_line(text)
            except (ValueError, IndexError) as exc:
                yield _bad(counter.next(), f"argument {argument}", text, str(exc))
                continue
            yield _task(counter.next(), f"argument {argument}", board, ops)
        elif kind == "file":
            yield from _file(text, counter, on_error, moves)
        else:
            on_error(f"argument {argument}: '{text}' is not a FEN, a file or 'startpos'")
