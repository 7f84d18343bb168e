"""engine.core.limits: parsing ``go`` in any order, with hostile values."""

from __future__ import annotations

from engine.core.limits import parse_go


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
    assert limits.nodes is None and len(warnings) == 1  # 1e400 is inf
    assert limits.depth == 10**15  # clamped, never a giant int downstream


def test_own_clock_and_unbounded() -> None:
    limits, _ = parse_go(["btime", "100"])
    assert limits.own_time_ms(white_to_move=True) == 0  # missing own clock counts as zero
    assert limits.own_time_ms(white_to_move=False) == 100
    assert parse_go([])[0].is_unbounded()
    assert parse_go(["infinite", "depth", "3"])[0].is_unbounded()
    assert not parse_go(["depth", "3"])[0].is_unbounded()
    assert parse_go(["winc", "100"])[0].own_time_ms(True) is None
