"""scripts.training.engines' self-play loop against the loop it replaced, which used
python-chess's engine client and ``board.outcome(claim_draw=True)``: ``Game``'s
end-of-game test at every ply of seeded random games that repeat positions, reach
the fifty- and seventy-five-move rules, mate, stalemate and run out of material; and
``GameRunner``'s games (``UciPlayer`` sending the engine's commands itself), the
same positions, scores, moves and results as that loop's with Stockfish and Cutoff."""

from __future__ import annotations

import random
import shutil
import sys
from typing import Optional

import chess
import chess.engine
import pytest

from scripts.matches.match_openings import DEFAULT_OPENINGS
from scripts.training.engines import (
    ADJUDICATE_WIN_PLIES,
    DRAW,
    SEED_STRIDE,
    Config,
    Game,
    GameRecord,
    GameRunner,
    is_quiet,
    load_openings,
    start_engine,
    white_cp,
    winning_side,
)

STOCKFISH = shutil.which("stockfish") or shutil.which("/usr/games/stockfish")

STARTS = [
    chess.STARTING_FEN,
    # Few moves from each position: repetitions.
    "4k3/8/8/8/8/8/8/R3K2R w KQ - 0 1",
    "r3k3/8/8/8/8/8/8/4K2R w Kq - 80 60",
    # The fifty- and seventy-five-move rules near.
    "4k3/8/8/8/8/8/4R3/4K3 w - - 96 80",
    "4k3/8/3n4/8/8/8/4R3/4K3 b - - 150 90",
    # En passant rights (legal and not), mates and stalemates, material running out.
    "4k3/8/8/3pP3/8/8/8/4K3 w - d6 0 2",
    "4k3/8/8/8/3pP3/8/8/4K3 b - e3 0 2",
    "7k/5Q2/6K1/8/8/8/8/8 w - - 0 1",
    "k7/2Q5/1K6/8/8/8/8/8 w - - 0 1",
    "4k3/8/8/8/8/8/3nb3/4K3 w - - 0 1",
]


def test_game_outcome_is_python_chess_outcome() -> None:
    rng = random.Random(105)
    endings = set()
    for game_number in range(240):
        start = STARTS[game_number % len(STARTS)]
        game = Game(chess.Board(start))
        board = game.board
        # Mostly reversible moves (no pawn moves or captures), to repeat positions.
        quiet_bias = game_number % 3 != 0
        for _ in range(300):
            expected = board.outcome(claim_draw=True)
            found = game.outcome()
            assert found == expected, (start, [m.uci() for m in board.move_stack])
            if expected is not None:
                endings.add(expected.termination)
                break
            moves = list(board.legal_moves)
            reversible = [m for m in moves if not board.is_zeroing(m)]
            pool = reversible if quiet_bias and reversible and rng.random() < 0.9 else moves
            game.push(rng.choice(pool))
    assert endings >= {
        chess.Termination.CHECKMATE,
        chess.Termination.STALEMATE,
        chess.Termination.INSUFFICIENT_MATERIAL,
        chess.Termination.SEVENTYFIVE_MOVES,
        chess.Termination.FIFTY_MOVES,
        chess.Termination.THREEFOLD_REPETITION,
    }, endings


def reference_game(engine: chess.engine.SimpleEngine, config: Config, index: int) -> GameRecord:
    """Game ``index`` as the self-play loop played it before (python-chess's client,
    ``board.outcome(claim_draw=True)``)."""
    board = chess.Board(config.openings[index % len(config.openings)])
    rng = random.Random(config.seed * SEED_STRIDE + index)
    for _ in range(config.random_plies):
        outcome = board.outcome(claim_draw=True)
        if outcome is not None:
            return GameRecord(index, outcome.result(), [])
        board.push(rng.choice(list(board.legal_moves)))
    fens: list[str] = []
    scores: list[int] = []
    moves: list[str] = []
    streak_side = streak = plies = 0
    limit = chess.engine.Limit(nodes=config.nodes)
    result: Optional[str] = None
    while result is None:
        outcome = board.outcome(claim_draw=True)
        if outcome is not None:
            result = outcome.result()
            break
        if plies >= config.max_plies:
            result = DRAW
            break
        kept = plies >= config.skip_plies and is_quiet(board)
        if kept:
            fens.append(board.fen())
        played = engine.play(board, limit, game=index, info=chess.engine.INFO_SCORE)
        assert played.move is not None
        if kept:
            scores.append(white_cp(played.info.get("score")))
            moves.append(played.move.uci())
        board.push(played.move)
        plies += 1
        side = winning_side(played.info.get("score"))
        streak = streak + 1 if side != 0 and side == streak_side else int(side != 0)
        streak_side = side
        if streak >= ADJUDICATE_WIN_PLIES:
            result = "1-0" if side > 0 else "0-1"
    return GameRecord(index, result, fens, tuple(scores), tuple(moves))


@pytest.mark.parametrize(
    ("engine", "nodes", "games", "max_plies"),
    [("stockfish", 300, 8, 200), ("cutoff", 150, 2, 40)],
)
def test_games_are_the_python_chess_loops(
    engine: str, nodes: int, games: int, max_plies: int
) -> None:
    if engine == "stockfish" and STOCKFISH is None:
        pytest.skip("stockfish is not installed")
    argv = [str(STOCKFISH)] if engine == "stockfish" else [sys.executable, "-m", "engine"]
    config = Config(argv, load_openings(DEFAULT_OPENINGS), nodes, 3, 4, max_plies, 4)
    runner = GameRunner(config)
    reference = start_engine(argv)
    try:
        records = [runner.play(index) for index in range(games)]
        expected = [reference_game(reference, config, index) for index in range(games)]
    finally:
        runner.close()
        reference.quit()
    assert records == expected
    assert sum(len(record.fens) for record in records) > 10 * games
    # Games decided by adjudication (the scores read) are among them.
    if engine == "stockfish":
        assert any(record.result != DRAW for record in records)
