"""Bitboards for the search board: constants, bit helpers and the tables built at import.

This module owns what the search board (engine.core.board) and its generator
(engine.core.movegen), static exchange (engine.core.exchange) and the evaluation look
up but never change: the piece, colour and move-flag constants, the bit helpers
(``_bb``, ``_u64``, ``_lsb``, ``_popcount``), the square tables (between, line,
ranks, files), the leapers' attack tables, the sliders' lookups (``bishop_attacks``,
``rook_attacks``) and the Polyglot Zobrist keys by piece and square. It holds no
position and must not import the board: everything here is a pure function of its
arguments or a table fixed at import (from python-chess's tables; interpreted, the
sliders' lookups keep reading python-chess's, which CPython runs faster).

One source runs interpreted and compiled. Compiled, ``i64`` arithmetic wraps and a
bitboard with bit 63 set is negative; interpreted, bitboards are plain non-negative
ints. The two agree bit for bit as long as left shifts never push bits past bit 63
(masks first) and every right shift of a possibly negative value is masked after;
``_bb`` converts constants at import for the build that runs. Sliding attacks are
kindergarten-style lookups: the blockers on one line are gathered into six bits by a
multiply, which wraps the same way in both builds once the top six bits are taken.
Interpreted, ``_lsb`` and the sliders' lookups are replaced at import by forms
CPython runs faster (see the end of the slider section); importers must therefore
import the names (``from engine.core.bitboards import _lsb``) after this module has
run, which any import does.
"""

from __future__ import annotations

from typing import Final

import chess
import chess.polyglot
from mypy_extensions import i64

# --- pieces, colours and moves ------------------------------------------------

WHITE: Final = 0
BLACK: Final = 1
PAWN: Final = 1
KNIGHT: Final = 2
BISHOP: Final = 3
ROOK: Final = 4
QUEEN: Final = 5
KING: Final = 6
# A mailbox piece is ``type | colour << 3`` (0: empty square).

# Moves are ints: ``from | to << 6 | promotion << 12 | flag << 15``; castling is
# encoded as the king taking its own rook (flag CASTLE), en passant has flag
# EN_PASSANT; 0 is the null move.
NORMAL: Final = 0
EN_PASSANT: Final = 1
CASTLE: Final = 2

NO_SQUARE: Final = 64


def move_promotion(move: i64) -> i64:
    """The piece type a move promotes to (0 for none): for tools outside the hot path,
    which reads the field inline."""
    return (move >> 12) & 7


# --- the build's integers and bit helpers ---------------------------------------


def _wraps() -> bool:
    """True in the compiled build, where ``i64`` arithmetic wraps around."""
    x: i64 = 1
    for _ in range(64):
        x = x + x
    return x == 0


_WRAPS = _wraps()


def _bb(value: int) -> i64:
    """A 64-bit pattern as this build stores it: signed if compiled, else unsigned."""
    value &= 0xFFFFFFFFFFFFFFFF
    if _WRAPS and value >= 0x8000000000000000:
        value -= 0x10000000000000000
    return value


def _u64(value: i64) -> int:
    """A stored 64-bit pattern as a non-negative Python int (the edge's form)."""
    return int(value) & 0xFFFFFFFFFFFFFFFF


_DEBRUIJN: Final[i64] = 0x03F79D71B4CB0A89
_DEBRUIJN_INDEX: Final[list[i64]] = [0] * 64
for _i in range(64):
    _DEBRUIJN_INDEX[((0x03F79D71B4CB0A89 << _i) & 0xFFFFFFFFFFFFFFFF) >> 58] = _i


def _lsb(b: i64) -> i64:
    """Index of the lowest set bit of a non-zero bitboard."""
    return _DEBRUIJN_INDEX[(((b & -b) * _DEBRUIJN) >> 58) & 63]


def _popcount(b: i64) -> i64:
    b = b - ((b >> 1) & 0x5555555555555555)
    b = (b & 0x3333333333333333) + ((b >> 2) & 0x3333333333333333)
    b = (b + (b >> 4)) & 0x0F0F0F0F0F0F0F0F
    return ((b * 0x0101010101010101) >> 56) & 0xFF


def _one() -> i64:
    return 1


# Square masks are shifted from this run-time 1: mypyc folds a literal 1 << sq into
# a 32-bit C shift, and a list read unboxes an int object every time.
_ONE: Final[i64] = _one()

# --- squares, lines, ranks and files ------------------------------------------------

_BETWEEN: Final[list[i64]] = [_bb(chess.between(a, b)) for a in range(64) for b in range(64)]
_LINE: Final[list[i64]] = [_bb(chess.ray(a, b)) for a in range(64) for b in range(64)]
_RANK_1: Final[i64] = 0xFF
_RANK_8: Final[i64] = _bb(0xFF << 56)
_BACKRANK: Final[list[i64]] = [_RANK_1, _RANK_8]
_A_FILE: Final[i64] = 0x0101010101010101
_B_FILE: Final[i64] = 0x0202020202020202
_H_FILE: Final[i64] = _bb(0x8080808080808080)
_RANK_3: Final[i64] = 0xFF << 16
_RANK_6: Final[i64] = 0xFF << 40
_FILE_MULT: Final[i64] = 0x0004081020408000

# --- leapers: knights, kings, pawns --------------------------------------------------

_KNIGHT: Final[list[i64]] = [_bb(b) for b in chess.BB_KNIGHT_ATTACKS]
_KING: Final[list[i64]] = [_bb(b) for b in chess.BB_KING_ATTACKS]
# _PAWN[colour * 64 + sq]: the squares a pawn of that colour on sq attacks.
_PAWN: Final[list[i64]] = [
    _bb(chess.BB_PAWN_ATTACKS[c][s]) for c in (True, False) for s in range(64)
]

# --- sliders: kindergarten lookups --------------------------------------------------


def _ray_attacks(square: int, occupied: int, deltas: tuple[tuple[int, int], ...]) -> int:
    attacks = 0
    for df, dr in deltas:
        f, r = square % 8 + df, square // 8 + dr
        while 0 <= f < 8 and 0 <= r < 8:
            attacks |= 1 << (r * 8 + f)
            if occupied & (1 << (r * 8 + f)):
                break
            f, r = f + df, r + dr
    return attacks


def _inner(square: int, deltas: tuple[tuple[int, int], ...]) -> int:
    """The squares of the line through square, without square and the line's ends."""
    edges = 0
    full = _ray_attacks(square, 0, deltas)
    for df, dr in deltas:
        f, r = square % 8 + df, square // 8 + dr
        last = -1
        while 0 <= f < 8 and 0 <= r < 8:
            last = r * 8 + f
            f, r = f + df, r + dr
        if last >= 0:
            edges |= 1 << last
    return full & ~edges


def _subsets(mask: int) -> list[int]:
    result = [0]
    while True:
        sub = (result[-1] - mask) & mask
        if sub == 0:
            return result
        result.append(sub)


_DIAG_DELTAS: Final = ((1, 1), (-1, -1))
_ANTI_DELTAS: Final = ((1, -1), (-1, 1))
_RANK_DELTAS: Final = ((1, 0), (-1, 0))
_FILE_DELTAS: Final = ((0, 1), (0, -1))

_DIAG_MASK: Final[list[i64]] = [_bb(_inner(s, _DIAG_DELTAS)) for s in range(64)]
_ANTI_MASK: Final[list[i64]] = [_bb(_inner(s, _ANTI_DELTAS)) for s in range(64)]


def _diag_index(occupied: int, mask: int) -> int:
    return (((occupied & mask) * 0x0202020202020202) & 0xFFFFFFFFFFFFFFFF) >> 58


def _rank_index(occupied: int, square: int) -> int:
    return (occupied >> ((square & 56) + 1)) & 63


def _file_index(occupied: int, square: int) -> int:
    column = (occupied >> (square & 7)) & 0x0101010101010101
    return ((column * 0x0004081020408000) & 0xFFFFFFFFFFFFFFFF) >> 58


def _slider_tables() -> tuple[list[i64], list[i64]]:
    """Diagonal and orthogonal attack tables: [square * 128 + line * 64 + index]."""
    diag: list[i64] = [0] * (64 * 128)
    ortho: list[i64] = [0] * (64 * 128)
    for s in range(64):
        own = 1 << s
        for kind, deltas in enumerate((_DIAG_DELTAS, _ANTI_DELTAS, _RANK_DELTAS, _FILE_DELTAS)):
            line = kind & 1
            table = diag if kind < 2 else ortho
            inner = _inner(s, deltas)
            filled: dict[int, int] = {}
            for sub in _subsets(inner):
                attacks = _ray_attacks(s, sub, deltas)
                # Rank and file indexes read the whole line, the piece's own square too.
                for occupied in (sub, sub | own):
                    if kind < 2:
                        index = _diag_index(occupied, inner)
                    elif kind == 2:
                        index = _rank_index(occupied, s)
                    else:
                        index = _file_index(occupied, s)
                    assert filled.setdefault(index, attacks) == attacks
                    table[s * 128 + line * 64 + index] = _bb(attacks)
    return diag, ortho


_DIAG_ATTACKS, _ORTHO_ATTACKS = _slider_tables()
_DIAG: Final[list[i64]] = _DIAG_ATTACKS
_ORTHO: Final[list[i64]] = _ORTHO_ATTACKS

_BISHOP_RAYS: Final[list[i64]] = [_DIAG[s * 128] | _DIAG[s * 128 + 64] for s in range(64)]
"""Squares a bishop on each square reaches on an empty board."""
_ROOK_RAYS: Final[list[i64]] = [_ORTHO[s * 128] | _ORTHO[s * 128 + 64] for s in range(64)]
"""Squares a rook on each square reaches on an empty board."""


def bishop_attacks(sq: i64, occupied: i64) -> i64:
    """Squares a bishop on ``sq`` attacks, blockers included."""
    base = sq * 128
    d = (((occupied & _DIAG_MASK[sq]) * _B_FILE) >> 58) & 63
    a = (((occupied & _ANTI_MASK[sq]) * _B_FILE) >> 58) & 63
    return _DIAG[base + d] | _DIAG[base + 64 + a]


def rook_attacks(sq: i64, occupied: i64) -> i64:
    """Squares a rook on ``sq`` attacks, blockers included."""
    base = sq * 128
    r = (occupied >> ((sq & 56) + 1)) & 63
    f = ((((occupied >> (sq & 7)) & _A_FILE) * _FILE_MULT) >> 58) & 63
    return _ORTHO[base + r] | _ORTHO[base + 64 + f]


def _lsb_interpreted(b: i64) -> i64:
    """``_lsb`` for CPython: int.bit_length is about a third faster there. (The ``| 1``
    makes ``_lsb(0)`` 0, as the multiplication gives: a position without a king of the
    side not to move, which python-chess's legal moves can reach, must not fail.)"""
    low: int = b & -b | 1
    return low.bit_length() - 1


def _bishop_attacks_interpreted(sq: i64, occupied: i64) -> i64:
    """``bishop_attacks`` by python-chess's tables (a dict per square, by the masked
    occupancy): in CPython 2-3x faster than the multiplications."""
    return chess.BB_DIAG_ATTACKS[sq][chess.BB_DIAG_MASKS[sq] & occupied]


def _rook_attacks_interpreted(sq: i64, occupied: i64) -> i64:
    """``rook_attacks`` by python-chess's tables (about 1.5x faster in CPython)."""
    return (
        chess.BB_RANK_ATTACKS[sq][chess.BB_RANK_MASKS[sq] & occupied]
        | chess.BB_FILE_ATTACKS[sq][chess.BB_FILE_MASKS[sq] & occupied]
    )


if not _WRAPS:
    # Interpreted, every call looks these names up in the module's globals: point them
    # at the forms CPython runs faster (the same results; tests/test_board.py checks
    # the board in this build). Compiled, calls go straight to the native functions
    # above and this never runs.
    globals().update(
        _lsb=_lsb_interpreted,
        bishop_attacks=_bishop_attacks_interpreted,
        rook_attacks=_rook_attacks_interpreted,
    )

# --- Zobrist keys (Polyglot's) ---------------------------------------------------

_ZOBRIST: Final[list[i64]] = [_bb(v) for v in chess.polyglot.POLYGLOT_RANDOM_ARRAY]
# _PIECE_KEY[piece * 64 + sq], piece = type | colour << 3 (Polyglot's kind: white is odd).
_PIECE_KEY: Final[list[i64]] = [
    _bb(
        chess.polyglot.POLYGLOT_RANDOM_ARRAY[64 * ((p & 7) - 1) * 2 + 64 * (1 - (p >> 3)) + s]
        if 1 <= (p & 7) <= 6
        else 0
    )
    for p in range(16)
    for s in range(64)
]
_TURN_KEY: Final[i64] = _ZOBRIST[780]
