"""The opening book: moves from a Polyglot ``.bin`` file, read with ``chess.polyglot``.

A Polyglot book is a sorted array of 16-byte entries (Zobrist key, move, weight,
learn). ``OpeningBook.open`` checks that a file is one (not empty, a whole number of
entries, keys in order), so that a wrong or damaged file is refused with one
reason instead of answering nonsense. ``choose`` returns the book's move for a
position: the one with the highest weight, or (``variety``) a random one with
probability proportional to the weights, as GUIs' own books do; None when the
position is not in the book. The moves are legal (python-chess skips any that is
not). This module must not search or print; the controller decides when to ask.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Optional

import chess
import chess.polyglot

ENTRY_BYTES = 16
CHECKED_ENTRIES = 100_000
"""Entries whose key order is checked on opening (a huge book is checked in part)."""


class BookError(ValueError):
    """A book file that cannot be used; the message says why, in one line."""


class OpeningBook:
    """An open Polyglot book."""

    def __init__(self, path: Path, reader: chess.polyglot.MemoryMappedReader) -> None:
        self.path = path
        self._reader = reader
        self._random = random.Random()

    @classmethod
    def open(cls, path: str) -> OpeningBook:
        """The book at ``path``; BookError when it is missing, unreadable or damaged."""
        file = Path(path).expanduser()
        try:
            size = file.stat().st_size
        except OSError as exc:
            raise BookError(f"cannot read {path}: {exc.strerror or exc}") from None
        if not file.is_file():
            raise BookError(f"{path} is not a file")
        if size == 0 or size % ENTRY_BYTES:
            raise BookError(f"{path} is not a Polyglot book ({size} bytes)")
        try:
            reader = chess.polyglot.open_reader(file)
        except (OSError, ValueError) as exc:
            raise BookError(f"cannot read {path}: {exc}") from None
        previous = -1
        for index in range(min(len(reader), CHECKED_ENTRIES)):
            key = reader[index].key
            if key < previous:
                reader.close()
                raise BookError(f"{path} is not a Polyglot book (entries out of order)")
            previous = key
        return cls(file, reader)

    def choose(self, board: chess.Board, variety: bool) -> Optional[chess.Move]:
        """The book move for ``board``, or None when the book has none."""
        try:
            if variety:
                return self._reader.weighted_choice(board, random=self._random).move
            return self._reader.find(board).move
        except IndexError:  # python-chess's "not in the book"
            return None

    def close(self) -> None:
        self._reader.close()
