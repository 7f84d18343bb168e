"""Boards from the outside world: parsed, checked, and counted.

Responsible for the UCI ``position`` command's arguments (``parse_position``, and
``PositionParser``, which parses a session's growing move list incrementally), for
telling which boards no move generator can walk meaningfully (``UNPLAYABLE_STATUS``,
``unplayable_problems``), and for the plain perft walk that ``go perft`` runs. The UCI
session, the analysis inputs and the ``perft`` package all take these from here. It
must not search, evaluate or do I/O.
"""

from __future__ import annotations

import threading
from typing import Optional

import chess

from engine.play.uci_text import printable

UNPLAYABLE_STATUS = (
    chess.STATUS_EMPTY
    | chess.STATUS_NO_WHITE_KING
    | chess.STATUS_NO_BLACK_KING
    | chess.STATUS_TOO_MANY_KINGS
    | chess.STATUS_OPPOSITE_CHECK
    | chess.STATUS_PAWNS_ON_BACKRANK
)
"""``Board.status()`` bits of positions a move generator cannot walk meaningfully:
without both kings (one each), with pawns on the first or last rank, or with the
side not to move in check (its king could be captured). Other odd statuses (too
many checkers, a bogus en passant square) still have well-defined moves."""


def unplayable_problems(board: chess.Board) -> str:
    """What makes ``board`` unplayable (``UNPLAYABLE_STATUS``), as words for an error
    message ("no white king, pawns on backrank"); empty when it is playable."""
    status = board.status() & UNPLAYABLE_STATUS
    return ", ".join(
        (flag.name or "").removeprefix("STATUS_").lower().replace("_", " ")
        for flag in chess.Status
        if flag & status
    )


class PerftStoppedError(Exception):
    """The ``stop`` event was set during a perft walk."""


def perft(board: chess.Board, depth: int, stop: Optional[threading.Event] = None) -> int:
    """Number of leaf nodes ``depth`` plies below ``board``; 1 at depth 0.

    The board is pushed and popped in place and is unchanged afterwards (also when
    ``stop`` is set: the walk then raises ``PerftStoppedError``, checked at every
    node above the last two plies).
    """
    if depth <= 0:
        return 1
    nodes = 0
    # Iterating the generator while pushing/popping is safe: after each pop the
    # board is back in the state the generator reads, and skipping the list
    # allocation is measurably faster.
    if depth == 1:
        for move in board.generate_legal_moves():
            board.push(move)
            nodes += 1
            board.pop()
        return nodes
    if stop is not None and depth > 2 and stop.is_set():
        raise PerftStoppedError
    for move in board.generate_legal_moves():
        board.push(move)
        try:
            nodes += perft(board, depth - 1, stop)
        finally:
            board.pop()
    return nodes


class PositionError(ValueError):
    """A ``position`` command that cannot be applied; the message names the problem."""


def _split_position(tokens: list[str]) -> tuple[list[str], list[str]]:
    """``position`` arguments split into the start (``startpos`` / ``fen ...``) and moves.

    Only the tokens up to ``moves`` are looked at here: a game's move list may be
    hundreds of thousands of tokens long.
    """
    lowered = (t.lower() for t in tokens)
    start = next((i for i, t in enumerate(lowered) if t in ("startpos", "fen")), None)
    if start is None:
        raise PositionError("position: expected 'startpos' or 'fen'")
    moves_at = next(
        (i for i in range(start + 1, len(tokens)) if tokens[i].lower() == "moves"), len(tokens)
    )
    return tokens[start:moves_at], tokens[moves_at + 1 :]


def _start_board(start: list[str], chess960: bool) -> chess.Board:
    if start[0].lower() == "startpos":
        return chess.Board(chess960=chess960)
    fen = " ".join(start[1:])
    if not fen:
        raise PositionError("position: missing FEN")
    try:
        board = chess.Board(fen, chess960=chess960)
    except ValueError as exc:
        raise PositionError(f"invalid FEN '{printable(fen)}': {printable(str(exc))}") from None
    status = board.status()
    if status & UNPLAYABLE_STATUS:
        raise PositionError(f"impossible position in FEN '{printable(fen)}'")
    return board


def _push_moves(board: chess.Board, texts: list[str], first_ply: int) -> None:
    """Push UCI moves onto ``board``; on an illegal one, undo them all and raise."""
    for pushed, text in enumerate(texts):
        try:
            move = board.parse_uci(text.lower())
        except ValueError:
            move = chess.Move.null()
        if not move:
            for _ in range(pushed):
                board.pop()
            raise PositionError(f"illegal move '{printable(text)}' at ply {first_ply + pushed}")
        board.push(move)


def parse_position(tokens: list[str], chess960: bool) -> chess.Board:
    """Build the board of ``position startpos|fen <FEN> [moves ...]`` (tokens after it)."""
    start, moves = _split_position(tokens)
    board = _start_board(start, chess960)
    _push_moves(board, moves, 1)
    return board


class PositionParser:
    """``position`` commands of one session, parsed incrementally.

    GUIs resend the whole game with every move. When a command repeats the
    previous one's start and moves and only appends moves, just those are
    checked and pushed, so the work per move does not grow with the game.
    """

    def __init__(self) -> None:
        self._start: Optional[list[str]] = None
        self._moves: list[str] = []
        self._chess960 = False
        self._board: Optional[chess.Board] = None

    def parse(self, tokens: list[str], chess960: bool) -> chess.Board:
        """The position of ``tokens``; the board is shared with the next call (do not push)."""
        start, moves = _split_position(tokens)
        board = self._board
        known = len(self._moves)
        if (
            board is not None
            and start == self._start
            and chess960 == self._chess960
            and len(moves) >= known
            and moves[:known] == self._moves
        ):
            _push_moves(board, moves[known:], known + 1)
        else:
            board = _start_board(start, chess960)
            _push_moves(board, moves, 1)
        self._start, self._moves, self._chess960, self._board = start, moves, chess960, board
        return board
