"""Tests of the perft tool: counts, divide, suites, state checks and input errors.

The command line is run as users run it (``python -m perft`` in a subprocess from
the repo root); the walks and the failure of a state check are also tested in
process. Deep suite runs are marked slow.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import chess
import pytest

from perft import cli
from perft.core import StateMismatchError, divide, divide_checked, perft, perft_checked
from tests.conftest import run_perft

REPO_ROOT = Path(__file__).resolve().parent.parent
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"
SUITES = REPO_ROOT / "perft" / "suites"

START_FEN = chess.STARTING_FEN
KIWIPETE = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"
# CPW position 3: en passant captures (and discovered checks along the rank).
EN_PASSANT_FEN = "8/2p5/3p4/KP5r/1R3p1k/8/4P1P1/8 w - - 0 1"
# CPW position 4: promotions, under-promotions and castling; one black pawn can
# capture-promote at once.
PROMOTION_CASTLING_FEN = "r3k2r/Pppp1ppp/1b3nbN/nP6/BBP1P3/q4N2/Pp1P2PP/R2Q1RK1 w kq - 0 1"
# Both sides promote, with and without captures (perftsuite.epd's last line).
PROMOTIONS_FEN = "n1n5/PPPk4/8/8/8/8/4Kppp/5N1N b - - 0 1"

# Stockfish's `go perft 3` from the start position.
START_DIVIDE_3 = {
    "a2a3": 380, "b2b3": 420, "c2c3": 420, "d2d3": 539, "e2e3": 599, "f2f3": 380,
    "g2g3": 420, "h2h3": 380, "a2a4": 420, "b2b4": 421, "c2c4": 441, "d2d4": 560,
    "e2e4": 600, "f2f4": 401, "g2g4": 421, "h2h4": 420, "b1a3": 400, "b1c3": 440,
    "g1f3": 440, "g1h3": 400,
}  # fmt: skip


def nodes_searched(output: str) -> int:
    lines = [line for line in output.splitlines() if line.startswith("Nodes searched: ")]
    assert len(lines) == 1, output
    return int(lines[0].split(": ")[1])


def assert_one_line_error(result: subprocess.CompletedProcess[str], *fragments: str) -> None:
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("perft: ")
    for fragment in fragments:
        assert fragment in lines[0]


# --- the walks, in process ---------------------------------------------------


def test_perft_counts_and_leaves_board_unchanged() -> None:
    board = chess.Board(KIWIPETE)
    assert perft(board, 0) == 1
    assert [perft(board, depth) for depth in (1, 2)] == [48, 2039]
    assert board.fen() == KIWIPETE
    assert not board.move_stack


def test_divide_sums_to_perft_and_is_sorted() -> None:
    board = chess.Board()
    counts = divide(board, 3)
    assert {move.uci(): count for move, count in counts} == START_DIVIDE_3
    assert [move.uci() for move, _ in counts] == sorted(START_DIVIDE_3)
    assert board.fen() == START_FEN
    with pytest.raises(ValueError):
        divide(board, 0)


# --- the command line ----------------------------------------------------------


def test_cli_start_position_depth_3() -> None:
    result = run_perft(START_FEN, "3")
    assert result.returncode == 0, result.stderr
    assert nodes_searched(result.stdout) == 8902
    assert "Time: " in result.stdout
    assert "leaves/s" in result.stdout


def test_cli_kiwipete_depth_2_with_unquoted_fen() -> None:
    result = run_perft(*KIWIPETE.split(), "2")
    assert result.returncode == 0, result.stderr
    assert nodes_searched(result.stdout) == 2039


def test_cli_divide() -> None:
    result = run_perft("startpos", "3", "--divide")
    assert result.returncode == 0, result.stderr
    # Format: one "move: count" line per root move, a blank line, then the totals.
    move_part, _, totals = result.stdout.partition("\n\n")
    divided = {
        move: int(count) for move, count in (line.split(": ") for line in move_part.splitlines())
    }
    assert divided == START_DIVIDE_3
    assert nodes_searched(totals) == 8902


@pytest.mark.parametrize(
    ("suite", "max_depth"),
    [
        # python-chess walks ~100-200k leaves/s: CPW to depth 3 is 290k leaves (2-4 s),
        # the 126 positions of perftsuite to depth 2 about 21k (depth 3, 510k leaves,
        # and depth 4 run with the slow tests).
        ("perft/suites/perft_cpw.epd", 3),
        ("perft/suites/perftsuite.epd", 2),
        # Bare names resolve to the shipped files; depth 1 is enough to show it.
        ("cpw", 1),
        ("perftsuite", 1),
    ],
)
def test_cli_suites_pass(suite: str, max_depth: int) -> None:
    result = run_perft("--suite", suite, "--max-depth", str(max_depth))
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    rows = [line for line in lines if line.split()[-2:-1] == ["PASS"]]
    checks = max_depth * (7 if "cpw" in suite else 126)
    assert len(rows) == checks
    assert "FAIL" not in result.stdout
    assert f"{checks} checks" in lines[-1]
    assert "all passed" in lines[-1]


def test_cli_suite_with_a_wrong_count_fails(tmp_path: Path) -> None:
    suite = tmp_path / "wrong.epd"
    suite.write_text(f"{START_FEN} ;D1 20 ;D2 401\n# comment\n\n{KIWIPETE} ;D1 48\n")
    result = run_perft("--suite", str(suite))
    assert result.returncode == 1, result.stdout + result.stderr
    fail_rows = [line for line in result.stdout.splitlines() if " FAIL " in line]
    assert len(fail_rows) == 1
    assert fail_rows[0].split()[2:5] == ["2", "401", "400"]
    assert "3 checks on 2 positions" in result.stdout
    assert "1 FAILED" in result.stdout


def test_cli_max_depth_limits_the_checks(tmp_path: Path) -> None:
    suite = tmp_path / "deep.epd"
    # A wrong count beyond --max-depth must not be computed or reported.
    suite.write_text(f"{START_FEN} ;D1 20 ;D2 400 ;D6 1\n")
    result = run_perft("--suite", str(suite), "--max-depth", "2")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 checks on 1 positions" in result.stdout


LONG_NUMBER = "1" * 4301  # int() refuses strings over 4,300 digits with ValueError


@pytest.mark.parametrize(
    ("line", "fragments"),
    [
        (f"{START_FEN} ;D1 20 ;D2 abc", ["line 2", "malformed depth entry", "D2 abc"]),
        ("rnbqkbnr/pppppppp/8/8 w KQkq - 0 1 ;D1 20", ["line 2", "invalid FEN"]),
        ("4k3/8/8/8/8/8/8/7R w - - 0 1 ;D1 1", ["line 2", "no white king"]),
        (f"{START_FEN} ;D1 20 ;D1 20", ["line 2", "depth 1 given twice"]),
        (f"{START_FEN}", ["line 2", "no ';Dn count'"]),
        (f"{START_FEN} ;D0 1", ["line 2", "depth must be 1..64"]),
        (f"{START_FEN} ;D65 1", ["line 2", "depth must be 1..64"]),
        (f"{START_FEN} ;D1 {LONG_NUMBER}", ["line 2", "count for D1 has 4301 digits"]),
        (f"{START_FEN} ;D{LONG_NUMBER} 1", ["line 2", "depth has 4301 digits"]),
    ],
)
def test_cli_malformed_suite_line(tmp_path: Path, line: str, fragments: list[str]) -> None:
    # The bad line is reported and skipped; the lines around it are still checked.
    suite = tmp_path / "bad.epd"
    suite.write_text(f"{START_FEN} ;D1 20\n{line}\n{KIWIPETE} ;D1 48\n")
    result = run_perft("--suite", str(suite))
    assert_one_line_error(result, "bad.epd", *fragments)
    assert "2 checks on 2 positions" in result.stdout
    assert "all passed; 1 bad line skipped" in result.stdout


def test_cli_bad_suite_line_and_a_wrong_count_exit_1(tmp_path: Path) -> None:
    suite = tmp_path / "both.epd"
    suite.write_text(f"{START_FEN} ;D1 {LONG_NUMBER}\n{START_FEN} ;D1 21\n")
    result = run_perft("--suite", str(suite))
    assert result.returncode == 1, result.stdout + result.stderr
    assert result.stderr.strip().splitlines() == [
        f"perft: {suite} line 1: the count for D1 has 4301 digits (at most 30)"
    ]
    assert "1 FAILED; 1 bad line skipped" in result.stdout


def test_cli_suite_of_bad_lines_only(tmp_path: Path) -> None:
    suite = tmp_path / "allbad.epd"
    suite.write_text(f"{START_FEN} ;D1 {LONG_NUMBER}\n{START_FEN}\n")
    result = run_perft("--suite", str(suite))
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 2
    assert lines[0].startswith(f"perft: {suite} line 1: ")
    assert lines[1].startswith(f"perft: {suite} line 2: ")
    assert result.stdout == ""


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["not a fen", "3"], "invalid FEN"),
        ([START_FEN, "three"], "depth must be an integer"),
        ([START_FEN, "2.5"], "depth must be an integer"),
        ([START_FEN, "-1"], "depth must be >= 0"),
        (["startpos", "0", "--divide"], "depth must be >= 1"),
        ([START_FEN], "expected a FEN and a depth"),
        ([], "expected a FEN and a depth"),
        (["--no-such-option"], "unrecognized arguments"),
        (["--suite", "no-such-suite"], "no such suite"),
        (["--suite", "cpw", "--max-depth", "x"], "--max-depth must be an integer"),
        (["--suite", "cpw", "--max-depth", LONG_NUMBER], "--max-depth has 4301 digits"),
        (["startpos", LONG_NUMBER], "depth has 4301 digits"),
        (["startpos", "-" + LONG_NUMBER], "depth has 4301 digits"),
        # Deeper walks would overflow Python's recursion limit with a traceback.
        (["startpos", "65"], "depth must be <= 64"),
        (["--suite", "cpw", "--divide"], "--divide works on a single position"),
        (["--suite", "cpw", START_FEN, "2"], "either --suite or a FEN"),
        (["startpos", "2", "--max-depth", "2"], "--max-depth only applies to --suite"),
        (["8/8/8/8/8/8/8/8 w - - 0 1", "1"], "no white king"),
    ],
)
def test_cli_bad_input_is_one_line_exit_2(args: list[str], fragment: str) -> None:
    assert_one_line_error(run_perft(*args), fragment)


def test_cli_unreadable_suite(tmp_path: Path) -> None:
    assert_one_line_error(run_perft("--suite", str(tmp_path / "missing.epd")), "no such suite")
    empty = tmp_path / "empty.epd"
    empty.write_text("# nothing\n\n")
    assert_one_line_error(run_perft("--suite", str(empty)), "no positions")


def test_shipped_suites_match_shared_data() -> None:
    if not SHARED_DATA.is_dir():
        pytest.skip(f"{SHARED_DATA} not present")
    for name in ("perft_cpw.epd", "perftsuite.epd"):
        assert (SUITES / name).read_bytes() == (SHARED_DATA / name).read_bytes(), name


# --- state checks of the native search board (perft.native's walker) -------------------


@pytest.fixture
def walker_class() -> type:
    from perft.native import NativeWalker

    return NativeWalker


@pytest.mark.parametrize(
    ("fen", "depth", "expected"),
    [
        (KIWIPETE, 2, 2039),
        (EN_PASSANT_FEN, 3, 2812),
        (PROMOTION_CASTLING_FEN, 2, 264),
        (PROMOTIONS_FEN, 2, 496),
    ],
)
def test_cli_check_state_passes(walker_class: type, fen: str, depth: int, expected: int) -> None:
    result = run_perft("--check-state", fen, str(depth))
    assert result.returncode == 0, result.stdout + result.stderr
    assert nodes_searched(result.stdout) == expected
    assert "State: incremental state matched" in result.stdout


def test_cli_check_state_divide(walker_class: type) -> None:
    result = run_perft("--check-state", "--divide", EN_PASSANT_FEN, "2")
    assert result.returncode == 0, result.stdout + result.stderr
    assert nodes_searched(result.stdout) == 191
    assert "g2g4: 17" in result.stdout.splitlines()


def test_cli_check_state_whole_suite_depth_2(walker_class: type) -> None:
    result = run_perft("--suite", "perftsuite", "--max-depth", "2", "--check-state")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "incremental state checked at every node: all passed" in result.stdout


def _broken_en_passant(walker_class: type) -> type:
    class BrokenEnPassant(walker_class):  # type: ignore[misc]
        """Forgets the captured pawn's key term on en passant captures."""

        def push(self, move: chess.Move) -> None:
            en_passant = self.board.is_en_passant(move)
            super().push(move)
            if en_passant:
                self.native.key ^= 1

    return BrokenEnPassant


def test_check_state_catches_a_broken_push(walker_class: type) -> None:
    broken = _broken_en_passant(walker_class)
    board = chess.Board(EN_PASSANT_FEN)
    with pytest.raises(StateMismatchError) as caught:
        perft_checked(board, 3, broken)
    mismatch = caught.value.mismatch
    assert mismatch.event == "push"
    assert chess.Board(EN_PASSANT_FEN).fen() == board.fen()
    # Replaying the reported path reaches the reported FEN, via an en passant capture.
    replay = chess.Board(mismatch.root_fen)
    for move in mismatch.path[:-1]:
        replay.push(move)
    assert replay.is_en_passant(mismatch.path[-1])
    replay.push(mismatch.path[-1])
    assert replay.fen() == mismatch.fen
    assert any(error.startswith("key") for error in mismatch.errors)
    # The same walk without the bug passes.
    assert perft_checked(board, 3, walker_class) == 2812
    with pytest.raises(StateMismatchError):
        divide_checked(board, 3, broken)


def test_check_state_catches_a_broken_pop(walker_class: type) -> None:
    class ForgetsToPopTheBoard(walker_class):  # type: ignore[misc]
        def pop(self) -> None:
            saved: chess.Board = self.board  # type: ignore[has-type]
            self.board = saved.copy()
            super().pop()
            self.board = saved

    with pytest.raises(StateMismatchError) as caught:
        perft_checked(chess.Board(), 2, ForgetsToPopTheBoard)
    assert caught.value.mismatch.event == "pop"
    assert len(caught.value.mismatch.path) == 2


def test_cli_check_state_failure_reports_fen_and_path(
    walker_class: type, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = _broken_en_passant(walker_class)
    status = cli.run(["--check-state", EN_PASSANT_FEN, "3"], factory=broken)
    assert status == 1
    out = capsys.readouterr().out
    last = out.strip().splitlines()[-1]
    assert last.startswith("FAIL state mismatch after push ")
    assert f"root FEN: {EN_PASSANT_FEN}" in last
    assert "path: " in last and "key " in last


# --- deep runs (slow) ------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.timeout(1900)  # the perft run's own limit first
@pytest.mark.parametrize("suite", ["cpw", "perftsuite"])
def test_cli_suites_pass_to_depth_4(suite: str) -> None:
    # ~1 min each: ~11-12M leaves.
    result = run_perft("--suite", suite, "--max-depth", "4", timeout=1800)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "all passed" in result.stdout


@pytest.mark.slow
@pytest.mark.timeout(1900)
def test_cli_check_state_whole_suite_depth_3(walker_class: type) -> None:
    result = run_perft("--suite", "perftsuite", "--max-depth", "3", "--check-state", timeout=1800)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "incremental state checked at every node: all passed" in result.stdout
