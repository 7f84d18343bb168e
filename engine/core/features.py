"""The evaluation as weights x features: the feature layout and the reference extractor.

Every evaluation term is a count (White's count minus Black's) with a middlegame
and an endgame weight; ``engine.core.weights`` holds the weights as two flat vectors
laid out by ``BLOCKS`` below. The evaluation of a position is

    mg = sum(MG[i] * f[i]),  eg = sum(EG[i] * f[i])                  (White's view)
    eg is scaled by scale / 64 (drawish endings, see ``scale_factors``)
    score = (mg * phase + eg * (24 - phase)) / 24, truncated toward zero

and ``engine.core.evaluate`` computes the same number fast, with caches; the tests
hold the two equal. ``scripts.tuning.tune`` fits the weights with these features.

This module is the readable definition of each term; it is slow on purpose
(dicts, one term at a time) and must not be called from the search. It must not
hold weights: it only counts.
"""

from __future__ import annotations

import chess

# Piece types in the order the mobility and king-attack blocks use them.
MOBILITY_PIECES = (chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN)
MOBILITY_SIZE = {chess.KNIGHT: 9, chess.BISHOP: 14, chess.ROOK: 15, chess.QUEEN: 28}

BLOCKS: tuple[tuple[str, int], ...] = (
    # Material and piece-square tables, White's view, indexed (piece_type - 1) * 64
    # + square; a Black piece counts -1 on its vertically mirrored square.
    ("psqt", 6 * 64),
    # Pawn structure, by the pawn's rank counted from its own side (0-7).
    ("passed", 8),
    ("passed_blocked", 8),  # extra for a passer whose stop square is occupied
    # King distances to a passer's stop square: the enemy king's minus the own king's.
    ("passed_king_distance", 8),
    ("connected", 8),  # defended by a pawn or beside one
    ("isolated", 1),
    ("doubled", 1),  # pawns with a pawn of their own colour in front on the file
    ("backward", 1),
    # Mobility by attacked squares not held by own pieces or enemy pawn attacks.
    ("mobility_knight", MOBILITY_SIZE[chess.KNIGHT]),
    ("mobility_bishop", MOBILITY_SIZE[chess.BISHOP]),
    ("mobility_rook", MOBILITY_SIZE[chess.ROOK]),
    ("mobility_queen", MOBILITY_SIZE[chess.QUEEN]),
    # King safety, counted for the attacker: attacks on the enemy king's zone by
    # piece type (N, B, R, Q), the number of attacking pieces (0..4+), and the
    # defender's shelter (counted for the defender).
    ("king_zone_attacks", 4),
    ("king_attackers", 5),
    ("king_shield", 2),  # own pawns one and two ranks in front of the king
    ("king_open_files", 2),  # near the king: files without own pawns (semi-open), without any
    # Pieces.
    ("bishop_pair", 1),
    ("rook_open_file", 1),
    ("rook_semi_open_file", 1),
    ("rook_seventh", 1),
    ("queen_open_file", 1),
    ("queen_semi_open_file", 1),
    ("queen_seventh", 1),
    ("pawn_threat", 1),  # enemy pieces (not pawns) attacked by a pawn
    ("minor_threat", 1),  # enemy rooks and queens attacked by a knight or bishop
    ("rook_threat", 1),  # enemy queens attacked by a rook
    ("hanging", 1),  # enemy pieces (not pawns) attacked and not defended at all
    # Safe checks by piece type (N, B, R, Q): squares from which a piece of the type
    # would check the enemy king, attacked by one, not held by an own piece and not
    # attacked by the enemy.
    ("safe_checks", 4),
    ("tempo", 1),  # +1 for the side to move
    # Outposts: knights and bishops (N, B) on relative ranks 4-6, on a square an own
    # pawn defends and no enemy pawn can ever attack.
    ("outpost", 2),
    ("passed_free", 8),  # extra for a passer with nothing on its way to promotion
    ("rook_behind_passer", 1),  # an own rook behind a passer on its file, nothing between
    ("bad_bishop", 1),  # per bishop: own pawns on squares of the bishop's colour
    ("king_pawn_distance", 1),  # king steps from the own king to the nearest pawn
    # Enemy pawns one, two and three ranks in front of the own king, on its file and
    # the next ones (counted for the defender).
    ("pawn_storm", 3),
    ("space", 1),  # files c-f, own ranks 2-4: squares without own pawns, not pawn-attacked
    ("minor_on_minor", 1),  # enemy minors attacked by own minors, not defended by a pawn
    # Squares of the enemy king's zone we attack that no enemy piece but the king defends.
    ("weak_zone", 1),
)


def _offsets() -> dict[str, int]:
    offsets = {}
    position = 0
    for name, size in BLOCKS:
        offsets[name] = position
        position += size
    return offsets


OFFSET: dict[str, int] = _offsets()
SIZE: dict[str, int] = dict(BLOCKS)
FEATURE_COUNT = sum(SIZE.values())

PHASE_WEIGHT = (0, 0, 1, 1, 2, 4, 0)
"""Game-phase weight by piece type; the start position sums to ``MAX_PHASE``."""
MAX_PHASE = 24
SCALE_NORMAL = 64
SCALE_OPPOSITE_BISHOPS = 32
"""Bishops of opposite colours and no other pieces: half the endgame score."""
SCALE_NO_PAWNS_SMALL_EDGE = 8
"""The stronger side has no pawns and at most a minor piece more: hard to win."""
SCALE_MATERIAL = (0, 100, 300, 300, 500, 900, 0)
"""Rough piece values used only to decide scaling (not weights)."""

BB_ALL = chess.BB_ALL
NOT_FILE_A = ~chess.BB_FILE_A & BB_ALL
NOT_FILE_H = ~chess.BB_FILE_H & BB_ALL


def _file_span(file: int) -> int:
    """The file and its neighbours."""
    mask = chess.BB_FILES[file]
    if file > 0:
        mask |= chess.BB_FILES[file - 1]
    if file < 7:
        mask |= chess.BB_FILES[file + 1]
    return mask


NEAR_FILES = [_file_span(f) for f in range(8)]


def _rows_ahead(color: bool, king: int) -> tuple[int, int, int]:
    """The squares one, two and three ranks in front of ``king``, on its file and the
    next ones (the first two are the shield's, all three the storm's)."""
    files = NEAR_FILES[king & 7]
    step = 8 if color else -8

    def row(ahead: int) -> int:
        return files & chess.BB_RANKS[ahead >> 3] if 0 <= ahead < 64 else 0

    return row(king + step), row(king + 2 * step), row(king + 3 * step)


# [colour][king square]; colour 0 = Black, 1 = White (python-chess's bool).
STORM = [[_rows_ahead(bool(c), king) for king in range(64)] for c in (0, 1)]
SHIELD = [[rows[:2] for rows in by_king] for by_king in STORM]
NEAR_FILE_BITS = [NEAR_FILES[f] & chess.BB_RANK_1 for f in range(8)]
"""The king's file and its neighbours as an 8-bit set of files."""


KING_ZONE = [chess.BB_KING_ATTACKS[sq] | chess.BB_SQUARES[sq] for sq in range(64)]


OUTPOST_RANKS = (
    chess.BB_RANK_3 | chess.BB_RANK_4 | chess.BB_RANK_5,  # Black's ranks 4-6
    chess.BB_RANK_4 | chess.BB_RANK_5 | chess.BB_RANK_6,
)
SPACE_AREA = (
    (chess.BB_FILE_C | chess.BB_FILE_D | chess.BB_FILE_E | chess.BB_FILE_F)
    & (chess.BB_RANK_7 | chess.BB_RANK_6 | chess.BB_RANK_5),
    (chess.BB_FILE_C | chess.BB_FILE_D | chess.BB_FILE_E | chess.BB_FILE_F)
    & (chess.BB_RANK_2 | chess.BB_RANK_3 | chess.BB_RANK_4),
)
DISTANCE = [chess.square_distance(a, b) for a in range(64) for b in range(64)]
"""King steps between two squares, indexed ``a * 64 + b``."""


def pawn_attacks(pawns: int, color: bool) -> int:
    """Squares attacked by ``pawns`` of ``color``."""
    if color:
        return (((pawns & NOT_FILE_A) << 7) | ((pawns & NOT_FILE_H) << 9)) & BB_ALL
    return ((pawns & NOT_FILE_A) >> 9) | ((pawns & NOT_FILE_H) >> 7)


def relative_rank(square: int, color: bool) -> int:
    """The square's rank counted from ``color``'s side (0 = its back rank)."""
    return square >> 3 if color else 7 - (square >> 3)


def _sideways(bb: int) -> int:
    """The squares one file to the left or right of ``bb``'s squares."""
    return (bb & NOT_FILE_A) >> 1 | (bb & NOT_FILE_H) << 1


def front_span(pawns: int, color: bool) -> int:
    """The squares in front of ``pawns`` of ``color`` on their files (not their own)."""
    if color:
        fill = pawns << 8
        fill |= fill << 8
        fill |= fill << 16
        return (fill | fill << 32) & BB_ALL
    fill = pawns >> 8
    fill |= fill >> 8
    fill |= fill >> 16
    return fill | fill >> 32


# [colour][square]: the squares in front on the file (behind is the other colour's).
FRONT = [[front_span(chess.BB_SQUARES[sq], bool(c)) for sq in range(64)] for c in (0, 1)]


def attack_span(pawns: int, color: bool) -> int:
    """Every square ``pawns`` of ``color`` attack now or could attack after advancing."""
    return _sideways(front_span(pawns, color))


def outposts(own: int, theirs: int, color: bool) -> int:
    """Outpost squares of ``color``: ranks 4-6, defended by an own pawn, out of the
    enemy pawns' reach."""
    return (
        pawn_attacks(own, color) & OUTPOST_RANKS[color] & ~attack_span(theirs, not color) & BB_ALL
    )


def space(own: int, theirs: int, color: bool) -> int:
    """Space squares of ``color``: the central area behind its lines without an own pawn,
    not attacked by an enemy pawn."""
    return SPACE_AREA[color] & ~own & ~pawn_attacks(theirs, not color) & BB_ALL


def nearest_pawn(king: int, pawns: int) -> int:
    """King steps from ``king`` to the nearest of ``pawns`` (0 without pawns).

    Searched ring by ring outward (the nearest pawn is usually one to three steps
    away), not pawn by pawn: this runs at every pawn-king cache miss.
    """
    if not pawns:
        return 0
    distance = 1
    for ring in RINGS[king]:
        if pawns & ring:
            return distance
        distance += 1
    return distance  # not reached: the rings cover the board


def _rings(square: int) -> tuple[int, ...]:
    """The squares 1, 2, ... 7 king steps from ``square``."""
    return tuple(
        sum(
            chess.BB_SQUARES[other]
            for other in range(64)
            if chess.square_distance(square, other) == distance
        )
        for distance in range(1, 8)
    )


RINGS = [_rings(square) for square in range(64)]
"""[square]: the squares at 1, 2, ... 7 king steps from it."""


def pawn_structure(own: int, theirs: int, color: bool) -> tuple[int, int, int, int, int]:
    """The pawns of ``color`` (``own``, against ``theirs``) in each pawn term.

    Returns bitboards (passed, connected, isolated, doubled, backward). A pawn is
    doubled if an own pawn stands ahead of it on its file; otherwise passed if no
    enemy pawn stands ahead of it on its file or a neighbouring one; connected if
    an own pawn defends it or stands beside it; isolated if no own pawn is on a
    neighbouring file; otherwise backward if no own pawn on a neighbouring file is
    level with it or behind it and an enemy pawn attacks its stop square.

    Computed for all pawns at once with file fills (this runs on every pawn-cache
    miss). Shared by this module and the fast evaluation, so both count the same
    pawns.
    """
    # behind: the squares behind own pawns (towards our back rank);
    # level: own pawns and the squares ahead of them; span: the squares behind theirs.
    behind = front_span(own, not color)
    level = own | front_span(own, color)
    span = front_span(theirs, not color)
    if color:
        stop_attacked = pawn_attacks(theirs, False) >> 8
    else:
        stop_attacked = pawn_attacks(theirs, True) << 8 & BB_ALL
    doubled = own & behind
    passed = own & ~doubled & ~(span | _sideways(span))
    connected = own & (pawn_attacks(own, color) | _sideways(own))
    isolated = own & ~_sideways(level | behind)
    backward = own & ~isolated & ~_sideways(level) & stop_attacked
    return passed, connected, isolated, doubled, backward


def file_set(bb: int) -> int:
    """The files holding a square of ``bb``, as an 8-bit set (bit n = file n)."""
    bb |= bb >> 32
    bb |= bb >> 16
    return (bb | bb >> 8) & 0xFF


def king_shelter(king: int, own: int, theirs: int, color: bool) -> tuple[int, int, int, int]:
    """(pawns one rank ahead, two ranks ahead, semi-open files, open files) near the king.

    Files are the king's file and its neighbours; "semi-open" has enemy pawns but
    no own pawn, "open" has no pawn at all.
    """
    shield_1, shield_2 = SHIELD[color][king]
    without_own = NEAR_FILE_BITS[king & 7] & ~file_set(own)
    their_files = file_set(theirs)
    return (
        (own & shield_1).bit_count(),
        (own & shield_2).bit_count(),
        (without_own & their_files).bit_count(),
        (without_own & ~their_files).bit_count(),
    )


def slider_attacks(piece_type: int, square: int, occupied: int) -> int:
    """Attacks of a knight, bishop, rook or queen on ``square`` given ``occupied``."""
    if piece_type == chess.KNIGHT:
        return chess.BB_KNIGHT_ATTACKS[square]
    attacks = 0
    if piece_type != chess.ROOK:
        attacks |= chess.BB_DIAG_ATTACKS[square][chess.BB_DIAG_MASKS[square] & occupied]
    if piece_type != chess.BISHOP:
        attacks |= (
            chess.BB_RANK_ATTACKS[square][chess.BB_RANK_MASKS[square] & occupied]
            | chess.BB_FILE_ATTACKS[square][chess.BB_FILE_MASKS[square] & occupied]
        )
    return attacks


def game_phase(board: chess.Board) -> int:
    """Remaining non-pawn material in phase units, at most ``MAX_PHASE``."""
    phase = sum(
        PHASE_WEIGHT[pt]
        * (board.pieces_mask(pt, chess.WHITE) | board.pieces_mask(pt, chess.BLACK)).bit_count()
        for pt in range(1, 7)
    )
    return min(phase, MAX_PHASE)


def scale_factors(board: chess.Board) -> tuple[int, int]:
    """The endgame scale (of 64) if White is the stronger side, and if Black is."""
    return scale_factors_bits(
        board.occupied_co[chess.WHITE],
        board.occupied_co[chess.BLACK],
        board.pawns,
        board.knights,
        board.bishops,
        board.rooks,
        board.queens,
    )


def scale_factors_bits(
    white: int, black: int, pawns: int, knights: int, bishops: int, rooks: int, queens: int
) -> tuple[int, int]:
    """``scale_factors`` of the position with these (non-negative) bitboards."""
    if not knights | rooks | queens:
        bishops_w = bishops & white
        bishops_b = bishops & black
        if (
            bishops_w.bit_count() == 1
            and bishops_b.bit_count() == 1
            and bool(bishops_w & chess.BB_LIGHT_SQUARES) != bool(bishops_b & chess.BB_LIGHT_SQUARES)
        ):
            return SCALE_OPPOSITE_BISHOPS, SCALE_OPPOSITE_BISHOPS
    if pawns & white and pawns & black:
        return SCALE_NORMAL, SCALE_NORMAL
    # White's material minus Black's, by the rough values.
    edge = 0
    for pt, pieces in (
        (chess.KNIGHT, knights),
        (chess.BISHOP, bishops),
        (chess.ROOK, rooks),
        (chess.QUEEN, queens),
    ):
        edge += SCALE_MATERIAL[pt] * ((pieces & white).bit_count() - (pieces & black).bit_count())
    small = SCALE_MATERIAL[chess.BISHOP]
    return (
        SCALE_NO_PAWNS_SMALL_EDGE if not pawns & white and edge <= small else SCALE_NORMAL,
        SCALE_NO_PAWNS_SMALL_EDGE if not pawns & black and -edge <= small else SCALE_NORMAL,
    )


def attack_maps(board: chess.Board, color: bool) -> tuple[list[int], int]:
    """Squares attacked by ``color``: by piece type (index 1-6; 0 unused), and by any piece."""
    occupied = board.occupied
    own = board.occupied_co[color]
    by_type = [0] * 7
    by_type[chess.PAWN] = pawn_attacks(board.pawns & own, color)
    for pt in MOBILITY_PIECES:
        for square in chess.scan_forward(board.pieces_mask(pt, color)):
            by_type[pt] |= slider_attacks(pt, square, occupied)
    king = board.king(color)
    if king is not None:
        by_type[chess.KING] = chess.BB_KING_ATTACKS[king]
    every = 0
    for attacks in by_type:
        every |= attacks
    return by_type, every


def check_squares(king: int, occupied: int) -> tuple[int, int, int, int]:
    """Squares from which a knight, bishop, rook or queen would check a king on ``king``."""
    bishop = slider_attacks(chess.BISHOP, king, occupied)
    rook = slider_attacks(chess.ROOK, king, occupied)
    return chess.BB_KNIGHT_ATTACKS[king], bishop, rook, bishop | rook


def features(board: chess.Board) -> dict[int, int]:
    """The feature vector of ``board`` as {index: White's count minus Black's}."""
    f: dict[int, int] = {}

    def add(name: str, index: int, value: int) -> None:
        if value:
            i = OFFSET[name] + index
            f[i] = f.get(i, 0) + value
            if not f[i]:
                del f[i]

    occupied = board.occupied
    maps = {color: attack_maps(board, color) for color in (chess.WHITE, chess.BLACK)}
    for color in (chess.WHITE, chess.BLACK):
        sign = 1 if color else -1
        own_pieces = board.occupied_co[color]
        their_pieces = board.occupied_co[not color]
        own_pawns = board.pawns & own_pieces
        their_pawns = board.pawns & their_pieces

        for pt in range(1, 7):
            for square in chess.scan_forward(board.pieces_mask(pt, color)):
                add("psqt", (pt - 1) * 64 + (square if color else square ^ 56), sign)

        passers, connected, isolated, doubled, backward = pawn_structure(
            own_pawns, their_pawns, color
        )
        for square in chess.scan_forward(passers):
            add("passed", relative_rank(square, color), sign)
        for square in chess.scan_forward(connected):
            add("connected", relative_rank(square, color), sign)
        own_king_sq = board.king(color)
        their_king_sq = board.king(not color)
        for square in chess.scan_forward(passers):
            stop = square + 8 if color else square - 8
            rank = relative_rank(square, color)
            if chess.BB_SQUARES[stop] & occupied:
                add("passed_blocked", rank, sign)
            if own_king_sq is not None and their_king_sq is not None:
                distance = DISTANCE[their_king_sq * 64 + stop] - DISTANCE[own_king_sq * 64 + stop]
                add("passed_king_distance", rank, sign * distance)
        add("isolated", 0, sign * isolated.bit_count())
        add("doubled", 0, sign * doubled.bit_count())
        add("backward", 0, sign * backward.bit_count())

        # Mobility and attacks on the enemy king's zone.
        area = ~own_pieces & ~pawn_attacks(their_pawns, not color) & BB_ALL
        their_king = board.king(not color)
        zone = KING_ZONE[their_king] if their_king is not None else 0
        attackers = 0
        their_majors = (board.rooks | board.queens) & their_pieces
        for index, pt in enumerate(MOBILITY_PIECES):
            block = ("mobility_knight", "mobility_bishop", "mobility_rook", "mobility_queen")[index]
            for square in chess.scan_forward(board.pieces_mask(pt, color)):
                attacks = slider_attacks(pt, square, occupied)
                add(block, (attacks & area).bit_count(), sign)
                if pt in (chess.KNIGHT, chess.BISHOP):
                    add("minor_threat", 0, sign * (attacks & their_majors).bit_count())
                hits = (attacks & zone).bit_count()
                if hits:
                    attackers += 1
                    add("king_zone_attacks", index, sign * hits)
        add("king_attackers", min(attackers, 4), sign)

        own_king = board.king(color)
        if own_king is not None:
            shield_1, shield_2, semi_open, open_files = king_shelter(
                own_king, own_pawns, their_pawns, color
            )
            add("king_shield", 0, sign * shield_1)
            add("king_shield", 1, sign * shield_2)
            add("king_open_files", 0, sign * semi_open)
            add("king_open_files", 1, sign * open_files)

        if (board.bishops & own_pieces).bit_count() >= 2:
            add("bishop_pair", 0, sign)
        for pt, prefix in ((chess.ROOK, "rook"), (chess.QUEEN, "queen")):
            for square in chess.scan_forward(board.pieces_mask(pt, color)):
                file_mask = chess.BB_FILES[square & 7]
                if not file_mask & own_pawns:
                    add(
                        f"{prefix}_open_file"
                        if not file_mask & their_pawns
                        else f"{prefix}_semi_open_file",
                        0,
                        sign,
                    )
                if relative_rank(square, color) == 6:
                    add(f"{prefix}_seventh", 0, sign)
        threatened = their_pieces & ~board.pawns & ~board.kings
        add("pawn_threat", 0, sign * (pawn_attacks(own_pawns, color) & threatened).bit_count())

        by_type, ours = maps[color]
        theirs = maps[not color][1]
        their_queens = board.queens & their_pieces
        add("rook_threat", 0, sign * (by_type[chess.ROOK] & their_queens).bit_count())
        add("hanging", 0, sign * (threatened & ours & ~theirs).bit_count())
        if their_king is not None:
            safe = ~theirs & ~own_pieces & BB_ALL
            for index, checks in enumerate(check_squares(their_king, occupied)):
                pt = MOBILITY_PIECES[index]
                add("safe_checks", index, sign * (by_type[pt] & checks & safe).bit_count())

        # Outposts, passers with a free way or a rook behind, bishops hemmed in by
        # their own pawns, the king's distance to the pawns, storming pawns, space.
        outpost_squares = outposts(own_pawns, their_pawns, color)
        add("outpost", 0, sign * (board.knights & own_pieces & outpost_squares).bit_count())
        add("outpost", 1, sign * (board.bishops & own_pieces & outpost_squares).bit_count())
        own_rooks = board.rooks & own_pieces
        for square in chess.scan_forward(passers):
            if not FRONT[color][square] & occupied:
                add("passed_free", relative_rank(square, color), sign)
            behind = slider_attacks(chess.ROOK, square, occupied) & FRONT[not color][square]
            if behind & own_rooks:
                add("rook_behind_passer", 0, sign)
        for square in chess.scan_forward(board.bishops & own_pieces):
            light = chess.BB_SQUARES[square] & chess.BB_LIGHT_SQUARES
            same_colour = chess.BB_LIGHT_SQUARES if light else chess.BB_DARK_SQUARES
            add("bad_bishop", 0, sign * (own_pawns & same_colour).bit_count())
        if own_king is not None:
            add("king_pawn_distance", 0, sign * nearest_pawn(own_king, board.pawns))
            for index, mask in enumerate(STORM[color][own_king]):
                add("pawn_storm", index, sign * (their_pawns & mask).bit_count())
        add("space", 0, sign * space(own_pawns, their_pawns, color).bit_count())
        minors = board.knights | board.bishops
        add(
            "minor_on_minor",
            0,
            sign
            * (
                (by_type[chess.KNIGHT] | by_type[chess.BISHOP])
                & minors
                & their_pieces
                & ~pawn_attacks(their_pawns, not color)
            ).bit_count(),
        )
        if their_king is not None:
            their_by_type = maps[not color][0]
            defended = 0
            for pt in (chess.PAWN, chess.KNIGHT, chess.BISHOP, chess.ROOK, chess.QUEEN):
                defended |= their_by_type[pt]
            add("weak_zone", 0, sign * (KING_ZONE[their_king] & ours & ~defended).bit_count())

    add("tempo", 0, 1 if board.turn else -1)
    return f


def evaluate_features(
    board: chess.Board, mg_weights: tuple[int, ...], eg_weights: tuple[int, ...]
) -> int:
    """The evaluation by its definition (side to move's view): weights x features."""
    f = features(board)
    mg = sum(mg_weights[i] * v for i, v in f.items())
    eg = sum(eg_weights[i] * v for i, v in f.items())
    scale_white, scale_black = scale_factors(board)
    return blend(mg, eg, game_phase(board), scale_white if eg > 0 else scale_black, board.turn)


def term_breakdown(
    board: chess.Board, mg_weights: tuple[int, ...], eg_weights: tuple[int, ...]
) -> list[tuple[str, int, int]]:
    """(block, mg, eg) contributions of every block, White's view, before tapering."""
    f = features(board)
    table = []
    for name, size in BLOCKS:
        start = OFFSET[name]
        indices = [i for i in range(start, start + size) if i in f]
        mg = sum(mg_weights[i] * f[i] for i in indices)
        eg = sum(eg_weights[i] * f[i] for i in indices)
        table.append((name, mg, eg))
    return table


def _trunc_div(a: int, b: int) -> int:
    """a / b rounded toward zero (b > 0), so that mirrored positions score alike."""
    return a // b if a >= 0 else -(-a // b)


def blend(mg: int, eg: int, phase: int, scale: int, white_to_move: bool) -> int:
    """Taper White's mg and eg sums by phase, scale eg; side to move's view."""
    if scale != SCALE_NORMAL:
        eg = _trunc_div(eg * scale, SCALE_NORMAL)
    score = _trunc_div(mg * phase + eg * (MAX_PHASE - phase), MAX_PHASE)
    return score if white_to_move else -score
