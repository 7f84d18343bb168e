"""The native search board (``engine.core.board.Board``) as a perft walker.

``native_perft`` and ``native_divide`` count leaves on the native board alone (its
own legal generation and make/unmake). ``NativeWalker`` is a ``StatefulWalker``
for ``perft.core.perft_checked``: it walks a python-chess board and the native board
side by side and reports, at every node, where the native board's incremental state
(bitboards, mailbox, key) differs from a fresh computation, and where what it says
(FEN, Polyglot key, legal moves, their stages, checkers) differs from python-chess.
"""

from __future__ import annotations

import chess
import chess.polyglot

from engine.core.board import Board
from engine.core.movegen import legal_moves, noisy_moves, perft, quiet_moves


def native_perft(board: chess.Board, depth: int) -> int:
    """Leaves ``depth`` plies below ``board``, counted on the native board."""
    return int(perft(Board.from_chess(board), depth))


def native_divide(board: chess.Board, depth: int) -> list[tuple[chess.Move, int]]:
    """``perft.core.divide`` on the native board: counts per root move, by UCI."""
    if depth < 1:
        raise ValueError(f"divide needs depth >= 1, got {depth}")
    native = Board.from_chess(board)
    result: list[tuple[chess.Move, int]] = []
    for move in legal_moves(native):
        native.make(move)
        count = int(perft(native, depth - 1))
        native.unmake()
        result.append((native.to_chess_move(move), count))
    result.sort(key=lambda item: item[0].uci())
    return result


class NativeWalker:
    """A python-chess board and the native board, pushed and popped together."""

    def __init__(self, board: chess.Board) -> None:
        self.board = board
        self.native = Board.from_chess(board)

    def push(self, move: chess.Move) -> None:
        self.native.make(self.native.from_chess_move(move))
        self.board.push(move)

    def pop(self) -> None:
        self.native.unmake()
        self.board.pop()

    def state_errors(self) -> list[str]:
        native = self.native
        board = self.board
        errors = list(native.state_errors())
        if native.fen() != board.fen():
            errors.append(f"native FEN {native.fen()} != {board.fen()}")
        key = chess.polyglot.zobrist_hash(board)
        if native.polyglot_key() != key:
            errors.append(f"native key {native.polyglot_key():016x} != zobrist_hash {key:016x}")
        if native.checkers() != _signed(board.checkers_mask()):
            errors.append("native checkers differ from python-chess's")
        legal = [native.to_chess_move(move) for move in legal_moves(native)]
        expected = set(board.generate_legal_moves())
        if len(legal) != len(set(legal)) or set(legal) != expected:
            missing = " ".join(sorted(move.uci() for move in expected - set(legal)))
            extra = " ".join(sorted(move.uci() for move in set(legal) - expected))
            errors.append(f"native legal moves differ: missing [{missing}] extra [{extra}]")
        staged = noisy_moves(native) + quiet_moves(native)
        if sorted(staged) != sorted(legal_moves(native)):
            errors.append("noisy and quiet moves do not partition the legal moves")
        return errors


def _signed(bitboard: int) -> int:
    """A python-chess bitboard as the native board stores it in this build."""
    return int(Board.from_bits(bitboard))
