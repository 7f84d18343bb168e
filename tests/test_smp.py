"""Lazy SMP: the shared hash table and the helper processes (engine.play.smp, engine.core.tt).

Through the real ``cutoff`` process: Threads 2 searches and reports, a killed
helper does not stall ``go``, and neither ``quit`` nor a killed engine leaves a
process or a shared-memory segment behind.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import subprocess
import sys
import time
from multiprocessing import shared_memory
from pathlib import Path
from typing import Optional

import chess
import pytest
from conftest import (
    child_pids,
    named_children,
    process_gone,
    shm_leaked,
    shm_named_by,
    shm_segments,
    two_cpus,
)
from uci_harness import Engine, bestmove_of, field, info_lines

from engine.core.limits import SearchLimits
from engine.core.movepick import decode, move_code
from engine.core.search import IterationInfo
from engine.core.tt import BOUND_EXACT, BOUND_LOWER, TranspositionTable
from engine.play.bench import run_bench
from engine.play.controller import Controller
from engine.play.smp import HelperPool, pack_result, unpack_result
from engine.play.uci_text import BestMove

ROOT = Path(__file__).resolve().parent.parent


def _writer(name: str, entries: int) -> None:
    segment = shared_memory.SharedMemory(name=name)
    assert segment.buf is not None
    words = segment.buf.cast("Q")
    table = TranspositionTable(1, words=words)
    table.store(0xDEADBEEFCAFE, 9, BOUND_LOWER, -321, 0x0ABC)
    del table
    words.release()
    segment.close()


def test_an_entry_written_by_one_process_is_read_by_another() -> None:
    segment = shared_memory.SharedMemory(create=True, size=16 * 1024)
    try:
        assert segment.buf is not None
        context = multiprocessing.get_context("spawn")
        process = context.Process(target=_writer, args=(segment.name, 1024))
        process.start()
        process.join(30)
        assert process.exitcode == 0
        words = segment.buf.cast("Q")
        table = TranspositionTable(1, words=words)
        assert table.probe(0xDEADBEEFCAFE) == (0x0ABC, 9, BOUND_LOWER, -321)
        del table
        words.release()
    finally:
        segment.close()
        segment.unlink()


def test_a_torn_or_corrupted_entry_is_rejected() -> None:
    table = TranspositionTable(1)
    key = 0x123456789ABCDEF
    table.store(key, 5, BOUND_EXACT, 40, 0x0101)
    assert table.probe(key) is not None
    slot = (key % table.count) * 2
    table.words[slot + 1] ^= 1 << 33  # the data word of another write
    assert table.probe(key) is None
    table.store(key, 5, BOUND_EXACT, 40, 0x0101)
    table.words[slot] ^= 1  # the check word of another write
    assert table.probe(key) is None


def _engine_with_a_helper(tmp_path: Path) -> tuple[Engine, list[int]]:
    """Cutoff with Threads 2, once its helper is up, and the helpers' process ids."""
    eng = Engine(tmp_path)
    eng.handshake()
    eng.send("setoption name Threads value 2")
    eng.send("isready")
    eng.expect("readyok", timeout=60)
    return eng, child_pids(eng.proc.pid)


@two_cpus
def test_threads_two_searches_with_a_helper(tmp_path: Path) -> None:
    before = shm_segments()
    eng, helpers = _engine_with_a_helper(tmp_path)
    assert helpers, "no helper process"
    # The segment's name is gone once the helpers attached (segments of tests running
    # beside this one come and go: only the engine's own are looked at).
    assert not shm_named_by(eng.proc.pid)
    eng.send("position startpos moves e2e4")
    lines, best, _ = eng.search("go depth 7")
    board = chess.Board()
    board.push_uci("e2e4")
    assert chess.Move.from_uci(bestmove_of(best)) in board.legal_moves
    assert int(field(info_lines(lines)[-1], "nodes")) > 0
    eng.send("setoption name Hash value 8")  # a resize restarts the helpers cleanly
    eng.send("position startpos")
    _, best, _ = eng.search("go movetime 300")
    eng.send("quit")
    eng.proc.wait(10)
    for pid in helpers:
        assert process_gone(pid), f"helper {pid} outlived quit"
    assert not shm_leaked(before)
    eng.close()


@two_cpus
def test_threads_back_to_one_between_games_ends_the_helpers(tmp_path: Path) -> None:
    before = shm_segments()
    eng, _ = _engine_with_a_helper(tmp_path)
    helpers = named_children(eng.proc.pid)
    assert helpers
    eng.send("setoption name Threads value 1")
    eng.send("isready")
    eng.expect("readyok", timeout=30)
    for pid in helpers:
        assert process_gone(pid), f"helper {pid} outlived Threads 1"
    assert not named_children(eng.proc.pid)
    eng.send("ucinewgame")
    eng.send("position startpos moves d2d4")
    _, best, _ = eng.search("go depth 5")
    board = chess.Board()
    board.push_uci("d2d4")
    assert chess.Move.from_uci(bestmove_of(best)) in board.legal_moves
    eng.send("setoption name Threads value 2")  # and up again, with a fresh helper
    eng.send("isready")
    eng.expect("readyok", timeout=60)
    assert named_children(eng.proc.pid)
    _, best, _ = eng.search("go depth 5")
    assert chess.Move.from_uci(bestmove_of(best)) in board.legal_moves
    eng.send("quit")
    eng.proc.wait(10)
    assert not shm_leaked(before)
    eng.close()


@two_cpus
def test_a_killed_helper_does_not_stall_go(tmp_path: Path) -> None:
    eng = Engine(tmp_path, protocol_only=False)
    eng.handshake()
    eng.send("setoption name Threads value 2")
    eng.send("isready")
    eng.expect("readyok", timeout=60)
    helpers = named_children(eng.proc.pid)
    assert helpers
    os.kill(helpers[0], signal.SIGKILL)
    time.sleep(0.3)
    eng.send("position startpos")
    started = time.monotonic()
    seen, best, _ = eng.search("go movetime 500", timeout=20)
    assert time.monotonic() - started < 20  # generous (timing is noisy): not waiting for ever
    assert any("helper" in line and "died" in line for line in seen), seen
    assert bestmove_of(best) != "(none)"
    eng.close()


@two_cpus
def test_a_killed_engine_leaves_nothing_behind(tmp_path: Path) -> None:
    before = shm_segments()
    eng, helpers = _engine_with_a_helper(tmp_path)
    eng.send("position startpos")
    eng.send("go infinite")
    time.sleep(0.5)
    eng.proc.kill()
    eng.proc.wait(5)
    for pid in helpers:
        assert process_gone(pid, wait_s=10), f"helper {pid} outlived its engine"
    assert not shm_leaked(before)
    eng.close(check=False)


@pytest.mark.parametrize("threads", [1, 2])
def test_bench_with_threads(threads: int) -> None:
    result = run_bench(
        depth=3,
        fens=["r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"],
        threads=threads,
    )
    assert result.nodes > 0 and len(result.depth_nodes) == 3


@pytest.mark.parametrize(
    ("depth", "code", "score"), [(1, 0x0FFF, 0), (255, 0xFFFF, -32000), (9, 1, 31990), (7, 77, -5)]
)
def test_a_helper_result_is_one_word_and_back(depth: int, code: int, score: int) -> None:
    word = pack_result(depth, code, score)
    assert 0 <= word < 1 << 64
    assert unpack_result(word) == (depth, code, score)


def test_an_empty_result_word_is_no_result() -> None:
    assert unpack_result(0) is None


def test_a_helper_searches_ahead_and_publishes_its_deepest_iteration() -> None:
    notes: list[str] = []
    pool = HelperPool(2, 1, notes.append)
    try:
        board = chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3")
        # The main search has completed depth 3 and is on 4: the helper aims at 5.
        pool.main_completed(3)
        pool.start(board, 3, 1)
        deadline = time.monotonic() + 60
        found = pool.deepest()
        while (found is None or found[0] < 5) and time.monotonic() < deadline:
            time.sleep(0.05)
            found = pool.deepest()
        assert found is not None and found[0] == 5  # max_depth + 2, not beyond
        assert decode(found[1]) in board.legal_moves
        assert pool.nodes() > 0
    finally:
        pool.close()
    assert not notes


class _StubPool:
    """Stands in for HelperPool: one helper that 'completed' a given iteration."""

    helpers = 1

    def __init__(self, result: tuple[int, int, int]) -> None:
        self.result = result
        self.told: list[int] = []

    def start(
        self,
        board: chess.Board,
        max_depth: int,
        age: int,
        network: Optional[str] = None,
        node_limit: Optional[int] = None,
    ) -> None:
        pass

    def main_poll(self, nodes: int) -> None:
        pass

    def stop(self) -> None:
        pass

    def wait_idle(self) -> None:
        pass

    def close(self) -> None:
        pass

    def nodes(self) -> int:
        return 1000

    def main_completed(self, depth: int) -> None:
        self.told.append(depth)

    def deepest(self) -> tuple[int, int, int]:
        return self.result


class _Recorder:
    def __init__(self) -> None:
        self.infos: list[IterationInfo] = []
        self.played: list[BestMove] = []

    def info(self, info: IterationInfo, root: chess.Board, chess960: bool) -> None:
        self.infos.append(info)

    def bestmove(self, root: chess.Board, played: BestMove, chess960: bool) -> None:
        self.played.append(played)

    def text(self, line: str) -> None:
        pass


def _search_with_stub(
    result: tuple[int, int, int], limits: SearchLimits
) -> tuple[_Recorder, _StubPool]:
    out = _Recorder()
    controller = Controller(out)
    stub = _StubPool(result)
    controller.pool = stub  # type: ignore[assignment]
    controller.set_board(chess.Board())
    controller.go(limits, time.monotonic())
    assert controller.wait_idle(30)
    controller.pool = None
    return out, stub


def test_the_main_search_plays_a_deeper_helper_result() -> None:
    h2h3 = chess.Move.from_uci("h2h3")  # not what Cutoff plays from the start
    out, stub = _search_with_stub((40, move_code(h2h3), 17), SearchLimits(movetime_ms=200))
    assert out.played == [BestMove(h2h3, out.played[0].ponder)]
    last = out.infos[-1]
    assert (last.depth, last.score, last.pv[0], last.bound) == (40, 17, h2h3, BOUND_EXACT)
    assert stub.told and stub.told == sorted(stub.told)  # the helpers heard of each depth


@pytest.mark.parametrize(
    ("result", "limits"),
    [
        ((4, move_code(chess.Move.from_uci("h2h3")), 17), SearchLimits(depth=5)),  # shallower
        ((6, move_code(chess.Move.from_uci("h2h3")), 17), SearchLimits(depth=5)),  # past go depth
        ((40, move_code(chess.Move.from_uci("e2e5")), 17), SearchLimits(depth=5)),  # illegal
        (
            (40, move_code(chess.Move.from_uci("h2h3")), 17),
            SearchLimits(depth=5, searchmoves=["e2e4"]),  # helpers ignore searchmoves
        ),
    ],
)
def test_a_helper_result_is_not_played_when_it_must_not_be(
    result: tuple[int, int, int], limits: SearchLimits
) -> None:
    out, _ = _search_with_stub(result, limits)
    move = out.played[0].move
    assert move is not None and move.uci() != "h2h3"
    assert out.infos[-1].depth == 5 and out.infos[-1].pv[0] == move


def test_helpers_that_die_on_the_way_up_are_dropped_cleanly(tmp_path: Path) -> None:
    # The helper is given the script's sys.path, where a python-chess that cannot be
    # imported now comes first: it dies before it is ready.
    broken = tmp_path / "broken" / "chess"
    broken.mkdir(parents=True)
    (broken / "__init__.py").write_text("raise ImportError('not this one')\n")
    script = tmp_path / "helper_dies.py"
    script.write_text(
        "import sys\n"
        "from engine.play.smp import make_pool\n"
        f"sys.path.insert(0, {str(broken.parent)!r})\n"
        "pool = make_pool(2, 1, print)\n"
        "print('helpers', pool.helpers)\n"
        "pool.close()\n"
    )
    before = shm_segments()
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, cwd=ROOT
    )
    assert done.returncode == 0, done.stderr
    assert "helper 0 did not start: searching with 1" in done.stdout
    assert "helpers 0" in done.stdout
    assert "BufferError" not in done.stderr
    assert not shm_leaked(before)
