"""engine.core.movepick: every legal move once, in stages, ordered with python-chess's ties.

The picker works on the search board's int moves. Its order is checked against a
reference built from python-chess alone: the legal moves in python-chess's generation
order, stably sorted by the picker's scores (MVV-LVA, history, killers), so that the
search tries moves in the order it did on python-chess's board.
"""

from __future__ import annotations

import random

import chess

from engine.core import movegen
from engine.core.board import Board
from engine.core.movepick import (
    CAPTURE_BASE,
    CODE_MASK,
    HISTORY_MAX,
    HISTORY_SIDE_SIZE,
    KILLER_1_SCORE,
    KILLER_2_SCORE,
    STAGE_BAD_CAPTURES,
    STAGE_EVASIONS,
    STAGE_GOOD_CAPTURES,
    STAGE_KILLERS,
    STAGE_QUIETS,
    STAGE_TT,
    MovePicker,
    generation_order,
    new_history,
    order_moves,
    quiescence_moves,
)

_STARTS = [
    chess.STARTING_FEN,
    "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1",
    "n1n5/PPPk4/8/8/8/8/4Kppp/5N1N b - - 0 1",  # promotions, capturing or not
    "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",  # en passant
    "r3k2r/8/8/8/8/8/8/R3K2R w KQkq - 0 1",  # castling both ways
]
_MVV = (0, 100, 300, 310, 500, 900, 10000)


def _code(board: chess.Board, move: chess.Move) -> int:
    """The picker's code of a python-chess move (castling as king takes rook)."""
    to = move.to_square
    if board.is_castling(move) and not board.chess960:
        to = (
            (chess.H1 if to == chess.G1 else chess.A1)
            if board.turn
            else (chess.H8 if to == chess.G8 else chess.A8)
        )
    return move.from_square | (to << 6) | ((move.promotion or 0) << 12)


def _victim(board: chess.Board, move: chess.Move) -> int:
    if board.is_en_passant(move):
        return chess.PAWN
    piece = board.piece_at(move.to_square)
    return piece.piece_type if piece and piece.color != board.turn else 0


def _reference_score(
    board: chess.Board, move: chess.Move, killers: tuple[int, int], history: list[int]
) -> int:
    """``order_moves``'s score, computed from python-chess's view of the move."""
    victim = _victim(board, move)
    attacker = board.piece_type_at(move.from_square) or 1
    code = _code(board, move)
    if victim:
        score = CAPTURE_BASE + _MVV[victim] * 8 - attacker
        if move.promotion and not board.is_en_passant(move):
            score += _MVV[move.promotion]
        return score
    if move.promotion:
        return CAPTURE_BASE + _MVV[move.promotion] if move.promotion == chess.QUEEN else 0
    if code == killers[0]:
        return KILLER_1_SCORE
    if code == killers[1]:
        return KILLER_2_SCORE
    return history[(HISTORY_SIDE_SIZE if board.turn else 0) + (code & 4095)]


def _positions(games: int, plies: int, seed: int) -> list[chess.Board]:
    rng = random.Random(seed)
    boards = []
    for game in range(games):
        board = chess.Board(_STARTS[game % len(_STARTS)])
        for _ in range(plies):
            moves = list(board.legal_moves)
            if not moves:
                break
            boards.append(board.copy())
            board.push(rng.choice(moves))
    return boards


def test_every_legal_move_comes_once_in_its_stage() -> None:
    rng = random.Random(5)
    for board in _positions(24, 60, 1):
        native = Board.from_chess(board)
        legal = {native.from_chess_move(m) for m in board.legal_moves}
        codes = [m & CODE_MASK for m in legal]
        quiet_codes = [
            _code(board, m)
            for m in board.legal_moves
            if not board.is_capture(m) and not m.promotion
        ] or [0]
        tt_code = rng.choice([*codes, 0, rng.randrange(1 << 15)])
        killer_1 = rng.choice([*quiet_codes, rng.randrange(1 << 15)])
        killer_2 = rng.choice(quiet_codes)
        counter = rng.choice(quiet_codes)
        if killer_2 == killer_1:
            killer_2 = 0
        history = [rng.randrange(-16384, 16384) for _ in range(2 * HISTORY_SIDE_SIZE)]
        picker = MovePicker(
            native, tt_code, killer_1, killer_2, history, board.is_check(), True, counter
        )
        seen: list[int] = []
        for stage, moves in picker:
            if stage is STAGE_TT:
                assert moves == [movegen.legal_move(native, tt_code)] and not seen
            for move in moves:
                chess_move = native.to_chess_move(move)
                if stage in (STAGE_GOOD_CAPTURES, STAGE_BAD_CAPTURES):
                    assert board.is_capture(chess_move)
                if stage in (STAGE_KILLERS, STAGE_QUIETS):
                    assert not board.is_capture(chess_move)
                if stage is STAGE_KILLERS:
                    assert move & CODE_MASK in (killer_1, killer_2, counter)
            if board.is_check():
                assert stage in (STAGE_TT, STAGE_EVASIONS)
            seen.extend(moves)
        assert sorted(seen) == sorted(legal), board.fen()


def test_order_is_the_score_then_python_chess_order() -> None:
    """Evasions and the root (``order_moves``), captures (quiescence) and quiets: the
    picker's order is a stable sort of python-chess's legal order by the score."""
    rng = random.Random(9)
    for board in _positions(24, 60, 2):
        native = Board.from_chess(board)
        history = [rng.randrange(-300, 300) for _ in range(2 * HISTORY_SIDE_SIZE)]
        legal = list(board.legal_moves)
        killers = (rng.choice([_code(board, m) for m in legal]), 0)
        expected = sorted(legal, key=lambda m: -_reference_score(board, m, killers, history))
        moves = [native.from_chess_move(m) for m in reversed(legal)]  # any order in
        ordered = order_moves(native, moves, -1, killers[0], killers[1], history)
        assert [native.to_chess_move(m) for m in ordered] == expected, board.fen()
        assert [native.to_chess_move(m) for m in generation_order(native, moves)] == legal

        if board.is_check():
            continue
        noisy = [m for m in legal if board.is_capture(m) or m.promotion == chess.QUEEN]
        expected = sorted(noisy, key=lambda m: -_mvv_lva(board, m))
        got = quiescence_moves(native, history, False)
        assert [native.to_chess_move(m) for m in got] == expected, board.fen()

        picker = MovePicker(native, 0, 0, 0, history, False, False)
        quiets = dict(picker).get(STAGE_QUIETS, [])
        plain = [m for m in legal if not board.is_capture(m)]
        expected = sorted(plain, key=lambda m: -_quiet_score(board, m, history))
        assert [native.to_chess_move(m) for m in quiets] == expected, board.fen()


def _mvv_lva(board: chess.Board, move: chess.Move) -> int:
    score = _MVV[_victim(board, move) or 1] * 8 - (board.piece_type_at(move.from_square) or 1)
    return score + (_MVV[move.promotion] * 8 if move.promotion else 0)


def _quiet_score(board: chess.Board, move: chess.Move, history: list[int]) -> int:
    if move.promotion:
        return HISTORY_MAX + 1 if move.promotion == chess.QUEEN else 0
    return history[(HISTORY_SIDE_SIZE if board.turn else 0) + (_code(board, move) & 4095)]


def test_quiet_checks_and_losing_captures_keep_their_place() -> None:
    """The queen on d4 can take the pawn on e5, which d6 defends: a losing capture,
    tried after the quiets; a fresh history leaves the quiets in python-chess's order."""
    board = chess.Board("4k3/8/3p4/4p3/3Q4/8/8/4K3 w - - 0 1")
    native = Board.from_chess(board)
    stages = dict(MovePicker(native, 0, 0, 0, new_history(), False, True))
    assert [native.to_chess_move(m) for m in stages[STAGE_BAD_CAPTURES]] == [
        chess.Move.from_uci("d4e5")
    ]
    quiets = [native.to_chess_move(m) for m in stages[STAGE_QUIETS]]
    assert quiets == [m for m in board.legal_moves if not board.is_capture(m)]
