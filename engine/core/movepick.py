"""The move picker: which moves a node tries, in which order, generated in stages.

A ``MovePicker`` is iterated by the search. It yields ``(stage, moves)`` pairs,
one per stage, each stage's moves best first, and generates a stage only when
the search asks for it, so that a cutoff in an early stage saves the work of the
later ones (Stockfish's ``MovePicker``, Sunfish's ``moves()``). The stages of an
interior node:

1. ``STAGE_TT``: the transposition table's move, if it is pseudo-legal here;
2. ``STAGE_GOOD_CAPTURES``: captures and capture-promotions by MVV-LVA (most
   valuable victim, least valuable attacker), without those that lose material
   by static exchange when ``split_bad_captures`` is set;
3. ``STAGE_KILLERS``: the ply's two killer moves (quiet moves that caused a
   cutoff in a sibling), then the counter move (the quiet move that last refuted
   the opponent's previous move), if they are pseudo-legal here;
4. ``STAGE_QUIETS``: the other non-captures by the history heuristic (queen
   promotions first), unless the search has called ``skip_quiets`` (late move
   pruning) before the stage is reached;
5. ``STAGE_BAD_CAPTURES``: the captures that lose material, last.

In check there are two stages, the TT move (``STAGE_TT_IN_CHECK``) and
``STAGE_EVASIONS`` (every legal move, ordered as above). ``quiescence_moves``
gives quiescence search's one stage: the evasions in check, otherwise the
captures and queen promotions by MVV-LVA; at quiescence's first ply the search
adds ``quiet_checks`` after them.

A stage is a ``Stage``: it tells the search what its moves are (already legal,
the TT move, quiet, late quiets that may be pruned), so that the search asks
the stage rather than knowing the picker's order.

Moves are python-chess ``Move`` objects; they are identified by integer codes
(``from | to << 6 | promotion << 12``), which are cheap to build, compare and
store in the TT (``Move.__eq__`` is slow). Except for the TT move and killers,
the moves are pseudo-legal: the search tests legality where a move could leave
the king attacked. This module reads the board and the history table it is given
(the searcher owns it); it never pushes moves and keeps no other search state.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Final

import chess

from engine.core.attacks import checking_squares
from engine.core.see import SEE_VALUES, see_ge

_BB_SQUARES: Final = chess.BB_SQUARES
_BB_ALL: Final = chess.BB_ALL


class Stage:
    """What the moves of one stage are, as the search needs to know it."""

    __slots__ = ("extended", "late", "legal", "name", "quiet", "verify_all")

    def __init__(
        self,
        name: str,
        *,
        extended: bool = False,
        legal: bool = False,
        verify_all: bool = False,
        quiet: bool = False,
        late: bool = False,
    ) -> None:
        self.name = name
        self.extended = extended
        """The TT move: the one the singular test extends (or reduces)."""
        self.legal = legal
        """Legal already: no move needs a legality test."""
        self.verify_all = verify_all
        """Every move needs a legality test (not only those that could expose the king)."""
        self.quiet = quiet
        """Non-captures only: a cutoff lowers the history of those searched before it
        (promotions aside)."""
        self.late = late
        """Quiet moves late in the order: pruned and reduced at low depth."""

    def __repr__(self) -> str:
        return f"Stage({self.name})"


STAGE_TT: Final = Stage("tt", extended=True)
STAGE_TT_IN_CHECK: Final = Stage("tt in check", extended=True, verify_all=True)
"""A pseudo-legal TT move need not answer the check."""
STAGE_EVASIONS: Final = Stage("evasions", legal=True)
STAGE_GOOD_CAPTURES: Final = Stage("good captures")
STAGE_KILLERS: Final = Stage("killers", quiet=True)
STAGE_QUIETS: Final = Stage("quiets", quiet=True, late=True)
STAGE_BAD_CAPTURES: Final = Stage("bad captures")

HISTORY_SIDE_SIZE: Final = 64 * 64
"""History entries per side to move: one per (from-square, to-square)."""
HISTORY_SIZE: Final = 2 * HISTORY_SIDE_SIZE
"""Black's entries first, then White's: the index is
``HISTORY_SIDE_SIZE * turn + 64 * from + to``."""

CAPTURE_BASE: Final = 1 << 24
"""Ordering score of captures and promotions, above every killer and quiet."""

KILLER_1_SCORE: Final = (1 << 23) + 2
KILLER_2_SCORE: Final = (1 << 23) + 1
HISTORY_MAX: Final = 1 << 22
"""Above every history value (see HISTORY_LIMIT): queen promotions sort above quiets."""
HISTORY_LIMIT: Final = 16384
"""History entries stay within +/- this: each update moves an entry toward the
limit by a share of the distance left ("gravity"), so a move that refuted often
long ago is overtaken by one that refutes now."""
HISTORY_BONUS_MAX: Final = 1200
"""The largest single update (depth squared, capped): deep cutoffs count more."""

_ORDER_SHIFT: Final = 8
"""Sort keys are ``score << 8 | (255 - index)``: ints sort fast and ties keep generation order."""

_MVV: Final = (0, 100, 300, 310, 500, 900, 10000)


def move_code(move: chess.Move) -> int:
    """The move's integer code (0 is never a real move: from == to)."""
    return move.from_square | (move.to_square << 6) | ((move.promotion or 0) << 12)


def decode(code: int) -> chess.Move:
    """The ``Move`` with this code."""
    return chess.Move(code & 63, (code >> 6) & 63, (code >> 12) or None)


def new_history() -> list[int]:
    return [0] * HISTORY_SIZE


def age_history(history: list[int]) -> None:
    """Halve every entry: recent searches count more than old ones."""
    for i in range(len(history)):
        history[i] >>= 1


def history_bonus(depth: int) -> int:
    """The size of a history update for a cutoff at ``depth``."""
    bonus = depth * depth
    return bonus if bonus < HISTORY_BONUS_MAX else HISTORY_BONUS_MAX


def update_history(history: list[int], index: int, bonus: int) -> None:
    """Add ``bonus`` (negative: a malus) to an entry, scaled by how far it is from
    the limit in that direction, so that entries stay within +/- HISTORY_LIMIT."""
    value = history[index]
    magnitude = bonus if bonus >= 0 else -bonus
    history[index] = value + bonus - value * magnitude // HISTORY_LIMIT


def new_counter_moves() -> list[int]:
    """Counter-move table: a move code per (side to move, opponent's from, to)."""
    return [0] * HISTORY_SIZE


class MovePicker:
    """The moves of one node, stage by stage (see the module docstring).

    ``skip_quiets`` (late move pruning) drops the quiet stage if it has not begun;
    the search stops a stage it is in by itself.
    """

    __slots__ = (
        "board",
        "counter",
        "history",
        "in_check",
        "killer_1",
        "killer_2",
        "quiets_skipped",
        "split_bad_captures",
        "tt_code",
    )

    def __init__(
        self,
        board: chess.Board,
        tt_code: int,
        killer_1: int,
        killer_2: int,
        history: list[int],
        in_check: bool,
        split_bad_captures: bool = True,
        counter: int = 0,
    ) -> None:
        self.board = board
        self.counter = counter
        self.tt_code = tt_code
        self.killer_1 = killer_1
        self.killer_2 = killer_2
        self.history = history
        self.in_check = in_check
        self.split_bad_captures = split_bad_captures
        self.quiets_skipped = False

    def skip_quiets(self) -> None:
        """Do not generate the quiet stage (the killers and bad captures still come)."""
        self.quiets_skipped = True

    def __iter__(self) -> Iterator[tuple[Stage, Sequence[chess.Move]]]:
        board = self.board
        tt_code = self.tt_code
        if tt_code:
            tt_move = decode(tt_code)
            if board.is_pseudo_legal(tt_move):
                yield STAGE_TT_IN_CHECK if self.in_check else STAGE_TT, (tt_move,)
            else:
                tt_code = 0
        killer_1 = self.killer_1
        killer_2 = self.killer_2
        if self.in_check:
            evasions = list(board.generate_legal_moves())
            yield (
                STAGE_EVASIONS,
                order_moves(board, evasions, tt_code, killer_1, killer_2, self.history),
            )
            return
        captures = order_captures(board, pseudo_legal_captures(board), tt_code)
        bad_captures: list[chess.Move] = []
        if self.split_bad_captures:
            captures = split_bad_captures(board, captures, bad_captures)
        yield STAGE_GOOD_CAPTURES, captures
        counter = self.counter
        if counter in (killer_1, killer_2):
            counter = 0
        killers = valid_killers(board, killer_1, killer_2, tt_code, counter)
        if killers:
            yield STAGE_KILLERS, killers
        if not self.quiets_skipped:
            quiets = pseudo_legal_quiets(board)
            yield (
                STAGE_QUIETS,
                order_quiets(
                    quiets, (tt_code, killer_1, killer_2, counter), board.turn, self.history
                ),
            )
        if bad_captures:
            yield STAGE_BAD_CAPTURES, bad_captures


_KNIGHT_ATTACKS: Final = chess.BB_KNIGHT_ATTACKS
_KING_ATTACKS: Final = chess.BB_KING_ATTACKS
_DIAG_ATTACKS: Final = chess.BB_DIAG_ATTACKS
_DIAG_MASKS: Final = chess.BB_DIAG_MASKS
_RANK_ATTACKS: Final = chess.BB_RANK_ATTACKS
_RANK_MASKS: Final = chess.BB_RANK_MASKS
_FILE_ATTACKS: Final = chess.BB_FILE_ATTACKS
_FILE_MASKS: Final = chess.BB_FILE_MASKS
_PAWN_ATTACKS: Final = chess.BB_PAWN_ATTACKS
_BACK_RANKS: Final = chess.BB_RANK_1 | chess.BB_RANK_8
_EP_RANKS: Final = (chess.BB_RANK_4, chess.BB_RANK_5)
"""The rank a pawn captures en passant from, by the side to move."""
_Move = chess.Move
_UNDER_PROMOTIONS: Final = (chess.QUEEN, chess.ROOK, chess.BISHOP, chess.KNIGHT)


def _piece_moves(
    board: chess.Board, pieces: int, targets_mask: int, moves: list[chess.Move]
) -> None:
    """Append the moves of ``pieces`` (no pawns) onto ``targets_mask``, in python-chess's
    order: pieces from the highest square down, each one's targets likewise."""
    append = moves.append
    occupied = board.occupied
    knights = board.knights
    bishops = board.bishops
    rooks = board.rooks
    queens = board.queens
    while pieces:
        square = pieces.bit_length() - 1
        bit = 1 << square
        pieces ^= bit
        if bit & knights:
            targets = _KNIGHT_ATTACKS[square]
        elif bit & bishops:
            targets = _DIAG_ATTACKS[square][_DIAG_MASKS[square] & occupied]
        elif bit & rooks:
            targets = (
                _RANK_ATTACKS[square][_RANK_MASKS[square] & occupied]
                | _FILE_ATTACKS[square][_FILE_MASKS[square] & occupied]
            )
        elif bit & queens:
            targets = (
                _DIAG_ATTACKS[square][_DIAG_MASKS[square] & occupied]
                | _RANK_ATTACKS[square][_RANK_MASKS[square] & occupied]
                | _FILE_ATTACKS[square][_FILE_MASKS[square] & occupied]
            )
        else:
            targets = _KING_ATTACKS[square]
        targets &= targets_mask
        while targets:
            target = targets.bit_length() - 1
            targets ^= 1 << target
            append(_Move(square, target))


def _pawn_move(moves: list[chess.Move], from_sq: int, to_sq: int) -> None:
    """Append a pawn move: the four promotions (queen first) on the last rank."""
    if (1 << to_sq) & _BACK_RANKS:
        for piece in _UNDER_PROMOTIONS:
            moves.append(_Move(from_sq, to_sq, piece))
    else:
        moves.append(_Move(from_sq, to_sq))


def pseudo_legal_captures(board: chess.Board) -> list[chess.Move]:
    """``list(board.generate_pseudo_legal_captures())``, the same moves in the same order,
    in about a third of the time.

    python-chess's generator serves every kind of move and mask and finds each
    piece's attacks through a general dispatch; quiescence asks for captures alone,
    at most of its nodes. The order matters (it breaks the ties of MVV-LVA), so it is
    python-chess's: pieces from the highest square down, each one's targets likewise,
    then pawns the same way (promotions as queen, rook, bishop, knight), then en
    passant.
    """
    us = board.turn
    them = board.occupied_co[not us]
    ours = board.occupied_co[us]
    occupied = board.occupied
    pawns = board.pawns
    moves: list[chess.Move] = []
    append = moves.append
    _piece_moves(board, ours & ~pawns, them, moves)
    our_pawns = pawns & ours
    if our_pawns:
        attacks = _PAWN_ATTACKS[us]
        capturers = our_pawns
        while capturers:
            square = capturers.bit_length() - 1
            capturers ^= 1 << square
            targets = attacks[square] & them
            while targets:
                target = targets.bit_length() - 1
                targets ^= 1 << target
                _pawn_move(moves, square, target)
        ep_square = board.ep_square
        if ep_square is not None and not occupied & (1 << ep_square):
            capturers = our_pawns & _PAWN_ATTACKS[not us][ep_square] & _EP_RANKS[us]
            while capturers:
                square = capturers.bit_length() - 1
                capturers ^= 1 << square
                append(_Move(square, ep_square))
    return moves


def quiet_checks(board: chess.Board) -> list[chess.Move]:
    """Quiet moves of knights, bishops, rooks and queens that check the enemy king
    directly (no pawn moves, discovered checks or castling), pseudo-legal: those
    that move to ``attacks.checking_squares``.
    """
    moves: list[chess.Move] = []
    squares = checking_squares(board)  # all empty without an enemy king
    ours = board.occupied_co[board.turn]
    empty = _BB_ALL ^ board.occupied
    knights = board.knights & ours
    diagonal = squares[chess.BISHOP] & empty
    straight = squares[chess.ROOK] & empty
    if knights:
        _piece_moves(board, knights, squares[chess.KNIGHT] & empty, moves)
    if diagonal:
        _piece_moves(board, (board.bishops | board.queens) & ours, diagonal, moves)
    if straight:
        _piece_moves(board, (board.rooks | board.queens) & ours, straight, moves)
    return moves


def pseudo_legal_quiets(board: chess.Board) -> list[chess.Move]:
    """``list(board.generate_pseudo_legal_moves(BB_ALL, ~them))`` without its en passant
    captures (which come last there): the same quiet moves in the same order.

    python-chess's order matters here too (history ties are broken by it): pieces
    from the highest square down, castling, pawn single steps, then double steps.
    """
    us = board.turn
    ours = board.occupied_co[us]
    occupied = board.occupied
    empty = ~occupied
    pawns = board.pawns
    moves: list[chess.Move] = []
    append = moves.append
    _piece_moves(board, ours & ~pawns, empty, moves)
    if board.castling_rights & ours:
        moves.extend(board.generate_castling_moves())
    our_pawns = pawns & ours
    if our_pawns:
        if us:
            single = our_pawns << 8 & empty
            double = single << 8 & empty & chess.BB_RANK_4
            step = 8
        else:
            single = our_pawns >> 8 & empty
            double = single >> 8 & empty & chess.BB_RANK_5
            step = -8
        while single:
            target = single.bit_length() - 1
            single ^= 1 << target
            _pawn_move(moves, target - step, target)
        while double:
            target = double.bit_length() - 1
            double ^= 1 << target
            append(_Move(target - 2 * step, target))
    return moves


def quiescence_moves(board: chess.Board, history: list[int], in_check: bool) -> list[chess.Move]:
    """Quiescence search's one stage: every legal evasion in check (ordered as in the
    main search), otherwise the captures and queen promotions by MVV-LVA.

    A plain list, not a ``MovePicker``: most quiescence nodes stand pat or search a
    capture or two, and building a picker per node would cost more than it saves.
    """
    if in_check:
        return order_moves(board, list(board.generate_legal_moves()), -1, 0, 0, history)
    noisy = pseudo_legal_captures(board)
    promotion_rank = chess.BB_RANK_7 if board.turn else chess.BB_RANK_2
    if board.pawns & board.occupied_co[board.turn] & promotion_rank:
        noisy.extend(
            move
            for move in board.generate_pseudo_legal_moves(
                board.pawns & promotion_rank,
                ~board.occupied & (chess.BB_RANK_8 | chess.BB_RANK_1),
            )
            if move.promotion == chess.QUEEN
        )
    return order_captures(board, noisy) if noisy else noisy


def split_bad_captures(
    board: chess.Board, captures: list[chess.Move], bad: list[chess.Move]
) -> list[chess.Move]:
    """The captures that do not lose material; the others are appended to ``bad``.

    Only a capture by a piece worth more than its victim can lose: the exchange
    is evaluated for those alone.
    """
    piece_type_at = board.piece_type_at
    good = []
    for move in captures:
        if (
            move.promotion
            or SEE_VALUES[piece_type_at(move.from_square) or 1]
            <= (SEE_VALUES[piece_type_at(move.to_square) or 1])
            or see_ge(board, move, 0)
        ):
            good.append(move)
        else:
            bad.append(move)
    return good


def valid_killers(
    board: chess.Board, killer_1: int, killer_2: int, tt_code: int, counter: int = 0
) -> list[chess.Move]:
    """The killers (then the counter move) that are quiet, pseudo-legal moves here and
    not the TT move."""
    them = board.occupied_co[not board.turn]
    valid = []
    for code in (killer_1, killer_2, counter):
        if code and code != tt_code and not _BB_SQUARES[(code >> 6) & 63] & them:
            move = decode(code)
            if board.is_pseudo_legal(move):
                valid.append(move)
    return valid


def order_moves(
    board: chess.Board,
    moves: Sequence[chess.Move],
    skip_code: int,
    killer_1: int,
    killer_2: int,
    history: list[int],
) -> list[chess.Move]:
    """``moves`` sorted best first, without the move coded ``skip_code``."""
    them = board.occupied_co[not board.turn]
    piece_type_at = board.piece_type_at
    ep_square = board.ep_square
    hist_base = HISTORY_SIDE_SIZE if board.turn else 0
    keys = []
    index = 0
    # In check and at the root only: clarity over the last nanosecond here.
    for move in moves:
        if move_code(move) == skip_code:
            index += 1
            continue
        from_sq = move.from_square
        to_sq = move.to_square
        promotion = move.promotion
        if _BB_SQUARES[to_sq] & them:
            score = (
                CAPTURE_BASE + _MVV[piece_type_at(to_sq) or 1] * 8 - (piece_type_at(from_sq) or 1)
            )
            if promotion:
                score += _MVV[promotion]
        elif promotion:
            # Under-promotions go to the back; a queen promotion is worth a capture.
            score = CAPTURE_BASE + _MVV[promotion] if promotion == chess.QUEEN else 0
        elif to_sq == ep_square and piece_type_at(from_sq) == chess.PAWN:
            score = CAPTURE_BASE + _MVV[1] * 8 - 1
        elif move_code(move) == killer_1:
            score = KILLER_1_SCORE
        elif move_code(move) == killer_2:
            score = KILLER_2_SCORE
        else:
            score = history[hist_base + from_sq * 64 + to_sq]
        keys.append((score << _ORDER_SHIFT) | (255 - index))
        index += 1
    return _sorted(moves, keys)


def order_captures(
    board: chess.Board, moves: Sequence[chess.Move], skip_code: int = -1
) -> list[chess.Move]:
    """Captures (and capture-promotions) by MVV-LVA, without ``skip_code``."""
    piece_type_at = board.piece_type_at
    keys = []
    for index, move in enumerate(moves):
        to_sq = move.to_square
        promotion = move.promotion
        if (
            skip_code >= 0
            and (move.from_square | (to_sq << 6) | ((promotion or 0) << 12)) == skip_code
        ):
            continue
        # An empty target square means en passant: a pawn takes a pawn.
        score = _MVV[piece_type_at(to_sq) or 1] * 8 - (piece_type_at(move.from_square) or 1)
        if promotion:
            score += _MVV[promotion] * 8
        keys.append((score << _ORDER_SHIFT) | (255 - index))
    return _sorted(moves, keys)


def order_quiets(
    moves: Sequence[chess.Move], skip: tuple[int, ...], turn: bool, history: list[int]
) -> list[chess.Move]:
    """Non-captures by history (queen promotions first), without the codes in ``skip``.

    ``moves`` are ``pseudo_legal_quiets``: no en passant capture among them.
    """
    hist_base = HISTORY_SIDE_SIZE if turn else 0
    keys = []
    for index, move in enumerate(moves):
        from_sq = move.from_square
        to_sq = move.to_square
        promotion = move.promotion
        code = from_sq | (to_sq << 6) | ((promotion or 0) << 12)
        if code in skip:
            continue
        if promotion:
            score = HISTORY_MAX + 1 if promotion == chess.QUEEN else 0
        else:
            score = history[hist_base + from_sq * 64 + to_sq]
        keys.append((score << _ORDER_SHIFT) | (255 - index))
    return _sorted(moves, keys)


def _sorted(moves: Sequence[chess.Move], keys: list[int]) -> list[chess.Move]:
    """The moves whose sort keys are ``keys``, highest key first."""
    keys.sort(reverse=True)
    return [moves[255 - (k & 255)] for k in keys]
