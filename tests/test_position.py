"""Position: the incremental key and evaluation sums equal a from-scratch computation."""

from __future__ import annotations

import random

import chess
import chess.polyglot

from engine.core.evaluate import evaluate
from engine.core.position import Position

FENS = [
    chess.STARTING_FEN,
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1",
    "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1",
    "rnbq1k1r/pp1Pbppp/2p5/8/2B5/8/PPP1NnPP/RNBQK2R w KQ - 1 8",
    "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",
    "4k3/1P6/8/8/8/8/6p1/4K3 w - - 0 1",
]


def test_key_matches_polyglot_over_random_games() -> None:
    rng = random.Random(20261122)
    checked = 0
    for fen in FENS:
        for _ in range(25):
            pos = Position(chess.Board(fen))
            pushed = 0
            for _ in range(60):
                moves = list(pos.board.generate_legal_moves())
                if not moves:
                    break
                pos.push(rng.choice(moves))
                pushed += 1
                assert pos.key == chess.polyglot.zobrist_hash(pos.board), pos.board.fen()
                assert pos.state_errors() == []
                checked += 1
                if rng.random() < 0.1 and not pos.board.is_check():
                    pos.push_null()
                    assert pos.key == chess.polyglot.zobrist_hash(pos.board)
                    pos.pop_null()
            for _ in range(pushed):
                pos.pop()
                assert pos.key == chess.polyglot.zobrist_hash(pos.board)
                checked += 1
    assert checked > 5000


def test_every_move_kind_keeps_state() -> None:
    """Castling, en passant, promotions with and without capture, from every FEN."""
    kinds = set()
    for fen in FENS:
        pos = Position(chess.Board(fen))
        for move in list(pos.board.generate_legal_moves()):
            board = pos.board
            if board.is_castling(move):
                kinds.add("castling")
            if board.is_en_passant(move):
                kinds.add("en passant")
            if move.promotion:
                kinds.add("capture promotion" if board.is_capture(move) else "promotion")
            pos.push(move)
            assert pos.state_errors() == [], (fen, move.uci())
            pos.pop()
            assert pos.state_errors() == []
    assert kinds == {"castling", "en passant", "promotion", "capture promotion"}


def test_polyglot_en_passant_rule() -> None:
    """The ep file is hashed only when a pawn can capture (Polyglot), not after every
    double push."""
    pos = Position(chess.Board())
    pos.push(chess.Move.from_uci("e2e4"))
    assert pos.key == 0x823C9B50FD114196  # Polyglot's published key after 1. e4
    for uci in ("d7d5", "e4e5", "f7f5"):
        pos.push(chess.Move.from_uci(uci))
    assert pos.key == 0x22A48B5A8E47FF78  # after 1. e4 d5 2. e5 f5: ep file hashed


def test_repetition_from_own_history() -> None:
    board = chess.Board()
    pos = Position(board)
    for uci in ("g1f3", "g8f6", "f3g1", "f6g8"):
        pos.push(chess.Move.from_uci(uci))
    assert pos.is_repetition()
    pos.pop()
    assert not pos.is_repetition()


def test_game_history_counts_for_repetition() -> None:
    board = chess.Board()
    for uci in ("g1f3", "g8f6", "f3g1", "f6g8"):
        board.push_uci(uci)
    pos = Position(board)
    assert pos.is_repetition()


def test_evaluation_is_symmetric() -> None:
    for fen in FENS:
        board = chess.Board(fen)
        assert evaluate(board) == evaluate(board.mirror()), fen


def test_repetition_matches_its_definition_on_random_histories() -> None:
    """is_repetition: the current key among every second key from four plies back to
    the last irreversible move (checked against a plain loop on random key lists)."""
    import random

    from engine.core.position import Position

    rng = random.Random(3)
    pos = Position(chess.Board())
    for _ in range(20000):
        keys = [rng.randint(0, 5) for _ in range(rng.randint(1, 30))]
        clock = rng.randint(0, 40)
        last = len(keys) - 1
        expected = any(keys[i] == keys[last] for i in range(last - 4, max(last - clock, 0) - 1, -2))
        pos.keys = keys
        pos.board.halfmove_clock = clock
        assert pos.is_repetition() == expected, (keys, clock)


def test_fast_make_unmake_leaves_the_board_as_python_chess_does() -> None:
    """Ordinary moves and captures are made on the bitboards directly: after every
    push and pop the board equals python-chess's own, field by field."""
    import random

    from engine.core.position import Position

    def fields(board: chess.Board) -> tuple[object, ...]:
        return (
            board.pawns, board.knights, board.bishops, board.rooks, board.queens,
            board.kings, tuple(board.occupied_co), board.occupied, board.promoted,
            board.turn, board.castling_rights, board.ep_square, board.halfmove_clock,
            board.fullmove_number, tuple(board.move_stack),
        )  # fmt: skip

    rng = random.Random(5)
    kiwipete = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"
    promotions = "n1n5/PPPk4/8/8/8/8/4Kppp/5N1N b - - 0 1"
    for game in range(60):
        fen = (chess.STARTING_FEN, kiwipete, promotions)[game % 3]
        pos = Position(chess.Board(fen))
        reference = chess.Board(fen)
        for _ in range(100):
            moves = list(reference.legal_moves)
            if not moves:
                break
            move = rng.choice(moves)
            before = fields(pos.board)
            pos.push(move)
            reference.push(move)
            assert fields(pos.board) == fields(reference), reference.move_stack
            assert not pos.state_errors()
            # python-chess's own copy and pop work on the board a Position made.
            copied = pos.board.copy()
            copied.pop()
            assert fields(copied) == before
            if rng.random() < 0.3:
                pos.pop()
                reference.pop()
                assert fields(pos.board) == before == fields(reference)
                pos.push(move)
                reference.push(move)
        replay = pos.board.copy()
        while reference.move_stack:
            pos.pop()
            reference.pop()
            assert fields(pos.board) == fields(reference)
            replay.pop()
            assert fields(replay) == fields(reference)
