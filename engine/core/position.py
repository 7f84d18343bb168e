"""The searched position: a chess.Board plus state kept in step by make/unmake.

``Position`` owns a python-chess board and maintains, move by move:

- ``key``: the 64-bit Polyglot Zobrist key, equal to
  ``chess.polyglot.zobrist_hash(board)`` after every push and pop (castling
  rights, Polyglot's en passant rule, promotions and null moves included);
- ``mg``, ``eg``, ``phase``: tapered material + piece-square sums (White's view);
- ``keys``: the key history (game history from the last irreversible move, then
  the search path), used for repetition detection without ``Board.is_repetition``;
- ``acc``: with a network (``engine.core.nnue.Incremental``), both perspectives'
  accumulators packed in one integer, added to and subtracted from with the same
  piece indices as the sums above (never recomputed from scratch).

Every delta is computed from the board *before* the push, with one or two
``piece_type_at`` calls, because a full recomputation (``zobrist_hash`` scans
all 64 squares) costs 10-20 times more. Ordinary moves and captures are made
on the board's bitboards directly (``_make``), leaving it exactly as
``Board.push`` would but without python-chess's copy of the whole board state
per move; castling, en passant and promotions go through ``Board.push``. The
board stays a ``chess.Board`` that python-chess reads as usual. This module must
not search or evaluate beyond these sums, and must not call ``zobrist_hash``
except in ``__init__`` and ``state_errors``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final, Optional

import chess
import chess.polyglot

from engine.core.features import PHASE_WEIGHT
from engine.core.psqt import EG_TABLE, MG_TABLE

if TYPE_CHECKING:
    from engine.core.nnue import Incremental  # numpy: not needed at run time here

ZOBRIST: Final = chess.polyglot.POLYGLOT_RANDOM_ARRAY
_TURN_KEY: Final = ZOBRIST[780]
_EP_FILE_KEYS: Final = ZOBRIST[772:780]
_BB_SQUARES: Final = chess.BB_SQUARES
_PAWN: Final = chess.PAWN
_KNIGHT: Final = chess.KNIGHT
_BISHOP: Final = chess.BISHOP
_ROOK: Final = chess.ROOK
_QUEEN: Final = chess.QUEEN
_KING: Final = chess.KING
_BB_RANK_1: Final = chess.BB_RANK_1
_BB_RANK_8: Final = chess.BB_RANK_8

_CORNER_KEYS: Final = {
    chess.H1: ZOBRIST[768],
    chess.A1: ZOBRIST[769],
    chess.H8: ZOBRIST[770],
    chess.A8: ZOBRIST[771],
}
REPETITION_WINDOW_PLIES: Final = 100
"""How far back the game's history can matter to a search: a node whose position
lies more plies after the last capture or pawn move is a draw by the fifty-move
rule whatever repeats, so older plies are neither hashed nor copied."""

_castle_cache: dict[int, int] = {}
_POLYGLOT_HASHER: Final = chess.polyglot.ZobristHasher(ZOBRIST)


def castling_key(rights: int) -> int:
    """Key part of a (clean) castling-rights bitboard.

    Corner rooks use Polyglot's four values, so standard chess matches
    ``zobrist_hash``. Chess960 rooks on other files get values derived from the
    piece array (deterministic; such keys are ours, not Polyglot's).
    """
    cached = _castle_cache.get(rights)
    if cached is not None:
        return cached
    key = 0
    for square in chess.scan_forward(rights):
        corner = _CORNER_KEYS.get(square)
        key ^= corner if corner is not None else ZOBRIST[(square * 7 + 3) % 768] ^ ZOBRIST[square]
    _castle_cache[rights] = key
    return key


def ep_key(board: chess.Board) -> int:
    """Polyglot's en passant part: the file, only if a pawn could capture there."""
    ep_square = board.ep_square
    if ep_square is None:
        return 0
    if board.turn:
        capturers = chess.BB_PAWN_ATTACKS[chess.BLACK][ep_square]
    else:
        capturers = chess.BB_PAWN_ATTACKS[chess.WHITE][ep_square]
    if capturers & board.pawns & board.occupied_co[board.turn]:
        return _EP_FILE_KEYS[ep_square & 7]
    return 0


def full_state(board: chess.Board) -> tuple[int, int, int, int]:
    """(key, mg, eg, phase) computed from scratch; for set-up and verification."""
    mg = eg = phase = 0
    for color in (chess.WHITE, chess.BLACK):
        for piece_type in range(1, 7):
            index = (2 * (piece_type - 1) + int(color)) * 64
            for square in chess.scan_forward(board.pieces_mask(piece_type, color)):
                mg += MG_TABLE[index + square]
                eg += EG_TABLE[index + square]
                phase += PHASE_WEIGHT[piece_type]
    # Polyglot's castling part is swapped for ours: identical in standard chess,
    # and consistent with push() for Chess960 rooks off the corners.
    key = (
        chess.polyglot.zobrist_hash(board)
        ^ _POLYGLOT_HASHER.hash_castling(board)
        ^ castling_key(board.clean_castling_rights())
    )
    return key, mg, eg, phase


_Undo = tuple[int, int, int, Optional[int], int, int, int, int, chess.Move]
"""What ``_unmake`` needs: piece type, captured type, castling rights, en passant
square, halfmove clock, promoted mask, from and to bitboards, the move."""


def _xor_pieces(board: chess.Board, piece_type: int, mask: int) -> None:
    if piece_type == _PAWN:
        board.pawns ^= mask
    elif piece_type == _KNIGHT:
        board.knights ^= mask
    elif piece_type == _BISHOP:
        board.bishops ^= mask
    elif piece_type == _ROOK:
        board.rooks ^= mask
    elif piece_type == _QUEEN:
        board.queens ^= mask
    else:
        board.kings ^= mask


def _toggle(
    board: chess.Board, piece_type: int, captured: int, from_bb: int, to_bb: int, us: bool
) -> None:
    """Move a piece between two squares (capturing on the second) on the bitboards, or
    back: the same exclusive-ors make the move and take it back."""
    moved = from_bb | to_bb
    _xor_pieces(board, piece_type, moved)
    occupied_co = board.occupied_co
    occupied_co[us] ^= moved
    if captured:
        _xor_pieces(board, captured, to_bb)
        occupied_co[not us] ^= to_bb
        board.occupied ^= from_bb
    else:
        board.occupied ^= moved


def _make(
    board: chess.Board,
    move: chess.Move,
    from_sq: int,
    to_sq: int,
    to_bb: int,
    piece_type: int,
    captured: int,
    us: bool,
) -> _Undo:
    """Make an ordinary move or capture (no castling, en passant or promotion) on the
    board's bitboards, leaving the board exactly as ``Board.push`` would.

    python-chess's push handles every kind of move and keeps a full copy of the
    board's state per move; this handles the common kinds at a fraction of the
    cost, and keeps only what ``_unmake`` needs.
    """
    from_bb = _BB_SQUARES[from_sq]
    moved = from_bb | to_bb
    undo = (
        piece_type, captured, board.castling_rights, board.ep_square,
        board.halfmove_clock, board.promoted, from_bb, to_bb, move,
    )  # fmt: skip
    _toggle(board, piece_type, captured, from_bb, to_bb, us)
    if captured or piece_type == _PAWN:
        board.halfmove_clock = 0
    else:
        board.halfmove_clock += 1
    promoted = board.promoted
    if promoted & moved:
        # Keep python-chess's record of promoted pieces (it follows the piece).
        board.promoted = (promoted & ~moved) | (to_bb if promoted & from_bb else 0)
    rights = board.castling_rights
    if rights & moved or piece_type == _KING:
        rights &= ~moved
        if piece_type == _KING:
            rights &= ~(_BB_RANK_1 if us else _BB_RANK_8)
        board.castling_rights = rights
    if piece_type == _PAWN and (to_sq - from_sq == 16 or from_sq - to_sq == 16):
        board.ep_square = (from_sq + to_sq) >> 1
    else:
        board.ep_square = None
    if not us:
        board.fullmove_number += 1
    board.turn = not us
    board.move_stack.append(move)
    board._stack.append(_Restore(undo))  # type: ignore[arg-type]
    return undo


class _Restore:
    """Stands in ``Board._stack`` for a move made by ``_make``.

    python-chess keeps one saved state per move in ``_stack`` beside ``move_stack``;
    ``Board.pop`` and ``Board.copy`` rely on the two lists being the same length.
    This entry keeps them so (a board made through a Position can be copied, popped
    and replayed like any other), and restores by taking the move back.
    """

    __slots__ = ("undo",)

    def __init__(self, undo: _Undo) -> None:
        self.undo = undo

    def restore(self, board: chess.Board) -> None:
        """Called by ``Board.pop`` after it has popped the move itself."""
        _take_back(board, self.undo)


def _take_back(board: chess.Board, undo: _Undo) -> None:
    piece_type, captured, rights, ep_square, halfmove, promoted, from_bb, to_bb, _ = undo
    us = not board.turn
    _toggle(board, piece_type, captured, from_bb, to_bb, us)
    board.promoted = promoted
    board.castling_rights = rights
    board.ep_square = ep_square
    board.halfmove_clock = halfmove
    if not us:
        board.fullmove_number -= 1
    board.turn = us


def _unmake(board: chess.Board, undo: _Undo) -> None:
    """Take back a move made by ``_make``."""
    _take_back(board, undo)
    board.move_stack.pop()
    board._stack.pop()


class Position:
    """A board with its incremental key, evaluation sums, key history and (given a
    network) the network's accumulators."""

    def __init__(self, board: chess.Board, network: Optional[Incremental] = None) -> None:
        # Raw castling rights must be clean, so that the rights python-chess keeps
        # after each push are exactly what the key hashes.
        board.castling_rights = board.clean_castling_rights()
        self.board = board
        self.key, self.mg, self.eg, self.phase = full_state(board)
        self._ep_key = ep_key(board)
        self._stack: list[tuple[int, int, int, int, int, Optional[_Undo]]] = []
        self.keys: list[int] = [*self._history_keys(board), self.key]
        self.network = network
        self.acc = network.accumulator(board) if network is not None else 0
        # Kept apart from _stack so that the hand-written evaluation's searches do not
        # carry one more field per move.
        self._acc_stack: list[int] = []

    @staticmethod
    def _history_keys(board: chess.Board) -> list[int]:
        """Keys of earlier positions back to the last irreversible move (at most 100)."""
        count = min(board.halfmove_clock, len(board.move_stack), REPETITION_WINDOW_PLIES)
        if count == 0:
            return []
        replay = board.copy(stack=count)
        keys = []
        for _ in range(count):
            replay.pop()
            keys.append(chess.polyglot.zobrist_hash(replay))
        keys.reverse()
        return keys

    def push(self, move: chess.Move) -> None:
        """Make ``move`` (pseudo-legal) and update key, sums and history."""
        board = self.board
        from_sq = move.from_square
        to_sq = move.to_square
        us = board.turn
        piece_type = board.piece_type_at(from_sq) or _PAWN
        base = (2 * piece_type - 2 + us) * 64
        key = self.key ^ ZOBRIST[base + from_sq]
        mg = self.mg - MG_TABLE[base + from_sq]
        eg = self.eg - EG_TABLE[base + from_sq]
        phase = self.phase
        to_bb = _BB_SQUARES[to_sq]
        undo: Optional[_Undo] = None
        # Piece indices (as MG_TABLE's) for the network: the moved piece leaves
        # from_index; a rook moves (castling) or a piece is taken (-1: none).
        from_index = base + from_sq
        rook_from_index = rook_to_index = captured_index = -1

        if piece_type == _KING and (to_bb & board.occupied_co[us] or abs(to_sq - from_sq) == 2):
            # Castling: king-takes-rook (Chess960 form) or two squares (standard form).
            if to_bb & board.occupied_co[us]:
                rook_from = to_sq
            else:
                rook_from = to_sq + 1 if to_sq > from_sq else to_sq - 2
            rank_base = from_sq & 56
            if rook_from > from_sq:
                king_to, rook_to = rank_base + 6, rank_base + 5
            else:
                king_to, rook_to = rank_base + 2, rank_base + 3
            rook_base = (2 * _ROOK - 2 + us) * 64
            rook_from_index = rook_base + rook_from
            rook_to_index = rook_base + rook_to
            key ^= ZOBRIST[rook_base + rook_from] ^ ZOBRIST[rook_base + rook_to]
            mg += MG_TABLE[rook_base + rook_to] - MG_TABLE[rook_base + rook_from]
            eg += EG_TABLE[rook_base + rook_to] - EG_TABLE[rook_base + rook_from]
            to_sq = king_to
        else:
            if to_bb & board.occupied_co[not us]:
                captured = board.piece_type_at(to_sq) or _PAWN
                cap_sq = to_sq
            elif piece_type == _PAWN and to_sq == board.ep_square:
                captured = _PAWN
                cap_sq = to_sq - 8 if us else to_sq + 8
            else:
                captured = 0
            if captured:
                cap_base = (2 * captured - 2 + (not us)) * 64
                captured_index = cap_base + cap_sq
                key ^= ZOBRIST[cap_base + cap_sq]
                mg -= MG_TABLE[cap_base + cap_sq]
                eg -= EG_TABLE[cap_base + cap_sq]
                phase -= PHASE_WEIGHT[captured]
            if move.promotion:
                base = (2 * move.promotion - 2 + us) * 64
                phase += PHASE_WEIGHT[move.promotion]
            elif not captured or cap_sq == to_sq:
                # An ordinary move or capture: made on the bitboards directly.
                undo = _make(board, move, from_sq, to_sq, to_bb, piece_type, captured, us)

        key ^= ZOBRIST[base + to_sq]
        mg += MG_TABLE[base + to_sq]
        eg += EG_TABLE[base + to_sq]

        old_rights = undo[2] if undo is not None else board.castling_rights
        old_ep_key = self._ep_key
        self._stack.append((self.key, self.mg, self.eg, self.phase, old_ep_key, undo))
        if undo is None:
            board.push(move)  # castling, en passant, promotion: python-chess's own push
        if board.castling_rights != old_rights:
            key ^= castling_key(old_rights) ^ castling_key(board.castling_rights)
        new_ep_key = ep_key(board) if board.ep_square is not None else 0
        self._ep_key = new_ep_key
        key ^= old_ep_key ^ new_ep_key ^ _TURN_KEY
        self.key = key
        self.mg = mg
        self.eg = eg
        self.phase = phase
        self.keys.append(key)
        network = self.network
        if network is not None:
            acc = self.acc
            self._acc_stack.append(acc)
            columns = network.columns
            acc += columns[base + to_sq] - columns[from_index]
            if captured_index >= 0:
                acc -= columns[captured_index]
            elif rook_from_index >= 0:
                acc += columns[rook_to_index] - columns[rook_from_index]
            self.acc = acc

    def pop(self) -> None:
        """Unmake the last move (or null move)."""
        self.key, self.mg, self.eg, self.phase, self._ep_key, undo = self._stack.pop()
        if undo is None:
            self.board.pop()
        else:
            _unmake(self.board, undo)
        self.keys.pop()
        if self.network is not None:
            self.acc = self._acc_stack.pop()

    def push_null(self) -> None:
        """Pass the turn: only the side to move and the en passant part change."""
        self._stack.append((self.key, self.mg, self.eg, self.phase, self._ep_key, None))
        if self.network is not None:
            self._acc_stack.append(self.acc)
        board = self.board
        board.push(chess.Move.null())
        # No repetition reaches back across a pass: the positions before it were not
        # really followed by this one (pop restores the clock with the board).
        board.halfmove_clock = 0
        self.key ^= self._ep_key ^ _TURN_KEY
        self._ep_key = 0
        self.keys.append(self.key)

    def pop_null(self) -> None:
        """Unmake a null move."""
        self.pop()

    def is_repetition(self) -> bool:
        """True if the current key occurred earlier since the last irreversible move.

        One earlier occurrence counts (a 2-fold repetition): inside a search
        repeating a position can only be as good as a draw for the side that
        could avoid it.
        """
        keys = self.keys
        last = len(keys) - 1
        start = last - 4
        stop = last - self.board.halfmove_clock
        if start < 0 or start < stop:
            return False
        # Same side to move: every second key back from four plies ago, down to the
        # last irreversible move (a slice and ``in`` run in C, unlike a generator).
        return keys[last] in keys[start : stop - 1 if stop > 0 else None : -2]

    def state_errors(self) -> list[str]:
        """Differences between the incremental state and a from-scratch one."""
        key, mg, eg, phase = full_state(self.board)
        errors = []
        for name, have, want in (
            ("key", self.key, key),
            ("mg", self.mg, mg),
            ("eg", self.eg, eg),
            ("phase", self.phase, phase),
        ):
            if have != want:
                errors.append(f"{name}: incremental {have:#x} != from scratch {want:#x}")
        if self.keys[-1] != self.key:
            errors.append("key history does not end with the current key")
        if self.network is not None and self.acc != self.network.accumulator(self.board):
            errors.append("network accumulator differs from the board's")
        return errors
