"""Static evaluation, in centipawns from the side to move's point of view.

A tapered evaluation: material and piece-square tables (kept incrementally by the
search board, engine.core.board: ``mg``, ``eg``, ``phase``), pawn structure (passers
free, blocked or with a rook behind them), mobility, king safety (safe checks, weak
zone squares, shelter and storming pawns), outposts, bad bishops and the bishop pair,
rooks and queens on open files and the seventh rank, space, the king's distance to
the pawns, threats (by pawns, minor pieces and rooks) and hanging pieces, tempo, and
scaling of drawish endings.

``Evaluator`` owns the caches (one per searcher: no global search state) and the one
entry point, ``evaluate(board)``, on the native search board: the search's, and every
tool's after ``Board.from_chess`` at its edge. One body computes it, over the board's
``i64`` bitboards (native 64-bit integers compiled by mypyc; plain ints interpreted,
where the board's slider lookups and ``int.bit_count`` stand in for the native
arithmetic): pawn-structure, shelter and storm terms come from a table keyed by the
pawns and kings, whole evaluations from a cache keyed by the Zobrist key, and the
per-piece terms are summed in one pass over the bitboards without building a
feature vector. A hand-made position without a king is scored by the definition.

It computes exactly ``weights x features`` as ``engine.core.features`` defines them
(``evaluate_features``, the tuner's definition): tests/test_evaluate.py holds the two
equal over random games in either build, and CI's bench signature holds the builds
equal node for node. ``evaluation_report(board)`` is the term-by-term table of the
UCI ``eval`` command; its total is the entry point's score. This module must not
search, must not score a python-chess board itself (convert at the edge), and must not
hold a second body of the terms: a change to a term is made here and in features.py.
"""

from __future__ import annotations

import types
from typing import TYPE_CHECKING, Final

import chess

from engine.core.bitboards import (
    _KING,
    _KNIGHT,
    WHITE,
    _bb,
    _lsb,
    _popcount,
    _u64,
    bishop_attacks,
    rook_attacks,
)
from engine.core.board import Board
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
    game_phase,
    scale_factors_bits,
    term_breakdown,
)
from engine.core.weights import EG_WEIGHTS, MG_WEIGHTS

if TYPE_CHECKING:
    # Only mypyc needs the type (native 64-bit integers); at run time the annotations
    # are strings, so the interpreted engine does not depend on mypy_extensions.
    from mypy_extensions import i64

EVAL_CACHE_BITS: Final = 16
"""Evaluations cached by key: 65,536 slots (about 1 MB), always replaced."""


_PACK_SHIFT: Final = 16
_PACK_HALF: Final = 1 << (_PACK_SHIFT - 1)
_PACK_MASK: Final = (1 << _PACK_SHIFT) - 1


def _pack(mg: int, eg: int) -> int:
    """One int holding both phases, ``mg + eg * 2**16``: one addition per term.

    Sums stay exact while the middlegame part stays within +-32767 cp.
    """
    return mg + (eg << _PACK_SHIFT)


def _block(name: str) -> list[i64]:
    """A block of weights, packed."""
    start, size = OFFSET[name], SIZE[name]
    return [_pack(MG_WEIGHTS[i], EG_WEIGHTS[i]) for i in range(start, start + size)]


def _weight(name: str) -> i64:
    """The packed weight of a one-weight block."""
    (packed,) = _block(name)
    return packed


# The weights, packed, in the body's native integers (lists of i64 compiled: no
# boxing at a lookup). Tables by square are built from features.py's, so that the
# body and the definition read the same squares.
_N_BLOCKED: Final = _block("passed_blocked")
_N_FREE: Final = _block("passed_free")
_N_KING_DISTANCE: Final = _block("passed_king_distance")
_N_MOB_N: Final = _block("mobility_knight")
_N_MOB_B: Final = _block("mobility_bishop")
_N_MOB_R: Final = _block("mobility_rook")
_N_MOB_Q: Final = _block("mobility_queen")
_N_ATTACKERS: Final = _block("king_attackers")
_N_ZONE_N: Final[i64] = _block("king_zone_attacks")[0]
_N_ZONE_B: Final[i64] = _block("king_zone_attacks")[1]
_N_ZONE_R: Final[i64] = _block("king_zone_attacks")[2]
_N_ZONE_Q: Final[i64] = _block("king_zone_attacks")[3]
_N_CHECK_N: Final[i64] = _block("safe_checks")[0]
_N_CHECK_B: Final[i64] = _block("safe_checks")[1]
_N_CHECK_R: Final[i64] = _block("safe_checks")[2]
_N_CHECK_Q: Final[i64] = _block("safe_checks")[3]
_N_OUTPOST_N: Final[i64] = _block("outpost")[0]
_N_OUTPOST_B: Final[i64] = _block("outpost")[1]
_N_SHIELD_1: Final[i64] = _block("king_shield")[0]
_N_SHIELD_2: Final[i64] = _block("king_shield")[1]
_N_SEMI_OPEN_KING: Final[i64] = _block("king_open_files")[0]
_N_OPEN_KING: Final[i64] = _block("king_open_files")[1]
_N_STORM_1: Final[i64] = _block("pawn_storm")[0]
_N_STORM_2: Final[i64] = _block("pawn_storm")[1]
_N_STORM_3: Final[i64] = _block("pawn_storm")[2]
_N_PAIR: Final[i64] = _weight("bishop_pair")
_N_MINOR_THREAT: Final[i64] = _weight("minor_threat")
_N_ROOK_OPEN: Final[i64] = _weight("rook_open_file")
_N_ROOK_SEMI: Final[i64] = _weight("rook_semi_open_file")
_N_ROOK_7TH: Final[i64] = _weight("rook_seventh")
_N_QUEEN_OPEN: Final[i64] = _weight("queen_open_file")
_N_QUEEN_SEMI: Final[i64] = _weight("queen_semi_open_file")
_N_QUEEN_7TH: Final[i64] = _weight("queen_seventh")
_N_THREAT: Final[i64] = _weight("pawn_threat")
_N_ROOK_THREAT: Final[i64] = _weight("rook_threat")
_N_HANGING: Final[i64] = _weight("hanging")
_N_TEMPO: Final[i64] = _weight("tempo")
_N_ROOK_BEHIND: Final[i64] = _weight("rook_behind_passer")
_N_MINOR_ON_MINOR: Final[i64] = _weight("minor_on_minor")
_N_WEAK_ZONE: Final[i64] = _weight("weak_zone")
_N_ISOLATED: Final[i64] = _weight("isolated")
_N_DOUBLED: Final[i64] = _weight("doubled")
_N_BACKWARD: Final[i64] = _weight("backward")
_N_SPACE: Final[i64] = _weight("space")
_N_KING_PAWN: Final[i64] = _weight("king_pawn_distance")
_N_BAD_BISHOP: Final[i64] = _weight("bad_bishop")
_N_MAX_PHASE: Final[i64] = MAX_PHASE
_N_SCALE_NORMAL: Final[i64] = SCALE_NORMAL


def _by_square(block: list[i64]) -> list[i64]:
    """A by-relative-rank block spread over the squares: [colour * 64 + square], colour
    1 for White (python-chess's bool)."""
    black = [block[7 - (square >> 3)] for square in range(64)]
    white = [block[square >> 3] for square in range(64)]
    return black + white


_N_PASSED_AT: Final = _by_square(_block("passed"))
_N_CONNECTED_AT: Final = _by_square(_block("connected"))
_N_DISTANCE: Final[list[i64]] = list(DISTANCE)
_N_FRONT_WHITE: Final[list[i64]] = [_bb(b) for b in FRONT[chess.WHITE]]
_N_FRONT_BLACK: Final[list[i64]] = [_bb(b) for b in FRONT[chess.BLACK]]
_N_KING_ZONE: Final[list[i64]] = [_bb(b) for b in KING_ZONE]
_N_LIGHT: Final[i64] = _bb(chess.BB_LIGHT_SQUARES)
_N_DARK: Final[i64] = _bb(chess.BB_DARK_SQUARES)
_N_RANK_7: Final[i64] = _bb(chess.BB_RANK_7)
_N_RANK_2: Final[i64] = _bb(chess.BB_RANK_2)

PAWN_KING_SLOTS_BITS: Final = 14
"""The pawn-king table's slots (16,384), each always replaced."""
_ENTRY: Final = 18
"""Fields per pawn-king entry: what the evaluation needs of the pawns and kings alone,
computed once per pawn structure and king squares (``_fill_pawn_king``):

(packed pawn-structure, space, shelter, storm and king-pawn distance score, White's
view; White's passers, Black's passers, squares White's pawns attack, squares Black's
pawns attack, open files, files half open for White, for Black, squares safe from
enemy pawns for White, for Black, squares where a White rook or queen scores for its
file or rank, where a Black one does, White's outposts, Black's outposts, then the
packed bad-bishop term of one bishop on a light and on a dark square, White's, then
Black's). Files are whole-file bitboards. Fields 8-11 follow from the others, but
looking them up instead of deriving them at every evaluation was worth about 1.3
points of the nodes/s ratio to the PeSTO-only build (8 rounds of compare_nps.py)."""
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
_N_ALL_RANKS: Final[i64] = 0x0101010101010101
"""Multiplying an 8-bit set of files by this gives the files' squares."""
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
    """One side's packed shelter, storm and king-pawn distance terms (``features.king_shelter``,
    the storm rows and ``features.nearest_pawn``; the sign is the caller's)."""
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
    bishops, rooks and queens attack."""
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
        attacks = _KNIGHT[_lsb(pieces)]
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
    """The packed safe-check term against the king on ``king``: the squares ``safe``
    for the checking side from which a piece would check it, attacked by the checking
    side's knights, bishops, rooks or queens (their attack sets, by kind)."""
    score: i64 = 0
    if knights & _KNIGHT[king] & safe:
        score += _popcount(knights & _KNIGHT[king] & safe) * _N_CHECK_N
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


def _popcount_interpreted(b: i64) -> i64:
    """``_popcount`` for CPython, where ``int.bit_count`` is several times faster than
    the multiplications (every bitboard counted here is non-negative there)."""
    return int(b).bit_count()


if not COMPILED and _bb(1 << 63) > 0:
    # Interpreted over the interpreted board (non-negative bitboards), as board.py
    # does for its slider lookups: the same counts, the form CPython runs faster.
    # Compiled, calls go straight to the native function and this never runs.
    globals().update(_popcount=_popcount_interpreted)


class Evaluator:
    """The evaluation with its caches; one per searcher."""

    def __init__(self, cache_bits: int = EVAL_CACHE_BITS) -> None:
        size = 1 << cache_bits
        self._mask = size - 1
        self._keys = [0] * size
        self._values = [0] * size
        # The pawn-king table: per slot, the pawns and kings it holds (a king pair of
        # -1 matches nothing) and _ENTRY fields.
        slots = 1 << min(cache_bits, PAWN_KING_SLOTS_BITS)
        self._slot_mask: i64 = slots - 1
        self._pk_keys: list[i64] = [0, 0, -1] * slots
        self._pk_data: list[i64] = [0] * (_ENTRY * slots)

    def clear(self) -> None:
        """Forget every cached evaluation (not needed for correctness)."""
        self._keys = [0] * len(self._keys)
        self._pk_keys = [0, 0, -1] * (len(self._pk_keys) // 3)

    def evaluate(self, board: Board) -> int:
        """The evaluation of the native search board (side to move's view), cached by
        its key (the compiled board's keys are signed: stored as given)."""
        key = board.key
        slot = key & self._mask
        if self._keys[slot] == key:
            return self._values[slot]
        return self._evaluate_uncached(board)

    def _evaluate_uncached(self, board: Board) -> int:
        """``evaluate`` after a cache miss (the network's correction calls it after its
        own lookup); stores the score in the cache."""
        white: i64 = board.white
        black: i64 = board.black
        kings: i64 = board.kings
        if not kings & white or not kings & black:
            # Only hand-made test positions lack a king: use the definition.
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
        white_all = white_pieces_attack | _KING[white_king]
        black_all = black_pieces_attack | _KING[black_king]
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


def evaluation_report(board: chess.Board) -> list[str]:
    """``eval``: the terms (White's view, by the definition in features.py), the phase,
    then the evaluation from both sides: the entry point's score on the native board."""
    score = Evaluator(cache_bits=0).evaluate(Board.from_chess(board))
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
