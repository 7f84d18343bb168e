"""engine.analysis: the in-process API under python-chess's SimpleEngine.analyse contract."""

from __future__ import annotations

import multiprocessing
import threading
import time
from pathlib import Path

import chess
import chess.engine
import chess.pgn
import pytest
from uci_harness import engine_command

from engine.analysis import Analyser, AnalyserBusyError

ITALIAN = "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4"
ENDGAME = "8/8/3k4/8/8/3K4/2R5/8 w - - 0 1"
KIWIPETE = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"
OPERA = Path(__file__).parent / "data" / "opera.pgn"
COMPARED = ("depth", "seldepth", "score", "nodes", "pv", "multipv")


def test_results_equal_the_uci_engine_at_fixed_depth() -> None:
    """The same search through UCI (parsed by python-chess) and in process: same info."""
    limit = chess.engine.Limit(depth=5)
    with chess.engine.SimpleEngine.popen_uci(engine_command()) as uci:
        for fen in (ITALIAN, ENDGAME, KIWIPETE):
            board = chess.Board(fen)
            with Analyser() as analyser:
                ours = analyser.analyse(board, limit)
            theirs = uci.analyse(board, limit, game=fen)  # a new game: cleared hash
            assert isinstance(ours, dict)
            for key in COMPARED:
                assert ours.get(key) == theirs.get(key), (fen, key)
            # The fields python-chess users read are all there, in its types.
            assert isinstance(ours["score"], chess.engine.PovScore)
            assert isinstance(ours["time"], float) and ours["nps"] >= 0
            assert ours["score"].white().score() is not None


def test_multipv_lists_lines_best_first() -> None:
    board = chess.Board(ITALIAN)
    with Analyser() as analyser:
        lines = analyser.analyse(board, chess.engine.Limit(depth=4), multipv=3)
    assert isinstance(lines, list) and [line["multipv"] for line in lines] == [1, 2, 3]
    scores = [line["score"].relative.score() for line in lines]
    assert scores == sorted(scores, reverse=True)
    assert len({line["pv"][0] for line in lines}) == 3
    assert board.fen() == ITALIAN  # the caller's board is not changed


def test_every_kind_of_limit() -> None:
    board = chess.Board(ITALIAN)
    with Analyser() as analyser:
        info = analyser.analyse(board, chess.engine.Limit(nodes=2000))
        # The last completed iteration's count, as its UCI info line would say.
        assert isinstance(info, dict) and 0 < info["nodes"] <= 2000 + 64
        started = time.monotonic()
        analyser.analyse(board, chess.engine.Limit(time=0.3))
        # Without the limit the search would not end: a generous bound (timing is noisy).
        assert time.monotonic() - started < 20
        mate = analyser.analyse(chess.Board("7k/5Q2/6K1/8/8/8/8/8 w - - 0 1"),
                                chess.engine.Limit(mate=1))  # fmt: skip
        assert isinstance(mate, dict) and mate["score"].relative == chess.engine.Mate(1)
        clocks = chess.engine.Limit(white_clock=5, black_clock=5, white_inc=0.1, black_inc=0.1)
        assert "pv" in analyser.analyse(board, clocks)
        with pytest.raises(ValueError, match="limit sets nothing"):
            analyser.analyse(board, chess.engine.Limit())
        mated = analyser.analyse(chess.Board("7k/6Q1/6K1/8/8/8/8/8 b - - 0 1"), clocks)
        assert isinstance(mated, dict) and mated["depth"] == 0 and "pv" not in mated
        assert (
            mated["score"].relative.mate() == 0
            and mated["score"].white().score(mate_score=1000) == 1000
        )


def test_hash_kept_between_calls_and_cleared_on_request() -> None:
    board = chess.Board(KIWIPETE)
    limit = chess.engine.Limit(depth=5)
    with Analyser(hash_mb=8) as analyser:
        assert analyser.hash_mb == 8
        first = analyser.analyse(board, limit)
        again = analyser.analyse(board, limit)
        analyser.clear()
        cleared = analyser.analyse(board, limit)
    assert isinstance(first, dict) and isinstance(again, dict) and isinstance(cleared, dict)
    assert again["nodes"] < first["nodes"]
    assert cleared["nodes"] == first["nodes"] and cleared["pv"] == first["pv"]


def test_analyse_game_covers_every_position() -> None:
    with OPERA.open() as handle:
        game = chess.pgn.read_game(handle)
    assert game is not None
    moves = list(game.mainline_moves())
    with Analyser() as analyser:
        positions = analyser.analyse_game(game, chess.engine.Limit(depth=2))
    assert len(positions) == len(moves) + 1
    assert [p.move for p in positions] == [*moves, None]
    assert positions[-1].board.is_checkmate() and positions[-1].info["depth"] == 0
    assert positions[-2].info["score"].relative == chess.engine.Mate(1)


def _compared(result: object) -> dict[str, object]:
    assert isinstance(result, dict)
    return {key: result.get(key) for key in COMPARED}


def test_analyse_many_is_independent_of_order_with_clear() -> None:
    boards = [chess.Board(fen) for fen in (ITALIAN, ENDGAME, KIWIPETE)]
    limit = chess.engine.Limit(depth=4)
    with Analyser() as analyser:
        forward = [_compared(r) for r in analyser.analyse_many(boards, limit, clear=True)]
        backward = [
            _compared(r) for r in analyser.analyse_many(reversed(boards), limit, clear=True)
        ]
    assert forward == list(reversed(backward))


def test_a_second_call_while_one_runs_is_an_error() -> None:
    board = chess.Board(KIWIPETE)
    with Analyser() as analyser:
        outcome: dict[str, object] = {}

        def long_search() -> None:
            outcome["info"] = analyser.analyse(board, chess.engine.Limit(time=1.0))

        thread = threading.Thread(target=long_search)
        thread.start()
        time.sleep(0.2)
        with pytest.raises(AnalyserBusyError):
            analyser.analyse(board, chess.engine.Limit(depth=2))
        with pytest.raises(AnalyserBusyError):
            analyser.clear()
        thread.join()
        assert isinstance(outcome["info"], dict) and "pv" in outcome["info"]
        # Not corrupted: a fresh search still gives the reference result.
        analyser.clear()
        after = analyser.analyse(board, chess.engine.Limit(depth=4))
    with Analyser() as fresh:
        reference = fresh.analyse(board, chess.engine.Limit(depth=4))
    assert _compared(after) == _compared(reference)


def _in_a_process(fen: str) -> tuple[int, str]:
    with Analyser() as analyser:
        info = analyser.analyse(chess.Board(fen), chess.engine.Limit(depth=4))
    assert isinstance(info, dict)
    return info["nodes"], info["pv"][0].uci()


def test_several_processes_at_once_give_the_serial_results() -> None:
    fens = [ITALIAN, ENDGAME, KIWIPETE, chess.STARTING_FEN]
    serial = [_in_a_process(fen) for fen in fens]
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        parallel = pool.map(_in_a_process, fens)
    assert parallel == serial
