"""engine.core.limits: parsing ``go`` in any order, with hostile values."""

from __future__ import annotations

import pytest

from engine.core.limits import DEFAULT_MOVETIME_MS, parse_go


def test_every_token_any_order() -> None:
    tokens = [
        *("movestogo", "7", "binc", "20", "winc", "10", "btime", "2000", "wtime", "1000"),
        *("depth", "5", "nodes", "900", "mate", "3", "movetime", "400", "ponder", "infinite"),
        *("searchmoves", "e2e4", "D2D4"),
    ]
    limits, warnings = parse_go(tokens)
    assert warnings == []
    assert (limits.wtime_ms, limits.btime_ms, limits.winc_ms, limits.binc_ms) == (
        1000,
        2000,
        10,
        20,
    )
    assert (limits.movestogo, limits.depth, limits.nodes, limits.mate) == (7, 5, 900, 3)
    assert limits.movetime_ms == 400 and limits.ponder and limits.infinite
    assert limits.searchmoves == ["e2e4", "d2d4"]


def test_searchmoves_stops_at_keyword_and_perft() -> None:
    limits, _ = parse_go(["searchmoves", "a2a3", "h2h3", "depth", "3"])
    assert limits.searchmoves == ["a2a3", "h2h3"] and limits.depth == 3
    limits, _ = parse_go(["perft", "4"])
    assert limits.perft == 4


def test_bad_values_warn_and_are_skipped() -> None:
    limits, warnings = parse_go(["depth", "x", "wtime", "nodes", "10", "movetime"])
    assert limits.depth is None and limits.wtime_ms is None and limits.nodes == 10
    assert len(warnings) == 3


def test_negative_float_huge_and_unknown() -> None:
    limits, warnings = parse_go(
        ["wtime", "-300", "btime", "1000.7", "nodes", "1e400", "depth", "9" * 20, "joho"]
    )
    assert limits.wtime_ms == -300 and limits.btime_ms == 1000
    assert limits.nodes is None and len(warnings) == 2  # 1e400 is inf; joho is unknown
    assert "unknown 'joho'" in warnings[1]
    assert limits.depth == 10**15  # clamped, never a giant int downstream


def test_own_clock_and_unbounded() -> None:
    limits, _ = parse_go(["btime", "100"])
    assert limits.own_time_ms(white_to_move=True) == 0  # missing own clock counts as zero
    assert limits.own_time_ms(white_to_move=False) == 100
    assert parse_go([])[0].is_unbounded()
    assert parse_go(["infinite", "depth", "3"])[0].is_unbounded()
    assert not parse_go(["depth", "3"])[0].is_unbounded()
    assert parse_go(["winc", "100"])[0].own_time_ms(True) is None


@pytest.mark.parametrize(
    "line", ["depth 0", "depth -2", "nodes 0", "nodes -5", "mate 0", "mate -3", "movetime -1"]
)
def test_impossible_limits_are_skipped(line: str) -> None:
    """a limit below its least value is reported and dropped; the go then gets the
    default movetime rather than searching until stop."""
    limits, warnings = parse_go(line.split())
    token = line.split()[0]
    assert getattr(limits, "movetime_ms" if token == "movetime" else token) != int(line.split()[1])
    assert limits.movetime_ms == DEFAULT_MOVETIME_MS and not limits.is_unbounded()
    assert len(warnings) == 2 and line in warnings[0] and "no limit left" in warnings[1]


@pytest.mark.parametrize(
    ("line", "bounded"),
    [
        ("", False),
        ("ponder", False),
        ("searchmoves e2e4", False),
        ("infinite depth abc", False),
        ("depth abc", True),
        ("joho", True),
        ("winc 100 movestogo 5", True),
        ("perft abc", True),
    ],
)
def test_default_bound_only_when_a_limit_was_meant(line: str, bounded: bool) -> None:
    """bare go, go ponder, go searchmoves and go infinite still wait for stop; a go
    whose limits were all skipped (or unusable alone) gets the default movetime."""
    limits, _ = parse_go(line.split())
    assert limits.is_unbounded() != bounded
    assert (limits.movetime_ms == DEFAULT_MOVETIME_MS) == bounded


def test_valid_limits_are_kept_as_given() -> None:
    limits, warnings = parse_go(["movetime", "0", "perft", "0", "wtime", "-50", "movestogo", "0"])
    assert warnings == [] and limits.movetime_ms == 0 and limits.perft == 0
    assert limits.wtime_ms == -50 and limits.movestogo == 0
