"""The move picker: which moves a node tries, in which order, generated in stages.

A ``MovePicker`` is iterated by the search. It yields ``(stage, moves)`` pairs,
one per stage, each stage's moves best first, and generates a stage only when
the search asks for it, so that a cutoff in an early stage saves the work of the
later ones (Stockfish's ``MovePicker``, Sunfish's ``moves()``). The stages of an
interior node:

1. ``STAGE_TT``: the transposition table's move, if it is legal here;
2. ``STAGE_GOOD_CAPTURES``: captures and capture-promotions by MVV-LVA (most
   valuable victim, least valuable attacker), without those that lose material
   by static exchange when ``split_bad_captures`` is set;
3. ``STAGE_KILLERS``: the ply's two killer moves (quiet moves that caused a
   cutoff in a sibling), then the counter move (the quiet move that last refuted
   the opponent's previous move), if they are legal here;
4. ``STAGE_QUIETS``: the other non-captures by the history heuristic (queen
   promotions first), unless the search has called ``skip_quiets`` (late move
   pruning) before the stage is reached;
5. ``STAGE_BAD_CAPTURES``: the captures that lose material, last.

In check there are two stages, the TT move (``STAGE_TT``) and ``STAGE_EVASIONS``
(every other legal move, ordered as above). ``quiescence_moves`` gives quiescence
search's one stage: the evasions in check, otherwise the captures and queen
promotions by MVV-LVA; at quiescence's first ply the search adds the generator's
``direct_quiet_checks`` after them.

Moves are the search board's ints (engine.core.board), all legal: the generator
(engine.core.movegen) gives legal moves, and the TT move and killers are checked
with its ``legal_move``. The tables (TT, killers, counter moves) keep a move's
15-bit code, ``move & CODE_MASK`` (``from | to << 6 | promotion << 12``, castling
as the king taking its rook), from which the board restores the move.

Ties are broken by ``_rank``, a fixed order computed from the move itself (pieces
from the highest square down, each one's targets likewise, then castling, pawn
captures, pawn pushes, double pushes and en passant; in check the king's moves
first). What matters is that the tie-break is deterministic and independent of the
order in which the generator happens to produce moves: that is what lets the
generator be reorganised without changing the search tree (the bench). That
particular order is python-chess's generation order only because python-chess was
the search's board before the native one; changing it would change the tree, and
so needs a strength test of its own. A sort key is ``score << 35 | rank << 17 |
move``: one int per move, sorted in C, the move read back from its low bits.

This module reads the board and the tables it is given (the searcher owns them);
it never makes moves and keeps no other search state. ``move_code`` and ``decode``
convert python-chess moves, for the callers that pass a move between processes.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

import chess
from mypy_extensions import i64

from engine.core.bitboards import CASTLE, EN_PASSANT, KING, PAWN, QUEEN
from engine.core.board import Board
from engine.core.exchange import SEE_VALUES, see_ge
from engine.core.movegen import evasions, legal_move, noisy_moves, quiet_moves

CODE_MASK: Final = 0x7FFF
"""A move's code (what the tables keep): ``move & CODE_MASK``."""
_MOVE_MASK: Final = 0x1FFFF
"""The move in a sort key's low bits."""


class Stage:
    """What the moves of one stage are, as the search needs to know it."""

    __slots__ = ("extended", "late", "name", "quiet")

    def __init__(
        self, name: str, *, extended: bool = False, quiet: bool = False, late: bool = False
    ) -> None:
        self.name = name
        self.extended = extended
        """The TT move: the one the singular test extends (or reduces)."""
        self.quiet = quiet
        """Non-captures only: a cutoff lowers the history of those searched before it
        (promotions aside)."""
        self.late = late
        """Quiet moves late in the order: pruned and reduced at low depth."""

    def __repr__(self) -> str:
        return f"Stage({self.name})"


STAGE_TT: Final = Stage("tt", extended=True)
STAGE_EVASIONS: Final = Stage("evasions")
STAGE_GOOD_CAPTURES: Final = Stage("good captures")
STAGE_KILLERS: Final = Stage("killers", quiet=True)
STAGE_QUIETS: Final = Stage("quiets", quiet=True, late=True)
STAGE_BAD_CAPTURES: Final = Stage("bad captures")

HISTORY_SIDE_SIZE: Final = 64 * 64
"""History entries per side to move: one per (from-square, to-square)."""
HISTORY_SIZE: Final = 2 * HISTORY_SIDE_SIZE
"""Black's entries first, then White's: the index is
``HISTORY_SIDE_SIZE * (side is White) + (move & 4095)`` (from-square and to-square)."""

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

_SCORE_SHIFT: Final = 35
_RANK_SHIFT: Final = 17

_MVV: Final[list[i64]] = [0, 100, 300, 310, 500, 900, 10000]
_SEE: Final[list[i64]] = list(SEE_VALUES)


def move_code(move: chess.Move) -> int:
    """A python-chess move's integer code (0 is never a real move: from == to)."""
    return move.from_square | (move.to_square << 6) | ((move.promotion or 0) << 12)


def decode(code: int) -> chess.Move:
    """The python-chess ``Move`` with this code."""
    return chess.Move(code & 63, (code >> 6) & 63, (code >> 12) or None)


def history_base(board: Board) -> i64:
    """The side to move's first history index (White's entries come second)."""
    return HISTORY_SIDE_SIZE if board.turn == 0 else 0


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


def _rank(board: Board, move: i64, evasion: bool) -> i64:
    """The tie-break rank of ``move``: higher comes first (see the module docstring;
    python-chess's generation order). Unique among a position's moves."""
    frm = move & 63
    to = (move >> 6) & 63
    flag = (move >> 15) & 3
    group: i64 = 5
    if flag == CASTLE:
        group = 4
    elif flag == EN_PASSANT:
        group = 0
    else:
        piece = board.mailbox[frm] & 7
        if piece == KING:
            group = 6 if evasion else 5
        elif piece == PAWN:
            if board.mailbox[to]:
                group = 3
            elif to - frm == 16 or frm - to == 16:
                group = 1
            else:
                group = 2
    return (group << 15) | (frm << 9) | (to << 3) | ((move >> 12) & 7)


def _sorted(keys: list[i64]) -> list[i64]:
    """The moves in ``keys`` (see the module docstring), highest key first."""
    keys.sort(reverse=True)
    return [key & _MOVE_MASK for key in keys]


def generation_order(board: Board, moves: list[i64]) -> list[i64]:
    """``moves`` in the order python-chess would generate them."""
    evasion = board.is_check()
    keys = [(_rank(board, move, evasion) << _RANK_SHIFT) | move for move in moves]
    return _sorted(keys)


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
        board: Board,
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

    def __iter__(self) -> Iterator[tuple[Stage, list[i64]]]:
        board = self.board
        tt_code = self.tt_code
        if tt_code:
            tt_move = legal_move(board, tt_code)
            if tt_move:
                yield STAGE_TT, [tt_move]
            else:
                tt_code = 0
        killer_1 = self.killer_1
        killer_2 = self.killer_2
        if self.in_check:
            yield (
                STAGE_EVASIONS,
                order_moves(board, evasions(board), tt_code, killer_1, killer_2, self.history),
            )
            return
        noisy = noisy_moves(board, 0)  # not in check: that case returned above
        captures: list[i64] = []
        quiet_promotions: list[i64] = []
        mailbox = board.mailbox
        for move in noisy:
            # Board.is_capture, inlined: noisy moves are captures, en passant or promotions.
            if mailbox[(move >> 6) & 63] or (move >> 15) & 3 == EN_PASSANT:
                captures.append(move)
            else:
                quiet_promotions.append(move)
        captures = order_captures(board, captures, tt_code)
        bad_captures: list[i64] = []
        if self.split_bad_captures:
            captures = split_bad_captures(board, captures, bad_captures)
        yield STAGE_GOOD_CAPTURES, captures
        counter = self.counter
        if counter == killer_1 or counter == killer_2:  # noqa: SIM109 (no tuple, compiled)
            counter = 0
        killers = valid_killers(board, killer_1, killer_2, tt_code, counter)
        if killers:
            yield STAGE_KILLERS, killers
        if not self.quiets_skipped:
            quiets = quiet_moves(board, 0)
            quiets.extend(quiet_promotions)
            yield (
                STAGE_QUIETS,
                order_quiets(board, quiets, tt_code, killer_1, killer_2, counter, self.history),
            )
        if bad_captures:
            yield STAGE_BAD_CAPTURES, bad_captures


def quiescence_moves(board: Board, history: list[int], in_check: bool) -> list[i64]:
    """Quiescence search's one stage: every legal evasion in check (ordered as in the
    main search), otherwise the captures and queen promotions by MVV-LVA.

    A plain list, not a ``MovePicker``: most quiescence nodes stand pat or search a
    capture or two, and building a picker per node would cost more than it saves.
    """
    if in_check:
        return order_moves(board, evasions(board), -1, 0, 0, history)
    noisy: list[i64] = []
    mailbox = board.mailbox
    for move in noisy_moves(board, 0):  # not in check: that case returned above
        # Captures (any promotion), and of the quiet promotions the queen's only.
        if (move >> 12) & 7 == QUEEN or mailbox[(move >> 6) & 63] or (move >> 15) & 3 == EN_PASSANT:
            noisy.append(move)
    return order_captures(board, noisy, -1) if noisy else noisy


def split_bad_captures(board: Board, captures: list[i64], bad: list[i64]) -> list[i64]:
    """The captures that do not lose material; the others are appended to ``bad``.

    Only a capture by a piece worth more than its victim can lose: the exchange
    is evaluated for those alone.
    """
    mailbox = board.mailbox
    good: list[i64] = []
    for move in captures:
        attacker = mailbox[move & 63] & 7
        victim = mailbox[(move >> 6) & 63] & 7
        if (
            (move >> 12) & 7
            or _SEE[attacker] <= _SEE[victim if victim else PAWN]
            or see_ge(board, move, 0)
        ):
            good.append(move)
        else:
            bad.append(move)
    return good


def valid_killers(
    board: Board, killer_1: int, killer_2: int, tt_code: int, counter: int = 0
) -> list[i64]:
    """The killers (then the counter move) that are quiet legal moves here and not the
    TT move."""
    mailbox = board.mailbox
    valid: list[i64] = []
    for code in (killer_1, killer_2, counter):
        if code and code != tt_code:
            target = mailbox[(code >> 6) & 63]
            # A piece of the side to move on the target: castling's rook, or nothing.
            if target and (target >> 3) != board.turn:
                continue
            move = legal_move(board, code)
            if move:
                valid.append(move)
    return valid


def order_moves(
    board: Board,
    moves: list[i64],
    skip_code: int,
    killer_1: int,
    killer_2: int,
    history: list[int],
) -> list[i64]:
    """``moves`` (all legal moves, or the evasions) sorted best first, without the move
    whose code is ``skip_code``."""
    mailbox = board.mailbox
    us = board.turn
    evasion = board.is_check()
    hist_base = history_base(board)
    keys: list[i64] = []
    # In check and at the root only: clarity over the last nanosecond here.
    for move in moves:
        code = move & CODE_MASK
        if code == skip_code:
            continue
        frm = move & 63
        to = (move >> 6) & 63
        promotion = (move >> 12) & 7
        flag = (move >> 15) & 3
        victim = mailbox[to]
        score: i64
        if victim and flag != CASTLE and (victim >> 3) != us:
            score = CAPTURE_BASE + _MVV[victim & 7] * 8 - (mailbox[frm] & 7)
            if promotion:
                score += _MVV[promotion]
        elif promotion:
            # Under-promotions go to the back; a queen promotion is worth a capture.
            score = CAPTURE_BASE + _MVV[promotion] if promotion == QUEEN else 0
        elif flag == EN_PASSANT:
            score = CAPTURE_BASE + _MVV[PAWN] * 8 - 1
        elif code == killer_1:
            score = KILLER_1_SCORE
        elif code == killer_2:
            score = KILLER_2_SCORE
        else:
            score = history[hist_base + (move & 4095)]
        keys.append((score << _SCORE_SHIFT) | (_rank(board, move, evasion) << _RANK_SHIFT) | move)
    return _sorted(keys)


def order_captures(board: Board, moves: list[i64], skip_code: int) -> list[i64]:
    """Captures (and promotions) by MVV-LVA, without the move coded ``skip_code``."""
    mailbox = board.mailbox
    keys: list[i64] = []
    for move in moves:
        if (move & CODE_MASK) == skip_code:
            continue
        # An empty target square means en passant or a quiet promotion: a pawn's value.
        victim = mailbox[(move >> 6) & 63] & 7
        attacker = mailbox[move & 63] & 7
        score: i64 = _MVV[victim if victim else PAWN] * 8 - attacker
        promotion = (move >> 12) & 7
        if promotion:
            score += _MVV[promotion] * 8
        # _rank, inlined (this runs at most quiescence nodes): en passant, a pawn's
        # capture or quiet promotion, another piece's capture.
        group: i64 = 5
        if (move >> 15) & 3 == EN_PASSANT:
            group = 0
        elif attacker == PAWN:
            group = 3 if victim else 2
        rank = (group << 15) | ((move & 63) << 9) | (((move >> 6) & 63) << 3) | promotion
        keys.append((score << _SCORE_SHIFT) | (rank << _RANK_SHIFT) | move)
    return _sorted(keys)


def order_quiets(
    board: Board,
    moves: list[i64],
    tt_code: int,
    killer_1: int,
    killer_2: int,
    counter: int,
    history: list[int],
) -> list[i64]:
    """Non-captures by history (queen promotions first), without the TT move, the
    killers and the counter move (searched already)."""
    hist_base = history_base(board)
    mailbox = board.mailbox
    keys: list[i64] = []
    for move in moves:
        code = move & CODE_MASK
        # Compares, not ``in`` a tuple: the compiled build makes no tuple per move.
        if code == tt_code or code == killer_1 or code == killer_2 or code == counter:  # noqa: SIM109
            continue
        promotion = (move >> 12) & 7
        frm = move & 63
        to = (move >> 6) & 63
        score: i64
        # _rank, inlined: castling, a pawn's push or double push, another piece's move.
        group: i64 = 5
        if promotion:
            score = HISTORY_MAX + 1 if promotion == QUEEN else 0
            group = 2
        else:
            score = history[hist_base + (move & 4095)]
            if (move >> 15) & 3 == CASTLE:
                group = 4
            elif mailbox[frm] & 7 == PAWN:
                group = 1 if to - frm == 16 or frm - to == 16 else 2
        rank = (group << 15) | (frm << 9) | (to << 3) | promotion
        keys.append((score << _SCORE_SHIFT) | (rank << _RANK_SHIFT) | move)
    return _sorted(keys)
