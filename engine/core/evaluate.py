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
search board (engine.core.board), both through one body over plain bitboards, so
that the two cannot score a position apart; ``evaluate(board)`` is the from-scratch
form for tools and tests, and ``evaluation_report(board)`` the term-by-term table of
the UCI ``eval`` command. This module must not search, and the search must not call
``evaluate(board)`` per node.
"""

from __future__ import annotations

from typing import Callable, Final, TypeVar

import chess

from engine.core.board import WHITE, Board, _u64
from engine.core.features import (
    DISTANCE,
    FRONT,
    KING_ZONE,
    MAX_PHASE,
    OFFSET,
    SCALE_NORMAL,
    SIZE,
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


class Evaluator:
    """The evaluation with its caches; one per searcher."""

    def __init__(self, cache_bits: int = EVAL_CACHE_BITS) -> None:
        size = 1 << cache_bits
        self._mask = size - 1
        self._keys = [0] * size
        self._values = [0] * size
        self._pawn_cache: dict[int, _PawnEntry] = {}
        self._pawn_king_cache: dict[int, _PawnEntry] = {}

    def clear(self) -> None:
        """Forget every cached evaluation (not needed for correctness)."""
        self._keys = [0] * len(self._keys)
        self._pawn_cache.clear()
        self._pawn_king_cache.clear()

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
        white = _u64(board.white)
        black = _u64(board.black)
        kings = _u64(board.kings)
        if not kings & white or not kings & black:
            chess_board = chess.Board(board.fen(), chess960=board.chess960)
            return evaluate_features(chess_board, MG_WEIGHTS, EG_WEIGHTS)
        return self._evaluate(
            key,
            white,
            black,
            _u64(board.pawns),
            _u64(board.knights),
            _u64(board.bishops),
            _u64(board.rooks),
            _u64(board.queens),
            kings,
            board.turn == WHITE,
            board.mg,
            board.eg,
            board.phase,
        )

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
