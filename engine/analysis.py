"""The Python API for analysis: Cutoff in-process, with python-chess's result types.

``Analyser`` runs Cutoff's controller and searcher in this process and answers as
``chess.engine.SimpleEngine.analyse`` does: ``analyse(board, limit)`` takes a
``chess.engine.Limit`` (depth, nodes, time, mate, or clocks) and returns one
``chess.engine.InfoDict`` (score as a ``PovScore``, PV as ``chess.Move``s, depth,
seldepth, nodes, nps, time in seconds, hashfull, multipv), or a list of them, best
first, when ``multipv`` is given. Code written for ``SimpleEngine.analyse`` works
on its results unchanged. The analyser keeps its transposition table and move
ordering history between calls (``clear()`` forgets them), which is what makes
consecutive positions of a game cheap; ``analyse_game`` analyses every position
of a ``chess.pgn.Game`` that way, and ``analyse_many`` is the iterator form for
batches.

An ``Analyser`` holds no global state, so any number of processes can each have
their own; within one, a second call while one is running raises
``AnalyserBusyError`` instead of sharing the search. The search runs on the
controller's worker thread while the caller waits; Ctrl-C stops it cleanly.

This module must not search, evaluate or format text itself: it drives the
controller, as uci.py does, and turns its reports into python-chess results.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Optional, Union

import chess
import chess.engine
import chess.pgn

from engine.controller import Controller
from engine.limits import SearchLimits
from engine.options import HASH, MOVE_OVERHEAD, MULTIPV, Options
from engine.score import is_mate_score, mate_in_moves
from engine.search import IterationInfo
from engine.tt import BOUND_EXACT
from engine.uci_text import BestMove, legal_pv

AnalysisResult = Union[chess.engine.InfoDict, list[chess.engine.InfoDict]]

DEFAULT_HASH_MB = 16


class AnalyserBusyError(RuntimeError):
    """``analyse`` was called while another call on the same analyser was running."""


def pov_score(score: int, turn: chess.Color) -> chess.engine.PovScore:
    """A search score (side to move's view, engine.score units) as python-chess's type."""
    if is_mate_score(score):
        return chess.engine.PovScore(chess.engine.Mate(mate_in_moves(score)), turn)
    return chess.engine.PovScore(chess.engine.Cp(score), turn)


def search_limits(limit: chess.engine.Limit) -> SearchLimits:
    """A ``chess.engine.Limit`` as the ``go`` command python-chess would send for it."""
    limits = SearchLimits()
    if limit.time is not None:
        limits.movetime_ms = max(1, round(limit.time * 1000))
    limits.depth = limit.depth
    limits.nodes = limit.nodes
    limits.mate = limit.mate
    if limit.white_clock is not None:
        limits.wtime_ms = round(limit.white_clock * 1000)
    if limit.black_clock is not None:
        limits.btime_ms = round(limit.black_clock * 1000)
    if limit.white_inc is not None:
        limits.winc_ms = round(limit.white_inc * 1000)
    if limit.black_inc is not None:
        limits.binc_ms = round(limit.black_inc * 1000)
    limits.movestogo = limit.remaining_moves
    if limits.is_unbounded():
        raise ValueError("the limit sets nothing: give a depth, nodes, time, mate or clocks")
    return limits


class _Collector:
    """The controller's output for one search, kept as the last report per line."""

    def __init__(self) -> None:
        self.lines: dict[int, IterationInfo] = {}
        self.root = chess.Board()
        self.best: Optional[chess.Move] = None
        self.messages: list[str] = []

    def reset(self, root: chess.Board) -> None:
        self.lines = {}
        self.root = root
        self.best = None
        self.messages = []

    def info(self, info: IterationInfo, root: chess.Board, chess960: bool) -> None:
        if info.bound == BOUND_EXACT:
            self.lines[info.multipv] = info

    def bestmove(self, root: chess.Board, played: BestMove, chess960: bool) -> None:
        self.best = played.move

    def text(self, line: str) -> None:
        self.messages.append(line)


def info_dict(info: IterationInfo, root: chess.Board) -> chess.engine.InfoDict:
    """One report as python-chess's ``InfoDict``, as it would parse our ``info`` line."""
    result: chess.engine.InfoDict = {
        "depth": info.depth,
        "seldepth": max(info.seldepth, info.depth),
        "multipv": info.multipv,
        "score": pov_score(info.score, root.turn),
        "nodes": info.nodes,
        "nps": info.nodes * 1000 // max(1, info.time_ms),
        "hashfull": info.hashfull,
        "time": info.time_ms / 1000.0,
    }
    pv = legal_pv(root, info.pv)
    if pv:
        result["pv"] = pv
    return result


@dataclass(frozen=True)
class GamePosition:
    """One position of an analysed game: where it stands and what was played from it."""

    ply: int
    """Plies from the game's start position (0: before the first move)."""
    board: chess.Board
    """The position (a copy, with the game's moves up to it)."""
    move: Optional[chess.Move]
    """The move the game played from here; None after the last move."""
    info: chess.engine.InfoDict


class Analyser:
    """Cutoff in this process, answering like python-chess's ``SimpleEngine.analyse``."""

    def __init__(self, hash_mb: int = DEFAULT_HASH_MB) -> None:
        self._options = Options()
        self._options.set(HASH, str(hash_mb))
        # No GUI and no pipe between us and the caller: a time limit is all search.
        self._options.set(MOVE_OVERHEAD, "0")
        self._collector = _Collector()
        self._controller = Controller(self._collector, self._options)
        self._lock = threading.Lock()

    @property
    def hash_mb(self) -> int:
        return self._options.get_int(HASH)

    def clear(self) -> None:
        """Forget the transposition table and history (as a new game would)."""
        with self._claim():
            self._controller.new_game()

    def close(self) -> None:
        """Release the search thread (an idle analyser holds none); for symmetry."""
        self._controller.stop()
        self._controller.wait_idle()

    def __enter__(self) -> Analyser:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def analyse(
        self,
        board: chess.Board,
        limit: chess.engine.Limit,
        *,
        multipv: Optional[int] = None,
        root_moves: Optional[Iterable[chess.Move]] = None,
    ) -> AnalysisResult:
        """Search ``board`` within ``limit``: one InfoDict, or ``multipv`` of them.

        The board is not changed. A position without legal moves gives depth 0 and
        a mate (checkmate) or zero (stalemate) score and no PV.
        """
        limits = search_limits(limit)
        if root_moves is not None:
            limits.searchmoves = [move.uci() for move in root_moves]
        with self._claim():
            controller = self._controller
            controller.set_option(MULTIPV, str(max(1, multipv or 1)))
            controller.set_board(board)
            root = board.copy(stack=False)
            self._collector.reset(root)
            controller.go(limits, time.monotonic())
            try:
                while not controller.wait_idle(0.1):
                    pass
            except KeyboardInterrupt:
                controller.stop()
                controller.wait_idle()
                raise
            lines = [
                info_dict(info, root)
                for _, info in sorted(self._collector.lines.items())
                if multipv is not None or info.multipv == 1
            ]
        if multipv is None:
            return lines[0]
        return lines

    def analyse_many(
        self,
        boards: Iterable[chess.Board],
        limit: chess.engine.Limit,
        *,
        multipv: Optional[int] = None,
        clear: bool = False,
    ) -> Iterator[AnalysisResult]:
        """``analyse`` for each board in turn, yielded as each finishes.

        With ``clear``, every position starts from an empty table, so its result
        does not depend on what was analysed before it.
        """
        for board in boards:
            if clear:
                self.clear()
            yield self.analyse(board, limit, multipv=multipv)

    def iter_game(self, game: chess.pgn.Game, limit: chess.engine.Limit) -> Iterator[GamePosition]:
        """Every position of ``game``'s main line, from its start to after its last move."""
        board = game.board()
        node: chess.pgn.GameNode = game
        ply = 0
        while True:
            following = node.next()
            move = following.move if following is not None else None
            info = self.analyse(board, limit)
            assert isinstance(info, dict)
            yield GamePosition(ply, board.copy(), move, info)
            if following is None or move is None:
                return
            board.push(move)
            node = following
            ply += 1

    def analyse_game(self, game: chess.pgn.Game, limit: chess.engine.Limit) -> list[GamePosition]:
        """``iter_game`` as a list."""
        return list(self.iter_game(game, limit))

    def _claim(self) -> _Claim:
        return _Claim(self._lock)


class _Claim:
    """The analyser's lock, taken without waiting: a second caller is an error."""

    def __init__(self, lock: threading.Lock) -> None:
        self._lock = lock

    def __enter__(self) -> None:
        if not self._lock.acquire(blocking=False):
            raise AnalyserBusyError("this Analyser is already analysing (one call at a time)")

    def __exit__(self, *exc_info: object) -> None:
        self._lock.release()
