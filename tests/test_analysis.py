"""engine.analysis.api: the in-process API under python-chess's SimpleEngine.analyse contract."""

from __future__ import annotations

import multiprocessing
import os
import subprocess
import threading
import time
from pathlib import Path

import chess
import chess.engine
import chess.pgn
import pytest
from conftest import child_pids, named_children, shared_file, two_cpus
from uci_harness import engine_command

from engine.analysis.api import Analyser, AnalyserBusyError

ITALIAN = "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4"
ENDGAME = "8/8/3k4/8/8/3K4/2R5/8 w - - 0 1"
KIWIPETE = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"
OPERA = Path(__file__).parent / "data" / "opera.pgn"
CHECKOUT_ENV = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
"""The engine process runs this checkout's code, not an installed one's."""
COMPARED = ("depth", "seldepth", "score", "nodes", "pv", "multipv")


def test_results_equal_the_uci_engine_at_fixed_depth() -> None:
    """The same search through UCI (parsed by python-chess) and in process: same info."""
    limit = chess.engine.Limit(depth=5)
    with chess.engine.SimpleEngine.popen_uci(engine_command(), env=CHECKOUT_ENV) as uci:
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
    scores = [line["score"].relative.score(mate_score=100_000) for line in lines]
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


# ---------------------------------------------------- figures of the whole search


def _search_stream(limit: chess.engine.Limit, multipv: int = 1) -> list[chess.engine.InfoDict]:
    """Every InfoDict the UCI engine sends for one search, through python-chess."""
    with (
        chess.engine.SimpleEngine.popen_uci(engine_command(), env=CHECKOUT_ENV) as uci,
        uci.analysis(chess.Board(), limit, multipv=multipv) as analysis,
    ):
        infos = [dict(info) for info in analysis if "score" in info]
    return infos  # type: ignore[return-value]


def test_a_node_limit_reports_the_whole_search() -> None:
    """The last info counts every node searched, not those of the last completed depth.

    20,000 nodes from the start position end in the middle of depth 9: before,
    the last line said 11,121 nodes (depth 8's), python-chess and the Analyser too.
    """
    limit = chess.engine.Limit(nodes=20000)
    uci = _search_stream(limit)
    final, last_depth = uci[-1], uci[-2]
    assert 20000 <= final["nodes"] <= 20000 + 512
    assert final["depth"] == last_depth["depth"] and final["pv"] == last_depth["pv"]
    assert final["score"] == last_depth["score"]
    assert final["time"] >= last_depth["time"]
    assert final["nps"] == final["nodes"] * 1000 // max(1, round(final["time"] * 1000))
    with Analyser() as analyser:
        ours = analyser.analyse(chess.Board(), limit)
    assert isinstance(ours, dict) and 20000 <= ours["nodes"] <= 20000 + 512
    assert [ours[key] for key in ("depth", "score", "pv")] == [
        final[key] for key in ("depth", "score", "pv")
    ]


def test_multipv_lines_all_carry_the_whole_search() -> None:
    limit = chess.engine.Limit(nodes=6000)
    with Analyser() as analyser:
        lines = analyser.analyse(chess.Board(ITALIAN), limit, multipv=3)
    assert isinstance(lines, list) and len(lines) == 3
    assert {line["nodes"] for line in lines} == {lines[0]["nodes"]}
    assert lines[0]["nodes"] >= 6000
    assert len({line["depth"] for line in lines}) == 1


def test_a_fixed_depth_search_ends_with_its_last_depth() -> None:
    """No extra line after a completed depth: nothing was searched after it."""
    infos = _search_stream(chess.engine.Limit(depth=5))
    assert [info["depth"] for info in infos] == [1, 2, 3, 4, 5]


# ------------------------------------------------------------------ validation


@pytest.mark.parametrize(
    ("fen", "problem"),
    [
        ("8/8/8/8/8/8/8/8 w - - 0 1", "no white king"),
        ("4k3/8/8/8/8/8/8/8 w - - 0 1", "no white king"),
        ("4k3/4Q3/8/8/8/8/8/4K3 w - - 0 1", "opposite check"),
        ("4k3/8/8/8/8/8/8/P3K3 w - - 0 1", "pawns on backrank"),
    ],
)
def test_impossible_positions_are_refused(fen: str, problem: str) -> None:
    """The command line's rule and words; before, a board without kings gave Cp(0)."""
    from engine.analysis.api import InvalidPositionError

    board = chess.Board(fen)
    with Analyser() as analyser:
        for call in (
            lambda: analyser.analyse(board, chess.engine.Limit(depth=2)),
            lambda: analyser.play(board, chess.engine.Limit(depth=2)),
            lambda: analyser.analysis(board, chess.engine.Limit(depth=2)),
        ):
            with pytest.raises(InvalidPositionError, match=problem):
                call()
        # Refused before the search: the analyser is free and answers the next call.
        assert "pv" in analyser.analyse(chess.Board(), chess.engine.Limit(depth=1))
    cli = subprocess.run(
        [*engine_command(), "analyse", fen, "--depth", "2"],
        env=CHECKOUT_ENV,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert f"impossible position ({problem}" in cli.stderr


@pytest.mark.parametrize(
    ("limit", "words"),
    [
        (chess.engine.Limit(depth=0), "depth must be at least 1"),
        (chess.engine.Limit(depth=-3), "depth must be at least 1"),
        (chess.engine.Limit(depth=2.5), "depth must be a whole number"),  # type: ignore[arg-type]
        (chess.engine.Limit(nodes=0), "nodes must be at least 1"),
        (chess.engine.Limit(mate=0), "mate must be at least 1"),
        (chess.engine.Limit(time=0), "time must be above zero"),
        (chess.engine.Limit(time=-1.0), "time must be above zero"),
        (chess.engine.Limit(time=float("nan")), "time must be a number"),
        (chess.engine.Limit(white_clock=-5, black_clock=5), "white_clock must be at least"),
        (chess.engine.Limit(white_clock=5, black_clock=5, black_inc=-1), "black_inc"),
        (chess.engine.Limit(white_clock=5, black_clock=5, remaining_moves=0), "remaining_moves"),
        (chess.engine.Limit(), "limit sets nothing"),
    ],
)
def test_nonsense_limits_are_refused(limit: chess.engine.Limit, words: str) -> None:
    from engine.analysis.api import InvalidLimitError

    with Analyser() as analyser:
        with pytest.raises(InvalidLimitError, match=words):
            analyser.analyse(chess.Board(), limit)
        with pytest.raises(InvalidLimitError, match=words):
            analyser.play(chess.Board(), limit)


def test_nonsense_lines_and_root_moves_are_refused() -> None:
    from engine.analysis.api import InvalidLimitError

    limit = chess.engine.Limit(depth=2)
    with Analyser() as analyser:
        with pytest.raises(InvalidLimitError, match="multipv must be at least 1"):
            analyser.analyse(chess.Board(), limit, multipv=0)
        with pytest.raises(InvalidLimitError, match="root_moves not legal here: e2e5"):
            analyser.analyse(chess.Board(), limit, root_moves=[chess.Move.from_uci("e2e5")])
        with pytest.raises(ValueError, match="threads must be at least 1"):
            Analyser(threads=0)
        # A depth beyond the search's ceiling is not nonsense: searched as deep as it goes.
        mate = chess.Board("7k/5Q2/6K1/8/8/8/8/8 w - - 0 1")
        assert "pv" in analyser.analyse(mate, chess.engine.Limit(depth=10_000))


# ------------------------------------------------- python-chess's engine shape


def test_analysis_streams_each_depth_like_python_chess() -> None:
    """``analysis()`` yields what python-chess's ``SimpleEngine.analysis`` yields
    from the UCI engine (its exact lines: bound lines are not results)."""
    board = chess.Board(ITALIAN)
    limit = chess.engine.Limit(depth=5)
    with (
        chess.engine.SimpleEngine.popen_uci(engine_command(), env=CHECKOUT_ENV) as uci,
        uci.analysis(board, limit, game=object()) as theirs,
    ):
        expected = [
            _compared(info)
            for info in theirs
            if "score" in info and "lowerbound" not in info and "upperbound" not in info
        ]
        their_best = theirs.wait()
    with Analyser() as analyser:
        with analyser.analysis(board, limit) as ours:
            got = []
            for info in ours:
                got.append(_compared(info))
                # The latest main line: the search runs on while we read, so by now
                # ``info`` may already hold a deeper one, never a shallower one.
                assert ours.info["depth"] >= info["depth"]
            best = ours.wait()
            assert not ours.would_block() and ours.empty() and ours.next() is None
            with pytest.raises(chess.engine.AnalysisComplete):
                ours.get()
        assert got == expected and [g["depth"] for g in got] == [1, 2, 3, 4, 5]
        assert (best.move, best.ponder) == (their_best.move, their_best.ponder)
        assert analyser.analyse(board, chess.engine.Limit(depth=1))  # free again


def test_an_infinite_analysis_runs_until_stopped() -> None:
    board = chess.Board(KIWIPETE)
    with Analyser() as analyser:
        with analyser.analysis(board, multipv=2) as analysis:
            seen = []
            for info in analysis:
                seen.append(info)
                if len(seen) <= 6:  # still searching: one call at a time
                    with pytest.raises(AnalyserBusyError):
                        analyser.analyse(board, chess.engine.Limit(depth=1))
                if len(seen) == 6:
                    analysis.stop()
            best = analysis.wait()
        assert best.move is not None and best.move in board.legal_moves
        assert [i["multipv"] for i in seen[:6]] == [1, 2, 1, 2, 1, 2]
        assert len(analysis.multipv) == 2 and analysis.info["pv"][0] == best.move
        # Leaving the block stops a search nobody stopped; the analyser is free after it.
        with analyser.analysis(board) as endless:
            assert endless.get()["depth"] == 1
        assert endless.wait().move in list(board.legal_moves)
        assert "pv" in analyser.analyse(board, chess.engine.Limit(depth=2))


def test_play_returns_a_play_result_like_python_chess() -> None:
    board = chess.Board(KIWIPETE)
    limit = chess.engine.Limit(depth=5)
    with chess.engine.SimpleEngine.popen_uci(engine_command(), env=CHECKOUT_ENV) as uci:
        theirs = uci.play(board, limit, game=object())
    with Analyser() as analyser:
        ours = analyser.play(board, limit)
        assert isinstance(ours, chess.engine.PlayResult)
        assert (ours.move, ours.ponder) == (theirs.move, theirs.ponder)
        assert ours.info["depth"] == 5 and ours.info["pv"][0] == ours.move
        mated = analyser.play(chess.Board("7k/6Q1/6K1/8/8/8/8/8 b - - 0 1"), limit)
        assert mated.move is None and mated.info["score"].relative == chess.engine.Mate(0)


FIVE_MEN = "4k3/8/8/3p4/8/8/3R4/3KN3 w - - 0 1"
"""Five pieces: Rxd5 leads into the 3-4 piece tables."""


def test_a_bad_tablebase_path_or_multipv_is_refused_by_configure() -> None:
    # No tables needed: a path that is not a directory is refused as it is set.
    with Analyser() as analyser:
        with pytest.raises(ValueError, match="no such directory"):
            analyser.configure({"SyzygyPath": "/no/such/dir"})
        with pytest.raises(ValueError, match="MultiPV is set by each call"):
            analyser.configure({"MultiPV": 3})
        info = analyser.analyse(chess.Board(), chess.engine.Limit(depth=2))
    assert isinstance(info, dict) and "tbhits" not in info


def test_tbhits_when_tables_are_set() -> None:
    syzygy = shared_file("syzygy")
    board = chess.Board(FIVE_MEN)
    limit = chess.engine.Limit(depth=4)
    with Analyser() as analyser:
        plain = analyser.analyse(board, limit)
        opening = analyser.analyse(chess.Board(), chess.engine.Limit(depth=2))
    assert isinstance(plain, dict) and "tbhits" not in plain and "tbhits" not in opening
    with chess.engine.SimpleEngine.popen_uci(engine_command(), env=CHECKOUT_ENV) as uci:
        uci.configure({"SyzygyPath": str(syzygy)})
        theirs = uci.analyse(board, limit, game=object())
    with Analyser(syzygy_path=str(syzygy)) as analyser:
        ours = analyser.analyse(board, limit)
        opening = analyser.analyse(chess.Board(), chess.engine.Limit(depth=2))
    assert isinstance(ours, dict) and ours["tbhits"] > 0
    assert ours["tbhits"] == theirs["tbhits"] and ours["nodes"] == theirs["nodes"]
    # Tables set: tbhits is given even when nothing was probed.
    assert isinstance(opening, dict) and opening["tbhits"] == 0


# --------------------------------------------------------------------- threads


@two_cpus
def test_threads_search_one_position_with_helpers_that_end_with_close() -> None:
    board = chess.Board(KIWIPETE)
    with Analyser(threads=2) as analyser:
        assert analyser.threads == 2
        helpers = named_children(os.getpid())
        assert len(helpers) == 1
        info = analyser.analyse(board, chess.engine.Limit(depth=5))
        assert isinstance(info, dict) and info["depth"] >= 5
        assert info["pv"][0] in board.legal_moves
        assert board.is_valid() and legal_pv_of(board, info["pv"])
        played = analyser.play(board, chess.engine.Limit(nodes=3000))
        assert played.move in list(board.legal_moves)
    # Ended and reaped: no longer a child at all, not even a zombie.
    assert helpers[0] not in child_pids(os.getpid())
    assert not named_children(os.getpid())
    # Closed, it still answers, alone and with a table of its own size.
    assert analyser.threads == 1
    again = analyser.analyse(board, chess.engine.Limit(depth=3))
    assert isinstance(again, dict) and again["pv"][0] in board.legal_moves


def legal_pv_of(board: chess.Board, pv: list[chess.Move]) -> bool:
    after = board.copy()
    for move in pv:
        if move not in after.legal_moves:
            return False
        after.push(move)
    return True


def test_a_search_that_fails_to_answer_does_not_hang_the_analyser(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The controller reports an error instead of a move: the caller gets the last
    line's move, and the analyser is free again (not held by a search that is gone)."""
    board = chess.Board(ITALIAN)

    def broken(*_: object) -> None:
        raise RuntimeError("broken")

    with Analyser() as analyser:
        monkeypatch.setattr(analyser._controller, "_finish", broken)
        played = analyser.play(board, chess.engine.Limit(depth=3))
        assert played.move is not None and played.move == played.info["pv"][0]
        monkeypatch.undo()
        assert "pv" in analyser.analyse(board, chess.engine.Limit(depth=2))
