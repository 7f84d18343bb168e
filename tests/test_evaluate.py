"""The evaluation: the entry point equals weights x features, mirror symmetry, each term.

``Evaluator().evaluate(Board.from_chess(board))``, the search's one entry point, must
equal ``features.evaluate_features(board, MG_WEIGHTS, EG_WEIGHTS)``, the tuner's
definition, in every position (random games, odd material, promotions), in whichever
build the guard loads; tests/test_board_eval.py compares them along games too."""

from __future__ import annotations

import random

import chess
import pytest

from engine.core import features as feat
from engine.core.board import Board
from engine.core.evaluate import Evaluator
from engine.core.psqt import EG_TABLE, MG_TABLE
from engine.core.weights import EG_WEIGHTS, MG_WEIGHTS

SPECIAL_FENS = [
    chess.STARTING_FEN,
    # Opposite-coloured bishops with pawns; bishops of the same colour.
    "8/5k2/4b3/1p3p2/1P3P2/2B5/5K2/8 w - - 0 1",
    "8/5k2/3b4/1p3p2/1P3P2/2B5/5K2/8 b - - 0 1",
    # No pawns for the stronger side; rook against bishop; bare kings and a knight.
    "8/8/4k3/8/8/3BK3/8/5r2 w - - 0 1",
    "8/8/4k3/8/2N5/4K3/8/8 b - - 0 1",
    # Passed, blocked, doubled, isolated and backward pawns; rooks on the seventh.
    "6k1/1R3ppp/8/p1P5/P1p1n3/2P5/2P2PPP/6K1 w - - 0 1",
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    # Queens on open files and the seventh rank, kings exposed.
    "4k3/2Q5/8/8/8/8/3q4/4K3 w - - 0 1",
    "r1b2rk1/pp3ppp/2n5/q1bpP3/2p5/P1N2N2/1PPQ1PPP/R3KB1R w KQ - 0 1",
    # Three of a kind, which only promotion brings (the per-piece tables fill these in).
    "7k/8/8/8/QQQ5/8/8/NNN1K3 w - - 0 1",
    "4k3/nnn5/bbb5/8/8/8/8/4K2R b - - 0 1",
    "1r1k2r1/r7/8/8/8/8/1NNN4/1RK2R2 w - - 0 1",
]


def random_boards(count: int, seed: int) -> list[chess.Board]:
    """Positions from random games: all phases, odd material, promotions."""
    rng = random.Random(seed)
    boards = []
    while len(boards) < count:
        board = chess.Board()
        for _ in range(rng.randrange(1, 160)):
            moves = list(board.legal_moves)
            if not moves:
                break
            board.push(rng.choice(moves))
        boards.append(board)
    return boards


BOARDS = [chess.Board(fen) for fen in SPECIAL_FENS] + random_boards(400, seed=6)


def evaluate(board: chess.Board) -> int:
    """The entry point on ``board`` converted at the edge, from empty caches."""
    return Evaluator().evaluate(Board.from_chess(board))


def test_entry_point_equals_weights_times_features() -> None:
    for board in BOARDS:
        assert evaluate(board) == feat.evaluate_features(board, MG_WEIGHTS, EG_WEIGHTS), board.fen()


def test_evaluation_report_total_is_the_entry_points() -> None:
    """The UCI ``eval`` table (``evaluation_report``) ends with the entry point's score."""
    from engine.core.evaluate import evaluation_report

    for board in BOARDS[:40]:
        score = evaluate(board)
        white = score if board.turn == chess.WHITE else -score
        lines = evaluation_report(board)
        assert lines[-2].startswith(f"Evaluation: {score:+d} cp from the side to move")
        assert lines[-1] == f"Evaluation: {white:+d} cp from white's point of view"


def test_evaluation_of_mirror_is_equal() -> None:
    for board in BOARDS:
        mirrored = board.mirror()
        assert evaluate(board) == evaluate(mirrored), board.fen()
        flipped = feat.features(mirrored)
        assert flipped == {i: -v for i, v in feat.features(board).items()}, board.fen()


def test_cached_evaluator_agrees_with_fresh_one_along_games() -> None:
    # One evaluator through whole games: the caches (by key, by pawns and kings)
    # never return another position's value.
    evaluator = Evaluator(cache_bits=4)
    rng = random.Random(3)
    for _ in range(10):
        board = chess.Board()
        native = Board.from_chess(board)
        for _ in range(120):
            assert evaluator.evaluate(native) == evaluate(board), board.fen()
            moves = list(board.legal_moves)
            if not moves:
                break
            move = rng.choice(moves)
            native.make(native.from_chess_move(move))
            board.push(move)


def test_weight_vectors_match_the_layout() -> None:
    assert len(MG_WEIGHTS) == len(EG_WEIGHTS) == feat.FEATURE_COUNT
    base = feat.OFFSET["psqt"]
    white_knight_e4 = 2 * (chess.KNIGHT - 1) + 1
    assert MG_TABLE[white_knight_e4 * 64 + chess.E4] == MG_WEIGHTS[base + 64 + chess.E4]
    black_knight_e5 = 2 * (chess.KNIGHT - 1)
    assert EG_TABLE[black_knight_e5 * 64 + chess.E5] == -EG_WEIGHTS[base + 64 + chess.E4]


def block_value(f: dict[int, int], name: str, index: int = 0) -> int:
    return f.get(feat.OFFSET[name] + index, 0)


def test_pawn_structure_terms() -> None:
    # White: a4, c2, c3, c5, g2, h2; Black: a5, c4.
    board = chess.Board("6k1/8/8/p1P5/P1p5/2P5/2P3PP/6K1 w - - 0 1")
    passed, connected, isolated, doubled, backward = feat.pawn_structure(
        board.pawns & board.occupied_co[chess.WHITE],
        board.pawns & board.occupied_co[chess.BLACK],
        chess.WHITE,
    )
    # c5 has no Black pawn ahead on b, c or d; g2 and h2 none on f, g or h. The
    # rear c-pawns are doubled (an own pawn in front), not passed.
    assert passed == chess.BB_C5 | chess.BB_G2 | chess.BB_H2
    assert doubled == chess.BB_C2 | chess.BB_C3
    # a4 and the three c-pawns have no pawns of their own on a neighbouring file.
    assert isolated == chess.BB_A4 | chess.BB_C2 | chess.BB_C3 | chess.BB_C5
    assert connected == chess.BB_G2 | chess.BB_H2  # side by side (c2 and c3 share a file)
    assert backward == 0
    # d3 with c4: no own pawn beside or behind it on c or e, and Black's e5 covers
    # d4, so d3 is backward. With f2 instead, d3 is isolated, which is not counted
    # as backward too.
    assert (
        feat.pawn_structure(chess.BB_D3 | chess.BB_C4, chess.BB_E5, chess.WHITE)[4] == chess.BB_D3
    )
    assert feat.pawn_structure(chess.BB_D3 | chess.BB_F2, chess.BB_E5, chess.WHITE)[4] == 0


def pawn_structure_by_pawn(own: int, theirs: int, color: bool) -> tuple[int, int, int, int, int]:
    """The definitions of ``feat.pawn_structure``, pawn by pawn, square by square."""
    passed = connected = isolated = doubled = backward = 0
    ahead = 1 if color else -1
    their_attacks = feat.pawn_attacks(theirs, not color)

    def pawns_where(pawns: int, files: set[int], ranks: range) -> bool:
        return any(
            chess.square_file(s) in files and chess.square_rank(s) in ranks
            for s in chess.scan_forward(pawns)
        )

    for square in chess.scan_forward(own):
        file, rank = chess.square_file(square), chess.square_rank(square)
        bit = chess.BB_SQUARES[square]
        in_front = range(rank + 1, 8) if color else range(rank)
        level_or_behind = range(rank + 1) if color else range(rank, 8)
        neighbours = {file - 1, file + 1}
        if pawns_where(own, {file}, in_front):
            doubled |= bit
        elif not pawns_where(theirs, {file, *neighbours}, in_front):
            passed |= bit
        beside = pawns_where(own, neighbours, range(rank, rank + 1))
        defender = pawns_where(own, neighbours, range(rank - ahead, rank - ahead + 1))
        if beside or defender:
            connected |= bit
        if not pawns_where(own, neighbours, range(8)):
            isolated |= bit
        elif not pawns_where(own, neighbours, level_or_behind) and (
            chess.BB_SQUARES[square + 8 * ahead] & their_attacks
        ):
            backward |= bit
    return passed, connected, isolated, doubled, backward


def test_pawn_structure_matches_its_definition_pawn_by_pawn() -> None:
    rng = random.Random(7)
    middle = chess.BB_ALL & ~chess.BB_RANK_1 & ~chess.BB_RANK_8
    for _ in range(3000):
        own = rng.getrandbits(64) & rng.getrandbits(64) & middle
        theirs = rng.getrandbits(64) & rng.getrandbits(64) & middle & ~own
        for color in (chess.WHITE, chess.BLACK):
            expected = pawn_structure_by_pawn(own, theirs, color)
            assert feat.pawn_structure(own, theirs, color) == expected, (own, theirs, color)


def test_passed_pawn_blocked_and_counted_by_rank() -> None:
    board = chess.Board("4k3/8/3n4/3P4/8/8/8/4K3 w - - 0 1")
    f = feat.features(board)
    assert block_value(f, "passed", 4) == 1
    assert block_value(f, "passed_blocked", 4) == 1
    board = chess.Board("4k3/8/8/3P4/8/8/8/4K3 w - - 0 1")
    assert block_value(feat.features(board), "passed_blocked", 4) == 0


def test_king_shelter_and_zone_attacks() -> None:
    board = chess.Board("6k1/5ppp/8/8/8/8/5PPP/R5K1 w - - 0 1")
    assert feat.king_shelter(chess.G1, board.pawns & board.occupied_co[True], 0, True) == (
        3,
        0,
        0,
        0,
    )
    open_king = chess.Board("6k1/8/8/8/8/8/8/6K1 w - - 0 1")
    assert feat.king_shelter(chess.G1, 0, 0, True) == (0, 0, 0, 3)
    assert open_king.is_valid()
    # A queen on g4 hits g8's zone? No: the g-file is open up to g7/g8.
    attack = chess.Board("6k1/8/8/8/6Q1/8/8/6K1 w - - 0 1")
    f = feat.features(attack)
    assert block_value(f, "king_zone_attacks", 3) == 2  # g7 and g8
    assert block_value(f, "king_attackers", 1) == 1


def test_mobility_excludes_own_pieces_and_pawn_attacked_squares() -> None:
    board = chess.Board("4k3/8/8/2p5/8/2N5/8/4K3 w - - 0 1")
    # Knight c3: a2 a4 b1 b5 d1 d5 e2 e4; b5 and d5... only c5's pawn attacks b4 and d4.
    f = feat.features(board)
    assert block_value(f, "mobility_knight", 8) == 1


def test_scale_factors() -> None:
    ocb = chess.Board(SPECIAL_FENS[1])
    assert feat.scale_factors(ocb) == (feat.SCALE_OPPOSITE_BISHOPS, feat.SCALE_OPPOSITE_BISHOPS)
    same = chess.Board(SPECIAL_FENS[2])
    assert feat.scale_factors(same) == (feat.SCALE_NORMAL, feat.SCALE_NORMAL)
    rook_vs_bishop = chess.Board(SPECIAL_FENS[3])
    # Black (rook) is stronger without pawns and only a bishop's worth ahead.
    assert feat.scale_factors(rook_vs_bishop)[1] == feat.SCALE_NO_PAWNS_SMALL_EDGE
    assert abs(evaluate(rook_vs_bishop)) < 100


@pytest.mark.parametrize("fen", SPECIAL_FENS)
def test_tempo_is_the_only_side_to_move_term(fen: str) -> None:
    board = chess.Board(fen)
    other = board.copy()
    other.turn = not board.turn
    other.ep_square = None
    board.ep_square = None
    f, g = feat.features(board), feat.features(other)
    tempo = feat.OFFSET["tempo"]
    assert {i: v for i, v in f.items() if i != tempo} == {i: v for i, v in g.items() if i != tempo}
    assert f[tempo] == -g[tempo]


def test_passer_king_distance_and_minor_threats() -> None:
    # d5 passer, stop square d6: Black's king (a2) is 4 steps away, White's (h1) 5.
    board = chess.Board("8/8/8/3P4/8/8/k7/7K w - - 0 1")
    assert block_value(feat.features(board), "passed_king_distance", 4) == 4 - 5
    # The knight on c3 attacks the rook on d5 and the queen on b5.
    board = chess.Board("4k3/8/8/1q1r4/8/2N5/8/4K3 w - - 0 1")
    assert block_value(feat.features(board), "minor_threat") == 2


def test_rook_threats_hanging_pieces_and_safe_checks() -> None:
    # The rook on d2 attacks the queen on d5, which nothing defends; the queen
    # attacks the rook, which the king on e1 defends.
    board = chess.Board("4k3/8/8/3q4/8/8/3R4/4K3 b - - 0 1")
    f = feat.features(board)
    assert block_value(f, "rook_threat") == 1
    assert block_value(f, "hanging") == 1
    # Rook checks on e8's file or rank that White's rook reaches and Black does not
    # attack: e2 only. Black's queen reaches four squares that check the king on e1
    # and that White does not attack: e4, e5, e6 and h1 (d2 holds White's rook).
    assert block_value(f, "safe_checks", 2) == 1
    assert block_value(f, "safe_checks", 3) == -4
    # Defended, the queen no longer hangs; its rook threat stays.
    board = chess.Board("4k3/8/4p3/3q4/8/8/3R4/4K3 b - - 0 1")
    f = feat.features(board)
    assert block_value(f, "rook_threat") == 1
    assert block_value(f, "hanging") == 0
    # A knight check square (f6 against g8) counts only while no Black pawn guards it.
    unsafe = chess.Board("6k1/6p1/8/7N/8/8/8/6K1 w - - 0 1")
    safe = chess.Board("6k1/8/8/7N/8/8/8/6K1 w - - 0 1")
    assert block_value(feat.features(unsafe), "safe_checks", 0) == 0
    assert block_value(feat.features(safe), "safe_checks", 0) == 1


def test_outposts_free_passers_and_rooks_behind() -> None:
    # The knight on d5, defended by e4, out of reach of Black's pawns (a7, h7): an
    # outpost. With a Black pawn on c7, which can reach c6, it is not.
    board = chess.Board("6k1/p6p/8/3N4/4P3/8/8/6K1 w - - 0 1")
    assert block_value(feat.features(board), "outpost", 0) == 1
    board = chess.Board("6k1/p1p4p/8/3N4/4P3/8/8/6K1 w - - 0 1")
    assert block_value(feat.features(board), "outpost", 0) == 0
    # The d4 passer with a rook behind it on d1 and nothing on d5-d8; a Black rook
    # on d8 takes away the free way but not the rook behind.
    board = chess.Board("6k1/8/8/8/3P4/8/8/3R2K1 w - - 0 1")
    f = feat.features(board)
    assert block_value(f, "passed_free", 3) == 1
    assert block_value(f, "rook_behind_passer") == 1
    board = chess.Board("3r2k1/8/8/8/3P4/8/8/3R2K1 w - - 0 1")
    f = feat.features(board)
    assert block_value(f, "passed_free", 3) == 0
    assert block_value(f, "rook_behind_passer") == 1
    # A knight between the rook and the passer: no rook behind.
    board = chess.Board("6k1/8/8/8/3P4/3N4/8/3R2K1 w - - 0 1")
    assert block_value(feat.features(board), "rook_behind_passer") == 0


def test_bad_bishops_king_pawn_distance_storms_and_space() -> None:
    # The bishop on c1 (a dark square) with own pawns on d2 and e3 (dark) and f3 (light).
    board = chess.Board("6k1/8/8/8/8/4PP2/3P4/2B3K1 w - - 0 1")
    f = feat.features(board)
    assert block_value(f, "bad_bishop") == 2
    # The nearest pawn to White's king on g1 is two steps away (e3, f3), to Black's on
    # g8 five (e3, f3).
    assert block_value(f, "king_pawn_distance") == 2 - 5
    # White's pawn on g6 stands two ranks in front of Black's king on g8.
    board = chess.Board("6k1/8/6P1/8/8/8/8/6K1 w - - 0 1")
    assert block_value(feat.features(board), "pawn_storm", 1) == -1
    # Space: the 12 squares of files c-f on a side's ranks 2-4, less those of its own
    # pawns and those the enemy's pawns attack. The e5 pawn takes d4 and f4 from
    # White and its own square from Black.
    board = chess.Board("6k1/8/8/4p3/8/8/8/6K1 w - - 0 1")
    assert block_value(feat.features(board), "space") == (12 - 2) - (12 - 1)


def test_minor_on_minor_and_weak_king_zone() -> None:
    # The knight on d4 attacks the bishop on e6, which no pawn defends; with a pawn
    # on f7 defending it, no longer.
    board = chess.Board("6k1/8/4b3/8/3N4/8/8/6K1 w - - 0 1")
    assert block_value(feat.features(board), "minor_on_minor") == 1
    board = chess.Board("6k1/5p2/4b3/8/3N4/8/8/6K1 w - - 0 1")
    assert block_value(feat.features(board), "minor_on_minor") == 0
    # White's rook on a7 attacks f7, g7 and h7 of the zone of Black's king on g8, which
    # only the king defends; Black's rook on e8 defends f8 but not the seventh rank.
    board = chess.Board("4r1k1/R7/8/8/8/8/8/6K1 w - - 0 1")
    f = feat.features(board)
    assert block_value(f, "weak_zone") == 3 - 0
