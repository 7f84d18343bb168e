"""engine.core.attacks answers exactly as python-chess's is_check, was_into_check and
gives_check."""

from __future__ import annotations

import random

import chess
import pytest

from engine.core.attacks import checking_squares, gives_check, king_attacked

STARTS = [
    chess.STARTING_FEN,
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",  # Kiwipete
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
    "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
    "4k3/8/8/8/8/8/8/4K2R w K - 0 1",
]


def _positions(seed: int, games: int) -> list[chess.Board]:
    """Boards along random games from the starts: quiet ones, checks and pseudo-legal
    moves that leave the king attacked (the case was_into_check is for)."""
    rng = random.Random(seed)
    boards = []
    for _ in range(games):
        board = chess.Board(rng.choice(STARTS))
        for _ in range(rng.randrange(1, 60)):
            pseudo = list(board.generate_pseudo_legal_moves())
            legal = [m for m in pseudo if board.is_legal(m)]
            if not legal:
                break
            probe = board.copy(stack=False)
            probe.push(rng.choice(pseudo))  # possibly illegal: the king may be left attacked
            boards.append(probe)
            board.push(rng.choice(legal))
            boards.append(board.copy(stack=False))
    return boards


def test_the_same_answers_as_python_chess_along_random_games() -> None:
    boards = _positions(seed=7, games=120)
    checks = into_check = 0
    for board in boards:
        assert king_attacked(board, board.turn) == board.is_check(), board.fen()
        assert king_attacked(board, not board.turn) == board.was_into_check(), board.fen()
        checks += board.is_check()
        into_check += board.was_into_check()
    # The sample holds both answers of both questions.
    assert checks > 50 and into_check > 50 and len(boards) > 2000


@pytest.mark.parametrize(
    ("fen", "white_attacked", "black_attacked"),
    [
        ("4k3/8/8/8/8/8/8/4K2R w K - 0 1", False, False),
        ("4k3/8/8/8/8/8/3n4/4K3 w - - 0 1", False, False),
        ("4k3/8/8/8/8/5n2/8/4K3 w - - 0 1", True, False),  # knight
        ("4k3/8/8/8/8/8/3p4/4K3 w - - 0 1", True, False),  # pawn
        ("4k3/8/8/8/8/8/5P2/4K3 w - - 0 1", False, False),  # own pawn
        ("4k3/8/8/b7/8/8/8/4K3 w - - 0 1", True, False),  # bishop, open diagonal
        ("4k3/8/8/b7/8/2P5/8/4K3 w - - 0 1", False, False),  # bishop, blocked
        ("4k3/4r3/8/8/8/8/8/4K3 w - - 0 1", True, False),  # rook on the file
        ("4k3/4q3/8/8/8/8/4N3/4K3 w - - 0 1", False, False),  # queen, blocked
        ("4k2Q/8/8/8/8/8/8/4K3 b - - 0 1", False, True),  # queen along the rank
        ("8/8/8/8/8/8/8/4K3 w - - 0 1", False, False),  # no black king
    ],
)
def test_each_kind_of_attacker(fen: str, white_attacked: bool, black_attacked: bool) -> None:
    board = chess.Board(fen)
    assert king_attacked(board, chess.WHITE) is white_attacked
    assert king_attacked(board, chess.BLACK) is black_attacked


def test_gives_check_as_python_chess_for_every_move_it_answers() -> None:
    """Every pseudo-legal move but castling, promotions and en passant, of both sides'
    positions along random games: direct, discovered and double checks, and moves
    that are illegal (a pinned piece, a king next to the other)."""
    asked = checks = discovered = 0
    for board in _positions(seed=11, games=120):
        if board.was_into_check():
            continue  # the side that moved left its king attacked: not a position
        squares = checking_squares(board)
        for move in board.generate_pseudo_legal_moves():
            if move.promotion or board.is_castling(move) or board.is_en_passant(move):
                continue
            expected = board.gives_check(move)
            assert gives_check(board, move, squares) is expected, (board.fen(), move)
            asked += 1
            checks += expected
            if expected and squares[0] & chess.BB_SQUARES[move.from_square]:
                discovered += 1
    assert asked > 50_000 and checks > 1_000 and discovered > 20


@pytest.mark.parametrize(
    ("fen", "uci", "checks"),
    [
        ("4k3/8/8/8/8/8/8/R3K3 w - - 0 1", "a1a8", True),  # rook, along the rank
        ("4k3/8/8/8/8/8/4N3/4R1K1 w - - 0 1", "e2c3", True),  # discovered by a knight
        ("4k3/8/8/8/8/4P3/8/4R1K1 w - - 0 1", "e3e4", False),  # a blocker stays in line
        ("4k3/8/8/8/8/8/4B3/4R1K1 w - - 0 1", "e2b5", True),  # double check
        ("4k3/8/3P4/8/8/8/8/4K3 w - - 0 1", "d6d7", True),  # pawn
        ("4k3/8/8/8/8/8/8/4K3 w - - 0 1", "e1e2", False),
        ("8/8/8/8/8/8/8/R3K3 w - - 0 1", "a1a8", False),  # no black king
    ],
)
def test_gives_check_cases(fen: str, uci: str, checks: bool) -> None:
    board = chess.Board(fen)
    move = chess.Move.from_uci(uci)
    assert gives_check(board, move, checking_squares(board)) is checks
    assert board.gives_check(move) is checks or not board.king(chess.BLACK)
