"""The text of UCI output: ``info`` lines, moves, the ``d`` board, echoed input.

Pure functions from boards and search reports to strings. The rules they keep:

* an ``info`` line has its fields in the order GUIs and fastchess expect (depth,
  seldepth, multipv, score [lowerbound|upperbound], nodes, nps, hashfull, time,
  pv last, since ``pv`` runs to the end of the line);
* a PV is only ever printed as far as it is legal from the root, and it ends
  where the game would (threefold repetition, fifty-move rule);
* castling is written king-to-destination in standard chess and king-takes-rook
  when ``UCI_Chess960`` is on;
* text echoed from the GUI (a bad move, a bad FEN) is reduced to printable ASCII
  of bounded length, since every output line must be one ASCII line.

This module does no I/O and holds no state; uci.py and the controller write
what it returns. It stays cheap to import (uci.py needs it before the handshake).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Optional

import chess

from engine.core.score import uci_score
from engine.core.tt import BOUND_EXACT, BOUND_LOWER
from engine.core.wdl import search_wdl

if TYPE_CHECKING:  # the search is imported after the UCI handshake, not with this module
    from engine.core.search import IterationInfo


@dataclass(frozen=True)
class BestMove:
    """The move a search plays (None: there is no legal move) and the reply it expects."""

    move: Optional[chess.Move]
    ponder: Optional[chess.Move] = None


def printable(text: str, limit: int = 80) -> str:
    """``text`` reduced to printable ASCII and at most ``limit`` characters.

    Control characters and non-ASCII become ``?``.
    """
    cleaned = "".join(c if " " <= c <= "~" else "?" for c in text)
    return cleaned if len(cleaned) <= limit else cleaned[: limit - 3] + "..."


def legal_pv(root: chess.Board, moves: list[chess.Move]) -> list[chess.Move]:
    """The longest prefix of ``moves`` that is legal from ``root``.

    The PV also ends where the game would: after a threefold repetition or the
    fifty-move rule (checkmate and stalemate end it by legality).
    """
    board = root.copy()
    pv: list[chess.Move] = []
    for move in moves:
        if not board.is_legal(move):
            break
        board.push(move)
        pv.append(move)
        if board.halfmove_clock >= 100 or board.is_repetition(3):
            break
    return pv


def format_moves(root: chess.Board, moves: list[chess.Move], chess960: bool) -> str:
    """Legal ``moves`` from ``root`` in UCI notation, castling as ``chess960`` says."""
    board = root.copy(stack=False)
    out = []
    for move in moves:
        out.append(board.uci(move, chess960=chess960))
        board.push(move)
    return " ".join(out)


def format_info(
    info: IterationInfo,
    root: chess.Board,
    chess960: bool,
    pv: Optional[list[chess.Move]] = None,
    show_wdl: bool = False,
) -> str:
    """One UCI ``info`` line for an iteration report (``wdl W D L`` after the score
    with ``show_wdl``, as Stockfish sends it with ``UCI_ShowWDL``)."""
    moves = legal_pv(root, info.pv) if pv is None else pv
    nps = info.nodes * 1000 // max(1, info.time_ms)
    line = (
        f"info depth {info.depth} seldepth {max(info.seldepth, info.depth)}"
        f" multipv {info.multipv} score {uci_score(info.score)}"
    )
    if info.bound != BOUND_EXACT:
        line += " lowerbound" if info.bound == BOUND_LOWER else " upperbound"
    if show_wdl:
        line += " wdl {} {} {}".format(*search_wdl(info.score, root))
    line += f" nodes {info.nodes} nps {nps} hashfull {info.hashfull}"
    if info.tbhits:
        line += f" tbhits {info.tbhits}"
    line += f" time {info.time_ms}"
    if moves:
        line += " pv " + format_moves(root, moves, chess960)
    return line


def board_lines(board: chess.Board) -> list[str]:
    """``d``: the board, its FEN, then the search board's Polyglot key and checkers
    (Stockfish's layout)."""
    # Imported here: this module must stay cheap to import before the handshake.
    from engine.core.board import Board

    native = Board.from_chess(board)
    rule = " +---+---+---+---+---+---+---+---+"
    lines = ["", rule]
    for rank in range(7, -1, -1):
        cells = []
        for file in range(8):
            piece = board.piece_at(chess.square(file, rank))
            cells.append(piece.symbol() if piece else " ")
        lines.append(" | " + " | ".join(cells) + f" | {rank + 1}")
        lines.append(rule)
    lines.append("   a   b   c   d   e   f   g   h")
    lines.append("")
    lines.append(f"Fen: {board.fen()}")
    lines.append(f"Key: {native.polyglot_key():016X}")
    # The native bitboard as python-chess's (the compiled build's is signed).
    checkers_mask = int(native.checkers()) & chess.BB_ALL
    checkers = " ".join(chess.square_name(s) for s in chess.scan_forward(checkers_mask))
    lines.append(f"Checkers: {checkers}")
    return lines


class TextOutput:
    """The controller's output as UCI text lines, handed to ``write`` one at a time."""

    def __init__(
        self, write: Callable[[str], None], show_wdl: Callable[[], bool] = lambda: False
    ) -> None:
        self._write = write
        self._show_wdl = show_wdl

    def info(self, info: IterationInfo, root: chess.Board, chess960: bool) -> None:
        if info.depth == 0 and not info.pv:
            # No move to play (mate or stalemate at the root): the short form GUIs know.
            self._write(f"info depth 0 score {uci_score(info.score)}")
        else:
            self._write(format_info(info, root, chess960, show_wdl=self._show_wdl()))

    def bestmove(self, root: chess.Board, played: BestMove, chess960: bool) -> None:
        move, ponder = played.move, played.ponder
        if move is None:
            self._write("bestmove (none)")
            return
        line = f"bestmove {root.uci(move, chess960=chess960)}"
        if ponder is not None:
            after = root.copy(stack=False)
            after.push(move)
            line += f" ponder {after.uci(ponder, chess960=chess960)}"
        self._write(line)

    def text(self, line: str) -> None:
        self._write(line)
