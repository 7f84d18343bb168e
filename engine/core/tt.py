"""Bounded transposition table: a fixed number of slots derived from a size in MB.

One flat table of 64-bit words holds two words per slot: a check word, the
position's 64-bit Zobrist key XOR its data word with bit 63 cleared, then the data
word:

    bits  0-15  score + 32768 (mate scores stored relative to the node: score.py)
    bits 16-31  best move code (``from | to << 6 | promotion << 12``; 0 = none)
    bits 32-39  depth in plies (0-255)
    bits 40-41  bound: 1 upper (fail low), 2 lower (fail high), 3 exact
    bits 42-49  age: the search generation that wrote the slot

A slot is valid for a key only when check XOR data equals the key's low 63 bits
(bit 63 is left out so that every word fits a signed 64-bit integer: the compiled
search reads them as native ``i64``, and its keys are the search board's signed ones;
the slot is that of the key read unsigned). Several
processes may share one table without locks (engine.play.smp puts it in shared
memory): a slot written by one while another reads it is seen with a check
word and a data word from different writes, which fails the test and is
ignored, never used.

That is 16 bytes per slot with no per-entry Python objects, so the memory used
is what the ``Hash`` option says (measured: see tests/test_tt.py and the
README). Replacement: a slot holding another position is overwritten when it
was written by an older search or at a depth no greater than the new one.
This module must not know about boards or moves beyond the integer codes.
"""

from __future__ import annotations

import ctypes
from array import array
from typing import TYPE_CHECKING, Final, Optional, Union

if TYPE_CHECKING:
    # Only mypyc needs the type (native 64-bit integers); at run time the annotations
    # are strings.
    from mypy_extensions import i64

Words = Union["array[int]", memoryview]
"""A table's storage: an ``array('Q')``, or shared memory cast to ``'Q'``."""

BYTES_PER_ENTRY: Final = 16
WORD_BYTES: Final = 8
BOUND_UPPER: Final = 1
BOUND_LOWER: Final = 2
BOUND_EXACT: Final = 3

_SCORE_OFFSET: Final = 32768
_AGE_MASK: Final = 0xFF
_LOW_63: Final = 0x7FFFFFFFFFFFFFFF
_SIGN: Final = 1 << 63
_WORD_RANGE: Final = 1 << 64


def signed_key(key: int) -> int:
    """A Zobrist key as python-chess gives it (unsigned) in the search board's signed
    form, as the ``*_native`` methods take it."""
    return key - _WORD_RANGE if key >= _SIGN else key


def entries_for(size_mb: int) -> int:
    """Number of slots that fit in ``size_mb`` megabytes (at least one)."""
    return max(1, size_mb * 1024 * 1024 // BYTES_PER_ENTRY)


def zero_words(words: Words) -> None:
    """Set every word of a writable 64-bit buffer (array or memoryview) to zero."""
    size = len(words) * WORD_BYTES
    if size:
        ctypes.memset(ctypes.addressof((ctypes.c_char * size).from_buffer(words)), 0, size)


class TranspositionTable:
    """Fixed-capacity hash table of search results, keyed by Zobrist key.

    ``words`` (optional) is the table's storage, two words per slot, for a table
    shared between processes (a memoryview of shared memory cast to ``'Q'``); by
    default the table owns an ``array('Q')``.
    """

    def __init__(self, size_mb: int = 16, words: Optional[Words] = None) -> None:
        self.size_mb = size_mb
        self.age = 0
        self.words: Words = array("Q")
        self.count: i64 = 1
        self._wrap: i64 = 0
        if words is None:
            self._allocate(entries_for(size_mb))
        else:
            self.use(words)

    def _allocate(self, count: int) -> None:
        # Drop the old table first so that a resize never holds both at once.
        self.words = array("Q")
        self._set_count(count)
        self.words = array("Q", bytes(BYTES_PER_ENTRY * count))

    def _set_count(self, count: int) -> None:
        self.count = count
        # A negative (signed) key's slot: its unsigned value is key + 2**64.
        self._wrap = _WORD_RANGE % count

    def use(self, words: Words) -> None:
        """Take ``words`` (two per slot, zeroed or shared) as the table's storage."""
        self.words = words
        self._set_count(max(1, len(words) // 2))

    def resize(self, size_mb: int) -> None:
        """Reallocate for a new size; all entries are lost."""
        self.size_mb = size_mb
        self._allocate(entries_for(size_mb))

    def clear(self) -> None:
        """Forget every entry, keeping the size.

        The table is zeroed in place (a memset, about a millisecond for 16 MB):
        batch analysis clears before every position, and allocating it afresh
        costs some 25 ms.
        """
        zero_words(self.words)
        self.age = 0

    def new_search(self) -> None:
        """Start a new generation, so entries of earlier searches age out first."""
        self.age = (self.age + 1) & _AGE_MASK

    def probe(self, key: int) -> Optional[tuple[int, int, int, int]]:
        """``(move code, depth, bound, score)`` stored for ``key`` (unsigned, as
        python-chess's ``zobrist_hash``), or None. The search calls ``probe_native``.

        The score is node-relative, as stored (``score_from_tt`` turns it back).
        """
        entry = self.probe_native(signed_key(key))
        return None if not entry[2] else (entry[0], entry[1], entry[2], entry[3])

    def store(self, key: int, depth: int, bound: int, score: int, move_code: int) -> None:
        """Record a result for ``key`` (unsigned); the search calls ``store_native``."""
        self.store_native(signed_key(key), depth, bound, score, move_code)

    def _slot(self, key: i64) -> i64:
        """The first word of ``key``'s slot: the slot of the key read unsigned."""
        count = self.count
        index: i64 = key % count
        if key < 0:
            index = (index + self._wrap) % count
        return index << 1

    def probe_native(self, key: i64) -> tuple[i64, i64, i64, i64]:
        """``(move code, depth, bound, score)`` stored for the search board's ``key``,
        bound 0 when there is none. (A tuple of native ints: no object compiled.)"""
        words = self.words
        # self._slot(key), inlined (a call per probe costs the interpreted search).
        count = self.count
        index: i64 = key % count
        if key < 0:
            index = (index + self._wrap) % count
        index <<= 1
        word: i64 = words[index + 1]
        if word:
            check: i64 = words[index]
            if check ^ word == key & _LOW_63:
                return (
                    (word >> 16) & 0xFFFF,
                    (word >> 32) & 0xFF,
                    (word >> 40) & 3,
                    (word & 0xFFFF) - _SCORE_OFFSET,
                )
        return (0, 0, 0, 0)

    def store_native(self, key: i64, depth: i64, bound: i64, score: i64, move_code: i64) -> None:
        """Record a result for the search board's ``key``; ``score`` must already be
        node-relative (score_to_tt)."""
        words = self.words
        count = self.count
        index: i64 = key % count
        if key < 0:
            index = (index + self._wrap) % count
        index <<= 1
        old: i64 = words[index + 1]
        if old:
            check: i64 = words[index]
            if check ^ old == key & _LOW_63:
                if not move_code:
                    # Keep the best move of an earlier search of this position.
                    move_code = (old >> 16) & 0xFFFF
            elif ((old >> 42) & _AGE_MASK) == self.age and ((old >> 32) & 0xFF) > depth:
                return
        if depth < 0:
            depth = 0
        if depth > 255:
            depth = 255
        age: i64 = self.age
        word: i64 = (
            (score + _SCORE_OFFSET)
            | (move_code << 16)
            | (depth << 32)
            | (bound << 40)
            | (age << 42)
        )
        words[index + 1] = word
        words[index] = (key ^ word) & _LOW_63

    def hashfull(self) -> int:
        """Permille of the first 1000 slots written by the current search."""
        sample = min(1000, self.count)
        age = self.age
        words = self.words
        used = 0
        for i in range(1, 2 * sample, 2):
            word = words[i]
            if word and ((word >> 42) & _AGE_MASK) == age:
                used += 1
        return used * 1000 // sample
