"""The search board: a chess position in native 64-bit integers, for mypyc.

``Board`` owns a position as ``i64`` bitboards (one per piece type, one per colour)
plus a mailbox, the side to move, castling rights (the rook squares, so Chess960
works), the en passant square, the fifty-move counter and the fullmove number. It
makes and unmakes moves (and null moves) on an undo stack without copying, keeps the
Polyglot Zobrist key incrementally (equal to ``chess.polyglot.zobrist_hash``) and
answers repetitions over its key history, the fifty-move rule, attack and check
queries, and FEN and python-chess conversions. python-chess is used only at the
edges: ``from_chess``, ``to_chess_move``, ``from_chess_move`` and ``fen``.

For the evaluation it also keeps the material and piece-square sums (``mg``, ``eg``,
``phase``: engine.core.psqt's tables) and, given a network (``use_network``), the
packed accumulator ``acc`` of engine.core.nnue's ``Incremental``; make keeps the sums
and the accumulator in the undo record, unmake restores them (the phase by its
change: captures and promotions alone change it). Without a network a move costs one
test more, nothing else.

What the board does not do lives beside it: the tables and bit helpers in
engine.core.bitboards, move generation (and perft) in engine.core.movegen, static
exchange in engine.core.exchange; those read the board and never write its state
except through ``make`` and ``unmake``. This module must not import them (they
import it). It knows nothing of scores or search: ``make`` plays any move the
generator or ``from_chess_move`` gives and checks none. Moves are ints (see
engine.core.bitboards); 0 is the null move.

One source runs interpreted and compiled (see engine.core.bitboards for how the
bitboards agree between the two builds). The search (engine.core.search) runs on
this board; python-chess's boards stay with the users, the tools and the tests.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, Optional, final

import chess
from mypy_extensions import i64

from engine.core.bitboards import (
    _BACKRANK,
    _BISHOP_RAYS,
    _KING,
    _KNIGHT,
    _ONE,
    _PAWN,
    _PIECE_KEY,
    _ROOK_RAYS,
    _TURN_KEY,
    _ZOBRIST,
    BISHOP,
    BLACK,
    CASTLE,
    EN_PASSANT,
    KING,
    KNIGHT,
    NO_SQUARE,
    PAWN,
    QUEEN,
    ROOK,
    WHITE,
    _bb,
    _lsb,
    _popcount,
    _u64,
    bishop_attacks,
    rook_attacks,
)
from engine.core.features import PHASE_WEIGHT
from engine.core.psqt import EG_TABLE, MG_TABLE

if TYPE_CHECKING:
    from engine.core.nnue import Incremental  # numpy: not needed at run time here


def _psqt_index(piece: int, sq: int) -> int:
    """The index of a mailbox piece on ``sq`` in MG_TABLE's order, which the network's
    columns share: ``(2 * (type - 1) + colour) * 64 + sq``, colour 1 for White."""
    return (2 * ((piece & 7) - 1) + 1 - (piece >> 3)) * 64 + sq


# _MG[piece * 64 + sq] (and _EG): the piece-square sums' tables in the mailbox's order.
_MG: Final[list[i64]] = [
    MG_TABLE[_psqt_index(p, s)] if 1 <= (p & 7) <= 6 else 0 for p in range(16) for s in range(64)
]
_EG: Final[list[i64]] = [
    EG_TABLE[_psqt_index(p, s)] if 1 <= (p & 7) <= 6 else 0 for p in range(16) for s in range(64)
]
# make's form: both in one i64, mg + eg * 2**32, so that a move reads half the entries
# (list reads unbox an int object each, compiled); make splits the halves again.
_PSQT: Final[list[i64]] = [_MG[i] + _EG[i] * 0x100000000 for i in range(16 * 64)]
_HALF32: Final[i64] = 0x80000000
_LOW32: Final[i64] = 0xFFFFFFFF
_PHASE: Final[list[i64]] = [PHASE_WEIGHT[p & 7] if 1 <= (p & 7) <= 6 else 0 for p in range(16)]
_PIECE_SYMBOLS: Final = " pnbrqk"


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
    legal_ep_key: i64
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
        self.legal_ep_key = 0
        self.mg = 0
        self.eg = 0
        self.acc = 0


@final
class Board:
    """A position with make/unmake, keys, repetitions and attack queries."""

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
    """The Polyglot key: en passant counts when a pawn stands beside (legal or not).
    The transposition table and the search's repetitions use it."""
    legal_ep_key: i64
    """``key`` with en passant counted only when a capture is legal: the game's
    repetitions (``is_game_repetition``), where positions with the same pieces but
    different legal moves differ, as python-chess counts them."""
    reversible: i64
    """Plies since the last move after which no earlier position can repeat."""
    chess960: bool
    mg: i64
    """Material and piece-square sums, White's view (engine.core.psqt's tables)."""
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
        self.legal_ep_key = 0
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

    # --- setting up: python-chess positions, pieces, the network ----------------------

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
        self.legal_ep_key = self._compute_legal_ep_key()
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

    # --- conversions at the edges: python-chess moves, bitboards, FEN -----------------

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
        if self.en_passant_capturers():
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

    # --- pieces, attacks and checks ---------------------------------------------------

    def piece_count(self) -> i64:
        """How many pieces (kings and pawns included) stand on the board."""
        return _popcount(self.white | self.black)

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

    def is_capture(self, move: i64) -> bool:
        flag = (move >> 15) & 3
        if flag == EN_PASSANT:
            return True
        return flag != CASTLE and self.mailbox[(move >> 6) & 63] != 0

    def en_passant_capturers(self) -> i64:
        """The side to move's pawns that may take en passant legally (0: none).

        The keys and the FEN count the en passant square only when one may (see
        ``legal_ep_key``), and the generator (engine.core.movegen) makes its en
        passant moves from these. Legality is tested on the occupancy after the
        capture: the taken pawn and the capturer both leave their lines."""
        ep = self.ep_square
        if ep == NO_SQUARE or ep == 0:
            return 0
        us = self.turn
        them = us ^ 1
        own = self.white if us == WHITE else self.black
        theirs = self.black if us == WHITE else self.white
        capturers = _PAWN[them * 64 + ep] & own & self.pawns
        if not capturers:
            return 0
        occupied = own | theirs
        ep_bit = _ONE << ep
        if occupied & ep_bit:
            return 0
        capture_sq = ep - 8 if us == WHITE else ep + 8
        capture_bit = _ONE << capture_sq
        if not (theirs & self.pawns & capture_bit):
            return 0
        if (ep >> 3) != (5 if us == WHITE else 2):
            return 0
        ksq = self.king_square(us)
        legal: i64 = 0
        while capturers:
            frm = _lsb(capturers)
            capturers &= capturers - 1
            after = (occupied ^ (_ONE << frm) ^ capture_bit) | ep_bit
            if not (self.attackers(them, ksq, after) & ~capture_bit):
                legal |= _ONE << frm
        return legal

    # --- make / unmake ----------------------------------------------------------------

    def make(self, move: i64) -> None:
        """Play a legal ``move`` (an int from the generator or ``from_chess_move``)."""
        frm = move & 63
        to = (move >> 6) & 63
        promotion = (move >> 12) & 7
        flag = (move >> 15) & 3
        us = self.turn
        mailbox = self.mailbox
        piece = mailbox[frm]
        pt = piece & 7
        captured = mailbox[to] if flag != CASTLE else 0
        ep_before = self.ep_square
        ep_key: i64 = self._ep_key() if ep_before != NO_SQUARE else 0
        # python-chess stops its repetition search at a position with legal en passant
        # (its file in the key and the same key for repetitions: see legal_ep_key).
        boundary = ep_key != 0 and self.legal_ep_key == self.key
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
        undo.key = self.key
        undo.legal_ep_key = self.legal_ep_key
        undo.mg = self.mg
        undo.eg = self.eg
        if self.has_network:
            undo.acc = self.acc
        # The castling key only when the rights change (it scans the rights).
        new_rights = rights & ~((_ONE << frm) | (_ONE << to))
        if pt == KING:
            new_rights &= ~_BACKRANK[us]
        castle_key_before: i64 = 0
        if new_rights != rights:
            castle_key_before = self._castling_key()

        # The pieces: the key, the sums and the accumulator follow them.
        if flag == CASTLE:
            back = to & 56
            if to > frm:
                king_to = back + 6
                rook_to = back + 5
            else:
                king_to = back + 2
                rook_to = back + 3
            rook = ROOK | (us << 3)
            self._remove_piece(piece, frm)
            self._remove_piece(rook, to)
            self._put_piece(piece, king_to)
            self._put_piece(rook, rook_to)
            self.halfmove_clock += 1
        else:
            if flag == EN_PASSANT:
                victim_sq = to - 8 if us == WHITE else to + 8
                self._remove_piece(mailbox[victim_sq], victim_sq)
            elif captured:
                self._remove_piece(captured, to)
            if promotion:
                self._remove_piece(piece, frm)
                self._put_piece(promotion | (us << 3), to)
            else:
                self._move_piece(piece, frm, to)
            if pt == PAWN or captured or flag == EN_PASSANT:
                self.halfmove_clock = 0
            else:
                self.halfmove_clock += 1

        # The rest of the state, and the key's parts that are not pieces.
        self.castling = new_rights
        self.ep_square = NO_SQUARE
        if pt == PAWN and (to - frm == 16 or frm - to == 16):
            self.ep_square = (frm + to) >> 1
        if us == BLACK:
            self.fullmove_number += 1
        self.turn = us ^ 1
        key = self.key ^ ep_key ^ _TURN_KEY
        ep_key = self._ep_key() if self.ep_square != NO_SQUARE else 0
        key ^= ep_key
        if new_rights != rights:
            key ^= castle_key_before ^ self._castling_key()
            boundary = True
        self.key = key
        self.legal_ep_key = key
        if ep_key and not self.en_passant_capturers():
            self.legal_ep_key = key ^ ep_key
        if boundary or self.halfmove_clock == 0:
            self.reversible = 0
        else:
            self.reversible += 1

    def _put_piece(self, piece: i64, sq: i64) -> None:
        """Put ``piece`` on the empty ``sq``: the mailbox, the bitboards, the key, the
        piece-square sums, the phase and (with a network) the accumulator."""
        index = piece * 64 + sq
        self.mailbox[sq] = piece
        self._toggle(piece, _ONE << sq)
        self.key ^= _PIECE_KEY[index]
        self.mg += _MG[index]
        self.eg += _EG[index]
        self.phase += _PHASE[piece]
        if self.has_network:
            self.acc += self._columns[index]

    def _remove_piece(self, piece: i64, sq: i64) -> None:
        """Take ``piece`` off ``sq``: everything ``_put_piece`` updates."""
        index = piece * 64 + sq
        self.mailbox[sq] = 0
        self._toggle(piece, _ONE << sq)
        self.key ^= _PIECE_KEY[index]
        self.mg -= _MG[index]
        self.eg -= _EG[index]
        self.phase -= _PHASE[piece]
        if self.has_network:
            self.acc -= self._columns[index]

    def _move_piece(self, piece: i64, frm: i64, to: i64) -> None:
        """Move ``piece`` from ``frm`` to the empty ``to``: as ``_remove_piece`` then
        ``_put_piece``, in one (the phase does not change)."""
        from_index = piece * 64 + frm
        to_index = piece * 64 + to
        mailbox = self.mailbox
        mailbox[frm] = 0
        mailbox[to] = piece
        self._toggle(piece, (_ONE << frm) | (_ONE << to))
        self.key ^= _PIECE_KEY[from_index] ^ _PIECE_KEY[to_index]
        # The packed psqt change, split: its low half is mg's (signed).
        psqt = _PSQT[to_index] - _PSQT[from_index]
        mg_change = ((psqt + _HALF32) & _LOW32) - _HALF32
        self.mg += mg_change
        self.eg += (psqt - mg_change) >> 32
        if self.has_network:
            columns = self._columns
            self.acc += columns[to_index] - columns[from_index]

    def unmake(self) -> None:
        """Take back the last move (or null move).

        The key, the sums and the accumulator come back from the undo record, so the
        pieces go back on the mailbox and the bitboards alone (``_toggle``), not by
        ``_put_piece`` and ``_remove_piece``, which would recompute them."""
        self._ply -= 1
        undo = self._undo[self._ply]
        move = undo.move
        self.castling = undo.castling
        self.key = undo.key
        self.legal_ep_key = undo.legal_ep_key
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
        boundary = ep_key != 0 and self.legal_ep_key == self.key
        undo = self._push_undo()
        undo.move = 0
        undo.captured = 0
        undo.ep_square = self.ep_square
        undo.reversible = self.reversible
        undo.halfmove_clock = self.halfmove_clock
        undo.castling = self.castling
        key = self.key
        undo.key = key
        undo.legal_ep_key = self.legal_ep_key
        key ^= ep_key
        self.ep_square = NO_SQUARE
        if self.turn == BLACK:
            self.fullmove_number += 1
        self.turn ^= 1
        self.key = key ^ _TURN_KEY
        self.legal_ep_key = self.key
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

    def last_move(self) -> i64:
        """The move that led here (0: a null move, or none made on this board)."""
        return self._undo[self._ply - 1].move if self._ply else 0

    # --- keys and evaluation sums from scratch ----------------------------------------

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

    def _compute_legal_ep_key(self) -> i64:
        ep_key = self._ep_key()
        if ep_key and not self.en_passant_capturers():
            return self.key ^ ep_key
        return self.key

    def polyglot_key(self) -> int:
        """``key`` as python-chess's ``chess.polyglot.zobrist_hash`` gives it."""
        return _u64(self.key)

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

    # --- repetitions and the fifty-move rule ------------------------------------------

    def is_game_repetition(self, count: i64 = 3) -> bool:
        """The game's rule, as python-chess's ``is_repetition(count)``: has the position
        (``legal_ep_key``) occurred ``count`` times in all, counting back only to the
        last move after which no earlier position can recur (``reversible``)?"""
        if count <= 1:
            return True
        undo = self._undo
        n = self._ply
        back = self.reversible
        if back > n:
            back = n
        key = self.legal_ep_key
        k: i64 = 2
        while k <= back:
            if undo[n - k].legal_ep_key == key:
                count -= 1
                if count <= 1:
                    return True
            k += 2
        return False

    def is_search_repetition(self) -> bool:
        """The search's rule: the current ``key`` occurred 4, 6, 8, ... plies back,
        within the fifty-move counter and the moves made on this board.

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

    def is_fifty_moves(self) -> bool:
        """Fifty moves without a capture or pawn move (python-chess also needs a legal
        move: the caller checks for mate first)."""
        return self.halfmove_clock >= 100

    # --- state checks -----------------------------------------------------------------

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
        if self.legal_ep_key != self._compute_legal_ep_key():
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
