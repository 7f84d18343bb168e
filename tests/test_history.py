"""History with gravity and malus, and counter moves: bounds, ordering, and use by the search."""

from __future__ import annotations

import random

import chess

from engine.core.board import Board
from engine.core.movepick import (
    CODE_MASK,
    HISTORY_LIMIT,
    HISTORY_SIDE_SIZE,
    STAGE_BAD_CAPTURES,
    STAGE_KILLERS,
    STAGE_QUIETS,
    MovePicker,
    history_bonus,
    move_code,
    new_history,
    update_history,
)
from engine.core.search import SearchControl, Searcher, SearchParams
from engine.core.tt import TranspositionTable


def test_bonus_grows_with_depth_and_is_capped() -> None:
    assert history_bonus(1) == 1
    assert history_bonus(5) == 25
    assert history_bonus(35) == history_bonus(60) == 1200


def test_updates_stay_within_the_limit() -> None:
    rng = random.Random(3)
    history = new_history()
    for _ in range(20000):
        index = rng.randrange(8)
        bonus = history_bonus(rng.randint(1, 40))
        update_history(history, index, bonus if rng.random() < 0.5 else -bonus)
        assert -HISTORY_LIMIT <= history[index] <= HISTORY_LIMIT
    # Repeated bonuses approach the limit; repeated maluses the other end.
    for _ in range(500):
        update_history(history, 0, 1200)
        update_history(history, 1, -1200)
    assert HISTORY_LIMIT - 100 < history[0] <= HISTORY_LIMIT
    assert -HISTORY_LIMIT <= history[1] < -HISTORY_LIMIT + 100


def test_gravity_lets_a_new_refutation_overtake_an_old_one() -> None:
    history = new_history()
    for _ in range(200):
        update_history(history, 0, 400)  # refuted often, long ago
    for _ in range(30):
        update_history(history, 0, -400)  # now searched and failing
        update_history(history, 1, 400)  # now refuting
    assert history[1] > history[0]


def test_counter_move_comes_after_the_killers_and_only_once() -> None:
    board = chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3")
    killer = move_code(chess.Move.from_uci("b1c3"))
    counter = move_code(chess.Move.from_uci("f1b5"))
    native = Board.from_chess(board)
    picker = MovePicker(native, 0, killer, 0, new_history(), False, True, counter=counter)
    stages = {stage: [m & CODE_MASK for m in moves] for stage, moves in picker}
    assert stages[STAGE_KILLERS] == [killer, counter]
    assert counter not in stages[STAGE_QUIETS] and killer not in stages[STAGE_QUIETS]


def test_a_counter_move_that_is_not_legal_is_skipped() -> None:
    board = Board.from_chess(chess.Board())
    counter = move_code(chess.Move.from_uci("f1b5"))  # blocked by the e2 pawn
    picker = MovePicker(board, 0, 0, 0, new_history(), False, True, counter=counter)
    stages = dict(picker)
    assert STAGE_KILLERS not in stages
    assert len(stages[STAGE_QUIETS]) == 20


def test_skip_quiets_drops_the_quiet_stage_only() -> None:
    """Late move pruning: once the search skips the quiets, the picker does not generate
    them; the killers before them and the losing captures after them still come."""
    # The queen on d4 can take the pawn on e5, which d6 defends: a losing capture.
    board = Board.from_chess(chess.Board("4k3/8/3p4/4p3/3Q4/8/8/4K3 w - - 0 1"))
    killer = move_code(chess.Move.from_uci("e1f1"))
    for skip in (False, True):
        picker = MovePicker(board, 0, killer, 0, new_history(), False, True)
        stages = {}
        for stage, moves in picker:
            stages[stage] = [board.to_chess_move(m) for m in moves]
            if skip:
                picker.skip_quiets()
        assert stages[STAGE_KILLERS] == [chess.Move.from_uci("e1f1")]
        assert (STAGE_QUIETS in stages) != skip
        assert stages[STAGE_BAD_CAPTURES] == [chess.Move.from_uci("d4e5")]


def _search(fen: str, depth: int) -> Searcher:
    searcher = Searcher(TranspositionTable(4))
    searcher.search(chess.Board(fen), SearchParams(max_depth=depth), SearchControl())
    return searcher


def test_search_learns_counter_moves_and_lowers_failed_quiets() -> None:
    searcher = _search("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3", 6)
    assert any(searcher.counter_moves)
    assert min(searcher.history) < 0 < max(searcher.history)
    assert all(-HISTORY_LIMIT <= value <= HISTORY_LIMIT for value in searcher.history)
    # Every learnt counter move is a quiet move code of the side the slot is for.
    for index, code in enumerate(searcher.counter_moves):
        if code:
            assert code & 63 != (code >> 6) & 63
            assert index < 2 * HISTORY_SIDE_SIZE
    searcher.new_game()
    assert not any(searcher.counter_moves) and not any(searcher.history)
