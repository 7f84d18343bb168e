"""Static evaluation, in centipawns from the side to move's point of view.

A tapered evaluation: material and piece-square tables (kept incrementally by
``Position``), pawn structure (passers free, blocked or with a rook behind them),
mobility, king safety (safe checks, weak zone squares, shelter and storming
pawns), outposts, bad bishops and the bishop pair, rooks and queens on open files
and the seventh rank, space, the king's distance to the pawns, threats (by pawns,
minor pieces and rooks) and hanging pieces, tempo, and scaling of drawish
endings. It computes exactly ``weights x features`` as defined in
``engine.core.features`` (the tests hold the two equal), but fast: pawn-structure
and king-shelter terms are cached by the pawns and king squares (with what
else the evaluation needs of the pawns alone), whole evaluations by the Zobrist
key, and the per-piece terms are summed in one pass over bitboards without
building a feature vector, each piece's attack lookup taken from a table keyed
by the bitboard of its kind (a pure function of the board, filled at import).

``Evaluator`` owns the caches (one per searcher: no global search state);
its ``evaluate(pos)`` scores a ``Position`` and ``evaluate_board(board)`` the native
search board (engine.core.board). Interpreted, both run one body over Python ints
(``_evaluate``: dicts of per-piece tuples and python-chess's attack tables, the
fastest form for CPython); compiled, ``evaluate_board`` runs ``_evaluate_native``,
the same terms in mypyc's native 64-bit integers over the board's own tables (1.8x
the compiled bench's nodes/s of the first body). Tests hold the bodies equal over
random games in either build; ``evaluate(board)`` is the from-scratch
form for tools and tests, and ``evaluation_report(board)`` the term-by-term table of
the UCI ``eval`` command. This module must not search, and the search must not call
``evaluate(board)`` per node.
"""

from __future__ import annotations

import types
from typing import TYPE_CHECKING, Callable, Final, TypeVar

import chess

from engine.core.board import WHITE, Board, _bb, _lsb, _popcount, _u64, bishop_attacks, rook_attacks
from engine.core.features import (
    DISTANCE,
    FRONT,
    KING_ZONE,
    MAX_PHASE,
    NEAR_FILE_BITS,
    OFFSET,
    OUTPOST_RANKS,
    RINGS,
    SCALE_NORMAL,
    SIZE,
    SPACE_AREA,
    STORM,
    evaluate_features,
    file_set,
    game_phase,
    king_shelter,
    nearest_pawn,
    outposts,
    pawn_attacks,
    pawn_structure,
    scale_factors_bits,
    space,
    term_breakdown,
)
from engine.core.position import Position
from engine.core.weights import EG_WEIGHTS, MG_WEIGHTS

if TYPE_CHECKING:
    # Only mypyc needs the type (native 64-bit integers); at run time the annotations
    # are strings, so the interpreted engine does not depend on mypy_extensions.
    from mypy_extensions import i64

EVAL_CACHE_BITS: Final = 16
"""Evaluations cached by key: 65,536 slots (about 1 MB), always replaced."""
PAWN_CACHE_LIMIT: Final = 1 << 16
"""Entries kept in each pawn cache before it is cleared (a bound on memory)."""
PIECE_SETS_LIMIT: Final = 1 << 14
"""Bitboards remembered by each ``_PerPiece`` table (a bound on memory)."""


_PACK_SHIFT: Final = 16
_PACK_HALF: Final = 1 << (_PACK_SHIFT - 1)
_PACK_MASK: Final = (1 << _PACK_SHIFT) - 1


def _pack(mg: int, eg: int) -> int:
    """One int holding both phases, ``mg + eg * 2**16``: one addition per term.

    Sums stay exact while the middlegame part stays within +-32767 cp.
    """
    return mg + (eg << _PACK_SHIFT)


def _block(name: str) -> tuple[int, ...]:
    """A block of weights, packed."""
    start, size = OFFSET[name], SIZE[name]
    return tuple(_pack(MG_WEIGHTS[i], EG_WEIGHTS[i]) for i in range(start, start + size))


_PASSED: Final = _block("passed")
_BLOCKED: Final = _block("passed_blocked")
_KING_DISTANCE: Final = _block("passed_king_distance")
_CONNECTED: Final = _block("connected")
(_ISOLATED,) = _block("isolated")
(_DOUBLED,) = _block("doubled")
(_BACKWARD,) = _block("backward")
_MOB_N: Final = _block("mobility_knight")
_MOB_B: Final = _block("mobility_bishop")
_MOB_R: Final = _block("mobility_rook")
_MOB_Q: Final = _block("mobility_queen")
_ZONE_N, _ZONE_B, _ZONE_R, _ZONE_Q = _block("king_zone_attacks")
_ATTACKERS: Final = _block("king_attackers")
_SHIELD_1, _SHIELD_2 = _block("king_shield")
_SEMI_OPEN_KING, _OPEN_KING = _block("king_open_files")
(_PAIR,) = _block("bishop_pair")
(_ROOK_OPEN,) = _block("rook_open_file")
(_ROOK_SEMI,) = _block("rook_semi_open_file")
(_ROOK_7TH,) = _block("rook_seventh")
(_QUEEN_OPEN,) = _block("queen_open_file")
(_QUEEN_SEMI,) = _block("queen_semi_open_file")
(_QUEEN_7TH,) = _block("queen_seventh")
_ROOK_LINE_TERMS: Final = (_ROOK_OPEN, _ROOK_SEMI, _ROOK_7TH)
_QUEEN_LINE_TERMS: Final = (_QUEEN_OPEN, _QUEEN_SEMI, _QUEEN_7TH)


def _line_terms(
    pieces: int, open_files: int, half_open: int, seventh: int, weights: tuple[int, int, int]
) -> int:
    """Open file, half-open file and seventh-rank terms of rooks or queens (packed).

    Called only when one of ``pieces`` stands on such a square (rare enough that
    the call costs less than the terms are worth inlined twice).
    """
    return (
        (pieces & open_files).bit_count() * weights[0]
        + (pieces & half_open).bit_count() * weights[1]
        + (pieces & seventh).bit_count() * weights[2]
    )


(_THREAT,) = _block("pawn_threat")
(_MINOR_THREAT,) = _block("minor_threat")
(_ROOK_THREAT,) = _block("rook_threat")
(_HANGING,) = _block("hanging")
_CHECK_N, _CHECK_B, _CHECK_R, _CHECK_Q = _block("safe_checks")
(_TEMPO,) = _block("tempo")
_OUTPOST_N, _OUTPOST_B = _block("outpost")
_FREE: Final = _block("passed_free")
(_ROOK_BEHIND,) = _block("rook_behind_passer")
(_BAD_BISHOP,) = _block("bad_bishop")
(_KING_PAWN,) = _block("king_pawn_distance")
_STORM: Final = _block("pawn_storm")
(_SPACE,) = _block("space")
(_MINOR_ON_MINOR,) = _block("minor_on_minor")
(_WEAK_ZONE,) = _block("weak_zone")

_DISTANCE: Final = DISTANCE
_BB_RANK_7: Final = chess.BB_RANK_7
_BB_RANK_2: Final = chess.BB_RANK_2
_BB_ALL: Final = chess.BB_ALL
_BB_LIGHT: Final = chess.BB_LIGHT_SQUARES
_BB_DARK: Final = chess.BB_DARK_SQUARES
_FRONT_WHITE: Final = FRONT[chess.WHITE]
_FRONT_BLACK: Final = FRONT[chess.BLACK]
_DIAG: Final = [(chess.BB_DIAG_ATTACKS[sq], chess.BB_DIAG_MASKS[sq]) for sq in range(64)]
_RANK: Final = [(chess.BB_RANK_ATTACKS[sq], chess.BB_RANK_MASKS[sq]) for sq in range(64)]
_FILE: Final = [(chess.BB_FILE_ATTACKS[sq], chess.BB_FILE_MASKS[sq]) for sq in range(64)]
_KNIGHT_ATTACKS: Final = chess.BB_KNIGHT_ATTACKS
_KING_ATTACKS: Final = chess.BB_KING_ATTACKS

_T = TypeVar("_T")


class _PerPiece(dict[int, tuple[_T, ...]]):
    """For a bitboard of pieces, one item per piece (what its attacks are looked up by).

    A loop over a tuple costs a third of finding each piece's square in the bitboard.
    Every bitboard of up to two pieces is filled in at import (2,081 keys); more
    pieces of a kind, which only promotions bring, are added when first seen.
    """

    def __init__(self, item: Callable[[int], _T]) -> None:
        super().__init__()
        self._item = item
        self[0] = ()
        for first in range(64):
            self[1 << first] = (item(first),)
            for second in range(first + 1, 64):
                self[1 << first | 1 << second] = (item(first), item(second))

    def __missing__(self, bb: int) -> tuple[_T, ...]:
        items = tuple(self._item(square) for square in chess.scan_forward(bb))
        if len(self) < PIECE_SETS_LIMIT:
            self[bb] = items
        return items


_KNIGHTS: Final = _PerPiece(lambda sq: ((chess.BB_KNIGHT_ATTACKS[sq],), 0, _MOB_N, _ZONE_N, 0))
"""(attack table, occupancy mask, mobility weights, king-zone weight, kind) per knight;
the table has one entry, since a knight's attacks do not depend on the occupancy. The
kind (N, B, R, Q = 0-3) says which of the side's attack sets the piece adds to."""
_BISHOPS: Final = _PerPiece(lambda sq: (*_DIAG[sq], _MOB_B, _ZONE_B, 1))
"""(attack table, occupancy mask, mobility weights, king-zone weight, kind) per bishop."""
_NO_DIAGONAL: Final = ((0,), 0)
"""A diagonal table that attacks nothing, whatever the occupancy (for rooks)."""
_ROOKS: Final = _PerPiece(lambda sq: (*_NO_DIAGONAL, *_RANK[sq], *_FILE[sq], _MOB_R, _ZONE_R, 2))
"""(diagonal, rank and file tables, each with its mask, mobility weights, king-zone
weight, kind) per rook; the diagonal part attacks nothing."""
_QUEENS: Final = _PerPiece(lambda sq: (*_DIAG[sq], *_RANK[sq], *_FILE[sq], _MOB_Q, _ZONE_Q, 3))
"""(diagonal, rank and file tables, each with its mask, mobility weights, king-zone
weight, kind) per queen."""


def _by_square(block: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """A by-relative-rank block spread over the squares: [colour][square]."""
    return (
        tuple(block[7 - (square >> 3)] for square in range(64)),
        tuple(block[square >> 3] for square in range(64)),
    )


_ALL_RANKS: Final = 0x0101010101010101
"""Multiplying an 8-bit set of files by this gives the files' squares."""
_PASSED_AT: Final = _by_square(_PASSED)
_CONNECTED_AT: Final = _by_square(_CONNECTED)


_PawnEntry = tuple[
    int, int, int, int, int, int, int, int, int, int, int, int, int, int, int, int, int, int
]
"""What the evaluation needs of the pawns alone (and, in the pawn-king cache, of
the kings' shelter, the pawns storming them and their distance to the pawns),
computed once per pawn structure:

(packed score, White's passers, Black's passers, squares White's pawns attack,
squares Black's pawns attack, open files, files half open for White, for Black,
squares safe from enemy pawns for White, for Black, squares where a White rook
or queen scores for its file or rank, where a Black one does, White's outposts,
Black's outposts, then the packed bad-bishop term of one bishop on a light and on
a dark square, White's, then Black's). Files are whole-file bitboards. The four
fields after the eighth follow from the others, but looking them up instead of
deriving them at every evaluation is worth about 1.3 points of the nodes/s ratio to
the PeSTO-only build (8 rounds of compare_nps.py); the last six depend on the pawns
alone, so they are computed here once per pawn structure."""


def _pawn_terms(white_pawns: int, black_pawns: int) -> _PawnEntry:
    """The pawn-structure terms and file sets of a pawn structure (see ``_PawnEntry``)."""
    score = 0
    passers = [0, 0]
    for color, own, theirs in (
        (chess.WHITE, white_pawns, black_pawns),
        (chess.BLACK, black_pawns, white_pawns),
    ):
        passed, connected, isolated, doubled, backward = pawn_structure(own, theirs, color)
        passers[color] = passed
        part = (
            isolated.bit_count() * _ISOLATED
            + doubled.bit_count() * _DOUBLED
            + backward.bit_count() * _BACKWARD
        )
        passed_at = _PASSED_AT[color]
        while passed:
            low = passed & -passed
            passed ^= low
            part += passed_at[low.bit_length() - 1]
        connected_at = _CONNECTED_AT[color]
        while connected:
            low = connected & -connected
            connected ^= low
            part += connected_at[low.bit_length() - 1]
        part += space(own, theirs, color).bit_count() * _SPACE
        score += part if color else -part
    white_files = file_set(white_pawns)
    black_files = file_set(black_pawns)
    open_files = (~(white_files | black_files) & 0xFF) * _ALL_RANKS
    white_half_open = (black_files & ~white_files) * _ALL_RANKS
    black_half_open = (white_files & ~black_files) * _ALL_RANKS
    white_attacks = pawn_attacks(white_pawns, chess.WHITE)
    black_attacks = pawn_attacks(black_pawns, chess.BLACK)
    return (
        score,
        passers[chess.WHITE],
        passers[chess.BLACK],
        white_attacks,
        black_attacks,
        open_files,
        white_half_open,
        black_half_open,
        ~black_attacks & _BB_ALL,
        ~white_attacks & _BB_ALL,
        open_files | white_half_open | _BB_RANK_7,
        open_files | black_half_open | _BB_RANK_2,
        outposts(white_pawns, black_pawns, chess.WHITE),
        outposts(black_pawns, white_pawns, chess.BLACK),
        (white_pawns & _BB_LIGHT).bit_count() * _BAD_BISHOP,
        (white_pawns & _BB_DARK).bit_count() * _BAD_BISHOP,
        (black_pawns & _BB_LIGHT).bit_count() * _BAD_BISHOP,
        (black_pawns & _BB_DARK).bit_count() * _BAD_BISHOP,
    )


def _shelter_terms(white_pawns: int, black_pawns: int, white_king: int, black_king: int) -> int:
    """Packed score of the terms of the pawns and a king: shelter, storming pawns and
    the distance to the nearest pawn (White's minus Black's)."""
    score = 0
    pawns = white_pawns | black_pawns
    for color, own, theirs, king in (
        (chess.WHITE, white_pawns, black_pawns, white_king),
        (chess.BLACK, black_pawns, white_pawns, black_king),
    ):
        shield_1, shield_2, semi_open, open_files = king_shelter(king, own, theirs, color)
        part = (
            shield_1 * _SHIELD_1
            + shield_2 * _SHIELD_2
            + semi_open * _SEMI_OPEN_KING
            + open_files * _OPEN_KING
            + nearest_pawn(king, pawns) * _KING_PAWN
        )
        for storm, mask in zip(_STORM, STORM[color][king]):
            part += (theirs & mask).bit_count() * storm
        score += part if color else -part
    return score


def _safe_checks(
    king: int, safe: int, occupied: int, knights: int, bishops: int, rooks: int, queens: int
) -> int:
    """The packed safe-check term against the king on ``king``: the squares ``safe``
    for the checking side from which a piece would check it, attacked by the checking
    side's knights, bishops, rooks or queens (their attack sets, by kind)."""
    score = 0
    if knights and (hits := knights & _KNIGHT_ATTACKS[king] & safe):
        score += hits.bit_count() * _CHECK_N
    if bishops | rooks | queens:
        diag, diag_mask = _DIAG[king]
        rank_table, rank_mask = _RANK[king]
        file_table, file_mask = _FILE[king]
        bishop_checks = diag[diag_mask & occupied] & safe
        rook_checks = (rank_table[rank_mask & occupied] | file_table[file_mask & occupied]) & safe
        if hits := bishops & bishop_checks:
            score += hits.bit_count() * _CHECK_B
        if hits := rooks & rook_checks:
            score += hits.bit_count() * _CHECK_R
        if hits := queens & (bishop_checks | rook_checks):
            score += hits.bit_count() * _CHECK_Q
    return score


# ------------------------------------------------- the same terms in native integers
# The compiled build's body (``_evaluate_native``): the terms of ``_evaluate`` over the
# search board's ``i64`` bitboards (signed when compiled: bit 63 is the sign), with
# attacks from the board's tables, bits counted and found in native arithmetic, and
# the pawn-king entries in flat lists instead of a dict of tuples. Compiled, dicts,
# tuples and bitboards above 2**62 (Python ints, not native) cost more than the terms;
# interpreted, the dict-and-tuple body above is the faster one. The two bodies score
# every position alike (tests/test_evaluate.py compares them over random games, and
# CI's bench signature compares the builds node for node).

_N_BLOCKED: Final[list[i64]] = list(_BLOCKED)
_N_FREE: Final[list[i64]] = list(_FREE)
_N_KING_DISTANCE: Final[list[i64]] = list(_KING_DISTANCE)
_N_MOB_N: Final[list[i64]] = list(_MOB_N)
_N_MOB_B: Final[list[i64]] = list(_MOB_B)
_N_MOB_R: Final[list[i64]] = list(_MOB_R)
_N_MOB_Q: Final[list[i64]] = list(_MOB_Q)
_N_ATTACKERS: Final[list[i64]] = list(_ATTACKERS)
_N_DISTANCE: Final[list[i64]] = list(DISTANCE)
_N_FRONT_WHITE: Final[list[i64]] = [_bb(b) for b in _FRONT_WHITE]
_N_FRONT_BLACK: Final[list[i64]] = [_bb(b) for b in _FRONT_BLACK]
_N_KING_ZONE: Final[list[i64]] = [_bb(b) for b in KING_ZONE]
_N_KNIGHT: Final[list[i64]] = [_bb(b) for b in chess.BB_KNIGHT_ATTACKS]
_N_KING: Final[list[i64]] = [_bb(b) for b in chess.BB_KING_ATTACKS]
_N_LIGHT: Final[i64] = _bb(chess.BB_LIGHT_SQUARES)
_N_DARK: Final[i64] = _bb(chess.BB_DARK_SQUARES)
_N_RANK_7: Final[i64] = _bb(chess.BB_RANK_7)
_N_RANK_2: Final[i64] = _bb(chess.BB_RANK_2)
_N_PAIR: Final[i64] = _PAIR
_N_MINOR_THREAT: Final[i64] = _MINOR_THREAT
_N_ZONE_N: Final[i64] = _ZONE_N
_N_ZONE_B: Final[i64] = _ZONE_B
_N_ZONE_R: Final[i64] = _ZONE_R
_N_ZONE_Q: Final[i64] = _ZONE_Q
_N_ROOK_OPEN: Final[i64] = _ROOK_OPEN
_N_ROOK_SEMI: Final[i64] = _ROOK_SEMI
_N_ROOK_7TH: Final[i64] = _ROOK_7TH
_N_QUEEN_OPEN: Final[i64] = _QUEEN_OPEN
_N_QUEEN_SEMI: Final[i64] = _QUEEN_SEMI
_N_QUEEN_7TH: Final[i64] = _QUEEN_7TH
_N_THREAT: Final[i64] = _THREAT
_N_ROOK_THREAT: Final[i64] = _ROOK_THREAT
_N_HANGING: Final[i64] = _HANGING
_N_CHECK_N: Final[i64] = _CHECK_N
_N_CHECK_B: Final[i64] = _CHECK_B
_N_CHECK_R: Final[i64] = _CHECK_R
_N_CHECK_Q: Final[i64] = _CHECK_Q
_N_TEMPO: Final[i64] = _TEMPO
_N_OUTPOST_N: Final[i64] = _OUTPOST_N
_N_OUTPOST_B: Final[i64] = _OUTPOST_B
_N_ROOK_BEHIND: Final[i64] = _ROOK_BEHIND
_N_MINOR_ON_MINOR: Final[i64] = _MINOR_ON_MINOR
_N_WEAK_ZONE: Final[i64] = _WEAK_ZONE
_N_MAX_PHASE: Final[i64] = MAX_PHASE
_N_SCALE_NORMAL: Final[i64] = SCALE_NORMAL

PAWN_KING_SLOTS_BITS: Final = 14
"""The native pawn-king table's slots (16,384), each always replaced."""
_ENTRY: Final = 18
"""Fields per pawn-king entry (``_PawnEntry``'s)."""
_MIX_WHITE: Final[i64] = 0x9E3779B97F4A7C15 - (1 << 64)
_MIX_BLACK: Final[i64] = 0x632BE59BD9B4E019
_MIX_KINGS: Final[i64] = 0x2545F4914F6CDD1D
_SLOT_SHIFT: Final[i64] = 40
"""A slot is bits 40 up of the mixed key: the same bits in both builds (products
agree modulo 2**64, and the compiled build's wrap-around keeps only those)."""

_N_NOT_FILE_A: Final[i64] = _bb(~chess.BB_FILE_A)
_N_NOT_FILE_H: Final[i64] = _bb(~chess.BB_FILE_H)
_N_ALL: Final[i64] = _bb(chess.BB_ALL)
_N_LOW_63: Final[i64] = 0x7FFFFFFFFFFFFFFF
"""Clears the bit an arithmetic shift right by one copies from bit 63 (compiled)."""
_N_ALL_RANKS: Final[i64] = _ALL_RANKS
# [colour * 64 + square], colour 1 for White (python-chess's bool), as _PASSED_AT.
_N_PASSED_AT: Final[list[i64]] = [*_PASSED_AT[0], *_PASSED_AT[1]]
_N_CONNECTED_AT: Final[list[i64]] = [*_CONNECTED_AT[0], *_CONNECTED_AT[1]]
_N_STORM_ROWS: Final[list[i64]] = [_bb(row) for c in (0, 1) for rows in STORM[c] for row in rows]
"""[(colour * 64 + king) * 3 + n]: the rows 1, 2 and 3 ranks ahead of the king (the
first two are its shield)."""
_N_NEAR_FILE_BITS: Final[list[i64]] = list(NEAR_FILE_BITS)
_N_RINGS: Final[list[i64]] = [_bb(ring) for rings in RINGS for ring in rings]
"""[square * 7 + n]: the squares n + 1 king steps from the square."""
_N_OUTPOST_WHITE: Final[i64] = OUTPOST_RANKS[1]
_N_OUTPOST_BLACK: Final[i64] = OUTPOST_RANKS[0]
_N_SPACE_WHITE: Final[i64] = SPACE_AREA[1]
_N_SPACE_BLACK: Final[i64] = SPACE_AREA[0]
_N_ISOLATED: Final[i64] = _ISOLATED
_N_DOUBLED: Final[i64] = _DOUBLED
_N_BACKWARD: Final[i64] = _BACKWARD
_N_SPACE: Final[i64] = _SPACE
_N_SHIELD_1: Final[i64] = _SHIELD_1
_N_SHIELD_2: Final[i64] = _SHIELD_2
_N_SEMI_OPEN_KING: Final[i64] = _SEMI_OPEN_KING
_N_OPEN_KING: Final[i64] = _OPEN_KING
_N_KING_PAWN: Final[i64] = _KING_PAWN
_N_STORM_1: Final[i64] = _STORM[0]
_N_STORM_2: Final[i64] = _STORM[1]
_N_STORM_3: Final[i64] = _STORM[2]
_N_BAD_BISHOP: Final[i64] = _BAD_BISHOP


def _n_sideways(bb: i64) -> i64:
    """``features._sideways``: a logical shift right (bit 63 may be set)."""
    return ((bb & _N_NOT_FILE_A) >> 1) & _N_LOW_63 | (bb & _N_NOT_FILE_H) << 1


def _n_ahead_white(pawns: i64) -> i64:
    """``features.front_span`` of White pawns (the squares ahead on their files)."""
    fill = pawns << 8
    fill |= fill << 8
    fill |= fill << 16
    return fill | fill << 32


def _n_ahead_black(pawns: i64) -> i64:
    """``features.front_span`` of Black pawns (never on bit 63: shifts stay logical)."""
    fill = pawns >> 8
    fill |= fill >> 8
    fill |= fill >> 16
    return fill | fill >> 32


def _n_attacks_white(pawns: i64) -> i64:
    return (pawns & _N_NOT_FILE_A) << 7 | (pawns & _N_NOT_FILE_H) << 9


def _n_attacks_black(pawns: i64) -> i64:
    """Black pawns' attacks (pawns are never on bit 63: shifts stay logical)."""
    return (pawns & _N_NOT_FILE_A) >> 9 | (pawns & _N_NOT_FILE_H) >> 7


def _n_file_set(bb: i64) -> i64:
    """``features.file_set`` (bits 0-7 are right whatever the sign of ``bb``)."""
    bb |= bb >> 32
    bb |= bb >> 16
    return (bb | bb >> 8) & 0xFF


def _n_structure(own: i64, theirs: i64, white: bool) -> tuple[i64, i64]:
    """The packed pawn-structure and space terms of one side's pawns
    (``features.pawn_structure`` and ``space``; the sign is the caller's), and its
    passed pawns."""
    if white:
        behind = _n_ahead_black(own)
        level = own | _n_ahead_white(own)
        span = _n_ahead_black(theirs)
        stop_attacked = _n_attacks_black(theirs) >> 8
        defended = _n_attacks_white(own)
        free = _N_SPACE_WHITE & ~own & ~_n_attacks_black(theirs)
        colour: i64 = 64
    else:
        behind = _n_ahead_white(own)
        level = own | _n_ahead_black(own)
        span = _n_ahead_white(theirs)
        stop_attacked = _n_attacks_white(theirs) << 8
        defended = _n_attacks_black(own)
        free = _N_SPACE_BLACK & ~own & ~_n_attacks_white(theirs)
        colour = 0
    doubled = own & behind
    passed = own & ~doubled & ~(span | _n_sideways(span))
    connected = own & (defended | _n_sideways(own))
    isolated = own & ~_n_sideways(level | behind)
    backward = own & ~isolated & ~_n_sideways(level) & stop_attacked
    part: i64 = (
        _popcount(isolated) * _N_ISOLATED
        + _popcount(doubled) * _N_DOUBLED
        + _popcount(backward) * _N_BACKWARD
        + _popcount(free) * _N_SPACE
    )
    pieces = passed
    while pieces:
        part += _N_PASSED_AT[colour + _lsb(pieces)]
        pieces &= pieces - 1
    while connected:
        part += _N_CONNECTED_AT[colour + _lsb(connected)]
        connected &= connected - 1
    return part, passed


def _n_shelter(king: i64, own: i64, theirs: i64, pawns: i64, white: bool) -> i64:
    """One side's packed shelter, storm and king-pawn distance terms (``_shelter_terms``'
    part of a side; the sign is the caller's)."""
    at: i64 = (king + 64) * 3 if white else king * 3
    without_own = _N_NEAR_FILE_BITS[king & 7] & ~_n_file_set(own)
    their_files = _n_file_set(theirs)
    part: i64 = (
        _popcount(own & _N_STORM_ROWS[at]) * _N_SHIELD_1
        + _popcount(own & _N_STORM_ROWS[at + 1]) * _N_SHIELD_2
        + _popcount(without_own & their_files) * _N_SEMI_OPEN_KING
        + _popcount(without_own & ~their_files) * _N_OPEN_KING
        + _popcount(theirs & _N_STORM_ROWS[at]) * _N_STORM_1
        + _popcount(theirs & _N_STORM_ROWS[at + 1]) * _N_STORM_2
        + _popcount(theirs & _N_STORM_ROWS[at + 2]) * _N_STORM_3
    )
    if pawns:
        distance: i64 = 1
        ring = king * 7
        while not pawns & _N_RINGS[ring] and distance < 7:
            distance += 1
            ring += 1
        part += distance * _N_KING_PAWN
    return part


def _native_sides(
    own: i64,
    knights: i64,
    bishops: i64,
    rooks: i64,
    queens: i64,
    occupied: i64,
    area: i64,
    zone: i64,
    their_majors: i64,
    special: i64,
    open_files: i64,
    half_open: i64,
    seventh: i64,
) -> tuple[i64, i64, i64, i64, i64]:
    """One side's bishop pair, mobility, threats by minor pieces on majors, king-zone
    attacks and rook and queen file terms (packed), and the squares its knights,
    bishops, rooks and queens attack (``_evaluate``'s loop over the sides)."""
    part: i64 = 0
    attackers: i64 = 0
    by_knights: i64 = 0
    by_bishops: i64 = 0
    by_rooks: i64 = 0
    by_queens: i64 = 0
    pieces: i64 = bishops & own
    if pieces & (pieces - 1):
        part += _N_PAIR
    while pieces:
        attacks = bishop_attacks(_lsb(pieces), occupied)
        pieces &= pieces - 1
        by_bishops |= attacks
        part += _N_MOB_B[_popcount(attacks & area)]
        if attacks & their_majors:
            part += _popcount(attacks & their_majors) * _N_MINOR_THREAT
        if attacks & zone:
            attackers += 1
            part += _popcount(attacks & zone) * _N_ZONE_B
    pieces = knights & own
    while pieces:
        attacks = _N_KNIGHT[_lsb(pieces)]
        pieces &= pieces - 1
        by_knights |= attacks
        part += _N_MOB_N[_popcount(attacks & area)]
        if attacks & their_majors:
            part += _popcount(attacks & their_majors) * _N_MINOR_THREAT
        if attacks & zone:
            attackers += 1
            part += _popcount(attacks & zone) * _N_ZONE_N
    own_rooks = rooks & own
    own_queens = queens & own
    if (own_rooks | own_queens) & special:
        part += (
            _popcount(own_rooks & open_files) * _N_ROOK_OPEN
            + _popcount(own_rooks & half_open) * _N_ROOK_SEMI
            + _popcount(own_rooks & seventh) * _N_ROOK_7TH
            + _popcount(own_queens & open_files) * _N_QUEEN_OPEN
            + _popcount(own_queens & half_open) * _N_QUEEN_SEMI
            + _popcount(own_queens & seventh) * _N_QUEEN_7TH
        )
    pieces = own_rooks
    while pieces:
        attacks = rook_attacks(_lsb(pieces), occupied)
        pieces &= pieces - 1
        by_rooks |= attacks
        part += _N_MOB_R[_popcount(attacks & area)]
        if attacks & zone:
            attackers += 1
            part += _popcount(attacks & zone) * _N_ZONE_R
    pieces = own_queens
    while pieces:
        square = _lsb(pieces)
        attacks = bishop_attacks(square, occupied) | rook_attacks(square, occupied)
        pieces &= pieces - 1
        by_queens |= attacks
        part += _N_MOB_Q[_popcount(attacks & area)]
        if attacks & zone:
            attackers += 1
            part += _popcount(attacks & zone) * _N_ZONE_Q
    part += _N_ATTACKERS[attackers if attackers < 4 else 4]
    return part, by_knights, by_bishops, by_rooks, by_queens


def _native_safe_checks(
    king: i64, safe: i64, occupied: i64, knights: i64, bishops: i64, rooks: i64, queens: i64
) -> i64:
    """``_safe_checks`` in native integers."""
    score: i64 = 0
    if knights & _N_KNIGHT[king] & safe:
        score += _popcount(knights & _N_KNIGHT[king] & safe) * _N_CHECK_N
    if bishops | rooks | queens:
        bishop_checks = bishop_attacks(king, occupied) & safe
        rook_checks = rook_attacks(king, occupied) & safe
        if bishops & bishop_checks:
            score += _popcount(bishops & bishop_checks) * _N_CHECK_B
        if rooks & rook_checks:
            score += _popcount(rooks & rook_checks) * _N_CHECK_R
        if queens & (bishop_checks | rook_checks):
            score += _popcount(queens & (bishop_checks | rook_checks)) * _N_CHECK_Q
    return score


def _runs_compiled() -> bool:
    """Whether this module was compiled by mypyc (its functions are then native)."""
    return not isinstance(_native_safe_checks, types.FunctionType)


COMPILED: Final = _runs_compiled()
"""Whether this module runs compiled."""
NATIVE_BODY: Final = COMPILED or _bb(1 << 63) < 0
"""Which body ``evaluate_board`` runs: the native one compiled (or wherever the board
is compiled, its bitboards signed), ``_evaluate`` interpreted (where it is the
faster)."""


class Evaluator:
    """The evaluation with its caches; one per searcher."""

    def __init__(self, cache_bits: int = EVAL_CACHE_BITS) -> None:
        size = 1 << cache_bits
        self._mask = size - 1
        self._keys = [0] * size
        self._values = [0] * size
        self._pawn_cache: dict[int, _PawnEntry] = {}
        self._pawn_king_cache: dict[int, _PawnEntry] = {}
        # The native body's pawn-king table: per slot, the pawns and kings it holds
        # (a king pair of -1 matches nothing) and _ENTRY fields.
        slots = 1 << min(cache_bits, PAWN_KING_SLOTS_BITS)
        self._slot_mask: i64 = slots - 1
        self._pk_keys: list[i64] = [0, 0, -1] * slots
        self._pk_data: list[i64] = [0] * (_ENTRY * slots)

    def clear(self) -> None:
        """Forget every cached evaluation (not needed for correctness)."""
        self._keys = [0] * len(self._keys)
        self._pawn_cache.clear()
        self._pawn_king_cache.clear()
        self._pk_keys = [0, 0, -1] * (len(self._pk_keys) // 3)

    def evaluate(self, pos: Position) -> int:
        """The evaluation of ``pos`` (side to move's view), cached by its key."""
        key = pos.key
        slot = key & self._mask
        if self._keys[slot] == key:
            return self._values[slot]
        board = pos.board
        kings = board.kings
        white = board.occupied_co[True]
        black = board.occupied_co[False]
        if not kings & white or not kings & black:
            # Only hand-made test positions lack a king: use the definition.
            return evaluate_features(board, MG_WEIGHTS, EG_WEIGHTS)
        return self._evaluate(
            key,
            white,
            black,
            board.pawns,
            board.knights,
            board.bishops,
            board.rooks,
            board.queens,
            kings,
            board.turn,
            pos.mg,
            pos.eg,
            pos.phase,
        )

    def evaluate_board(self, board: Board) -> int:
        """``evaluate`` of the native search board: the same score, cached by its key
        the same way (the compiled board's keys are signed: stored as given)."""
        key = board.key
        slot = key & self._mask
        if self._keys[slot] == key:
            return self._values[slot]
        return self.evaluate_board_uncached(board)

    def evaluate_board_uncached(self, board: Board) -> int:
        """``evaluate_board`` after a cache miss (the network's correction calls it
        after its own): the native body compiled, else ``_evaluate``."""
        if NATIVE_BODY:
            return self._evaluate_native(board)
        # The interpreted board's bitboards are non-negative Python ints, as
        # ``_evaluate`` needs them (NATIVE_BODY is set wherever they are signed).
        white = board.white
        black = board.black
        kings = board.kings
        if not kings & white or not kings & black:
            chess_board = chess.Board(board.fen(), chess960=board.chess960)
            return evaluate_features(chess_board, MG_WEIGHTS, EG_WEIGHTS)
        return self._evaluate(
            board.key,
            white,
            black,
            board.pawns,
            board.knights,
            board.bishops,
            board.rooks,
            board.queens,
            kings,
            board.turn == WHITE,
            board.mg,
            board.eg,
            board.phase,
        )

    def _evaluate_native(self, board: Board) -> int:
        """``evaluate_board`` by the native body (the compiled build's; see above its
        tables): the same score as ``_evaluate``'s, cached the same way."""
        white: i64 = board.white
        black: i64 = board.black
        kings: i64 = board.kings
        if not kings & white or not kings & black:
            chess_board = chess.Board(board.fen(), chess960=board.chess960)
            return evaluate_features(chess_board, MG_WEIGHTS, EG_WEIGHTS)
        pawns: i64 = board.pawns
        knights: i64 = board.knights
        bishops: i64 = board.bishops
        rooks: i64 = board.rooks
        queens: i64 = board.queens
        white_king = _lsb(kings & white)
        black_king = _lsb(kings & black)
        white_pawns = pawns & white
        black_pawns = pawns & black
        occupied = white | black

        king_pair: i64 = white_king << 6 | black_king
        slot: i64 = (
            (white_pawns * _MIX_WHITE + black_pawns * _MIX_BLACK + king_pair * _MIX_KINGS)
            >> _SLOT_SHIFT
        ) & self._slot_mask
        keys = self._pk_keys
        at: i64 = 3 * slot
        if keys[at] != white_pawns or keys[at + 1] != black_pawns or keys[at + 2] != king_pair:
            self._fill_pawn_king(slot, white_pawns, black_pawns, white_king, black_king)
        data = self._pk_data
        at = _ENTRY * slot
        score: i64 = data[at]  # packed (mg, eg), White's view, without the psqt sums
        passers: i64 = data[at + 1]
        black_passers: i64 = data[at + 2]
        white_pawn_attacks: i64 = data[at + 3]
        black_pawn_attacks: i64 = data[at + 4]
        open_files: i64 = data[at + 5]
        white_half_open: i64 = data[at + 6]
        black_half_open: i64 = data[at + 7]
        white_safe: i64 = data[at + 8]
        black_safe: i64 = data[at + 9]
        white_special: i64 = data[at + 10]
        black_special: i64 = data[at + 11]
        white_outposts: i64 = data[at + 12]
        black_outposts: i64 = data[at + 13]

        # Passers: blocked or else free, a rook behind, how near each king is to the
        # stop square.
        while passers:
            square = _lsb(passers)
            passers &= passers - 1
            stop = square + 8
            rank = square >> 3
            if _N_FRONT_WHITE[square] & occupied:
                if (occupied >> stop) & 1:
                    score += _N_BLOCKED[rank]
            else:
                score += _N_FREE[rank]
            score += _N_KING_DISTANCE[rank] * (
                _N_DISTANCE[black_king * 64 + stop] - _N_DISTANCE[white_king * 64 + stop]
            )
            behind = rooks & white & _N_FRONT_BLACK[square]
            if behind and rook_attacks(square, occupied) & behind:
                score += _N_ROOK_BEHIND
        passers = black_passers
        while passers:
            square = _lsb(passers)
            passers &= passers - 1
            stop = square - 8
            rank = 7 - (square >> 3)
            if _N_FRONT_BLACK[square] & occupied:
                if (occupied >> stop) & 1:
                    score -= _N_BLOCKED[rank]
            else:
                score -= _N_FREE[rank]
            score -= _N_KING_DISTANCE[rank] * (
                _N_DISTANCE[white_king * 64 + stop] - _N_DISTANCE[black_king * 64 + stop]
            )
            behind = rooks & black & _N_FRONT_WHITE[square]
            if behind and rook_attacks(square, occupied) & behind:
                score -= _N_ROOK_BEHIND
        # Outposts and bad bishops.
        minors = knights | bishops
        if minors & white_outposts:
            score += (
                _popcount(knights & white & white_outposts) * _N_OUTPOST_N
                + _popcount(bishops & white & white_outposts) * _N_OUTPOST_B
            )
        if minors & black_outposts:
            score -= (
                _popcount(knights & black & black_outposts) * _N_OUTPOST_N
                + _popcount(bishops & black & black_outposts) * _N_OUTPOST_B
            )
        if bishops & white:
            score += (
                _popcount(bishops & white & _N_LIGHT) * data[at + 14]
                + _popcount(bishops & white & _N_DARK) * data[at + 15]
            )
        if bishops & black:
            score -= (
                _popcount(bishops & black & _N_LIGHT) * data[at + 16]
                + _popcount(bishops & black & _N_DARK) * data[at + 17]
            )

        # Mobility, attacks on the enemy king zone, rooks and queens.
        majors = rooks | queens
        part, white_n, white_b, white_r, white_q = _native_sides(
            white,
            knights,
            bishops,
            rooks,
            queens,
            occupied,
            white_safe & ~white,
            _N_KING_ZONE[black_king],
            majors & black,
            white_special,
            open_files,
            white_half_open,
            _N_RANK_7,
        )
        score += part
        part, black_n, black_b, black_r, black_q = _native_sides(
            black,
            knights,
            bishops,
            rooks,
            queens,
            occupied,
            black_safe & ~black,
            _N_KING_ZONE[white_king],
            majors & white,
            black_special,
            open_files,
            black_half_open,
            _N_RANK_2,
        )
        score -= part

        # Pawns attacking pieces, rooks attacking queens, pieces left hanging.
        targets = minors | majors
        score += _N_THREAT * (
            _popcount(white_pawn_attacks & black & targets)
            - _popcount(black_pawn_attacks & white & targets)
        )
        white_pieces_attack = white_n | white_b | white_r | white_q | white_pawn_attacks
        black_pieces_attack = black_n | black_b | black_r | black_q | black_pawn_attacks
        white_all = white_pieces_attack | _N_KING[white_king]
        black_all = black_pieces_attack | _N_KING[black_king]
        if minors:
            score += _N_MINOR_ON_MINOR * (
                _popcount((white_n | white_b) & black & minors & white_safe)
                - _popcount((black_n | black_b) & white & minors & black_safe)
            )
        weak = _N_KING_ZONE[black_king] & white_all & ~black_pieces_attack
        if weak:
            score += _N_WEAK_ZONE * _popcount(weak)
        weak = _N_KING_ZONE[white_king] & black_all & ~white_pieces_attack
        if weak:
            score -= _N_WEAK_ZONE * _popcount(weak)
        if queens:
            score += _N_ROOK_THREAT * (
                _popcount(white_r & black & queens) - _popcount(black_r & white & queens)
            )
        hanging = black & targets & white_all & ~black_all
        if hanging:
            score += _N_HANGING * _popcount(hanging)
        hanging = white & targets & black_all & ~white_all
        if hanging:
            score -= _N_HANGING * _popcount(hanging)
        score += _native_safe_checks(
            black_king, ~(black_all | white), occupied, white_n, white_b, white_r, white_q
        )
        score -= _native_safe_checks(
            white_king, ~(white_all | black), occupied, black_n, black_b, black_r, black_q
        )
        white_to_move = board.turn == WHITE
        score += _N_TEMPO if white_to_move else -_N_TEMPO

        mg_part: i64 = ((score + _PACK_HALF) & _PACK_MASK) - _PACK_HALF
        mg: i64 = board.mg + mg_part
        eg: i64 = board.eg + ((score - mg_part) >> _PACK_SHIFT)
        # Drawish endings scale the endgame part; checked only without pieces or pawns.
        scale: i64 = _N_SCALE_NORMAL
        if not (knights | rooks | queens) or not white_pawns or not black_pawns:
            scale_white, scale_black = scale_factors_bits(
                _u64(white),
                _u64(black),
                _u64(pawns),
                _u64(knights),
                _u64(bishops),
                _u64(rooks),
                _u64(queens),
            )
            scale = scale_white if eg > 0 else scale_black
        phase: i64 = board.phase
        if phase > _N_MAX_PHASE:
            phase = _N_MAX_PHASE
        if scale != _N_SCALE_NORMAL:
            eg = eg * scale // _N_SCALE_NORMAL if eg >= 0 else -(-eg * scale // _N_SCALE_NORMAL)
        blended = mg * phase + eg * (_N_MAX_PHASE - phase)
        value: i64 = blended // _N_MAX_PHASE if blended >= 0 else -(-blended // _N_MAX_PHASE)
        if not white_to_move:
            value = -value
        key = board.key
        slot = key & self._mask
        self._keys[slot] = key
        self._values[slot] = value
        return value

    def _fill_pawn_king(
        self, slot: i64, white_pawns: i64, black_pawns: i64, white_king: i64, black_king: i64
    ) -> None:
        """Compute the pawn-king entry (``_PawnEntry``'s fields) of these pawns and
        kings into ``slot`` of the native table."""
        white_files = _n_file_set(white_pawns)
        black_files = _n_file_set(black_pawns)
        open_files = (~(white_files | black_files) & 0xFF) * _N_ALL_RANKS
        white_half_open = (black_files & ~white_files) * _N_ALL_RANKS
        black_half_open = (white_files & ~black_files) * _N_ALL_RANKS
        white_attacks = _n_attacks_white(white_pawns)
        black_attacks = _n_attacks_black(black_pawns)
        pawns = white_pawns | black_pawns
        data = self._pk_data
        at: i64 = _ENTRY * slot
        white_part, white_passers = _n_structure(white_pawns, black_pawns, True)
        black_part, black_passers = _n_structure(black_pawns, white_pawns, False)
        data[at] = (
            white_part
            - black_part
            + _n_shelter(white_king, white_pawns, black_pawns, pawns, True)
            - _n_shelter(black_king, black_pawns, white_pawns, pawns, False)
        )
        data[at + 1] = white_passers
        data[at + 2] = black_passers
        data[at + 3] = white_attacks
        data[at + 4] = black_attacks
        data[at + 5] = open_files
        data[at + 6] = white_half_open
        data[at + 7] = black_half_open
        data[at + 8] = ~black_attacks & _N_ALL
        data[at + 9] = ~white_attacks & _N_ALL
        data[at + 10] = open_files | white_half_open | _N_RANK_7
        data[at + 11] = open_files | black_half_open | _N_RANK_2
        data[at + 12] = white_attacks & _N_OUTPOST_WHITE & ~_n_sideways(_n_ahead_black(black_pawns))
        data[at + 13] = black_attacks & _N_OUTPOST_BLACK & ~_n_sideways(_n_ahead_white(white_pawns))
        data[at + 14] = _popcount(white_pawns & _N_LIGHT) * _N_BAD_BISHOP
        data[at + 15] = _popcount(white_pawns & _N_DARK) * _N_BAD_BISHOP
        data[at + 16] = _popcount(black_pawns & _N_LIGHT) * _N_BAD_BISHOP
        data[at + 17] = _popcount(black_pawns & _N_DARK) * _N_BAD_BISHOP
        keys = self._pk_keys
        at = 3 * slot
        keys[at] = white_pawns
        keys[at + 1] = black_pawns
        keys[at + 2] = white_king << 6 | black_king

    def _evaluate(
        self,
        key: int,
        white: int,
        black: int,
        pawns: int,
        knights: int,
        bishops: int,
        rooks: int,
        queens: int,
        kings: int,
        white_to_move: bool,
        mg: int,
        eg: int,
        phase: int,
    ) -> int:
        """The evaluation of both boards' callers, over non-negative bitboards (both
        kings on the board), the psqt sums and the side to move; cached under ``key``.

        One body for both, so that the two boards cannot score a position apart."""
        white_king = (kings & white).bit_length() - 1
        black_king = (kings & black).bit_length() - 1
        white_pawns = pawns & white
        black_pawns = pawns & black
        occupied = white | black

        # Pawn structure and king shelter, from the caches. (Kings move more
        # often than pawns: a king move re-counts only the shelter.)
        # Keys are ints, not tuples: one hash, no tuple to build or compare.
        pawn_key = white_pawns << 64 | black_pawns
        pawn_king_key = pawn_key << 12 | white_king << 6 | black_king
        entry = self._pawn_king_cache.get(pawn_king_key)
        if entry is None:
            pawn_entry = self._pawn_cache.get(pawn_key)
            if pawn_entry is None:
                if len(self._pawn_cache) >= PAWN_CACHE_LIMIT:
                    self._pawn_cache.clear()
                pawn_entry = _pawn_terms(white_pawns, black_pawns)
                self._pawn_cache[pawn_key] = pawn_entry
            shelter = _shelter_terms(white_pawns, black_pawns, white_king, black_king)
            entry = (pawn_entry[0] + shelter, *pawn_entry[1:])
            if len(self._pawn_king_cache) >= PAWN_CACHE_LIMIT:
                self._pawn_king_cache.clear()
            self._pawn_king_cache[pawn_king_key] = entry
        (
            score,  # packed (mg, eg), White's view, without the psqt sums
            passers,
            black_passers,
            white_pawn_attacks,
            black_pawn_attacks,
            open_files,
            white_half_open,
            black_half_open,
            white_safe,
            black_safe,
            white_special,
            black_special,
            white_outposts,
            black_outposts,
            white_bad_light,
            white_bad_dark,
            black_bad_light,
            black_bad_dark,
        ) = entry
        majors = rooks | queens
        # Passers: blocked or else free, a rook behind, how near each king is to the
        # stop square.
        while passers:
            low = passers & -passers
            passers ^= low
            square = low.bit_length() - 1
            stop = square + 8
            rank = square >> 3
            if low << 8 & occupied:
                score += _BLOCKED[rank]
            elif not _FRONT_WHITE[square] & occupied:
                score += _FREE[rank]
            score += _KING_DISTANCE[rank] * (
                _DISTANCE[black_king * 64 + stop] - _DISTANCE[white_king * 64 + stop]
            )
            if behind := rooks & white & _FRONT_BLACK[square]:
                file_table, file_mask = _FILE[square]
                if file_table[file_mask & occupied] & behind:
                    score += _ROOK_BEHIND
        passers = black_passers
        while passers:
            low = passers & -passers
            passers ^= low
            square = low.bit_length() - 1
            stop = square - 8
            rank = 7 - (square >> 3)
            if low >> 8 & occupied:
                score -= _BLOCKED[rank]
            elif not _FRONT_BLACK[square] & occupied:
                score -= _FREE[rank]
            score -= _KING_DISTANCE[rank] * (
                _DISTANCE[white_king * 64 + stop] - _DISTANCE[black_king * 64 + stop]
            )
            if behind := rooks & black & _FRONT_WHITE[square]:
                file_table, file_mask = _FILE[square]
                if file_table[file_mask & occupied] & behind:
                    score -= _ROOK_BEHIND
        # Outposts and bad bishops.
        minors = knights | bishops
        if minors & white_outposts:
            score += (knights & white & white_outposts).bit_count() * _OUTPOST_N + (
                bishops & white & white_outposts
            ).bit_count() * _OUTPOST_B
        if minors & black_outposts:
            score -= (knights & black & black_outposts).bit_count() * _OUTPOST_N + (
                bishops & black & black_outposts
            ).bit_count() * _OUTPOST_B
        if bb := bishops & white:
            score += (bb & _BB_LIGHT).bit_count() * white_bad_light + (
                bb & _BB_DARK
            ).bit_count() * white_bad_dark
        if bb := bishops & black:
            score -= (bb & _BB_LIGHT).bit_count() * black_bad_light + (
                bb & _BB_DARK
            ).bit_count() * black_bad_dark

        # Mobility, attacks on the enemy king zone, rooks and queens: White, then Black.
        # (special: the squares where rooks and queens score for their file or rank;
        # kinds: the squares the side's knights, bishops, rooks and queens attack.)
        white_kinds = [0, 0, 0, 0]
        black_kinds = [0, 0, 0, 0]
        sides = (
            (
                white,
                white_safe & ~white,
                KING_ZONE[black_king],
                majors & black,
                white_half_open,
                _BB_RANK_7,
                white_special,
                white_kinds,
                True,
            ),
            (
                black,
                black_safe & ~black,
                KING_ZONE[white_king],
                majors & white,
                black_half_open,
                _BB_RANK_2,
                black_special,
                black_kinds,
                False,
            ),
        )
        for own, area, zone, their_majors, half_open, seventh, special, kinds, is_white in sides:
            part = 0
            attackers = 0
            bb = bishops & own
            if bb & (bb - 1):
                part += _PAIR
            # Knights and bishops: mobility, threats on rooks and queens, king zone.
            for table, mask, mobility, zone_weight, kind in _KNIGHTS[knights & own] + _BISHOPS[bb]:
                attacks = table[mask & occupied]
                kinds[kind] |= attacks
                part += mobility[(attacks & area).bit_count()]
                if threatened := attacks & their_majors:
                    part += threatened.bit_count() * _MINOR_THREAT
                if hits := attacks & zone:
                    attackers += 1
                    part += hits.bit_count() * zone_weight
            rooks_here = rooks & own
            queens_here = queens & own
            if (rooks_here | queens_here) & special:
                part += _line_terms(rooks_here, open_files, half_open, seventh, _ROOK_LINE_TERMS)
                part += _line_terms(queens_here, open_files, half_open, seventh, _QUEEN_LINE_TERMS)
            # Rooks and queens: mobility and king zone.
            for (
                diag,
                diag_mask,
                rank_table,
                rank_mask,
                file_table,
                file_mask,
                mobility,
                zone_weight,
                kind,
            ) in _ROOKS[rooks_here] + _QUEENS[queens_here]:
                attacks = (
                    diag[diag_mask & occupied]
                    | rank_table[rank_mask & occupied]
                    | file_table[file_mask & occupied]
                )
                kinds[kind] |= attacks
                part += mobility[(attacks & area).bit_count()]
                if hits := attacks & zone:
                    attackers += 1
                    part += hits.bit_count() * zone_weight
            part += _ATTACKERS[attackers if attackers < 4 else 4]
            if is_white:
                score += part
            else:
                score -= part

        # Pawns attacking pieces, rooks attacking queens, pieces left hanging.
        targets = knights | bishops | rooks | queens
        score += _THREAT * (
            (white_pawn_attacks & black & targets).bit_count()
            - (black_pawn_attacks & white & targets).bit_count()
        )
        white_n, white_b, white_r, white_q = white_kinds
        black_n, black_b, black_r, black_q = black_kinds
        white_all = (
            white_n | white_b | white_r | white_q | white_pawn_attacks | _KING_ATTACKS[white_king]
        )
        black_all = (
            black_n | black_b | black_r | black_q | black_pawn_attacks | _KING_ATTACKS[black_king]
        )
        # Minor pieces attacking minor pieces that no pawn defends; king-zone squares
        # attacked and defended by nothing but the king.
        if minors:
            score += _MINOR_ON_MINOR * (
                ((white_n | white_b) & black & minors & white_safe).bit_count()
                - ((black_n | black_b) & white & minors & black_safe).bit_count()
            )
        if weak := KING_ZONE[black_king] & white_all:
            # Complements against _BB_ALL, as for the hanging pieces below.
            weak &= _BB_ALL ^ (black_n | black_b | black_r | black_q | black_pawn_attacks)
            score += _WEAK_ZONE * weak.bit_count()
        if weak := KING_ZONE[white_king] & black_all:
            weak &= _BB_ALL ^ (white_n | white_b | white_r | white_q | white_pawn_attacks)
            score -= _WEAK_ZONE * weak.bit_count()
        if queens:
            score += _ROOK_THREAT * (
                (white_r & black & queens).bit_count() - (black_r & white & queens).bit_count()
            )
        # Hanging: pieces attacked and not defended at all. (Complements are taken
        # against _BB_ALL: ``~`` makes negative ints, which are slower to mask.)
        if (hanging := black & targets & white_all) and (
            hanging := hanging ^ (hanging & black_all)
        ):
            score += _HANGING * hanging.bit_count()
        if (hanging := white & targets & black_all) and (
            hanging := hanging ^ (hanging & white_all)
        ):
            score -= _HANGING * hanging.bit_count()
        # Safe checks: squares a piece could check the king from, attacked by a piece
        # of that kind, not held by its own side and not attacked by the king's side.
        score += _safe_checks(
            black_king, _BB_ALL ^ (black_all | white), occupied, white_n, white_b, white_r, white_q
        )
        score -= _safe_checks(
            white_king, _BB_ALL ^ (white_all | black), occupied, black_n, black_b, black_r, black_q
        )
        # The side to move.
        score += _TEMPO if white_to_move else -_TEMPO

        mg_part = ((score + _PACK_HALF) & _PACK_MASK) - _PACK_HALF
        mg += mg_part
        eg += (score - mg_part) >> _PACK_SHIFT
        # Drawish endings scale the endgame part; checked only without pieces or pawns.
        scale = SCALE_NORMAL
        if not (knights | rooks | queens) or not white_pawns or not black_pawns:
            scale_white, scale_black = scale_factors_bits(
                white, black, pawns, knights, bishops, rooks, queens
            )
            scale = scale_white if eg > 0 else scale_black
        if phase > MAX_PHASE:
            phase = MAX_PHASE
        # features.blend, inlined (a call costs as much as the arithmetic).
        if scale != SCALE_NORMAL:
            eg = eg * scale // SCALE_NORMAL if eg >= 0 else -(-eg * scale // SCALE_NORMAL)
        blended = mg * phase + eg * (MAX_PHASE - phase)
        value = blended // MAX_PHASE if blended >= 0 else -(-blended // MAX_PHASE)
        if not white_to_move:
            value = -value
        slot = key & self._mask
        self._keys[slot] = key
        self._values[slot] = value
        return value


def evaluate(board: chess.Board) -> int:
    """Evaluation of ``board`` from scratch (side to move's view), no caches kept."""
    return Evaluator(cache_bits=0).evaluate(Position(board.copy()))


def evaluation_report(board: chess.Board) -> list[str]:
    """``eval``: the terms (White's view), the phase, then the evaluation from both sides."""
    score = evaluate(board)
    white = score if board.turn == chess.WHITE else -score
    side = "white" if board.turn == chess.WHITE else "black"
    lines = [f"{'Term (White, cp)':24} {'mg':>7} {'eg':>7}"]
    for name, mg, eg in term_breakdown(board, MG_WEIGHTS, EG_WEIGHTS):
        if mg or eg:
            lines.append(f"{name:24} {mg:+7d} {eg:+7d}")
    lines.append(f"Phase: {game_phase(board)} of {MAX_PHASE} (middlegame share)")
    lines.append(f"Evaluation: {score:+d} cp from the side to move ({side})")
    lines.append(f"Evaluation: {white:+d} cp from white's point of view")
    return lines
