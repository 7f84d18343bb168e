"""Legal move generation on the search board, in the move picker's stages.

This module owns which moves the side to move has on the search board
(engine.core.board): all legal moves (``legal_moves``), the picker's stages (noisy:
captures, en passant and every promotion; quiet: the rest, castling too; evasions in
check), the quiet moves that give a direct check (quiescence's first ply), whether a
move gives check, the legal move a 15-bit code stands for (the search's hash and
killer moves), and perft, the count of the legal move tree that checks all of it.

Generation is legal directly: checkers, pins and, for the king, the squares the
enemy attacks with the king gone, so no move is made to test one (en passant, whose
legality needs the occupancy after the capture, is the board's
``en_passant_capturers``, which the keys need as well). The order moves come in is
no contract: the move picker sorts every stage with its own tie-break
(engine.core.movepick), except ``direct_quiet_checks``, whose order the search uses
as it is (see there).

This module reads the board and never changes it, except that ``gives_check`` for
rare moves and ``perft`` make and take back moves, leaving it as they found it. It
keeps no state and knows nothing of scores, values or the search's tables.
"""

from __future__ import annotations

from mypy_extensions import i64

from engine.core.bitboards import (
    _A_FILE,
    _BACKRANK,
    _BETWEEN,
    _BISHOP_RAYS,
    _H_FILE,
    _KING,
    _KNIGHT,
    _LINE,
    _ONE,
    _PAWN,
    _RANK_1,
    _RANK_3,
    _RANK_6,
    _RANK_8,
    _ROOK_RAYS,
    BISHOP,
    CASTLE,
    EN_PASSANT,
    KING,
    KNIGHT,
    NO_SQUARE,
    PAWN,
    QUEEN,
    ROOK,
    WHITE,
    _lsb,
    bishop_attacks,
    rook_attacks,
)
from engine.core.board import Board

# --- the stages -----------------------------------------------------------------------


def legal_moves(board: Board) -> list[i64]:
    """All legal moves: evasions in check, else noisy moves then quiets."""
    moves: list[i64] = []
    _generate(board, moves, True, True)
    return moves


def noisy_moves(board: Board, check: i64 = -1) -> list[i64]:
    """Legal captures (en passant too) and promotions (all four pieces, capturing
    or not); in check only those that evade. ``check``: 1 or 0 if the caller knows
    whether the side to move is in check (-1: find out)."""
    moves: list[i64] = []
    _generate(board, moves, True, False, check)
    return moves


def quiet_moves(board: Board, check: i64 = -1) -> list[i64]:
    """Legal moves that neither capture nor promote (castling too); ``check`` as
    for ``noisy_moves``."""
    moves: list[i64] = []
    _generate(board, moves, False, True, check)
    return moves


def evasions(board: Board) -> list[i64]:
    """All legal moves when in check (the search's stage for that case)."""
    return legal_moves(board)


# --- generation: king, pieces, pawns; pins and attacked squares -----------------------


def _generate(board: Board, moves: list[i64], noisy: bool, quiet: bool, check: i64 = -1) -> None:
    """Append the legal moves that are ``noisy`` (captures, promotions) and/or
    ``quiet``: king moves, castling, knights, bishops and queens diagonally, rooks
    and queens straight, pawns, en passant; in check only evasions."""
    us = board.turn
    them = us ^ 1
    own = board.white if us == WHITE else board.black
    theirs = board.black if us == WHITE else board.white
    occupied = own | theirs
    ksq = _lsb(board.kings & own)
    checkers: i64 = 0
    if check > 0 or (check < 0 and board.is_check()):
        checkers = board.attackers(them, ksq, occupied)
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
        if not _attacked(board, to, theirs, without_king, them):
            moves.append(ksq | (to << 6))
    if checkers and (checkers & (checkers - 1)):
        return
    if checkers:
        block = checkers | _BETWEEN[ksq * 64 + _lsb(checkers)]
    else:
        block = ~0
        if quiet:
            _generate_castling(board, moves, ksq, occupied)
    pinned = _pinned(board, ksq, own, theirs)
    queens = board.queens

    pieces = own & board.knights & ~pinned
    while pieces:
        frm = _lsb(pieces)
        pieces &= pieces - 1
        dests = _KNIGHT[frm] & targets & block
        # The destinations, inlined (a call per piece costs CPython more than this).
        while dests:
            to = _lsb(dests)
            dests &= dests - 1
            moves.append(frm | (to << 6))
    pieces = own & (board.bishops | queens)
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
    pieces = own & (board.rooks | queens)
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
    pawns = own & board.pawns
    free = pawns & ~pinned
    if free:
        _free_pawn_moves(board, moves, free, theirs, occupied, block, noisy, quiet)
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
                    _add_promotions(moves, frm, capture)
                else:
                    moves.append(frm | (capture << 6))
        if occupied & (_ONE << to):
            continue
        if promotes:
            if noisy and allowed & (_ONE << to):
                _add_promotions(moves, frm, to)
            continue
        if not quiet:
            continue
        if allowed & (_ONE << to):
            moves.append(frm | (to << 6))
        if (frm >> 3) == start_rank:
            to2 = to + forward
            if not (occupied & (_ONE << to2)) and allowed & (_ONE << to2):
                moves.append(frm | (to2 << 6))
    if noisy and board.ep_square != NO_SQUARE:
        _add_en_passant(board, moves)


def _attacked(board: Board, sq: i64, theirs: i64, occupied: i64, them: i64) -> bool:
    """Does a piece of ``theirs`` (colour ``them``) attack ``sq`` with this occupancy?
    As ``attackers(...) != 0``, the cheap tests first: a slider's attacks are looked
    up only when one stands on a line through ``sq``."""
    if (
        _KNIGHT[sq] & board.knights & theirs
        or _KING[sq] & board.kings & theirs
        or _PAWN[(them ^ 1) * 64 + sq] & board.pawns & theirs
    ):
        return True
    queens = board.queens
    diagonal = (board.bishops | queens) & theirs
    if diagonal & _BISHOP_RAYS[sq] and bishop_attacks(sq, occupied) & diagonal:
        return True
    straight = (board.rooks | queens) & theirs
    return (straight & _ROOK_RAYS[sq] != 0) and (rook_attacks(sq, occupied) & straight) != 0


def pinned(board: Board, colour: i64) -> i64:
    """Pieces of ``colour`` pinned to their king."""
    own = board.white if colour == WHITE else board.black
    theirs = board.black if colour == WHITE else board.white
    return _pinned(board, _lsb(board.kings & own), own, theirs)


def _pinned(board: Board, ksq: i64, own: i64, theirs: i64) -> i64:
    """``pinned`` for the king on ``ksq`` (the colours' pieces given)."""
    occupied = own | theirs
    queens = board.queens
    snipers = theirs & (
        (_BISHOP_RAYS[ksq] & (board.bishops | queens)) | (_ROOK_RAYS[ksq] & (board.rooks | queens))
    )
    pinned: i64 = 0
    while snipers:
        sniper = _lsb(snipers)
        snipers &= snipers - 1
        between = _BETWEEN[ksq * 64 + sniper] & occupied
        if between and not (between & (between - 1)):
            pinned |= between & own
    return pinned


# --- adding moves: destinations, promotions, pawns, en passant, castling --------------


def _add(moves: list[i64], frm: i64, dests: i64) -> None:
    while dests:
        to = _lsb(dests)
        dests &= dests - 1
        moves.append(frm | (to << 6))


def _add_promotions(moves: list[i64], frm: i64, to: i64) -> None:
    base = frm | (to << 6)
    moves.append(base | (QUEEN << 12))
    moves.append(base | (ROOK << 12))
    moves.append(base | (BISHOP << 12))
    moves.append(base | (KNIGHT << 12))


def _free_pawn_moves(
    board: Board,
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
    if board.turn == WHITE:
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
            _add_pawn_captures(board, moves, left, left_step, last)
        if right:
            _add_pawn_captures(board, moves, right, right_step, last)
        promotions = single & last
        while promotions:
            to = _lsb(promotions)
            promotions &= promotions - 1
            _add_promotions(moves, to - step, to)
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


def _add_pawn_captures(board: Board, moves: list[i64], targets: i64, delta: i64, last: i64) -> None:
    """Captures onto ``targets`` by the pawns ``delta`` squares behind them."""
    while targets:
        to = _lsb(targets)
        targets &= targets - 1
        if (_ONE << to) & last:
            _add_promotions(moves, to - delta, to)
        else:
            moves.append((to - delta) | (to << 6))


def _add_en_passant(board: Board, moves: list[i64]) -> None:
    """Legal en passant captures (the board finds the pawns that may take)."""
    capturers = board.en_passant_capturers()
    ep = board.ep_square
    while capturers:
        frm = _lsb(capturers)
        capturers &= capturers - 1
        moves.append(frm | (ep << 6) | (EN_PASSANT << 15))


def _generate_castling(board: Board, moves: list[i64], ksq: i64, occupied: i64) -> None:
    us = board.turn
    them = us ^ 1
    back = _BACKRANK[us]
    rights = board.castling & back
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
        if (occupied ^ king_bit ^ rook_bit) & (king_path | rook_path | king_to_bit | rook_to_bit):
            continue
        path = king_path | king_bit
        safe = True
        without_king = occupied ^ king_bit
        while path:
            sq = _lsb(path)
            path &= path - 1
            if board.attackers(them, sq, without_king):
                safe = False
                break
        if not safe:
            continue
        if board.attackers(them, king_to, occupied ^ king_bit ^ rook_bit ^ rook_to_bit):
            continue
        moves.append(ksq | (rook << 6) | (CASTLE << 15))


# --- checks ---------------------------------------------------------------------------


def gives_check(board: Board, move: i64) -> bool:
    """Does the legal ``move`` put the opponent in check?

    Ordinary moves: the moved piece's attacks from its target, and our sliders
    uncovered, on the occupancy after the move. Castling, en passant and
    promotions (rare) are made and taken back."""
    if move >> 12:
        board.make(move)
        check = board.is_check()
        board.unmake()
        return check
    frm = move & 63
    to = (move >> 6) & 63
    us = board.turn
    own = board.white if us == WHITE else board.black
    theirs = board.black if us == WHITE else board.white
    ksq = _lsb(board.kings & theirs)
    king_bit = _ONE << ksq
    from_bit = _ONE << frm
    occupied = ((own | theirs) ^ from_bit) | (_ONE << to)
    pt = board.mailbox[frm] & 7
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
    queens = board.queens
    if bishop_attacks(ksq, occupied) & sliders & (board.bishops | queens):
        return True
    return (rook_attacks(ksq, occupied) & sliders & (board.rooks | queens)) != 0


def direct_quiet_checks(board: Board) -> list[i64]:
    """Legal quiet moves of knights, bishops, rooks and queens onto squares from
    which they check the enemy king on the current occupancy (quiescence's first
    ply). Direct checks only: no pawn or king move, no discovered check.

    The search tries these in the order given, unsorted: knights, then bishops and
    queens onto diagonal checks, then rooks and queens onto straight ones; pieces
    and targets from the highest square down. That order is the one the old board
    (python-chess) gave; it is kept because the search tree, and so the bench,
    depends on it (tests/test_board.py checks it)."""
    us = board.turn
    them = us ^ 1
    own = board.white if us == WHITE else board.black
    theirs = board.black if us == WHITE else board.white
    occupied = own | theirs
    empty = ~occupied
    result: list[i64] = []
    enemy_kings = board.kings & theirs
    if not enemy_kings:
        return result
    king = _lsb(enemy_kings)
    ksq = board.king_square(us)
    checkers = board.attackers(them, ksq, occupied)
    if checkers and (checkers & (checkers - 1)):
        return result
    allowed: i64 = ~0
    if checkers:
        allowed = _BETWEEN[ksq * 64 + _lsb(checkers)]
    pinned = _pinned(board, ksq, own, theirs)
    queens = board.queens
    diagonal = bishop_attacks(king, occupied) & empty & allowed
    straight = rook_attacks(king, occupied) & empty & allowed
    knight_checks = _KNIGHT[king] & empty & allowed
    # Generated lowest first, groups in reverse: one reversal at the end gives the
    # order above (highest first, knights, diagonal, then straight).
    if straight:
        pieces = own & (board.rooks | queens)
        while pieces:
            frm = _lsb(pieces)
            pieces &= pieces - 1
            dests = rook_attacks(frm, occupied)
            if (_ONE << frm) & queens:
                dests |= bishop_attacks(frm, occupied)
            dests &= straight
            if pinned & (_ONE << frm):
                dests &= _LINE[ksq * 64 + frm]
            _add(result, frm, dests)
    if diagonal:
        pieces = own & (board.bishops | queens)
        while pieces:
            frm = _lsb(pieces)
            pieces &= pieces - 1
            dests = bishop_attacks(frm, occupied)
            if (_ONE << frm) & queens:
                dests |= rook_attacks(frm, occupied)
            dests &= diagonal
            if pinned & (_ONE << frm):
                dests &= _LINE[ksq * 64 + frm]
            _add(result, frm, dests)
    if knight_checks:
        # A pinned knight cannot move at all.
        pieces = own & board.knights & ~pinned
        while pieces:
            frm = _lsb(pieces)
            pieces &= pieces - 1
            _add(result, frm, _KNIGHT[frm] & knight_checks)
    result.reverse()
    return result


# --- a move from its 15-bit code (hash and killer moves) ------------------------------


def legal_move(board: Board, code: i64) -> i64:
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
    us = board.turn
    piece = board.mailbox[frm]
    if not piece or (piece >> 3) != us:
        return 0
    pt = piece & 7
    own = board.white if us == WHITE else board.black
    theirs = board.black if us == WHITE else board.white
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
            if not (board.castling & to_bit & board.rooks):
                return 0
            moves = []
            _generate_castling(board, moves, frm, occupied)
            for move in moves:
                if (move & 0x7FFF) == code:
                    return move
            return 0
        if not (_KING[frm] & to_bit):
            return 0
        if board.attackers(them, to, occupied ^ from_bit):
            return 0
        return code
    if own & to_bit:
        return 0
    if pt == PAWN:
        if to == board.ep_square:
            if promotion:
                return 0
            if board.en_passant_capturers() & from_bit:
                return code | (EN_PASSANT << 15)
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
    if board.attackers(them, board.king_square(us), after) & ~to_bit:
        return 0
    return code


# --- perft ----------------------------------------------------------------------------


def perft(board: Board, depth: i64) -> i64:
    """Leaves ``depth`` plies below, with make/unmake at every node (no bulk count)."""
    if depth <= 0:
        return 1
    nodes: i64 = 0
    for move in legal_moves(board):
        board.make(move)
        if depth == 1:
            nodes += 1
        else:
            nodes += perft(board, depth - 1)
        board.unmake()
    return nodes
