"""Transposition table: packing, mate-score adjustment, replacement, real memory."""

from __future__ import annotations

import random
import subprocess
import sys

import pytest

from engine.core.score import MATE, score_from_tt, score_to_tt
from engine.core.tt import (
    BOUND_EXACT,
    BOUND_LOWER,
    TranspositionTable,
    entries_for,
    signed_key,
)


def test_store_and_probe_round_trip() -> None:
    tt = TranspositionTable(1)
    key = 0xFEDCBA9876543210
    tt.store(key, 7, BOUND_LOWER, -1234, 0x1ABC)
    assert tt.probe(key) == (0x1ABC, 7, BOUND_LOWER, -1234)
    assert tt.probe(key ^ 1) is None
    # Extremes of every field survive the packing.
    tt.store(key, 255, BOUND_EXACT, -32768, 0xFFFF)
    assert tt.probe(key) == (0xFFFF, 255, BOUND_EXACT, -32768)
    tt.store(key, 0, BOUND_LOWER, 32767, 0)
    assert tt.probe(key) == (0xFFFF, 0, BOUND_LOWER, 32767)  # the move is kept


@pytest.mark.parametrize("size_mb", [1, 3, 16])
def test_signed_keys_find_the_slots_of_unsigned_ones(size_mb: int) -> None:
    """The search's keys are the native board's (signed when compiled): the same slot
    and entry as python-chess's unsigned key, whatever the table's size (3 MB is not
    a power of two of slots)."""
    tt = TranspositionTable(size_mb)
    rng = random.Random(size_mb)
    keys = [rng.getrandbits(64) for _ in range(300)] + [1 << 63, (1 << 64) - 1, 0, 1]
    for key in keys:
        signed = signed_key(key)
        assert -(1 << 63) <= signed < 1 << 63 and signed % (1 << 64) == key
        assert tt._slot(signed) == (key % tt.count) << 1
        tt.store_native(signed, 9, BOUND_EXACT, 77, 0x0123)
        assert tt.probe(key) == (0x0123, 9, BOUND_EXACT, 77)
        assert tt.probe_native(signed) == (0x0123, 9, BOUND_EXACT, 77)
        # Every word fits a signed 64-bit integer (the compiled search reads i64).
        slot = tt._slot(signed)
        assert all(0 <= tt.words[slot + i] < 1 << 63 for i in (0, 1))
        if key ^ 1 not in keys:
            assert tt.probe_native(signed ^ 1) == (0, 0, 0, 0)


def test_mate_scores_are_stored_relative_to_the_node() -> None:
    # Mate in 3 plies from a node at ply 5 is mate in 8 plies from the root.
    root_score = MATE - 8
    stored = score_to_tt(root_score, 5)
    assert stored == MATE - 3
    assert score_from_tt(stored, 5) == root_score
    # Found again at ply 9 through a transposition: mate in 12 plies from the root.
    assert score_from_tt(stored, 9) == MATE - 12
    assert score_from_tt(score_to_tt(-(MATE - 8), 5), 5) == -(MATE - 8)


def test_replacement_prefers_depth_then_age() -> None:
    tt = TranspositionTable(1)
    count = tt.count
    deep, shallow = 5, 5 + count  # same slot, different keys
    tt.store(deep, 10, BOUND_EXACT, 50, 1)
    tt.store(shallow, 3, BOUND_EXACT, 60, 2)
    assert tt.probe(deep) and not tt.probe(shallow)
    tt.new_search()
    tt.store(shallow, 3, BOUND_EXACT, 60, 2)
    assert tt.probe(shallow) and not tt.probe(deep)
    # The same position keeps its move when a new result has none.
    tt.store(shallow, 4, BOUND_LOWER, 70, 0)
    entry = tt.probe(shallow)
    assert entry is not None and entry[0] == 2


def test_hashfull_and_clear() -> None:
    tt = TranspositionTable(1)
    assert tt.hashfull() == 0
    for key in range(0, tt.count, 2):
        tt.store(key, 1, BOUND_EXACT, 0, 0)
    assert 490 <= tt.hashfull() <= 510
    tt.clear()
    assert tt.hashfull() == 0
    tt.resize(2)
    assert tt.count == entries_for(2) == 2 * 1024 * 1024 // 16


_RSS_SCRIPT = """
import sys
from engine.core.tt import TranspositionTable
def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096
before = rss()
tt = TranspositionTable(int(sys.argv[1]))
print(rss() - before)
"""


@pytest.mark.parametrize("size_mb", [16, 64, 256])
def test_memory_matches_the_setting(size_mb: int) -> None:
    try:
        open("/proc/self/statm").close()
    except OSError:
        pytest.skip("no /proc: cannot read the resident set size")
    done = subprocess.run(
        [sys.executable, "-c", _RSS_SCRIPT, str(size_mb)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    extra = int(done.stdout.strip())
    setting = size_mb * 1024 * 1024
    print(f"\nHash {size_mb} MB: extra resident memory {extra / 1024 / 1024:.1f} MB")
    assert abs(extra - setting) <= 0.10 * setting
