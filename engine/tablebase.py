"""Endgame tablebases: Syzygy (WDL and DTZ) and Gaviota (DTM), read with python-chess.

``Tablebases`` holds the tables named by the ``SyzygyPath`` and ``GaviotaTbPath``
options (several directories separated by ``:``, or by ``;`` as on Windows) and
answers two questions:

* in the tree, ``wdl(board)``: win, draw or loss with best play for a position
  with few enough pieces (``SyzygyProbeLimit``) and no castling rights, or None;
  the search asks only right after a capture or pawn move, as engines do, since
  that is where a position first enters the tables;
* at the root, ``root(board)``: what to play. A won position plays the move that
  keeps the win and makes progress (the shortest distance to the next capture or
  pawn move by DTZ, or to mate by Gaviota's DTM; a win that the fifty-move rule
  would turn into a draw does not count), a lost one the move that resists
  longest; a drawn one lets the search choose among the moves that keep the draw.

Scores: a tablebase win is ``TB_WIN_CP`` minus the distance in plies (below every
mate score), reported as a large centipawn score; with Gaviota's tables the root
reports the exact ``mate N``. This module must not search; a missing or unreadable
directory is reported by the caller as a note, never an error.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Optional

import chess
import chess.gaviota
import chess.syzygy

from engine.score import MATE

TB_WIN_CP = 20000
"""A tablebase win, minus its distance: far above any evaluation, below any mate."""
DEFAULT_PROBE_LIMIT = 7


def split_paths(text: str) -> list[str]:
    """Directories of a path option: ``;``-separated if there is a ``;``, else ``:``."""
    if not text or text == "<empty>":
        return []
    parts = text.split(";") if ";" in text else text.split(":")
    return [part.strip() for part in parts if part.strip()]


@dataclass(frozen=True)
class RootProbe:
    """What the tables say at the root."""

    move: Optional[chess.Move]
    """The move to play (won or lost positions), or None: search ``keep``."""
    keep: list[chess.Move]
    """The moves that keep the best result the tables promise."""
    score: int
    """Side to move's view, engine.score units (a TB win, a mate, or 0)."""


@dataclass
class Tablebases:
    """The tables from the path options, and the probes the engine makes of them."""

    probe_limit: int = DEFAULT_PROBE_LIMIT
    syzygy: Optional[chess.syzygy.Tablebase] = None
    syzygy_pieces: int = 0
    gaviota: Optional[chess.gaviota.PythonTablebase] = None
    hits: int = field(default=0)

    def set_syzygy_path(self, text: str) -> list[str]:
        """Open the Syzygy tables in ``text``'s directories; notes about what failed."""
        if self.syzygy is not None:
            self.syzygy.close()
        self.syzygy, self.syzygy_pieces = None, 0
        notes = []
        tables = chess.syzygy.Tablebase()
        for directory in split_paths(text):
            if not os.path.isdir(directory):
                notes.append(f"SyzygyPath: no such directory: {directory}")
                continue
            try:
                tables.add_directory(directory)
            except OSError as exc:
                notes.append(f"SyzygyPath: cannot read {directory}: {exc}")
        names = list(tables.wdl)
        if names:
            self.syzygy = tables
            self.syzygy_pieces = max(len(name) - 1 for name in names)  # "KQvK": 3 pieces
            notes.append(f"Syzygy: {len(names)} tables, up to {self.syzygy_pieces} pieces")
        elif split_paths(text):
            notes.append("SyzygyPath: no Syzygy tables found")
        return notes

    def set_gaviota_path(self, text: str) -> list[str]:
        """Open the Gaviota tables in ``text``'s directories; notes about what failed."""
        if self.gaviota is not None:
            self.gaviota.close()
        self.gaviota = None
        notes = []
        tables = chess.gaviota.PythonTablebase()
        found = 0
        for directory in split_paths(text):
            if not os.path.isdir(directory):
                notes.append(f"GaviotaTbPath: no such directory: {directory}")
                continue
            tables.add_directory(directory)
            found += sum(1 for name in os.listdir(directory) if name.endswith(".gtb.cp4"))
        if found:
            self.gaviota = tables
            notes.append(f"Gaviota: {found} tables")
        elif split_paths(text):
            notes.append("GaviotaTbPath: no Gaviota tables (.gtb.cp4) found")
        return notes

    @property
    def max_pieces(self) -> int:
        """Positions with at most this many pieces may be probed in the tree (0: none)."""
        return min(self.probe_limit, self.syzygy_pieces)

    def _in_tables(self, board: chess.Board) -> bool:
        pieces = board.occupied.bit_count()
        return pieces <= self.max_pieces and not board.castling_rights

    def wdl(self, board: chess.Board) -> Optional[int]:
        """-2..2 (loss, blessed loss, draw, cursed win, win) for the side to move, or None."""
        if self.syzygy is None or not self._in_tables(board):
            return None
        value = self.syzygy.get_wdl(board)
        if value is not None:
            self.hits += 1
        return value

    def root(self, board: chess.Board) -> Optional[RootProbe]:
        """The tables' verdict at the root (see the module docstring), or None."""
        if self.syzygy is None or not self._in_tables(board):
            return None
        ranked = []
        for move in board.legal_moves:
            zeroing = board.is_zeroing(move)
            board.push(move)
            try:
                wdl = self.syzygy.get_wdl(board)
                dtz = self.syzygy.get_dtz(board) if wdl is not None else None
                dtm = self.gaviota.get_dtm(board) if self.gaviota is not None else None
            finally:
                board.pop()
            if wdl is None or dtz is None:
                return None  # a table is missing: let the search decide
            self.hits += 1
            value = -wdl
            # A win that the fifty-move rule would turn into a draw is a draw.
            if value == 2 and not zeroing and abs(dtz) + board.halfmove_clock + 1 > 100:
                value = 1
            ranked.append((move, value, 0 if zeroing else abs(dtz), dtm))
        if not ranked:
            return None
        best = max(value for _, value, _, _ in ranked)
        keep = [entry for entry in ranked if entry[1] == best]
        if best == 2:
            move, _, distance, dtm = min(keep, key=_progress)
            if dtm is not None:
                return RootProbe(move, [move], MATE - (abs(dtm) + 1))
            return RootProbe(move, [move], TB_WIN_CP - distance - 1)
        if best == -2:
            move, _, distance, dtm = max(keep, key=_progress)
            if dtm is not None:
                return RootProbe(move, [move], -(MATE - (abs(dtm) + 1)))
            return RootProbe(move, [move], -(TB_WIN_CP - distance - 1))
        return RootProbe(None, [move for move, _, _, _ in keep], 0)


def _progress(entry: tuple[chess.Move, int, int, Optional[int]]) -> tuple[int, int]:
    """Sort key: distance to mate when known, then distance to the next zeroing move."""
    _, _, distance, dtm = entry
    return (abs(dtm) if dtm is not None else 0, distance)
