"""scripts/matches/epd_suite.py through its command line: WAC positions with Cutoff, and bad
input, engine faults and interruptions with the stub engines of tests/engines."""

from __future__ import annotations

import shlex
import signal
import subprocess
import sys
from pathlib import Path

import chess
import pytest

from tests.conftest import REPO, default_sigint, run_repo_script, shared_file, still_running
from tests.engines.uci_stub import pick_move

# The suite runner as users start it from a checkout (run with cwd=REPO).
EPD_SUITE = [sys.executable, "-m", "scripts.matches.epd_suite"]


def test_counts_solved_positions(tmp_path: Path) -> None:
    suite = shared_file("wac.epd")
    done = subprocess.run(
        [
            *EPD_SUITE,
            str(suite),
            "--depth",
            "8",
            "--limit",
            "3",
        ],
        cwd=str(REPO),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 4
    assert lines[-1].startswith("solved ") and lines[-1].split()[3] == "3"
    assert int(lines[-1].split()[1]) >= 2  # WAC.001 and .003 fall at depth 8 (pruned)


def test_missing_file_is_one_line(tmp_path: Path) -> None:
    done = subprocess.run(
        [*EPD_SUITE, str(tmp_path / "none.epd")],
        cwd=str(REPO),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1


# --- bad input and faults, with the stub engines of tests/engines ------------------

ENGINES = REPO / "tests" / "engines"

# Positions where the stub's move is known (it picks from the FEN alone).
BOARDS = [
    chess.Board(),
    chess.Board("r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"),
    chess.Board("4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"),
    chess.Board("8/8/8/4k3/8/8/8/4K2R w K - 0 1"),
]


def epd_line(board: chess.Board, number: int, solved: bool = True) -> str:
    """An EPD line the stub engine solves (its own move as bm) or fails (as am)."""
    # The stub sees the position as read from the EPD, with its move counters reset.
    board = chess.Board.from_epd(board.epd())[0]
    move = board.san(pick_move(board))
    return f'{board.epd()} {"bm" if solved else "am"} {move}; id "p{number}";'


def stub(script: str = "uci_stub.py", *args: str) -> str:
    return shlex.join([sys.executable, str(ENGINES / script), *args])


def write_suite(path: Path, *lines: str) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


def error_lines(done: subprocess.CompletedProcess[str]) -> list[str]:
    assert "Traceback" not in done.stderr, done.stderr
    return done.stderr.strip().splitlines()


@pytest.mark.parametrize(
    ("engine", "status", "fragment"),
    [
        ("/nonexistent/engine", 1, "cannot be started: No such file or directory"),
        ("", 2, "--engine is empty"),
        ("/bin/true", 1, "did not start: engine process died unexpectedly"),
        ("'unclosed", 2, "No closing quotation"),
        (str(REPO / "README.md"), 1, "cannot be started: Permission denied"),
    ],
)
def test_engine_that_cannot_start_is_one_line(
    tmp_path: Path, engine: str, status: int, fragment: str
) -> None:
    suite = write_suite(tmp_path / "s.epd", epd_line(BOARDS[0], 1))
    done = run_repo_script("matches.epd_suite", str(suite), "--engine", engine, "--depth", "1")
    lines = error_lines(done)
    assert done.returncode == status, done.stderr
    assert len(lines) == 1 and fragment in lines[0], lines
    assert lines[0].startswith("cutoff-epd: ")


def test_engine_crash_mid_suite_still_prints_the_summary(tmp_path: Path) -> None:
    suite = write_suite(
        tmp_path / "s.epd", *(epd_line(board, i, i != 2) for i, board in enumerate(BOARDS, 1))
    )
    engine = stub("exit_midgame.py", "--after", "2")
    done = run_repo_script("matches.epd_suite", str(suite), "--engine", engine, "--depth", "1")
    assert done.returncode == 1
    assert error_lines(done) == [
        f"cutoff-epd: the engine died at {suite} line 3: "
        "engine process died unexpectedly (exit code: 3)"
    ]
    out = done.stdout.strip().splitlines()
    assert [line.split()[0] for line in out[:2]] == ["p1", "p2"]
    assert out[-1].startswith("solved 1 / 2 in ")
    assert "2 of 4 positions not run" in out[-1]


def test_bad_lines_are_skipped_and_the_rest_run(tmp_path: Path) -> None:
    suite = tmp_path / "s.epd"
    suite.write_bytes(
        b"\n".join(
            [
                epd_line(BOARDS[0], 1).encode(),
                b"\xff\xfe not utf-8",
                b"k7/8/8/8/8/8/8/R7 w - - bm Ra2;",  # no white king
                b'7k/5KQ1/8/8/8/8/8/8 b - - id "mated";',
                b"",
                b"nonsense",
                b'4k3/8/8/8/8/8/4P3/4K3 w - - id "no bm";',
                epd_line(BOARDS[1], 8, solved=False).encode(),
            ]
        )
        + b"\n"
    )
    done = run_repo_script("matches.epd_suite", str(suite), "--engine", stub(), "--depth", "1")
    assert done.returncode == 1
    lines = error_lines(done)
    expected = {
        2: "not UTF-8 text",
        3: "no white king",
        4: "no legal moves",
        6: "nonsense",
        7: "no bm or am",
    }
    assert len(lines) == len(expected), lines
    for line, (number, fragment) in zip(lines, expected.items()):
        assert line.startswith(f"cutoff-epd: {suite} line {number}: ") and fragment in line
    out = done.stdout.strip().splitlines()
    assert [line.split()[::2] for line in out[:2]] == [["p1", "ok"], ["p8", "--"]]
    assert out[-1].startswith("solved 1 / 2 in ") and "(5 bad lines skipped)" in out[-1]


def test_limit_counts_positions(tmp_path: Path) -> None:
    suite = write_suite(
        tmp_path / "s.epd", "bad line", *(epd_line(board, i) for i, board in enumerate(BOARDS, 1))
    )
    done = run_repo_script(
        "matches.epd_suite", str(suite), "--engine", stub(), "--depth", "1", "--limit", "2"
    )
    assert done.returncode == 1, done.stderr  # the bad line
    assert done.stdout.strip().splitlines()[-1].startswith("solved 2 / 2 in ")


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--depth", "-1"], "--depth must be >= 1"),
        (["--depth", "0"], "--depth must be >= 1"),
        (["--time", "-1"], "--time must be a positive number"),
        (["--time", "0"], "--time must be a positive number"),
        (["--time", "nan"], "--time must be a positive number"),
        (["--time", "inf"], "--time must be a positive number"),
        (["--limit", "0"], "--limit must be >= 1"),
        (["--depth", "x"], "invalid int value"),
        (["--nodes", "0"], "--nodes must be >= 1"),
        (["--nodes", "5", "--depth", "2"], "not allowed with argument"),
    ],
)
def test_bad_option_values_are_usage_errors(tmp_path: Path, args: list[str], fragment: str) -> None:
    suite = write_suite(tmp_path / "s.epd", epd_line(BOARDS[0], 1))
    done = run_repo_script("matches.epd_suite", str(suite), "--engine", stub(), *args)
    assert done.returncode == 2
    lines = error_lines(done)
    assert len(lines) == 1 and lines[0].startswith("cutoff-epd: error: ") and fragment in lines[0]
    assert done.stdout == ""


@pytest.mark.parametrize("content", ["", "\n  \n"])
def test_empty_suite_is_an_error(tmp_path: Path, content: str) -> None:
    suite = tmp_path / "empty.epd"
    suite.write_text(content)
    done = run_repo_script("matches.epd_suite", str(suite), "--engine", stub())
    assert done.returncode == 2
    assert error_lines(done) == [f"cutoff-epd: no positions in {suite}"]
    assert done.stdout == ""


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_interrupt_prints_the_summary_and_ends_the_engine(
    tmp_path: Path, signum: int, status: int
) -> None:
    # The engine answers the first position and then never again (--depth: no timeout).
    suite = write_suite(tmp_path / "s.epd", *(epd_line(b, i) for i, b in enumerate(BOARDS, 1)))
    pid_file = tmp_path / "engine.pid"
    engine = stub("hang.py", "--after", "1", "--pid-file", str(pid_file))
    proc = subprocess.Popen(
        [*EPD_SUITE, str(suite), "--engine", engine, "--depth", "1"],
        cwd=str(REPO),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=default_sigint,
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert first.split()[::2] == ["p1", "ok"], first
        proc.send_signal(signum)
        rest, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == status, err
    assert "Traceback" not in err
    summary = rest.strip().splitlines()[-1]
    assert summary.startswith("solved 1 / 1 in ") and "3 of 4 positions not run" in summary
    (pid,) = (int(text) for text in pid_file.read_text().split())
    assert still_running([pid]) == []


# --- STS grading, fixed nodes and engine options --------------------------------------


def graded_line(board: chess.Board, number: int, grades: list[tuple[chess.Move, int]]) -> str:
    """An STS-style line: the best-graded move as bm, c9 the UCI moves, c8 their points."""
    board = chess.Board.from_epd(board.epd())[0]
    best = max(grades, key=lambda grade: grade[1])[0]
    moves = " ".join(move.uci() for move, _ in grades)
    points = " ".join(str(value) for _, value in grades)
    return f'{board.epd()} bm {board.san(best)}; id "g{number}"; c8 "{points}"; c9 "{moves}";'


def other_moves(board: chess.Board, but: chess.Move) -> list[chess.Move]:
    board = chess.Board.from_epd(board.epd())[0]
    return sorted((m for m in board.legal_moves if m != but), key=lambda m: m.uci())


def test_sts_points_are_earned_by_the_move_played(tmp_path: Path) -> None:
    boards = [chess.Board.from_epd(board.epd())[0] for board in BOARDS[:3]]
    picked = [pick_move(board) for board in boards]
    suite = write_suite(
        tmp_path / "sts.epd",
        # The stub's move is the best: 10 points.
        graded_line(boards[0], 1, [(picked[0], 10), (other_moves(boards[0], picked[0])[0], 5)]),
        # Not graded at all: none.
        graded_line(
            boards[1], 2, [(m, 10 - i) for i, m in enumerate(other_moves(boards[1], picked[1])[:2])]
        ),
        # Graded below another move: its 6 points, not solved.
        graded_line(boards[2], 3, [(other_moves(boards[2], picked[2])[0], 10), (picked[2], 6)]),
    )
    done = run_repo_script("matches.epd_suite", str(suite), "--engine", stub(), "--nodes", "50")
    assert done.returncode == 0, done.stderr
    out = done.stdout.strip().splitlines()
    assert [line.split()[2:] for line in out[:3]] == [["ok", "10"], ["--", "0"], ["--", "6"]]
    assert out[3] == "points 16 / 30 (3 graded positions)"
    assert out[4].startswith("solved 1 / 3 in ")


@pytest.mark.parametrize(
    ("grading", "fragment"),
    [
        ('c8 "10 5"; c9 "e2e4";', "c9 has 1 moves but c8 2 points"),
        ('c8 "10"; c9 "e2e5";', "c9: e2e5 is not legal here"),
        ('c8 "ten"; c9 "e2e4";', "c8: 'ten' is not a number of points"),
        ('c9 "e2e4";', "c8 (points) and c9 (UCI moves) must both be given"),
    ],
)
def test_bad_grading_skips_the_line(tmp_path: Path, grading: str, fragment: str) -> None:
    suite = write_suite(
        tmp_path / "s.epd",
        f'{chess.Board().epd()} bm e4; id "bad"; {grading}',
        epd_line(BOARDS[1], 2),
    )
    done = run_repo_script("matches.epd_suite", str(suite), "--engine", stub(), "--depth", "1")
    assert done.returncode == 1
    lines = error_lines(done)
    assert len(lines) == 1 and f"{suite} line 1: " in lines[0] and fragment in lines[0]
    assert done.stdout.strip().splitlines()[-1].startswith("solved 1 / 1 in ")


def test_unquoted_single_grade(tmp_path: Path) -> None:
    board = chess.Board.from_epd(BOARDS[2].epd())[0]
    move = pick_move(board)
    line = f'{board.epd()} bm {board.san(move)}; id "u"; c8 7; c9 {move.uci()};'
    done = run_repo_script(
        "matches.epd_suite", str(write_suite(tmp_path / "s.epd", line)), "--engine", stub()
    )
    assert done.returncode == 0, done.stderr
    assert "points 7 / 7 (1 graded position)" in done.stdout


def test_options_reach_the_engine(tmp_path: Path) -> None:
    # The stub's Pick option changes its move to the first in UCI order: the line
    # that has that move as bm is solved only if the option was set.
    board = chess.Board.from_epd(BOARDS[1].epd())[0]
    first = min(board.legal_moves, key=lambda m: m.uci())
    assert first != pick_move(board)
    suite = write_suite(tmp_path / "s.epd", f'{board.epd()} bm {board.san(first)}; id "o";')
    args = ["matches.epd_suite", str(suite), "--engine", stub(), "--nodes", "10"]
    assert run_repo_script(*args).stdout.strip().splitlines()[-1].startswith("solved 0 / 1")
    done = run_repo_script(*args, "--option", "Pick=first")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1].startswith("solved 1 / 1")


@pytest.mark.parametrize(
    ("option", "status", "fragment"),
    [
        ("Bogus=1", 1, "the engine has no option 'Bogus' (options: Pick)"),
        ("Pick", 2, "--option takes NAME=VALUE, got 'Pick'"),
        ("=first", 2, "--option takes NAME=VALUE"),
    ],
)
def test_bad_options_are_one_line(tmp_path: Path, option: str, status: int, fragment: str) -> None:
    pids = tmp_path / "pids"
    suite = write_suite(tmp_path / "s.epd", epd_line(BOARDS[0], 1))
    engine = stub("uci_stub.py", "--pid-file", str(pids))
    done = run_repo_script("matches.epd_suite", str(suite), "--engine", engine, "--option", option)
    assert done.returncode == status
    lines = error_lines(done)
    assert len(lines) == 1 and fragment in lines[0]
    if pids.exists():
        assert still_running([int(pid) for pid in pids.read_text().split()]) == []


def test_sts_with_cutoff_at_fixed_nodes_and_the_network() -> None:
    # The real engine and suite: the shipped STS lines, Cutoff with its learned
    # evaluation at a fixed node count.
    suite = shared_file("sts.epd")
    done = run_repo_script(
        "matches.epd_suite",
        str(suite),
        "--nodes",
        "300",
        "--limit",
        "3",
        "--option",
        "Use NNUE=true",
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout.strip().splitlines()
    assert len(out) == 5 and all(line.startswith("STS(v1.0) Undermine.00") for line in out[:3])
    graded = out[3].split()
    assert graded[0] == "points" and 0 <= int(graded[1]) <= 30 and graded[3] == "30"
    assert int(graded[1]) == sum(int(line.split()[-1]) for line in out[:3])
