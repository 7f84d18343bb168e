"""engine.core.movepick: the fast capture generator matches python-chess's, move for move."""

from __future__ import annotations

import random

import chess

from engine.core.movepick import pseudo_legal_captures


def test_captures_are_python_chess_captures_in_the_same_order() -> None:
    rng = random.Random(7)
    starts = [
        chess.STARTING_FEN,
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        "n1n5/PPPk4/8/8/8/8/4Kppp/5N1N b - - 0 1",  # capture-promotions
        "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",  # en passant
    ]
    for game in range(120):
        board = chess.Board(starts[game % len(starts)])
        for _ in range(80):
            assert pseudo_legal_captures(board) == list(board.generate_pseudo_legal_captures())
            moves = list(board.legal_moves)
            if not moves:
                break
            board.push(rng.choice(moves))


def test_quiets_are_python_chess_quiets_in_the_same_order() -> None:
    """Without en passant captures, which python-chess lists last among them."""
    from engine.core.movepick import pseudo_legal_quiets

    def reference(board: chess.Board) -> list[chess.Move]:
        them = board.occupied_co[not board.turn]
        return [
            move
            for move in board.generate_pseudo_legal_moves(chess.BB_ALL, ~them)
            if not board.is_en_passant(move)
        ]

    rng = random.Random(9)
    starts = [
        chess.STARTING_FEN,
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        "n1n5/PPPk4/8/8/8/8/4Kppp/5N1N b - - 0 1",
    ]
    for game in range(90):
        board = chess.Board(starts[game % len(starts)])
        for _ in range(80):
            assert pseudo_legal_quiets(board) == reference(board)
            moves = list(board.legal_moves)
            if not moves:
                break
            board.push(rng.choice(moves))


def test_quiet_checks_are_the_direct_checks_of_pieces() -> None:
    """Every quiet knight, bishop, rook or queen move after which the moved piece
    attacks the enemy king, and no other move."""
    from engine.core.movepick import quiet_checks

    def reference(board: chess.Board) -> set[chess.Move]:
        us = board.turn
        pieces = board.occupied_co[us] & ~(board.pawns | board.kings)
        found = set()
        for move in board.generate_pseudo_legal_moves(pieces, ~board.occupied):
            board.push(move)
            if board.attacks_mask(move.to_square) & board.kings & board.occupied_co[not us]:
                found.add(move)
            board.pop()
        return found

    rng = random.Random(11)
    starts = [
        chess.STARTING_FEN,
        "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
        "4k3/8/8/8/8/8/8/R2QK1NB w - - 0 1",
    ]
    checks = 0
    for game in range(15):
        board = chess.Board(starts[game % len(starts)])
        for _ in range(80):
            moves = quiet_checks(board)
            assert len(moves) == len(set(moves))
            assert set(moves) == reference(board)
            checks += len(moves)
            legal = list(board.legal_moves)
            if not legal:
                break
            board.push(rng.choice(legal))
    assert checks > 100
