"""Bounded transposition table: a fixed number of slots derived from a size in MB.

Two ``array('Q')`` tables hold, per slot, the full 64-bit key (the key check)
and one packed 64-bit word:

    bits  0-15  score + 32768 (mate scores stored relative to the node: score.py)
    bits 16-31  best move code (``from | to << 6 | promotion << 12``; 0 = none)
    bits 32-39  depth in plies (0-255)
    bits 40-41  bound: 1 upper (fail low), 2 lower (fail high), 3 exact
    bits 42-49  age: the search generation that wrote the slot

That is 16 bytes per slot with no per-entry Python objects, so the memory used
is what the ``Hash`` option says (measured: see tests/test_tt.py and the
README). Replacement: a slot holding another position is overwritten when it
was written by an older search or at a depth no greater than the new one.
This module must not know about boards or moves beyond the integer codes.
"""

from __future__ import annotations

from array import array
from typing import Optional

BYTES_PER_ENTRY = 16
BOUND_UPPER = 1
BOUND_LOWER = 2
BOUND_EXACT = 3

_SCORE_OFFSET = 32768
_AGE_MASK = 0xFF


def entries_for(size_mb: int) -> int:
    """Number of slots that fit in ``size_mb`` megabytes (at least one)."""
    return max(1, size_mb * 1024 * 1024 // BYTES_PER_ENTRY)


class TranspositionTable:
    """Fixed-capacity hash table of search results, keyed by Zobrist key."""

    def __init__(self, size_mb: int = 16) -> None:
        self.size_mb = size_mb
        self.age = 0
        self._allocate(entries_for(size_mb))

    def _allocate(self, count: int) -> None:
        # Drop the old arrays first so that a resize never holds both at once.
        self.keys = array("Q")
        self.data = array("Q")
        self.count = count
        self.keys = array("Q", bytes(8 * count))
        self.data = array("Q", bytes(8 * count))

    def resize(self, size_mb: int) -> None:
        """Reallocate for a new size; all entries are lost."""
        self.size_mb = size_mb
        self._allocate(entries_for(size_mb))

    def clear(self) -> None:
        """Forget every entry, keeping the size.

        The tables are zeroed in place (a memset, about a millisecond for 16 MB):
        batch analysis clears before every position, and allocating them afresh
        costs some 25 ms.
        """
        import ctypes

        for table in (self.keys, self.data):
            address, length = table.buffer_info()
            ctypes.memset(address, 0, length * table.itemsize)
        self.age = 0

    def new_search(self) -> None:
        """Start a new generation, so entries of earlier searches age out first."""
        self.age = (self.age + 1) & _AGE_MASK

    def probe(self, key: int) -> Optional[tuple[int, int, int, int]]:
        """``(move code, depth, bound, score)`` stored for ``key``, or None.

        The score is node-relative, as stored (``score_from_tt`` turns it back).
        """
        index = key % self.count
        if self.keys[index] == key:
            word = self.data[index]
            if word:
                return (
                    (word >> 16) & 0xFFFF,
                    (word >> 32) & 0xFF,
                    (word >> 40) & 3,
                    (word & 0xFFFF) - _SCORE_OFFSET,
                )
        return None

    def store(self, key: int, depth: int, bound: int, score: int, move_code: int) -> None:
        """Record a result; ``score`` must already be node-relative (score_to_tt)."""
        index = key % self.count
        old = self.data[index]
        if old:
            if self.keys[index] == key:
                if not move_code:
                    # Keep the best move of an earlier search of this position.
                    move_code = (old >> 16) & 0xFFFF
            elif ((old >> 42) & _AGE_MASK) == self.age and ((old >> 32) & 0xFF) > depth:
                return
        if depth < 0:
            depth = 0
        self.keys[index] = key
        self.data[index] = (
            (score + _SCORE_OFFSET)
            | (move_code << 16)
            | (min(depth, 255) << 32)
            | (bound << 40)
            | (self.age << 42)
        )

    def hashfull(self) -> int:
        """Permille of the first 1000 slots written by the current search."""
        sample = min(1000, self.count)
        age = self.age
        data = self.data
        used = 0
        for i in range(sample):
            word = data[i]
            if word and ((word >> 42) & _AGE_MASK) == age:
                used += 1
        return used * 1000 // sample
