"""Perft walks: count the leaves of the legal move tree, optionally checking state.

``perft`` (the engine's own walk, ``engine.play.boards.perft``, which ``go perft`` runs)
and ``divide`` work on a bare ``chess.Board`` with legal generation and push/pop at
every ply (no bulk counting, so the rate is comparable with a search's make/unmake
cost). ``perft_checked`` walks the same tree through a walker with incremental
state (``perft.native.NativeWalker``: the engine's search board beside python-chess's)
and stops at the first node where that state differs from a from-scratch computation
or from python-chess.

This module does no I/O and no argument parsing; it imports from the engine only
``engine.play.boards`` (callers pass the walker class), and the engine never imports
this package.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Protocol

import chess

from engine.play.boards import PerftStoppedError as PerftStoppedError
from engine.play.boards import perft as perft


def divide(board: chess.Board, depth: int) -> list[tuple[chess.Move, int]]:
    """Perft of each legal root move at ``depth - 1``, sorted by UCI string.

    The sum of the counts equals ``perft(board, depth)``. Sorting makes the output
    diffable against other engines' divide output. ``depth`` must be >= 1.
    """
    if depth < 1:
        raise ValueError(f"divide needs depth >= 1, got {depth}")
    result: list[tuple[chess.Move, int]] = []
    for move in list(board.generate_legal_moves()):
        board.push(move)
        result.append((move, perft(board, depth - 1)))
        board.pop()
    result.sort(key=lambda item: item[0].uci())
    return result


class StatefulWalker(Protocol):
    """What ``perft_checked`` needs from a walker with incremental state."""

    @property
    def board(self) -> chess.Board: ...

    def push(self, move: chess.Move) -> None: ...

    def pop(self) -> None: ...

    def state_errors(self) -> list[str]: ...


WalkerFactory = Callable[[chess.Board], StatefulWalker]


@dataclass(frozen=True)
class StateMismatch:
    """The first node where incremental state differed from a fresh computation."""

    root_fen: str
    fen: str
    """FEN of the board at the moment of the check."""
    path: tuple[chess.Move, ...]
    """Moves from the root to the node checked (for a pop: including the popped move)."""
    event: str
    """``root``, ``push`` or ``pop``."""
    errors: tuple[str, ...]

    def describe(self) -> str:
        """One line: where it happened, the move path, and what differed."""
        moves = " ".join(move.uci() for move in self.path) or "(none)"
        where = {
            "root": "at the root",
            "push": f"after push {self.path[-1].uci()}" if self.path else "after push",
            "pop": f"after pop {self.path[-1].uci()}" if self.path else "after pop",
        }[self.event]
        return (
            f"state mismatch {where}; root FEN: {self.root_fen}; path: {moves}; "
            f"FEN: {self.fen}; " + "; ".join(self.errors)
        )


class StateMismatchError(Exception):
    """Raised by ``perft_checked``; ``mismatch`` says where and what."""

    def __init__(self, mismatch: StateMismatch) -> None:
        super().__init__(mismatch.describe())
        self.mismatch = mismatch


class _CheckedWalk:
    """One walker with incremental state, walked with a check after every move."""

    def __init__(self, board: chess.Board, factory: WalkerFactory) -> None:
        self.root_fen = board.fen()
        self.walker = factory(board.copy())
        self.path: list[chess.Move] = []

    def fail(self, event: str, errors: list[str]) -> StateMismatchError:
        return StateMismatchError(
            StateMismatch(
                root_fen=self.root_fen,
                fen=self.walker.board.fen(),
                path=tuple(self.path),
                event=event,
                errors=tuple(errors),
            )
        )

    def check_root(self) -> None:
        errors = self.walker.state_errors()
        if errors:
            raise self.fail("root", errors)

    def push(self, move: chess.Move) -> None:
        board = self.walker.board
        stack_before = len(board.move_stack)
        self.path.append(move)
        self.walker.push(move)
        errors = self.walker.state_errors()
        # A walker that forgets to push its board would look consistent while
        # walking the wrong tree; the move stack gives that away.
        board = self.walker.board
        if len(board.move_stack) != stack_before + 1 or board.peek() != move:
            errors = [*errors, f"board move stack does not end with {move.uci()}"]
        if errors:
            raise self.fail("push", errors)

    def pop(self) -> None:
        stack_before = len(self.walker.board.move_stack)
        move = self.path[-1]
        self.walker.pop()
        errors = self.walker.state_errors()
        if len(self.walker.board.move_stack) != stack_before - 1:
            errors = [*errors, f"board move stack not restored after popping {move.uci()}"]
        if errors:
            raise self.fail("pop", errors)
        self.path.pop()

    def moves(self) -> list[chess.Move]:
        # A list, not the live generator: a broken pop must not derail generation.
        return list(self.walker.board.generate_legal_moves())

    def perft(self, depth: int) -> int:
        if depth <= 0:
            return 1
        nodes = 0
        for move in self.moves():
            self.push(move)
            nodes += self.perft(depth - 1)
            self.pop()
        return nodes


def perft_checked(board: chess.Board, depth: int, factory: WalkerFactory) -> int:
    """``perft`` through ``factory(board.copy())``, checking its state at every node.

    Checks at the root, after each push and after each pop: ``state_errors()`` must
    be empty and the board's move stack must have grown or shrunk by that move.
    Raises ``StateMismatchError`` at the first failure. ``board`` is not modified.
    """
    walk = _CheckedWalk(board, factory)
    walk.check_root()
    return walk.perft(depth)


def divide_checked(
    board: chess.Board, depth: int, factory: WalkerFactory
) -> list[tuple[chess.Move, int]]:
    """``divide`` with the checks of ``perft_checked``; same order and counts."""
    if depth < 1:
        raise ValueError(f"divide needs depth >= 1, got {depth}")
    walk = _CheckedWalk(board, factory)
    walk.check_root()
    result: list[tuple[chess.Move, int]] = []
    for move in walk.moves():
        walk.push(move)
        result.append((move, walk.perft(depth - 1)))
        walk.pop()
    result.sort(key=lambda item: item[0].uci())
    return result
