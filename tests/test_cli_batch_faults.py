"""``cutoff analyse --jobs``, ``cutoff annotate`` and the match scripts against hostile use.

Through the real commands (issue 65, items 8 and 9; issue 67, items 2 and 4): the
worker processes die with the main process however it ends and leave no named
semaphores; Ctrl-C stops the searches in flight, writes what finished and a second
one ends the process; each position is written as it finishes; bad PGN, bad output
paths, huge sizes and empty input give one line and a non-zero exit, never a
traceback; PGN input covers every position of a game, the last one included.
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import resource
import select
import signal
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Optional

import chess
import pytest
from conftest import child_pids, default_sigint, run_repo_script, still_running
from uci_harness import REPO, engine_command

# Searches that do not end by themselves within any test's patience.
DEEP = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"
DEEP_2 = "r4rk1/1pp1qppp/p1np1n2/2b1p1B1/2B1P1b1/P1NP1N2/1PP1QPPP/R4RK1 w - - 0 10"
# Checkmate: analysed at once (no legal move), whatever the depth.
MATED = "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3"
FOREVER = ("--depth", "60")
BROKEN_PGN = "1. e4 e5 (*) ) ?! 2. Nf3 *\n"


def env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO)}


def cutoff(
    tmp_path: Path, *args: str, timeout: float = 120, memory_mb: Optional[int] = None
) -> subprocess.CompletedProcess[str]:
    """``cutoff ARGS`` to the end, its output captured (``memory_mb``: an address-space
    cap, so that a fault that allocates without bound fails here, not the machine)."""

    def limit() -> None:
        if memory_mb is not None:
            size = memory_mb << 20
            resource.setrlimit(resource.RLIMIT_AS, (size, size))

    return subprocess.run(
        [*engine_command(), *args],
        cwd=str(tmp_path),
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env(),
        preexec_fn=limit,
    )


def start(tmp_path: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*engine_command(), *args],
        cwd=str(tmp_path),
        env=env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=default_sigint,
    )


def workers(pid: int, count: int, timeout: float = 90) -> list[int]:
    """The ``count`` worker processes of ``cutoff analyse`` ``pid`` once all have started
    (started by engine.processes as ``cutoff-worker``)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = [child for child in child_pids(pid) if b"cutoff-worker" in _cmdline(child)]
        if len(found) >= count:
            return found
        time.sleep(0.1)
    raise AssertionError(f"cutoff analyse {pid} never had {count} workers")


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _cpu_ns(pid: int) -> int:
    """Nanoseconds ``pid`` has run on a CPU (precise, unlike the tick counts of stat)."""
    return int(Path(f"/proc/{pid}/schedstat").read_text().split()[0])


def wait_until_idle(pid: int, quiet_s: float = 2.0, timeout: float = 90) -> None:
    """Until process ``pid`` has used no CPU for ``quiet_s`` seconds (it waits for work)."""
    deadline = time.monotonic() + timeout
    last, since = _cpu_ns(pid), time.monotonic()
    while time.monotonic() < deadline:
        time.sleep(0.1)
        now = _cpu_ns(pid)
        if now != last:
            last, since = now, time.monotonic()
        elif time.monotonic() - since >= quiet_s:
            return
    raise AssertionError(f"process {pid} never went idle")


def named_semaphores(pid: int) -> list[str]:
    """The POSIX named semaphores (``/dev/shm/sem.*``) process ``pid`` has mapped."""
    try:
        maps = Path(f"/proc/{pid}/maps").read_text()
    except OSError:
        return []
    return [line for line in maps.splitlines() if "/dev/shm/sem." in line]


def on_a_terminal(tmp_path: Path, *args: str) -> str:
    """Run with stdout and stderr on one pseudo-terminal, as in a shell; what it showed."""
    leader, follower = pty.openpty()
    # A real terminal has a size; a fresh pseudo-terminal says 0 columns.
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    process = subprocess.Popen(
        [*engine_command(), *args], cwd=str(tmp_path), stdout=follower, stderr=follower, env=env()
    )
    os.close(follower)
    chunks = []
    while select.select([leader], [], [], 60)[0]:
        try:
            data = os.read(leader, 4096)
        except OSError:  # the terminal closed: the process has ended
            break
        if not data:
            break
        chunks.append(data)
    process.wait(60)
    os.close(leader)
    return b"".join(chunks).decode(errors="replace")


def epd(tmp_path: Path, *fens: str) -> Path:
    path = tmp_path / "positions.epd"
    path.write_text("".join(f"{fen}\n" for fen in fens))
    return path


@pytest.fixture
def deep_run(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[str], list[int]]]:
    """``cutoff analyse --jobs 2`` on searches that do not end, once both workers run."""
    source = epd(tmp_path, *[DEEP, DEEP_2] * 5)  # several tasks, whatever their size
    process = start(tmp_path, "analyse", str(source), *FOREVER, "--jobs", "2", "--json")
    try:
        yield process, workers(process.pid, 2)
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate(timeout=60)


# ------------------------------------------------------------ 65.8: workers


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL])
def test_workers_die_with_the_main_process(
    deep_run: tuple[subprocess.Popen[str], list[int]], signum: int
) -> None:
    process, pids = deep_run
    every = [*pids, *(child for child in child_pids(process.pid) if child not in pids)]
    # No named semaphore anywhere: a killed run would leave it in /dev/shm.
    assert [line for pid in [process.pid, *every] for line in named_semaphores(pid)] == []
    process.send_signal(signum)
    process.wait(timeout=60)
    assert still_running(every) == []
    if signum == signal.SIGTERM:
        assert process.returncode == 128 + signal.SIGTERM
        assert "Traceback" not in (process.stderr.read() if process.stderr else "")


def test_ctrl_c_stops_the_searches_in_flight(
    deep_run: tuple[subprocess.Popen[str], list[int]],
) -> None:
    process, pids = deep_run
    process.send_signal(signal.SIGINT)
    # The searches would never end by themselves: the run must stop them.
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert stderr == "cutoff: interrupted; what was finished is written\n"
    assert still_running(pids) == []


def test_a_second_ctrl_c_ends_the_main_process(tmp_path: Path) -> None:
    source = epd(tmp_path, *[DEEP, DEEP_2] * 5)  # several tasks, whatever their size
    process = start(tmp_path, "analyse", str(source), *FOREVER, "--jobs", "2")
    pids = workers(process.pid, 2)
    # Both at once, as a user who presses Ctrl-C twice does (``timeout -s INT`` too).
    process.send_signal(signal.SIGINT)
    process.send_signal(signal.SIGINT)
    process.communicate(timeout=60)
    assert process.returncode in (130, -signal.SIGINT)
    assert still_running(pids) == []


# ------------------------------------------------------- 67.4: as they finish


def test_each_position_is_written_as_it_finishes(tmp_path: Path) -> None:
    """The first position finishes at once while the next ones never do: its line
    must come (it came only with its chunk of four, which never finished)."""
    source = epd(tmp_path, MATED, DEEP, DEEP_2, DEEP)
    out = tmp_path / "out.jsonl"
    args = ["analyse", str(source), *FOREVER, "--jobs", "2", "--json", "-o", str(out)]
    process = start(tmp_path, *args)
    try:
        deadline = time.monotonic() + 90
        while not (out.exists() and out.read_text().endswith("\n")):
            assert time.monotonic() < deadline, "the finished position was never written"
            assert process.poll() is None
            time.sleep(0.1)
        (record,) = [json.loads(line) for line in out.read_text().splitlines()]
        assert record["index"] == 1 and record["score"] == {"mate": 0}
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=60)
    assert process.returncode == 130


def test_an_interrupt_loses_no_finished_position(tmp_path: Path) -> None:
    """Positions 2-5 finish while position 1 runs: Ctrl-C writes them (after 1 in
    input order, they are held back until it is done), with their own indexes."""
    source = epd(tmp_path, DEEP, MATED, MATED, MATED, MATED)
    out = tmp_path / "out.jsonl"
    args = ["analyse", str(source), *FOREVER, "--jobs", "2", "--json", "-o", str(out)]
    process = start(tmp_path, *args)
    pids = workers(process.pid, 2)
    # The worker that is not on position 1 has run out of positions once it idles.
    idle_found = False
    deadline = time.monotonic() + 90
    while not idle_found:
        assert time.monotonic() < deadline
        for pid in pids:
            try:
                wait_until_idle(pid, timeout=3)
                idle_found = True
            except AssertionError:
                continue
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    written = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(record["index"] for record in written) == [2, 3, 4, 5]
    assert all(record["score"] == {"mate": 0} for record in written)


def test_table_rows_do_not_land_on_the_progress_bar(tmp_path: Path) -> None:
    source = epd(tmp_path, *[MATED] * 3, "8/8/3k4/8/8/3K4/2R5/8 w - - 0 1")
    shown = on_a_terminal(tmp_path, "analyse", str(source), "--depth", "2")
    rows = [line for line in shown.splitlines() if "positions.epd:" in line]
    assert len(rows) == 4
    for row in rows:
        # What the terminal shows of the line: the text after its last carriage return.
        visible = row.rsplit("\r", 1)[-1].replace("\x1b[A", "")
        assert visible.lstrip().split()[1].startswith("positions.epd:"), repr(row)
        assert "pos/s" not in visible and "%|" not in visible, repr(row)


# --------------------------------------------------------- 67.2: PGN input


def test_pgn_input_is_every_position_of_the_game(tmp_path: Path) -> None:
    games = tmp_path / "games.pgn"
    games.write_text(
        '[Event "short"]\n\n1. e4 e5 *\n\n[Event "illegal"]\n\n1. d4 d5 2. Qxd5 Nf6 *\n'
    )
    done = cutoff(tmp_path, "analyse", str(games), "--depth", "1", "--json")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    out = [json.loads(line) for line in done.stdout.splitlines()]
    board = chess.Board()
    expected = [board.fen()]
    for move in ("e4", "e5"):
        board.push_san(move)
        expected.append(board.fen())
    assert [r["source"] for r in out[:3]] == [f"games.pgn: game 1, ply {n}" for n in range(3)]
    # fen: the position analysed; start_fen: the game's start, moves: from there.
    assert [r["fen"] for r in out[:3]] == expected
    assert "start_fen" not in out[0] and out[2]["start_fen"] == chess.STARTING_FEN
    assert out[2]["moves"] == ["e2e4", "e7e5"]
    # The illegal 2. Qxd5: the positions before it are kept, the rest reported.
    assert [r["source"] for r in out[3:]] == [f"games.pgn: game 2, ply {n}" for n in range(3)]
    assert done.stderr == (
        "cutoff analyse: games.pgn: game 2: after ply 2: illegal san: 'Qxd5' in "
        "rnbqkbnr/ppp1pppp/8/3p4/3P4/8/PPP1PPPP/RNBQKBNR w KQkq - 0 2; "
        "the rest of the game is not analysed\n"
    )


# ------------------------------------------------------------- 65.9: input


def test_broken_pgn_is_one_line_in_every_command(tmp_path: Path) -> None:
    """python-chess raises IndexError on this text; every reader reports it instead."""
    broken = tmp_path / "broken.pgn"
    broken.write_text(BROKEN_PGN)
    analysed = cutoff(tmp_path, "analyse", str(broken), "--depth", "1", "--json")
    annotated = cutoff(tmp_path, "annotate", str(broken), "--depth", "1", "--quiet")
    for done in (analysed, annotated):
        assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
        (line,) = done.stderr.splitlines()
        assert "broken.pgn: game 1: in a variation: invalid san: '*'" in line
    # The main line is whole: 1. e4 e5 2. Nf3, four positions.
    assert len(analysed.stdout.splitlines()) == 4
    assert "2. Nf3 { [%eval" in annotated.stdout
    matched = run_repo_script(
        "matches.match", "--engine", f"cmd={sys.executable} name=a",
        "--engine", f"cmd={sys.executable} name=b", "--nodes", "100",
        "--openings", str(broken),
    )  # fmt: skip
    assert matched.returncode != 0 and "Traceback" not in matched.stderr, matched.stderr
    assert matched.stderr.strip().endswith("broken.pgn:1: game 1: invalid san: '*'")


def test_not_a_game_empty_input_and_a_range_past_the_end(tmp_path: Path) -> None:
    text = tmp_path / "text.txt"
    text.write_text("Dear diary,\ntoday I played chess.\n")
    empty = tmp_path / "empty.epd"
    empty.write_text("")
    short = tmp_path / "short.pgn"
    short.write_text("1. e4 e5 2. Nf3 *\n")
    cases = [
        (("annotate", str(text)), "text.txt: game 1: not a PGN game"),
        (("analyse", str(empty)), "empty.epd: no positions"),
        (("analyse", str(short), "--moves", "40-"), "short.pgn: no position of any game is in"),
    ]
    for args, message in cases:
        done = cutoff(tmp_path, *args, "--depth", "1")
        assert done.returncode == 1, (args, done.stderr)
        assert message in done.stderr and done.stderr.count("\n") == 1, done.stderr
        assert done.stdout == "", done.stdout


def test_unbounded_inputs_and_sizes_are_refused(tmp_path: Path) -> None:
    cases = [
        (("bench", "--hash", "100000"), 2, "--hash: at most 1024"),
        (("bench", "--threads", "100000"), 2, "--threads: at most"),
        (("analyse", "--jobs", "100000"), 2, "--jobs: at most"),
        (("analyse", "--hash", "100000"), 2, "--hash: at most 1024"),
        (("analyse", "/dev/zero"), 1, "/dev/zero: larger than"),
    ]
    for args, status, message in cases:
        done = cutoff(tmp_path, *args, memory_mb=2048)
        assert done.returncode == status, (args, done.stderr)
        assert message in done.stderr and done.stderr.count("\n") == 1, done.stderr
    suite = run_repo_script("matches.epd_suite", "/dev/zero", timeout=60)
    assert suite.returncode == 2 and "Traceback" not in suite.stderr
    assert suite.stderr == "epd_suite: cannot read /dev/zero: not a regular file\n"


@pytest.mark.parametrize(
    "args",
    [
        ("analyse", "-o", "/nonexistent/x.jsonl", "--json"),
        ("analyse", "-o", "."),
        ("annotate", "GAME", "-o", "/nonexistent/x.pgn"),
        ("annotate", "GAME", "-o", "."),
        ("annotate", "GAME", "--plot", "/nonexistent/x.png"),
        ("annotate", "GAME", "--plot", "."),
    ],
)
def test_bad_output_paths_fail_before_the_work(tmp_path: Path, args: tuple[str, ...]) -> None:
    """The searches would never end: only a check before them can answer in time."""
    if "--plot" in args:
        pytest.importorskip("matplotlib")
    game = tmp_path / "game.pgn"
    game.write_text("1. e4 e5 *\n")
    words = [str(game) if word == "GAME" else word for word in args]
    if words[0] == "analyse":
        words.insert(1, DEEP)
    done = cutoff(tmp_path, *words, *FOREVER, timeout=60)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"cutoff {words[0]}: ")
    assert "No such file or directory" in line or "is a directory" in line
    assert not Path("/nonexistent").exists()
