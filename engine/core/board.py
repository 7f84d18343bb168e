"""The search board: a chess position in native 64-bit integers, for mypyc.

``Board`` owns a position as ``i64`` bitboards (one per piece type, one per colour)
plus a mailbox, the side to move, castling rights (the rook squares, so Chess960
works), the en passant square, the fifty-move counter and the fullmove number. It
makes and unmakes moves (and null moves) on an undo stack without copying, keeps the
Polyglot Zobrist key incrementally (equal to ``chess.polyglot.zobrist_hash``), detects
repetitions over its key history, generates legal moves in the picker's stages
(noisy: captures and all promotions; quiets; evasions; quiet checks), answers attack
queries and static exchange (``see_ge`` as ``engine.core.see.see_ge``, ``see`` as its
value). python-chess is used only at the edges: ``from_chess``, ``to_chess_move``,
``from_chess_move`` and the tables built at import.

For the evaluation it also keeps ``Position``'s material and piece-square sums
(``mg``, ``eg``, ``phase``: engine.core.psqt's tables) and, given a network
(``use_network``), the packed accumulator ``acc`` of engine.core.nnue's
``Incremental``; make keeps the sums and the accumulator in the undo record, unmake
restores them (the phase by its change: captures and promotions alone change it).
Without a network a move costs one test more, nothing else.

Moves are ints: ``from | to << 6 | promotion << 12 | flag << 15``; castling is
encoded as the king taking its own rook (flag ``CASTLE``), en passant has flag
``EN_PASSANT``; 0 is the null move. Generation is legal directly (checkers and pins).

One source runs interpreted and compiled. Compiled, ``i64`` arithmetic wraps and a
bitboard with bit 63 set is negative; interpreted, bitboards are plain non-negative
ints. The two agree bit for bit as long as left shifts never push bits past bit 63
(masks first) and every right shift of a possibly negative value is masked after;
``_bb`` converts constants at import for the build that runs. Sliding attacks are
kindergarten-style lookups: the blockers on one line are gathered into six bits by a
multiply, which wraps the same way in both builds once the top six bits are taken.
The search (engine.core.search) runs on this board; python-chess's boards stay with
the users, the tools and the tests.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, Optional, final

import chess
import chess.polyglot
from mypy_extensions import i64

from engine.core.features import PHASE_WEIGHT
from engine.core.psqt import EG_TABLE, MG_TABLE

if TYPE_CHECKING:
    from engine.core.nnue import Incremental  # numpy: not needed at run time here

WHITE: Final = 0
BLACK: Final = 1
PAWN: Final = 1
KNIGHT: Final = 2
BISHOP: Final = 3
ROOK: Final = 4
QUEEN: Final = 5
KING: Final = 6

NORMAL: Final = 0
EN_PASSANT: Final = 1
CASTLE: Final = 2

NO_SQUARE: Final = 64

SEE_VALUES: Final = (0, 100, 320, 330, 500, 950, 20000)
"""As ``engine.core.see.SEE_VALUES``: exchange values by piece type, king last."""


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

_SQ: Final[list[i64]] = [_bb(1 << _s) for _s in range(64)]


def _one() -> i64:
    return 1


# Square masks are shifted from this run-time 1: mypyc folds a literal 1 << sq into
# a 32-bit C shift, and a list read unboxes an int object every time.
_ONE: Final[i64] = _one()
_KNIGHT: Final[list[i64]] = [_bb(b) for b in chess.BB_KNIGHT_ATTACKS]
_KING: Final[list[i64]] = [_bb(b) for b in chess.BB_KING_ATTACKS]
# _PAWN[colour * 64 + sq]: the squares a pawn of that colour on sq attacks.
_PAWN: Final[list[i64]] = [
    _bb(chess.BB_PAWN_ATTACKS[c][s]) for c in (True, False) for s in range(64)
]
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


def _psqt_index(piece: int, sq: int) -> int:
    """Position's piece index (MG_TABLE's and the network columns' order) of a mailbox
    piece on ``sq``: ``(2 * (type - 1) + colour) * 64 + sq``, colour 1 for White."""
    return (2 * ((piece & 7) - 1) + 1 - (piece >> 3)) * 64 + sq


# _MG[piece * 64 + sq] (and _EG): the piece-square sums' tables in the mailbox's order.
_MG: Final[list[i64]] = [
    MG_TABLE[_psqt_index(p, s)] if 1 <= (p & 7) <= 6 else 0 for p in range(16) for s in range(64)
]
_EG: Final[list[i64]] = [
    EG_TABLE[_psqt_index(p, s)] if 1 <= (p & 7) <= 6 else 0 for p in range(16) for s in range(64)
]
# make's form: both in one i64, mg + eg * 2**32, so that a move reads half the entries
# (list reads unbox an int object each, compiled); _unpack_mg takes the low half back.
_PSQT: Final[list[i64]] = [_MG[i] + _EG[i] * 0x100000000 for i in range(16 * 64)]
_HALF32: Final[i64] = 0x80000000
_LOW32: Final[i64] = 0xFFFFFFFF
_PHASE: Final[list[i64]] = [PHASE_WEIGHT[p & 7] if 1 <= (p & 7) <= 6 else 0 for p in range(16)]
_PIECE_SYMBOLS: Final = " pnbrqk"


def _lsb(b: i64) -> i64:
    """Index of the lowest set bit of a non-zero bitboard."""
    return _DEBRUIJN_INDEX[(((b & -b) * _DEBRUIJN) >> 58) & 63]


def _popcount(b: i64) -> i64:
    b = b - ((b >> 1) & 0x5555555555555555)
    b = (b & 0x3333333333333333) + ((b >> 2) & 0x3333333333333333)
    b = (b + (b >> 4)) & 0x0F0F0F0F0F0F0F0F
    return ((b * 0x0101010101010101) >> 56) & 0xFF


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


def move_from(move: i64) -> i64:
    return move & 63


def move_to(move: i64) -> i64:
    return (move >> 6) & 63


def move_promotion(move: i64) -> i64:
    return (move >> 12) & 7


def move_flag(move: i64) -> i64:
    return (move >> 15) & 3


@final
class Undo:
    """What ``Board.unmake`` restores: the move and the state before it."""

    move: i64
    captured: i64
    ep_square: i64
    reversible: i64
    halfmove_clock: i64
    castling: i64
    key: i64
    rep_key: i64
    mg: i64
    eg: i64
    acc: int
    """The network's accumulator before the move (written only with a network)."""

    def __init__(self) -> None:
        self.move = 0
        self.captured = 0
        self.ep_square = NO_SQUARE
        self.reversible = 0
        self.halfmove_clock = 0
        self.castling = 0
        self.key = 0
        self.rep_key = 0
        self.mg = 0
        self.eg = 0
        self.acc = 0


@final
class Board:
    """A position with make/unmake, legal move stages, keys and exchange values."""

    pawns: i64
    knights: i64
    bishops: i64
    rooks: i64
    queens: i64
    kings: i64
    white: i64
    black: i64
    turn: i64
    """WHITE (0) or BLACK (1): the side to move."""
    castling: i64
    """Bitboard of the rooks that may still castle."""
    ep_square: i64
    """As python-chess's: set after every double push (NO_SQUARE if none)."""
    halfmove_clock: i64
    fullmove_number: i64
    key: i64
    """The Polyglot key: en passant counts when a pawn stands beside (legal or not)."""
    rep_key: i64
    """``key`` with en passant only when legal, as python-chess's repetitions see it."""
    reversible: i64
    """Plies since the last move after which no earlier position can repeat."""
    chess960: bool
    mg: i64
    """Material and piece-square sums, White's view, as ``Position``'s (psqt tables)."""
    eg: i64
    phase: i64
    """Phase units of the pieces on the board (not clamped to MAX_PHASE)."""
    acc: int
    """With a network (``use_network``): both perspectives' packed accumulator, as
    ``Incremental.accumulator`` gives it; 0 without."""
    has_network: bool
    _columns: list[int]
    """The network's columns by ``piece * 64 + sq`` (mailbox pieces); empty without."""
    _bias: int
    mailbox: list[i64]
    _undo: list[Undo]
    """One record a ply, kept and reused: no int objects made per move."""
    _ply: i64

    def __init__(self) -> None:
        self.pawns = 0
        self.knights = 0
        self.bishops = 0
        self.rooks = 0
        self.queens = 0
        self.kings = 0
        self.white = 0
        self.black = 0
        self.turn = WHITE
        self.castling = 0
        self.ep_square = NO_SQUARE
        self.halfmove_clock = 0
        self.fullmove_number = 1
        self.key = 0
        self.rep_key = 0
        self.reversible = 0
        self.chess960 = False
        self.mg = 0
        self.eg = 0
        self.phase = 0
        self.acc = 0
        self.has_network = False
        self._columns = []
        self._bias = 0
        self.mailbox = [0] * 64
        self._undo = []
        self._ply = 0

    # --- conversions at the edges ----------------------------------------------

    @staticmethod
    def from_chess(board: chess.Board) -> Board:
        """The position of ``board``, with its move stack replayed for repetitions."""
        root = board.root()
        result = Board()
        result._set_position(root)
        for move in board.move_stack:
            result.make(result.from_chess_move(move))
        return result

    def _set_position(self, board: chess.Board) -> None:
        for sq in range(64):
            piece = board.piece_at(sq)
            if piece is not None:
                self._put(piece.piece_type | (0 if piece.color else 8), sq)
        self.turn = WHITE if board.turn else BLACK
        self.castling = _bb(board.clean_castling_rights())
        self.ep_square = NO_SQUARE if board.ep_square is None else board.ep_square
        self.halfmove_clock = board.halfmove_clock
        self.fullmove_number = board.fullmove_number
        self.chess960 = board.chess960
        self.key = self.compute_key()
        self.rep_key = self._compute_rep_key()
        self.mg, self.eg, self.phase = self.compute_psqt()
        if self.has_network:
            self.acc = self.compute_acc()

    def _put(self, piece: i64, sq: i64) -> None:
        bit = _ONE << sq
        self.mailbox[sq] = piece
        self._toggle(piece, bit)

    def _toggle(self, piece: i64, bit: i64) -> None:
        pt = piece & 7
        if pt == PAWN:
            self.pawns ^= bit
        elif pt == KNIGHT:
            self.knights ^= bit
        elif pt == BISHOP:
            self.bishops ^= bit
        elif pt == ROOK:
            self.rooks ^= bit
        elif pt == QUEEN:
            self.queens ^= bit
        else:
            self.kings ^= bit
        if piece >> 3:
            self.black ^= bit
        else:
            self.white ^= bit

    def use_network(self, network: Optional[Incremental]) -> None:
        """Keep ``network``'s packed accumulator in ``acc`` from now on (None: stop).

        The moves made so far are taken back and made again, so that unmaking them
        restores accumulators too."""
        moves = [self._undo[ply].move for ply in range(self._ply)]
        for _ in moves:
            self.unmake()
        if network is None:
            self.has_network = False
            self._columns = []
            self._bias = 0
            self.acc = 0
        else:
            columns = network.columns
            self._columns = [
                columns[_psqt_index(p, s)] if 1 <= (p & 7) <= 6 else 0
                for p in range(16)
                for s in range(64)
            ]
            self._bias = network.bias
            self.has_network = True
            self.acc = self.compute_acc()
        for move in moves:
            if move:
                self.make(move)
            else:
                self.make_null()

    def compute_psqt(self) -> tuple[i64, i64, i64]:
        """(mg, eg, phase) from scratch (``mg``, ``eg`` and ``phase`` are kept
        incrementally)."""
        mg: i64 = 0
        eg: i64 = 0
        phase: i64 = 0
        for sq in range(64):
            piece = self.mailbox[sq]
            if piece:
                mg += _MG[piece * 64 + sq]
                eg += _EG[piece * 64 + sq]
                phase += _PHASE[piece]
        return mg, eg, phase

    def compute_acc(self) -> int:
        """The network's accumulator from scratch (0 without a network)."""
        if not self.has_network:
            return 0
        acc = self._bias
        columns = self._columns
        for sq in range(64):
            piece = self.mailbox[sq]
            if piece:
                acc += columns[piece * 64 + sq]
        return acc

    def to_chess_move(self, move: i64) -> chess.Move:
        """python-chess's move for ``move`` on this board (its chess960 flag decides
        how castling is written)."""
        if move == 0:
            return chess.Move.null()
        frm = move & 63
        to = (move >> 6) & 63
        promotion = (move >> 12) & 7
        if (move >> 15) & 3 == CASTLE and not self.chess960:
            if frm == chess.E1 and (to == chess.H1 or to == chess.A1):
                return chess.Move(chess.E1, chess.G1 if to == chess.H1 else chess.C1)
            if frm == chess.E8 and (to == chess.H8 or to == chess.A8):
                return chess.Move(chess.E8, chess.G8 if to == chess.H8 else chess.C8)
        return chess.Move(int(frm), int(to), int(promotion) if promotion else None)

    def from_chess_move(self, move: chess.Move) -> i64:
        """The int for python-chess's ``move`` on this board (any castling notation)."""
        if not move:
            return 0
        frm: i64 = move.from_square
        to: i64 = move.to_square
        piece = self.mailbox[frm]
        pt = piece & 7
        us = self.turn
        if pt == KING:
            if self.mailbox[to] == (ROOK | (us << 3)):
                return frm | (to << 6) | (CASTLE << 15)
            back: i64 = 0 if us == WHITE else 56
            if frm == back + 4 and (to == back + 6 or to == back + 2):
                rook = back + 7 if to == back + 6 else back
                return frm | (rook << 6) | (CASTLE << 15)
        if pt == PAWN and to == self.ep_square and (to - frm) % 8 != 0 and not self.mailbox[to]:
            return frm | (to << 6) | (EN_PASSANT << 15)
        promotion: i64 = move.promotion or 0
        return frm | (to << 6) | (promotion << 12)

    @staticmethod
    def from_bits(bitboard: int) -> i64:
        """A python-chess bitboard (non-negative) as this build stores bitboards."""
        return _bb(bitboard)

    def fen(self) -> str:
        """The FEN python-chess's ``board.fen()`` gives for this position."""
        rows = []
        for rank in range(7, -1, -1):
            row = ""
            empty = 0
            for file in range(8):
                piece = self.mailbox[rank * 8 + file]
                if not piece:
                    empty += 1
                    continue
                if empty:
                    row += str(empty)
                    empty = 0
                symbol = _PIECE_SYMBOLS[piece & 7]
                row += symbol if piece >> 3 else symbol.upper()
            if empty:
                row += str(empty)
            rows.append(row)
        ep = "-"
        if self._has_legal_ep():
            ep = chess.SQUARE_NAMES[self.ep_square]
        return (
            f"{'/'.join(rows)} {'w' if self.turn == WHITE else 'b'} {self._castling_xfen()} "
            f"{ep} {self.halfmove_clock} {self.fullmove_number}"
        )

    def _castling_xfen(self) -> str:
        text = ""
        for colour in (WHITE, BLACK):
            own = self.white if colour == WHITE else self.black
            kings = self.kings & own
            if not kings:
                continue
            king_file = _lsb(kings) & 7
            backrank = _BACKRANK[colour]
            rights = self.castling & backrank
            squares = []
            while rights:
                squares.append(_lsb(rights))
                rights &= rights - 1
            for rook in reversed(squares):
                rook_file = rook & 7
                a_side = rook_file < king_file
                others = own & self.rooks & backrank & ~(_ONE << rook)
                ch = "q" if a_side else "k"
                while others:
                    other = _lsb(others)
                    others &= others - 1
                    if ((other & 7) < rook_file) == a_side:
                        ch = chess.FILE_NAMES[rook_file]
                        break
                text += ch.upper() if colour == WHITE else ch
        return text or "-"

    # --- keys ------------------------------------------------------------------

    def compute_key(self) -> i64:
        """The Polyglot key from scratch (``key`` is kept incrementally)."""
        key: i64 = 0
        for sq in range(64):
            piece = self.mailbox[sq]
            if piece:
                key ^= _PIECE_KEY[piece * 64 + sq]
        key ^= self._castling_key()
        key ^= self._ep_key()
        if self.turn == WHITE:
            key ^= _TURN_KEY
        return key

    def _compute_rep_key(self) -> i64:
        ep_key = self._ep_key()
        if ep_key and not self._has_legal_ep():
            return self.key ^ ep_key
        return self.key

    def polyglot_key(self) -> int:
        """``key`` as python-chess's ``chess.polyglot.zobrist_hash`` gives it."""
        return _u64(self.key)

    def last_move(self) -> i64:
        """The move that led here (0: a null move, or none made on this board)."""
        return self._undo[self._ply - 1].move if self._ply else 0

    def piece_count(self) -> i64:
        """How many pieces (kings and pawns included) stand on the board."""
        return _popcount(self.white | self.black)

    def _castling_key(self) -> i64:
        key: i64 = 0
        rights = self.castling
        if not rights:
            return key
        for colour in (WHITE, BLACK):
            own = self.white if colour == WHITE else self.black
            mine = rights & _BACKRANK[colour]
            kings = self.kings & own & _BACKRANK[colour]
            if not mine or not kings:
                continue
            king = _lsb(kings)
            kingside = False
            queenside = False
            while mine:
                rook = _lsb(mine)
                mine &= mine - 1
                if rook > king:
                    kingside = True
                else:
                    queenside = True
            if kingside:
                key ^= _ZOBRIST[768 + 2 * colour]
            if queenside:
                key ^= _ZOBRIST[769 + 2 * colour]
        return key

    def _ep_key(self) -> i64:
        """Polyglot's rule: the en passant file counts if a pawn of the side to move
        stands beside the pawn that double-pushed (legal or not)."""
        ep = self.ep_square
        if ep == NO_SQUARE or ep == 0:
            return 0
        own = self.white if self.turn == WHITE else self.black
        if _PAWN[(self.turn ^ 1) * 64 + ep] & own & self.pawns:
            return _ZOBRIST[772 + (ep & 7)]
        return 0

    # --- attacks -------------------------------------------------------------

    def occupied(self) -> i64:
        return self.white | self.black

    def attackers(self, colour: i64, sq: i64, occupied: i64) -> i64:
        """Pieces of ``colour`` attacking ``sq`` with the given occupancy."""
        own = self.white if colour == WHITE else self.black
        queens = self.queens
        return own & (
            (_KNIGHT[sq] & self.knights)
            | (_KING[sq] & self.kings)
            | (_PAWN[(colour ^ 1) * 64 + sq] & self.pawns)
            | (bishop_attacks(sq, occupied) & (self.bishops | queens))
            | (rook_attacks(sq, occupied) & (self.rooks | queens))
        )

    def _attacked(self, sq: i64, theirs: i64, occupied: i64, them: i64) -> bool:
        """Does a piece of ``theirs`` (colour ``them``) attack ``sq`` with this occupancy?
        As ``attackers(...) != 0``, the cheap tests first: a slider's attacks are looked
        up only when one stands on a line through ``sq``."""
        if (
            _KNIGHT[sq] & self.knights & theirs
            or _KING[sq] & self.kings & theirs
            or _PAWN[(them ^ 1) * 64 + sq] & self.pawns & theirs
        ):
            return True
        queens = self.queens
        diagonal = (self.bishops | queens) & theirs
        if diagonal & _BISHOP_RAYS[sq] and bishop_attacks(sq, occupied) & diagonal:
            return True
        straight = (self.rooks | queens) & theirs
        return (straight & _ROOK_RAYS[sq] != 0) and (rook_attacks(sq, occupied) & straight) != 0

    def is_attacked(self, colour: i64, sq: i64) -> bool:
        """Is ``sq`` attacked by a piece of ``colour``?"""
        return self.attackers(colour, sq, self.white | self.black) != 0

    def king_square(self, colour: i64) -> i64:
        own = self.white if colour == WHITE else self.black
        return _lsb(self.kings & own)

    def checkers(self) -> i64:
        """Pieces giving check to the side to move."""
        us = self.turn
        return self.attackers(us ^ 1, self.king_square(us), self.white | self.black)

    def is_check(self) -> bool:
        """Is the side to move in check? (``checkers() != 0``, the cheap tests first: a
        slider's attacks are looked up only when one stands on a line through the king.)"""
        us = self.turn
        own = self.white if us == WHITE else self.black
        theirs = self.black if us == WHITE else self.white
        ksq = _lsb(self.kings & own)
        if _KNIGHT[ksq] & self.knights & theirs or _PAWN[us * 64 + ksq] & self.pawns & theirs:
            return True
        queens = self.queens
        occupied = own | theirs
        diagonal = (self.bishops | queens) & theirs
        if diagonal & _BISHOP_RAYS[ksq] and bishop_attacks(ksq, occupied) & diagonal:
            return True
        straight = (self.rooks | queens) & theirs
        return (straight & _ROOK_RAYS[ksq] != 0) and (rook_attacks(ksq, occupied) & straight) != 0

    def pinned(self, colour: i64) -> i64:
        """Pieces of ``colour`` pinned to their king."""
        own = self.white if colour == WHITE else self.black
        theirs = self.black if colour == WHITE else self.white
        return self._pinned(_lsb(self.kings & own), own, theirs)

    def _pinned(self, ksq: i64, own: i64, theirs: i64) -> i64:
        """``pinned`` for the king on ``ksq`` (the colours' pieces given)."""
        occupied = own | theirs
        queens = self.queens
        snipers = theirs & (
            (_BISHOP_RAYS[ksq] & (self.bishops | queens))
            | (_ROOK_RAYS[ksq] & (self.rooks | queens))
        )
        pinned: i64 = 0
        while snipers:
            sniper = _lsb(snipers)
            snipers &= snipers - 1
            between = _BETWEEN[ksq * 64 + sniper] & occupied
            if between and not (between & (between - 1)):
                pinned |= between & own
        return pinned

    # --- make / unmake ---------------------------------------------------------

    def make(self, move: i64) -> None:
        """Play a legal ``move`` (an int from this board's generator or from_chess_move)."""
        frm = move & 63
        to = (move >> 6) & 63
        promotion = (move >> 12) & 7
        flag = (move >> 15) & 3
        us = self.turn
        them = us ^ 1
        mailbox = self.mailbox
        piece = mailbox[frm]
        pt = piece & 7
        captured = mailbox[to] if flag != CASTLE else 0
        ep_before = self.ep_square
        ep_key: i64 = self._ep_key() if ep_before != NO_SQUARE else 0
        # python-chess stops its repetition search at a position with legal en passant
        # (its file in the key and the same key for repetitions: see rep_key).
        boundary = ep_key != 0 and self.rep_key == self.key
        ply = self._ply
        if ply == len(self._undo):
            self._undo.append(Undo())
        self._ply = ply + 1
        undo = self._undo[ply]
        undo.move = move
        undo.captured = captured
        undo.ep_square = ep_before
        undo.reversible = self.reversible
        undo.halfmove_clock = self.halfmove_clock
        rights = self.castling
        undo.castling = rights
        key = self.key
        undo.key = key
        undo.rep_key = self.rep_key
        mg = self.mg
        eg = self.eg
        undo.mg = mg
        undo.eg = eg
        key ^= ep_key
        from_bit = _ONE << frm
        to_bit = _ONE << to
        # The castling key only when the rights change (it scans the rights).
        new_rights = rights & ~(from_bit | to_bit)
        if pt == KING:
            new_rights &= ~_BACKRANK[us]
        castle_key_before: i64 = 0
        if new_rights != rights:
            castle_key_before = self._castling_key()
        if flag == CASTLE:
            back = to & 56
            if to > frm:
                king_to = back + 6
                rook_to = back + 5
            else:
                king_to = back + 2
                rook_to = back + 3
            rook = ROOK | (us << 3)
            mailbox[frm] = 0
            mailbox[to] = 0
            self._toggle(piece, from_bit)
            self._toggle(rook, to_bit)
            mailbox[king_to] = piece
            mailbox[rook_to] = rook
            self._toggle(piece, (_ONE << king_to))
            self._toggle(rook, (_ONE << rook_to))
            key ^= (
                _PIECE_KEY[piece * 64 + frm]
                ^ _PIECE_KEY[piece * 64 + king_to]
                ^ _PIECE_KEY[rook * 64 + to]
                ^ _PIECE_KEY[rook * 64 + rook_to]
            )
            psqt = (
                _PSQT[piece * 64 + king_to]
                - _PSQT[piece * 64 + frm]
                + _PSQT[rook * 64 + rook_to]
                - _PSQT[rook * 64 + to]
            )
            if self.has_network:
                acc = self.acc
                undo.acc = acc
                columns = self._columns
                self.acc = (
                    acc
                    + columns[piece * 64 + king_to]
                    - columns[piece * 64 + frm]
                    + columns[rook * 64 + rook_to]
                    - columns[rook * 64 + to]
                )
            self.halfmove_clock += 1
        else:
            # The captured piece's square and kind: on ``to``, or beside it (en passant).
            victim_sq = to
            victim = captured
            if flag == EN_PASSANT:
                victim_sq = to - 8 if us == WHITE else to + 8
                victim = mailbox[victim_sq]
                mailbox[victim_sq] = 0
                self._toggle(victim, (_ONE << victim_sq))
                key ^= _PIECE_KEY[victim * 64 + victim_sq]
            elif captured:
                self._toggle(captured, to_bit)
                key ^= _PIECE_KEY[captured * 64 + to]
            mailbox[frm] = 0
            key ^= _PIECE_KEY[piece * 64 + frm]
            placed = piece if not promotion else promotion | (us << 3)
            mailbox[to] = placed
            if promotion:
                self._toggle(piece, from_bit)
                self._toggle(placed, to_bit)
            else:
                self._toggle(piece, from_bit | to_bit)
            key ^= _PIECE_KEY[placed * 64 + to]
            psqt = _PSQT[placed * 64 + to] - _PSQT[piece * 64 + frm]
            if victim:
                psqt -= _PSQT[victim * 64 + victim_sq]
                self.phase -= _PHASE[victim]
            if promotion:
                self.phase += _PHASE[placed]
            if self.has_network:
                acc = self.acc
                undo.acc = acc
                columns = self._columns
                acc += columns[placed * 64 + to] - columns[piece * 64 + frm]
                if victim:
                    acc -= columns[victim * 64 + victim_sq]
                self.acc = acc
            if pt == PAWN or captured or flag == EN_PASSANT:
                self.halfmove_clock = 0
            else:
                self.halfmove_clock += 1

        # The move's packed psqt change, split: its low half is mg's (signed).
        mg_change = ((psqt + _HALF32) & _LOW32) - _HALF32
        self.mg = mg + mg_change
        self.eg = eg + ((psqt - mg_change) >> 32)
        self.castling = new_rights
        self.ep_square = NO_SQUARE
        if pt == PAWN and (to - frm == 16 or frm - to == 16):
            self.ep_square = (frm + to) >> 1
        if us == BLACK:
            self.fullmove_number += 1
        self.turn = them
        key ^= _TURN_KEY
        ep_key = self._ep_key() if self.ep_square != NO_SQUARE else 0
        key ^= ep_key
        if new_rights != rights:
            key ^= castle_key_before ^ self._castling_key()
            boundary = True
        self.key = key
        self.rep_key = key
        if ep_key and not self._has_legal_ep():
            self.rep_key = key ^ ep_key
        if boundary or self.halfmove_clock == 0:
            self.reversible = 0
        else:
            self.reversible += 1

    def unmake(self) -> None:
        """Take back the last move (or null move)."""
        self._ply -= 1
        undo = self._undo[self._ply]
        move = undo.move
        self.castling = undo.castling
        self.key = undo.key
        self.rep_key = undo.rep_key
        self.ep_square = undo.ep_square
        self.reversible = undo.reversible
        self.halfmove_clock = undo.halfmove_clock
        them = self.turn
        us = them ^ 1
        self.turn = us
        if us == BLACK:
            self.fullmove_number -= 1
        if move == 0:
            return
        self.mg = undo.mg
        self.eg = undo.eg
        if self.has_network:
            self.acc = undo.acc
        frm = move & 63
        to = (move >> 6) & 63
        promotion = (move >> 12) & 7
        flag = (move >> 15) & 3
        mailbox = self.mailbox
        if flag == CASTLE:
            back = to & 56
            if to > frm:
                king_to = back + 6
                rook_to = back + 5
            else:
                king_to = back + 2
                rook_to = back + 3
            king = KING | (us << 3)
            rook = ROOK | (us << 3)
            mailbox[king_to] = 0
            mailbox[rook_to] = 0
            self._toggle(king, (_ONE << king_to))
            self._toggle(rook, (_ONE << rook_to))
            mailbox[frm] = king
            mailbox[to] = rook
            self._toggle(king, (_ONE << frm))
            self._toggle(rook, (_ONE << to))
            return
        to_bit = _ONE << to
        placed = mailbox[to]
        if promotion:
            piece = PAWN | (us << 3)
            self._toggle(placed, to_bit)
            self._toggle(piece, (_ONE << frm))
        else:
            piece = placed
            self._toggle(piece, to_bit | (_ONE << frm))
        mailbox[frm] = piece
        captured = undo.captured
        mailbox[to] = captured
        if captured:
            self._toggle(captured, to_bit)
            self.phase += _PHASE[captured]
        if promotion:
            # Only captures and promotions change the phase: no copy kept per move.
            self.phase -= _PHASE[placed]
        if flag == EN_PASSANT:
            capture_sq = to - 8 if us == WHITE else to + 8
            victim = PAWN | (them << 3)
            mailbox[capture_sq] = victim
            self._toggle(victim, (_ONE << capture_sq))

    def make_null(self) -> None:
        """Pass the move to the other side (null-move pruning); undo with ``unmake``."""
        ep_key = self._ep_key()
        boundary = ep_key != 0 and self.rep_key == self.key
        undo = self._push_undo()
        undo.move = 0
        undo.captured = 0
        undo.ep_square = self.ep_square
        undo.reversible = self.reversible
        undo.halfmove_clock = self.halfmove_clock
        undo.castling = self.castling
        key = self.key
        undo.key = key
        undo.rep_key = self.rep_key
        key ^= ep_key
        self.ep_square = NO_SQUARE
        if self.turn == BLACK:
            self.fullmove_number += 1
        self.turn ^= 1
        self.key = key ^ _TURN_KEY
        self.rep_key = self.key
        self.halfmove_clock += 1
        self.reversible = 0 if boundary else self.reversible + 1

    def _push_undo(self) -> Undo:
        ply = self._ply
        if ply == len(self._undo):
            self._undo.append(Undo())
        self._ply = ply + 1
        return self._undo[ply]

    def ply(self) -> i64:
        """Moves (and null moves) made since the board was set up."""
        return self._ply

    # --- repetitions and draws -------------------------------------------------

    def is_repetition(self, count: i64 = 3) -> bool:
        """As python-chess's ``is_repetition(count)``: has the position occurred ``count``
        times in all, counting back only to the last irreversible move?"""
        if count <= 1:
            return True
        undo = self._undo
        n = self._ply
        back = self.reversible
        if back > n:
            back = n
        key = self.rep_key
        k: i64 = 2
        while k <= back:
            if undo[n - k].rep_key == key:
                count -= 1
                if count <= 1:
                    return True
            k += 2
        return False

    def can_claim_threefold(self) -> bool:
        """As python-chess's ``can_claim_threefold_repetition``: the position has
        occurred three times, or a legal move makes it so."""
        if self.is_repetition(3):
            return True
        for move in self.legal_moves():
            self.make(move)
            repeated = self.is_repetition(3)
            self.unmake()
            if repeated:
                return True
        return False

    def is_fifty_moves(self) -> bool:
        """Fifty moves without a capture or pawn move (python-chess also needs a legal
        move: the caller checks for mate first)."""
        return self.halfmove_clock >= 100

    # --- move generation ------------------------------------------------------

    def _has_legal_ep(self) -> bool:
        ep = self.ep_square
        if ep == NO_SQUARE or ep == 0:
            return False
        own = self.white if self.turn == WHITE else self.black
        if not (_PAWN[(self.turn ^ 1) * 64 + ep] & own & self.pawns):
            return False
        moves: list[i64] = []
        self._generate_ep(moves)
        return len(moves) > 0

    def _generate_ep(self, moves: list[i64]) -> None:
        """Legal en passant captures, by trying each on the occupancy."""
        ep = self.ep_square
        us = self.turn
        them = us ^ 1
        own = self.white if us == WHITE else self.black
        theirs = self.black if us == WHITE else self.white
        occupied = own | theirs
        ep_bit = _ONE << ep
        if occupied & ep_bit:
            return
        capture_sq = ep - 8 if us == WHITE else ep + 8
        capture_bit = _ONE << capture_sq
        if not (theirs & self.pawns & capture_bit):
            return
        if (ep >> 3) != (5 if us == WHITE else 2):
            return
        capturers = _PAWN[them * 64 + ep] & own & self.pawns
        ksq = self.king_square(us)
        while capturers:
            frm = _lsb(capturers)
            capturers &= capturers - 1
            after = (occupied ^ (_ONE << frm) ^ capture_bit) | ep_bit
            if not (self.attackers(them, ksq, after) & ~capture_bit):
                moves.append(frm | (ep << 6) | (EN_PASSANT << 15))

    def legal_moves(self) -> list[i64]:
        """All legal moves: evasions in check, else noisy moves then quiets."""
        moves: list[i64] = []
        self._generate(moves, True, True)
        return moves

    def noisy_moves(self, check: i64 = -1) -> list[i64]:
        """Legal captures (en passant too) and promotions (all four pieces, capturing
        or not); in check only those that evade. ``check``: 1 or 0 if the caller knows
        whether the side to move is in check (-1: find out)."""
        moves: list[i64] = []
        self._generate(moves, True, False, check)
        return moves

    def quiet_moves(self, check: i64 = -1) -> list[i64]:
        """Legal moves that neither capture nor promote (castling too); ``check`` as
        for ``noisy_moves``."""
        moves: list[i64] = []
        self._generate(moves, False, True, check)
        return moves

    def evasions(self) -> list[i64]:
        """All legal moves when in check (the search's stage for that case)."""
        return self.legal_moves()

    def quiet_checks(self) -> list[i64]:
        """Quiet moves that give check (quiescence's first ply)."""
        result: list[i64] = []
        for move in self.quiet_moves():
            if self.gives_check(move):
                result.append(move)
        return result

    def gives_check(self, move: i64) -> bool:
        """Does the legal ``move`` put the opponent in check?

        Ordinary moves: the moved piece's attacks from its target, and our sliders
        uncovered, on the occupancy after the move. Castling, en passant and
        promotions (rare) are made and taken back."""
        if move >> 12:
            self.make(move)
            check = self.is_check()
            self.unmake()
            return check
        frm = move & 63
        to = (move >> 6) & 63
        us = self.turn
        own = self.white if us == WHITE else self.black
        theirs = self.black if us == WHITE else self.white
        ksq = _lsb(self.kings & theirs)
        king_bit = _ONE << ksq
        from_bit = _ONE << frm
        occupied = ((own | theirs) ^ from_bit) | (_ONE << to)
        pt = self.mailbox[frm] & 7
        attacks: i64 = 0
        if pt == PAWN:
            attacks = _PAWN[us * 64 + to]
        elif pt == KNIGHT:
            attacks = _KNIGHT[to]
        elif pt == BISHOP:
            attacks = bishop_attacks(to, occupied)
        elif pt == ROOK:
            attacks = rook_attacks(to, occupied)
        elif pt == QUEEN:
            attacks = bishop_attacks(to, occupied) | rook_attacks(to, occupied)
        if attacks & king_bit:
            return True
        sliders = own & ~from_bit
        queens = self.queens
        if bishop_attacks(ksq, occupied) & sliders & (self.bishops | queens):
            return True
        return (rook_attacks(ksq, occupied) & sliders & (self.rooks | queens)) != 0

    def is_capture(self, move: i64) -> bool:
        flag = (move >> 15) & 3
        if flag == EN_PASSANT:
            return True
        return flag != CASTLE and self.mailbox[(move >> 6) & 63] != 0

    def _generate(self, moves: list[i64], noisy: bool, quiet: bool, check: i64 = -1) -> None:
        us = self.turn
        them = us ^ 1
        own = self.white if us == WHITE else self.black
        theirs = self.black if us == WHITE else self.white
        occupied = own | theirs
        ksq = _lsb(self.kings & own)
        checkers: i64 = 0
        if check > 0 or (check < 0 and self.is_check()):
            checkers = self.attackers(them, ksq, occupied)
        targets: i64 = ~own
        if not noisy:
            targets &= ~theirs
        if not quiet:
            targets &= theirs

        # King moves: the destination must be safe with the king gone from its square.
        without_king = occupied ^ (_ONE << ksq)
        dests = _KING[ksq] & targets
        while dests:
            to = _lsb(dests)
            dests &= dests - 1
            if not self._attacked(to, theirs, without_king, them):
                moves.append(ksq | (to << 6))
        if checkers and (checkers & (checkers - 1)):
            return
        if checkers:
            block = checkers | _BETWEEN[ksq * 64 + _lsb(checkers)]
        else:
            block = ~0
            if quiet:
                self._generate_castling(moves, ksq, occupied)
        pinned = self._pinned(ksq, own, theirs)
        queens = self.queens

        pieces = own & self.knights & ~pinned
        while pieces:
            frm = _lsb(pieces)
            pieces &= pieces - 1
            dests = _KNIGHT[frm] & targets & block
            # The destinations, inlined (a call per piece costs CPython more than this).
            while dests:
                to = _lsb(dests)
                dests &= dests - 1
                moves.append(frm | (to << 6))
        pieces = own & (self.bishops | queens)
        while pieces:
            frm = _lsb(pieces)
            pieces &= pieces - 1
            dests = bishop_attacks(frm, occupied) & targets & block
            if pinned & (_ONE << frm):
                dests &= _LINE[ksq * 64 + frm]
            while dests:
                to = _lsb(dests)
                dests &= dests - 1
                moves.append(frm | (to << 6))
        pieces = own & (self.rooks | queens)
        while pieces:
            frm = _lsb(pieces)
            pieces &= pieces - 1
            dests = rook_attacks(frm, occupied) & targets & block
            if pinned & (_ONE << frm):
                dests &= _LINE[ksq * 64 + frm]
            while dests:
                to = _lsb(dests)
                dests &= dests - 1
                moves.append(frm | (to << 6))

        # Pawns: the unpinned ones set-wise (one shift per direction), the pinned ones
        # one at a time. Promotions of all four pieces are noisy.
        forward: i64 = 8 if us == WHITE else -8
        last_rank: i64 = 7 if us == WHITE else 0
        start_rank: i64 = 1 if us == WHITE else 6
        pawns = own & self.pawns
        free = pawns & ~pinned
        if free:
            self._free_pawn_moves(moves, free, theirs, occupied, block, noisy, quiet)
        pieces = pawns & pinned
        while pieces:
            frm = _lsb(pieces)
            pieces &= pieces - 1
            allowed = block
            if pinned & (_ONE << frm):
                allowed &= _LINE[ksq * 64 + frm]
            to = frm + forward
            promotes = (to >> 3) == last_rank
            if noisy:
                dests = _PAWN[us * 64 + frm] & theirs & allowed
                while dests:
                    capture = _lsb(dests)
                    dests &= dests - 1
                    if promotes:
                        self._add_promotions(moves, frm, capture)
                    else:
                        moves.append(frm | (capture << 6))
            if occupied & (_ONE << to):
                continue
            if promotes:
                if noisy and allowed & (_ONE << to):
                    self._add_promotions(moves, frm, to)
                continue
            if not quiet:
                continue
            if allowed & (_ONE << to):
                moves.append(frm | (to << 6))
            if (frm >> 3) == start_rank:
                to2 = to + forward
                if not (occupied & (_ONE << to2)) and allowed & (_ONE << to2):
                    moves.append(frm | (to2 << 6))
        if noisy and self.ep_square != NO_SQUARE:
            self._generate_ep(moves)

    def _free_pawn_moves(
        self,
        moves: list[i64],
        free: i64,
        theirs: i64,
        occupied: i64,
        block: i64,
        noisy: bool,
        quiet: bool,
    ) -> None:
        """The moves of the side to move's unpinned pawns ``free``, onto ``block``.

        Pawn bitboards never hold the last ranks, so no shift passes bit 63 and no
        right shift meets a negative value."""
        empty = ~occupied
        if self.turn == WHITE:
            left = ((free & ~_A_FILE) << 7) & theirs & block
            right = ((free & ~_H_FILE) << 9) & theirs & block
            single = (free << 8) & empty
            double = ((single & _RANK_3) << 8) & empty & block
            left_step: i64 = 7
            right_step: i64 = 9
            step: i64 = 8
            last = _RANK_8
        else:
            left = ((free & ~_A_FILE) >> 9) & theirs & block
            right = ((free & ~_H_FILE) >> 7) & theirs & block
            single = (free >> 8) & empty
            double = ((single & _RANK_6) >> 8) & empty & block
            left_step = -9
            right_step = -7
            step = -8
            last = _RANK_1
        single &= block
        if noisy:
            if left:
                self._add_pawn_captures(moves, left, left_step, last)
            if right:
                self._add_pawn_captures(moves, right, right_step, last)
            promotions = single & last
            while promotions:
                to = _lsb(promotions)
                promotions &= promotions - 1
                self._add_promotions(moves, to - step, to)
        if quiet:
            single &= ~last
            while single:
                to = _lsb(single)
                single &= single - 1
                moves.append((to - step) | (to << 6))
            while double:
                to = _lsb(double)
                double &= double - 1
                moves.append((to - 2 * step) | (to << 6))

    def _add_pawn_captures(self, moves: list[i64], targets: i64, delta: i64, last: i64) -> None:
        """Captures onto ``targets`` by the pawns ``delta`` squares behind them."""
        while targets:
            to = _lsb(targets)
            targets &= targets - 1
            if (_ONE << to) & last:
                self._add_promotions(moves, to - delta, to)
            else:
                moves.append((to - delta) | (to << 6))

    def _add(self, moves: list[i64], frm: i64, dests: i64) -> None:
        while dests:
            to = _lsb(dests)
            dests &= dests - 1
            moves.append(frm | (to << 6))

    def _add_promotions(self, moves: list[i64], frm: i64, to: i64) -> None:
        base = frm | (to << 6)
        moves.append(base | (QUEEN << 12))
        moves.append(base | (ROOK << 12))
        moves.append(base | (BISHOP << 12))
        moves.append(base | (KNIGHT << 12))

    def _generate_castling(self, moves: list[i64], ksq: i64, occupied: i64) -> None:
        us = self.turn
        them = us ^ 1
        back = _BACKRANK[us]
        rights = self.castling & back
        if not rights or not ((_ONE << ksq) & back):
            return
        base = ksq & 56
        king_bit = _ONE << ksq
        while rights:
            rook = _lsb(rights)
            rights &= rights - 1
            rook_bit = _ONE << rook
            if rook < ksq:
                king_to = base + 2
                rook_to = base + 3
            else:
                king_to = base + 6
                rook_to = base + 5
            king_to_bit = _ONE << king_to
            rook_to_bit = _ONE << rook_to
            king_path = _BETWEEN[ksq * 64 + king_to]
            rook_path = _BETWEEN[rook * 64 + rook_to]
            if (occupied ^ king_bit ^ rook_bit) & (
                king_path | rook_path | king_to_bit | rook_to_bit
            ):
                continue
            path = king_path | king_bit
            safe = True
            without_king = occupied ^ king_bit
            while path:
                sq = _lsb(path)
                path &= path - 1
                if self.attackers(them, sq, without_king):
                    safe = False
                    break
            if not safe:
                continue
            if self.attackers(them, king_to, occupied ^ king_bit ^ rook_bit ^ rook_to_bit):
                continue
            moves.append(ksq | (rook << 6) | (CASTLE << 15))

    # --- static exchange -------------------------------------------------------

    def see_ge(self, move: i64, threshold: i64 = 0) -> bool:
        """As ``engine.core.see.see_ge``: does ``move`` win at least ``threshold``?"""
        frm = move & 63
        to = (move >> 6) & 63
        mailbox = self.mailbox
        attacker = mailbox[frm] & 7
        if not attacker:
            attacker = PAWN
        victim = mailbox[to] & 7
        occupied = (self.white | self.black) ^ (_ONE << frm)
        own = self.white if self.turn == WHITE else self.black
        if not victim:
            if attacker == PAWN and to == self.ep_square and (to - frm) % 8 != 0:
                victim = PAWN
                occupied ^= _ONE << (to - 8 if self.turn == WHITE else to + 8)
        elif own & (_ONE << to):
            return threshold <= 0
        swap: i64 = SEE_VALUES[victim] - threshold
        if swap < 0:
            return False
        swap = SEE_VALUES[attacker] - swap
        if swap <= 0:
            return True
        occupied |= _ONE << to
        queens = self.queens
        bishops_queens = self.bishops | queens
        rooks_queens = self.rooks | queens
        white = self.white
        black = self.black
        pawns = self.pawns
        knights = self.knights
        bishops = self.bishops
        rooks = self.rooks
        attackers = (
            (_KNIGHT[to] & knights)
            | (_KING[to] & self.kings)
            | (_PAWN[to] & pawns & black)
            | (_PAWN[64 + to] & pawns & white)
            | (bishop_attacks(to, occupied) & bishops_queens)
            | (rook_attacks(to, occupied) & rooks_queens)
        )
        side = self.turn
        result: i64 = 1
        while True:
            side ^= 1
            attackers &= occupied
            ours = attackers & (white if side == WHITE else black)
            if not ours:
                break
            result ^= 1
            # The least valuable attacker (the king, not listed, only captures last).
            piece: i64 = ours & pawns
            if piece:
                swap = SEE_VALUES[PAWN] - swap
            else:
                piece = ours & knights
                if piece:
                    swap = SEE_VALUES[KNIGHT] - swap
                else:
                    piece = ours & bishops
                    if piece:
                        swap = SEE_VALUES[BISHOP] - swap
                    else:
                        piece = ours & rooks
                        if piece:
                            swap = SEE_VALUES[ROOK] - swap
                        else:
                            piece = ours & queens
                            if piece:
                                swap = SEE_VALUES[QUEEN] - swap
            if not piece:
                theirs = attackers & (black if side == WHITE else white)
                return bool(result ^ 1) if theirs else bool(result)
            if swap < result:
                break
            occupied ^= piece & -piece
            attackers |= (bishop_attacks(to, occupied) & bishops_queens) | (
                rook_attacks(to, occupied) & rooks_queens
            )
        return bool(result)

    def see(self, move: i64) -> i64:
        """The exchange value of ``move``: the largest ``t`` with ``see_ge(move, t)``."""
        low: i64 = -SEE_VALUES[KING] * 2
        high: i64 = SEE_VALUES[KING] * 2
        # see_ge is monotone in the threshold: bisect for the last threshold it accepts.
        while low < high:
            middle = (low + high + 1) >> 1
            if self.see_ge(move, middle):
                low = middle
            else:
                high = middle - 1
        return low

    def _pieces(self, pt: i64) -> i64:
        if pt == PAWN:
            return self.pawns
        if pt == KNIGHT:
            return self.knights
        if pt == BISHOP:
            return self.bishops
        if pt == ROOK:
            return self.rooks
        if pt == QUEEN:
            return self.queens
        return self.kings

    # --- perft and checks ------------------------------------------------------

    def perft(self, depth: i64) -> i64:
        """Leaves ``depth`` plies below, with make/unmake at every node (no bulk count)."""
        if depth <= 0:
            return 1
        nodes: i64 = 0
        for move in self.legal_moves():
            self.make(move)
            if depth == 1:
                nodes += 1
            else:
                nodes += self.perft(depth - 1)
            self.unmake()
        return nodes

    def state_errors(self) -> list[str]:
        """What differs between the incremental state and a fresh computation."""
        errors: list[str] = []
        occupied = self.white | self.black
        if self.white & self.black:
            errors.append("a square is both white and black")
        types = (self.pawns, self.knights, self.bishops, self.rooks, self.queens, self.kings)
        union: i64 = 0
        for index in range(6):
            if union & types[index]:
                errors.append("a square holds two piece types")
            union |= types[index]
        if union != occupied:
            errors.append("piece-type bitboards differ from colour bitboards")
        for sq in range(64):
            piece = self.mailbox[sq]
            bit = _ONE << sq
            if not piece:
                if occupied & bit:
                    errors.append(f"mailbox empty on occupied {chess.SQUARE_NAMES[sq]}")
                continue
            own = self.black if piece >> 3 else self.white
            if not (own & bit) or not (self._pieces(piece & 7) & bit):
                errors.append(f"mailbox {piece} on {chess.SQUARE_NAMES[sq]} not in bitboards")
        if self.rep_key != self._compute_rep_key():
            errors.append("repetition key differs from a recomputation")
        if self.key != self.compute_key():
            errors.append(
                f"key {_u64(self.key):016x} != recomputed {_u64(self.compute_key()):016x}"
            )
        if (self.mg, self.eg, self.phase) != self.compute_psqt():
            errors.append(
                f"psqt sums {(self.mg, self.eg, self.phase)} != recomputed {self.compute_psqt()}"
            )
        if self.has_network and self.acc != self.compute_acc():
            errors.append("network accumulator differs from a recomputation")
        return errors

    # --- the search's move checks and repetitions --------------------------------

    def legal_move(self, code: i64) -> i64:
        """The legal move whose ``from | to << 6 | promotion << 12`` is ``code`` (its
        flag bits added), or 0 if there is none; any other ``code`` is safe.

        The search asks this for its hash and killer moves at nearly every node, so the
        move's shape is tested directly and legality by one attack query on the
        occupancy after the move; only castling and en passant (rare) generate."""
        if code <= 0 or code >> 15:
            return 0
        frm = code & 63
        to = (code >> 6) & 63
        promotion = code >> 12
        us = self.turn
        piece = self.mailbox[frm]
        if not piece or (piece >> 3) != us:
            return 0
        pt = piece & 7
        own = self.white if us == WHITE else self.black
        theirs = self.black if us == WHITE else self.white
        occupied = own | theirs
        from_bit = _ONE << frm
        to_bit = _ONE << to
        them = us ^ 1
        moves: list[i64]
        if pt == KING:
            if promotion:
                return 0
            if own & to_bit:
                # Castling is the king taking its own rook, only with that rook's right.
                if not (self.castling & to_bit & self.rooks):
                    return 0
                moves = []
                self._generate_castling(moves, frm, occupied)
                for move in moves:
                    if (move & 0x7FFF) == code:
                        return move
                return 0
            if not (_KING[frm] & to_bit):
                return 0
            if self.attackers(them, to, occupied ^ from_bit):
                return 0
            return code
        if own & to_bit:
            return 0
        if pt == PAWN:
            if to == self.ep_square:
                if promotion:
                    return 0
                moves = []
                self._generate_ep(moves)
                for move in moves:
                    if (move & 0x7FFF) == code:
                        return move
                return 0
            last_rank: i64 = 7 if us == WHITE else 0
            if (to >> 3) == last_rank:
                if promotion < KNIGHT or promotion > QUEEN:
                    return 0
            elif promotion:
                return 0
            if not (_PAWN[us * 64 + frm] & theirs & to_bit):
                # Not a capture: one step, or two from the start rank, onto empty squares.
                if occupied & to_bit:
                    return 0
                forward: i64 = 8 if us == WHITE else -8
                if to != frm + forward:
                    start_rank: i64 = 1 if us == WHITE else 6
                    if to != frm + 2 * forward or (frm >> 3) != start_rank:
                        return 0
                    if occupied & (_ONE << (frm + forward)):
                        return 0
        else:
            if promotion:
                return 0
            attacks: i64 = 0
            if pt == KNIGHT:
                attacks = _KNIGHT[frm]
            elif pt == BISHOP:
                attacks = bishop_attacks(frm, occupied)
            elif pt == ROOK:
                attacks = rook_attacks(frm, occupied)
            else:
                attacks = bishop_attacks(frm, occupied) | rook_attacks(frm, occupied)
            if not (attacks & to_bit):
                return 0
        # Legal if no enemy piece but the one taken attacks our king afterwards: this
        # covers checks, blocks and pins at once.
        after = (occupied ^ from_bit) | to_bit
        if self.attackers(them, self.king_square(us), after) & ~to_bit:
            return 0
        return code

    def search_repetition(self) -> bool:
        """The search's repetition rule (``engine.core.position.Position.is_repetition``):
        the current ``key`` occurred 4, 6, 8, ... plies back, within the fifty-move
        counter and the moves made on this board.

        One earlier occurrence counts: inside a search, repeating a position can only
        be as good as a draw for the side that could avoid it. The search sets
        ``halfmove_clock`` to 0 after a null move, so no repetition reaches across it."""
        n = self._ply
        back = self.halfmove_clock
        if back > n:
            back = n
        if back < 4:
            return False
        key = self.key
        undo = self._undo
        k: i64 = 4
        while k <= back:
            if undo[n - k].key == key:
                return True
            k += 2
        return False

    def direct_quiet_checks(self) -> list[i64]:
        """Legal quiet moves of knights, bishops, rooks and queens onto squares from
        which they check the enemy king on the current occupancy (quiescence's first
        ply), as ``engine.core.movepick.quiet_checks`` filtered by legality and in its
        order: knights, then bishops and queens onto diagonal checks, then rooks and
        queens onto straight ones; pieces and targets from the highest square down."""
        us = self.turn
        them = us ^ 1
        own = self.white if us == WHITE else self.black
        theirs = self.black if us == WHITE else self.white
        occupied = own | theirs
        empty = ~occupied
        result: list[i64] = []
        enemy_kings = self.kings & theirs
        if not enemy_kings:
            return result
        king = _lsb(enemy_kings)
        ksq = self.king_square(us)
        checkers = self.attackers(them, ksq, occupied)
        if checkers and (checkers & (checkers - 1)):
            return result
        allowed: i64 = ~0
        if checkers:
            allowed = _BETWEEN[ksq * 64 + _lsb(checkers)]
        pinned = self._pinned(ksq, own, theirs)
        queens = self.queens
        diagonal = bishop_attacks(king, occupied) & empty & allowed
        straight = rook_attacks(king, occupied) & empty & allowed
        knight_checks = _KNIGHT[king] & empty & allowed
        # Generated lowest first, groups in reverse: one reversal at the end gives
        # python-chess's order (highest first, knights, diagonal, then straight).
        if straight:
            pieces = own & (self.rooks | queens)
            while pieces:
                frm = _lsb(pieces)
                pieces &= pieces - 1
                dests = rook_attacks(frm, occupied)
                if (_ONE << frm) & queens:
                    dests |= bishop_attacks(frm, occupied)
                dests &= straight
                if pinned & (_ONE << frm):
                    dests &= _LINE[ksq * 64 + frm]
                self._add(result, frm, dests)
        if diagonal:
            pieces = own & (self.bishops | queens)
            while pieces:
                frm = _lsb(pieces)
                pieces &= pieces - 1
                dests = bishop_attacks(frm, occupied)
                if (_ONE << frm) & queens:
                    dests |= rook_attacks(frm, occupied)
                dests &= diagonal
                if pinned & (_ONE << frm):
                    dests &= _LINE[ksq * 64 + frm]
                self._add(result, frm, dests)
        if knight_checks:
            # A pinned knight cannot move at all.
            pieces = own & self.knights & ~pinned
            while pieces:
                frm = _lsb(pieces)
                pieces &= pieces - 1
                self._add(result, frm, _KNIGHT[frm] & knight_checks)
        result.reverse()
        return result
