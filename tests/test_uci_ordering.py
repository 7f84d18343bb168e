"""Ordering faults: what a hostile GUI or a careless script sends, through the real process.

The UCI rules under test: ``isready`` is answered at once and ``stop`` ends the
current search at once, whatever else is queued; end of input ends the engine
(after a short grace for piped scripts); a long command (``bench``) yields to
``stop``, ``isready`` and ``quit``; ``go movetime`` is answered within the movetime
also when the machine is loaded; and the cost of a search does not grow with the
length of the game's move list. Each test writes raw lines to the pipe, several in
one write where the fault needs it. "At once" is checked with generous bounds
(``PROMPT_S``); the tests that time the answers themselves are marked ``slow``.
"""

from __future__ import annotations

import random
import subprocess
import sys
import time
from pathlib import Path

import chess
import pytest
from uci_harness import Engine, bestmove_of

EOF_GRACE_S = 2.0
"""engine.play.uci.QUIT_DRAIN_SECONDS: what came before end of input gets this long."""
PROMPT_S = 10.0
"""How long an answer that must not wait for a search may take here. Generous, so that
a loaded machine passes (timing is noisy); the faults it catches waited for minutes or
for ever. How fast the answers are is measured by scripts/speed/latency.py."""


def test_stop_is_not_held_by_a_queued_position(engine: Engine) -> None:
    """go (huge clock) / position / stop in one write: bestmove at once, not after hours."""
    for _ in range(3):
        engine.send("go wtime 100000000 btime 100000000\nposition startpos\nstop")
        _, best, _ = engine.expect("bestmove", timeout=PROMPT_S)
        assert chess.Move.from_uci(bestmove_of(best)) in chess.Board().legal_moves
    assert engine.quiet(0.5) == []  # exactly one bestmove each


def test_isready_is_not_held_by_a_queued_position(engine: Engine) -> None:
    """position / go depth 30 / position / isready in one write: readyok at once."""
    for _ in range(3):
        engine.send("position startpos\ngo depth 30\nposition startpos\nisready")
        _, _, seen = engine.expect("readyok", timeout=PROMPT_S)
        assert not any(line.startswith("bestmove") for line in seen)
        engine.send("stop")
        engine.expect("bestmove", timeout=PROMPT_S)
    assert engine.quiet(0.5) == []


def test_ponderhit_before_its_go_started(engine: Engine) -> None:
    """go ponder / ponderhit in one write: the ponderhit turns it into a timed search."""
    engine.send("position startpos moves e2e4")
    engine.send("go ponder wtime 2000 btime 2000\nponderhit")
    engine.expect("bestmove", timeout=PROMPT_S)  # without the ponderhit: never


def _bench_running(tmp_path: Path) -> Engine:
    """An engine in the middle of the UCI ``bench`` (over a minute at its depth 8)."""
    eng = Engine(tmp_path, protocol_only=False)  # the bench prints a table
    eng.handshake()
    eng.send("bench")
    eng.expect("position  1/", timeout=120)
    return eng


def test_bench_yields_to_isready_and_stop(tmp_path: Path) -> None:
    """isready during bench is answered; go then stop ends the bench and the search,
    one bestmove (it once came after the whole bench, 59.7 s)."""
    eng = _bench_running(tmp_path)
    eng.send("isready")
    _, _, seen = eng.expect("readyok", timeout=PROMPT_S)
    eng.send("position startpos\ngo depth 1\nstop")
    _, best, more = eng.expect("bestmove", timeout=2 * PROMPT_S)
    seen += more
    assert any(line.startswith("info string bench stopped after") for line in seen), seen
    assert not any(line.startswith("Nodes searched") for line in seen), seen
    assert chess.Move.from_uci(bestmove_of(best)) in chess.Board().legal_moves
    after = eng.quiet(0.5)
    assert not any(line.startswith(("bestmove", "position ")) for line in after), after
    eng.send("go depth 2")
    eng.expect("bestmove", timeout=PROMPT_S)  # the session goes on
    eng.close()


def test_stop_alone_ends_the_bench_and_quit_exits(tmp_path: Path) -> None:
    eng = _bench_running(tmp_path)
    eng.send("stop")
    eng.expect("info string bench stopped after", timeout=PROMPT_S)
    eng.send("bench")
    eng.expect("position  1/", timeout=120)
    sent = eng.send("quit")
    eng.proc.wait(2 * PROMPT_S)
    assert time.monotonic() - sent < 2 * PROMPT_S and eng.proc.returncode == 0
    eng.close()


@pytest.mark.slow  # a wall-clock limit: fails on a loaded machine
def test_isready_still_waits_for_a_position_when_idle(engine: Engine) -> None:
    """readyok after position means the position is set: go then starts at once."""
    moves = " ".join(["g1f3 g8f6 f3g1 f6g8"] * 2500)  # 10,000 plies
    engine.send(f"position startpos moves {moves}")
    engine.send("isready")
    engine.expect("readyok", timeout=20)
    _, _, elapsed = engine.search("go movetime 100")
    assert elapsed <= 0.1


@pytest.mark.parametrize(
    "go", ["go depth 1000", "go mate 3", "go wtime 100000000 btime 100000000", "go infinite"]
)
def test_end_of_input_ends_the_search_and_the_process(tmp_path: Path, go: str) -> None:
    """A GUI that dies closes our stdin: stop the search and exit, no process left."""
    eng = Engine(tmp_path)
    eng.handshake()
    eng.send("position startpos")
    eng.send(go)
    time.sleep(0.3)
    assert eng.proc.stdin is not None
    closed = time.monotonic()
    eng.proc.stdin.close()
    eng.proc.wait(EOF_GRACE_S + PROMPT_S + 5)
    assert time.monotonic() - closed < EOF_GRACE_S + PROMPT_S
    assert eng.proc.returncode == 0
    eng.close()


@pytest.mark.slow  # the latency itself: python -m scripts.speed.latency --load 2
def test_movetime_is_kept_under_load(engine: Engine) -> None:
    """go movetime 50 with both cores busy elsewhere: every answer within 50 ms."""
    load = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"]),
        subprocess.Popen([sys.executable, "-c", "while True: pass"]),
    ]
    try:
        fens = ["startpos", "startpos moves e2e4 c7c5 g1f3", "fen " + chess.Board().fen()]
        worst = 0.0
        for i in range(20):
            engine.send(f"position {fens[i % len(fens)]}")
            engine.send("isready")
            engine.expect("readyok")
            _, _, elapsed = engine.search("go movetime 50")
            worst = max(worst, elapsed)
        assert worst <= 0.05, worst
    finally:
        for process in load:
            process.kill()
            process.wait()


@pytest.mark.slow  # wall-clock limits: fail on a loaded machine
def test_search_time_does_not_grow_with_the_move_list(engine: Engine) -> None:
    """50,000 plies of history: go movetime 100 still answers within 100 ms, and the
    next move's position (the same list plus two plies) is taken at once."""
    cycle = ["g1f3", "g8f6", "f3g1", "f6g8"]
    moves = cycle * 12500
    engine.send("position startpos moves " + " ".join(moves))
    engine.send("isready")
    engine.expect("readyok", timeout=30)
    _, best, elapsed = engine.search("go movetime 100")
    assert elapsed <= 0.1
    moves += [bestmove_of(best), "g8f6"]
    sent = engine.send("position startpos moves " + " ".join(moves))
    engine.send("isready")
    stamp, _, seen = engine.expect("readyok", timeout=10)
    assert not any(line.startswith("info string") for line in seen), seen
    assert stamp - sent < 0.5
    _, _, elapsed = engine.search("go movetime 100")
    assert elapsed <= 0.1


# A seeded fuzz of bursts: commands that a GUI may send back to back, in one write.
BURST_GOS = [
    "go depth 2",
    "go movetime 30",
    "go nodes 300",
    "go infinite",
    "go ponder wtime 3000 btime 3000",
    "go wtime 100000000 btime 100000000",
]
BURST_POSITIONS = [
    "position startpos",
    "position startpos moves e2e4 e7e5 g1f3",
    "position fen 7k/5Q2/6K1/8/8/8/8/8 w - - 0 1",
    "position fen 4k3/8/8/8/8/8/8/4K2R w K - 0 1",
]
BURST_SIGNALS = ["stop", "isready", "isready", "ponderhit", "ucinewgame"]


def _board_of(command: str) -> chess.Board:
    tokens = command.split()
    board = chess.Board() if tokens[1] == "startpos" else chess.Board(" ".join(tokens[2:8]))
    if "moves" in tokens:
        for text in tokens[tokens.index("moves") + 1 :]:
            board.push_uci(text)
    return board


def _burst(rng: random.Random) -> list[str]:
    lines = []
    for _ in range(rng.randint(2, 8)):
        kind = rng.random()
        if kind < 0.35:
            lines.append(rng.choice(BURST_GOS))
        elif kind < 0.55:
            lines.append(rng.choice(BURST_POSITIONS))
        else:
            lines.append(rng.choice(BURST_SIGNALS))
    return lines


@pytest.mark.parametrize("seed", range(6))
def test_fuzzed_bursts(tmp_path: Path, seed: int) -> None:
    """Every isready answered promptly; every go exactly one legal bestmove once stop
    is sent; quit in a burst ends the process promptly."""
    rng = random.Random(seed)
    eng = Engine(tmp_path)
    eng.handshake()
    board = chess.Board()
    quit_burst = rng.randrange(4, 8)
    for number in range(8):
        lines = _burst(rng)
        if number == quit_burst:
            lines.insert(rng.randrange(len(lines) + 1), "quit")
            lines = lines[: lines.index("quit") + 1]
        elif rng.random() < 0.5:
            lines.append("stop")
        expected: list[chess.Board] = []
        isready = 0
        for line in lines:
            if line.startswith("position"):
                board = _board_of(line)
            elif line.startswith("go"):
                expected.append(board.copy())
            elif line == "isready":
                isready += 1
        sent = eng.send("\n".join(lines))
        if lines[-1] == "quit":
            eng.proc.wait(EOF_GRACE_S + PROMPT_S + 5)
            assert time.monotonic() - sent < EOF_GRACE_S + PROMPT_S
            got = eng.quiet(0.5)
            assert got.count("readyok") == isready, (lines, got)
            bestmoves = [line for line in got if line.startswith("bestmove")]
            assert len(bestmoves) <= len(expected), (lines, got)
            break
        if lines[-1] != "stop":
            time.sleep(rng.choice([0.0, 0.05, 0.2]))
            eng.send("stop")
        deadline = sent + PROMPT_S
        answered = 0
        bestmoves = []
        while answered < isready or len(bestmoves) < len(expected):
            stamp, line = eng.next_line(timeout=PROMPT_S)
            if line == "readyok":
                answered += 1
                assert stamp <= deadline, (lines, stamp - sent)
            elif line.startswith("bestmove"):
                bestmoves.append(line)
        for best, position in zip(bestmoves, expected):
            move = bestmove_of(best)
            if move == "(none)":
                assert not any(position.legal_moves), (lines, best)
            else:
                assert chess.Move.from_uci(move) in position.legal_moves, (lines, best)
        extra = eng.quiet(0.3)
        assert not [x for x in extra if x.startswith("bestmove") or x == "readyok"], (lines, extra)
    eng.close()
