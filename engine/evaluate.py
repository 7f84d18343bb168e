"""Static evaluation, in centipawns from the side to move's point of view.

A tapered evaluation: material and piece-square tables (kept incrementally by
``Position``), pawn structure, mobility, king safety, bishop pair, rooks and
queens on open files and the seventh rank, pawn threats, tempo, and scaling of
drawish endings. It computes exactly ``weights x features`` as defined in
``engine.features`` (the tests hold the two equal), but fast: pawn-structure
and king-shelter terms are cached by the pawns and king squares, whole
evaluations by the Zobrist key, and the per-piece terms are summed in one pass
over bitboards without building a feature vector.

``Evaluator`` owns the caches (one per searcher: no global search state);
``evaluate(board)`` is the from-scratch form for tools and tests. This module
must not search, and the search must not call ``evaluate(board)`` per node.
"""

from __future__ import annotations

import chess

from engine.features import (
    DISTANCE,
    KING_ZONE,
    MAX_PHASE,
    NOT_FILE_A,
    NOT_FILE_H,
    OFFSET,
    SCALE_NORMAL,
    SIZE,
    blend,
    evaluate_features,
    king_shelter,
    pawn_structure,
    scale_factors,
)
from engine.position import Position
from engine.weights import EG_WEIGHTS, MG_WEIGHTS

EVAL_CACHE_BITS = 16
"""Evaluations cached by key: 65,536 slots (about 1 MB), always replaced."""
PAWN_CACHE_LIMIT = 1 << 16
"""Entries kept in each pawn cache before it is cleared (a bound on memory)."""


_PACK_SHIFT = 16
_PACK_HALF = 1 << (_PACK_SHIFT - 1)
_PACK_MASK = (1 << _PACK_SHIFT) - 1


def _pack(mg: int, eg: int) -> int:
    """One int holding both phases, ``mg + eg * 2**16``: one addition per term.

    Sums stay exact while the middlegame part stays within +-32767 cp.
    """
    return mg + (eg << _PACK_SHIFT)


def _block(name: str) -> tuple[int, ...]:
    """A block of weights, packed."""
    start, size = OFFSET[name], SIZE[name]
    return tuple(_pack(MG_WEIGHTS[i], EG_WEIGHTS[i]) for i in range(start, start + size))


_PASSED = _block("passed")
_BLOCKED = _block("passed_blocked")
_KING_DISTANCE = _block("passed_king_distance")
_CONNECTED = _block("connected")
(_ISOLATED,) = _block("isolated")
(_DOUBLED,) = _block("doubled")
(_BACKWARD,) = _block("backward")
_MOB_N = _block("mobility_knight")
_MOB_B = _block("mobility_bishop")
_MOB_R = _block("mobility_rook")
_MOB_Q = _block("mobility_queen")
_ZONE_N, _ZONE_B, _ZONE_R, _ZONE_Q = _block("king_zone_attacks")
_ATTACKERS = _block("king_attackers")
_SHIELD_1, _SHIELD_2 = _block("king_shield")
_SEMI_OPEN_KING, _OPEN_KING = _block("king_open_files")
(_PAIR,) = _block("bishop_pair")
(_ROOK_OPEN,) = _block("rook_open_file")
(_ROOK_SEMI,) = _block("rook_semi_open_file")
(_ROOK_7TH,) = _block("rook_seventh")
(_QUEEN_OPEN,) = _block("queen_open_file")
(_QUEEN_SEMI,) = _block("queen_semi_open_file")
(_QUEEN_7TH,) = _block("queen_seventh")
(_THREAT,) = _block("pawn_threat")
(_MINOR_THREAT,) = _block("minor_threat")
(_TEMPO,) = _block("tempo")

_DISTANCE = DISTANCE
_BB_SQUARES = chess.BB_SQUARES
_BB_FILES = chess.BB_FILES
_BB_ALL = chess.BB_ALL
_KNIGHT_ATTACKS = chess.BB_KNIGHT_ATTACKS
_DIAG_ATTACKS = chess.BB_DIAG_ATTACKS
_DIAG_MASKS = chess.BB_DIAG_MASKS
_RANK_ATTACKS = chess.BB_RANK_ATTACKS
_RANK_MASKS = chess.BB_RANK_MASKS
_FILE_ATTACKS = chess.BB_FILE_ATTACKS
_FILE_MASKS = chess.BB_FILE_MASKS


def _pawn_terms(white_pawns: int, black_pawns: int) -> tuple[int, int, int]:
    """(packed score, White's passers, Black's passers) of the pawn-structure terms."""
    score = 0
    passers = [0, 0]
    for color, own, theirs in (
        (chess.WHITE, white_pawns, black_pawns),
        (chess.BLACK, black_pawns, white_pawns),
    ):
        bb, passed, connected, isolated, doubled, backward = pawn_structure(own, theirs, color)
        passers[color] = bb
        part = isolated * _ISOLATED + doubled * _DOUBLED + backward * _BACKWARD
        for rank in range(8):
            part += passed[rank] * _PASSED[rank] + connected[rank] * _CONNECTED[rank]
        score += part if color else -part
    return score, passers[chess.WHITE], passers[chess.BLACK]


def _shelter_terms(white_pawns: int, black_pawns: int, white_king: int, black_king: int) -> int:
    """Packed score of the king-shelter terms (White's minus Black's)."""
    score = 0
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
        )
        score += part if color else -part
    return score


class Evaluator:
    """The evaluation with its caches; one per searcher."""

    def __init__(self, cache_bits: int = EVAL_CACHE_BITS) -> None:
        size = 1 << cache_bits
        self._mask = size - 1
        self._keys = [0] * size
        self._values = [0] * size
        self._pawn_cache: dict[tuple[int, int], tuple[int, int, int]] = {}
        self._pawn_king_cache: dict[tuple[int, int, int, int], tuple[int, int, int]] = {}

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
        white_king = (kings & white).bit_length() - 1
        black_king = (kings & black).bit_length() - 1
        if white_king < 0 or black_king < 0:
            # Only hand-made test positions lack a king: use the definition.
            return evaluate_features(board, MG_WEIGHTS, EG_WEIGHTS)
        pawns = board.pawns
        white_pawns = pawns & white
        black_pawns = pawns & black
        occupied = board.occupied

        # Pawn structure and king shelter, from the caches. (Kings move more
        # often than pawns: a king move re-counts only the shelter.)
        pawn_key = (white_pawns, black_pawns, white_king, black_king)
        entry = self._pawn_king_cache.get(pawn_key)
        if entry is None:
            pawn_entry = self._pawn_cache.get((white_pawns, black_pawns))
            if pawn_entry is None:
                if len(self._pawn_cache) >= PAWN_CACHE_LIMIT:
                    self._pawn_cache.clear()
                pawn_entry = _pawn_terms(white_pawns, black_pawns)
                self._pawn_cache[(white_pawns, black_pawns)] = pawn_entry
            shelter = _shelter_terms(white_pawns, black_pawns, white_king, black_king)
            entry = (pawn_entry[0] + shelter, pawn_entry[1], pawn_entry[2])
            if len(self._pawn_king_cache) >= PAWN_CACHE_LIMIT:
                self._pawn_king_cache.clear()
            self._pawn_king_cache[pawn_key] = entry
        score = entry[0]  # packed (mg, eg), White's view, without the psqt sums
        # Passers: blocked or not, and how near each king is to the stop square.
        passers = entry[1]
        while passers:
            low = passers & -passers
            passers ^= low
            stop = low.bit_length() + 7
            rank = (stop >> 3) - 1
            if low << 8 & occupied:
                score += _BLOCKED[rank]
            score += _KING_DISTANCE[rank] * (
                _DISTANCE[black_king * 64 + stop] - _DISTANCE[white_king * 64 + stop]
            )
        passers = entry[2]
        while passers:
            low = passers & -passers
            passers ^= low
            stop = low.bit_length() - 9
            rank = 6 - (stop >> 3)
            if low >> 8 & occupied:
                score -= _BLOCKED[rank]
            score -= _KING_DISTANCE[rank] * (
                _DISTANCE[white_king * 64 + stop] - _DISTANCE[black_king * 64 + stop]
            )

        white_pawn_attacks = (
            ((white_pawns & NOT_FILE_A) << 7) | ((white_pawns & NOT_FILE_H) << 9)
        ) & _BB_ALL
        black_pawn_attacks = ((black_pawns & NOT_FILE_A) >> 9) | ((black_pawns & NOT_FILE_H) >> 7)
        knights = board.knights
        bishops = board.bishops
        rooks = board.rooks
        queens = board.queens
        majors = rooks | queens

        # Mobility, attacks on the enemy king zone, rooks and queens: White, then Black.
        for side in (1, -1):
            if side == 1:
                own = white
                area = ~white & ~black_pawn_attacks & _BB_ALL
                zone = KING_ZONE[black_king]
                their_majors = majors & black
                own_pawns = white_pawns
                their_pawns = black_pawns
                seventh_rank = 6
            else:
                own = black
                area = ~black & ~white_pawn_attacks & _BB_ALL
                zone = KING_ZONE[white_king]
                their_majors = majors & white
                own_pawns = black_pawns
                their_pawns = white_pawns
                seventh_rank = 1
            part = 0
            attackers = 0
            bb = knights & own
            while bb:
                low = bb & -bb
                bb ^= low
                attacks = _KNIGHT_ATTACKS[low.bit_length() - 1]
                part += _MOB_N[(attacks & area).bit_count()]
                if attacks & their_majors:
                    part += (attacks & their_majors).bit_count() * _MINOR_THREAT
                if attacks & zone:
                    attackers += 1
                    part += (attacks & zone).bit_count() * _ZONE_N
            bb = bishops & own
            if bb & (bb - 1):
                part += _PAIR
            while bb:
                low = bb & -bb
                bb ^= low
                square = low.bit_length() - 1
                attacks = _DIAG_ATTACKS[square][_DIAG_MASKS[square] & occupied]
                part += _MOB_B[(attacks & area).bit_count()]
                if attacks & their_majors:
                    part += (attacks & their_majors).bit_count() * _MINOR_THREAT
                if attacks & zone:
                    attackers += 1
                    part += (attacks & zone).bit_count() * _ZONE_B
            bb = rooks & own
            while bb:
                low = bb & -bb
                bb ^= low
                square = low.bit_length() - 1
                attacks = (
                    _RANK_ATTACKS[square][_RANK_MASKS[square] & occupied]
                    | _FILE_ATTACKS[square][_FILE_MASKS[square] & occupied]
                )
                part += _MOB_R[(attacks & area).bit_count()]
                if attacks & zone:
                    attackers += 1
                    part += (attacks & zone).bit_count() * _ZONE_R
                file_mask = _BB_FILES[square & 7]
                if not file_mask & own_pawns:
                    part += _ROOK_SEMI if file_mask & their_pawns else _ROOK_OPEN
                if square >> 3 == seventh_rank:
                    part += _ROOK_7TH
            bb = queens & own
            while bb:
                low = bb & -bb
                bb ^= low
                square = low.bit_length() - 1
                attacks = (
                    _DIAG_ATTACKS[square][_DIAG_MASKS[square] & occupied]
                    | _RANK_ATTACKS[square][_RANK_MASKS[square] & occupied]
                    | _FILE_ATTACKS[square][_FILE_MASKS[square] & occupied]
                )
                part += _MOB_Q[(attacks & area).bit_count()]
                if attacks & zone:
                    attackers += 1
                    part += (attacks & zone).bit_count() * _ZONE_Q
                file_mask = _BB_FILES[square & 7]
                if not file_mask & own_pawns:
                    part += _QUEEN_SEMI if file_mask & their_pawns else _QUEEN_OPEN
                if square >> 3 == seventh_rank:
                    part += _QUEEN_7TH
            part += _ATTACKERS[attackers if attackers < 4 else 4]
            if side == 1:
                score += part
            else:
                score -= part

        # Pawns attacking pieces, and the side to move.
        targets = knights | bishops | rooks | queens
        score += _THREAT * (
            (white_pawn_attacks & black & targets).bit_count()
            - (black_pawn_attacks & white & targets).bit_count()
        )
        white_to_move = board.turn
        score += _TEMPO if white_to_move else -_TEMPO

        mg_part = ((score + _PACK_HALF) & _PACK_MASK) - _PACK_HALF
        mg = pos.mg + mg_part
        eg = pos.eg + ((score - mg_part) >> _PACK_SHIFT)
        # Drawish endings scale the endgame part; checked only without pieces or pawns.
        scale = SCALE_NORMAL
        if not (knights | rooks | queens) or not white_pawns or not black_pawns:
            scale_white, scale_black = scale_factors(board)
            scale = scale_white if eg > 0 else scale_black
        phase = pos.phase
        if phase > MAX_PHASE:
            phase = MAX_PHASE
        value = blend(mg, eg, phase, scale, white_to_move)
        self._keys[slot] = key
        self._values[slot] = value
        return value


def evaluate(board: chess.Board) -> int:
    """Evaluation of ``board`` from scratch (side to move's view), no caches kept."""
    return Evaluator(cache_bits=0).evaluate(Position(board.copy()))
