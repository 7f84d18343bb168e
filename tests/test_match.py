"""Tests for the match runner (scripts/matches): parsing, adjudication, real short matches.

The matches run the runner as a program (``python -m scripts.matches.match``), exactly as
users do, between: two copies of a tiny legal stub engine (tests/engines/uci_stub.py),
Stockfish against itself and Cutoff against itself and against Stockfish (each skipped
with a message when the engine is missing), and the deliberately broken engines in
tests/engines/ (illegal move, hang, exit mid-game), whose faults must be reported as
such. Every match checks that the PGN parses, that its moves are legal, that every game
carries its reason, and that the counts in the summary add up. These tests must keep to
fixed depths and a handful of games: the machine is shared.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Optional

import chess
import chess.engine
import chess.pgn
import pytest

from scripts.matches.adjudication import Adjudication, adjudicate
from scripts.matches.engines import QUIT_TIMEOUT_S, parse_engine_spec
from scripts.matches.errors import MatchError
from scripts.matches.match_openings import load_openings
from scripts.matches.time_controls import Limits, TimeControl, parse_tc
from tests.conftest import child_pids, still_running

ROOT = Path(__file__).resolve().parent.parent
MATCHES = ROOT / "scripts" / "matches"
# The runner as users start it from a checkout (run with cwd=ROOT).
RUNNER = [sys.executable, "-m", "scripts.matches.match"]
ENGINES = ROOT / "tests" / "engines"
OPENINGS = MATCHES / "openings" / "noob3_500.epd"
STOCKFISH = shutil.which("stockfish") or "/usr/games/stockfish"
HAS_STOCKFISH = os.access(STOCKFISH, os.X_OK)
needs_stockfish = pytest.mark.skipif(
    not HAS_STOCKFISH,
    reason=f"Stockfish not found ({STOCKFISH}); install it with apt-get install stockfish",
)


def stub(script: str = "uci_stub.py", *args: str, name: Optional[str] = None) -> str:
    """An --engine spec running one of the test engines with this interpreter."""
    command = " ".join([sys.executable, str(ENGINES / script), *args])
    spec = f"cmd='{command}'"
    return f"{spec} name={name}" if name else spec


def run_match(*args: str, timeout: float = 120.0) -> tuple[int, dict[str, Any], str]:
    """Run match.py with a JSON summary on stdout; return (status, summary, stderr)."""
    proc = subprocess.run(
        [*RUNNER, "--json", "-", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    summary = json.loads(proc.stdout) if proc.stdout.strip() else {}
    return proc.returncode, summary, proc.stderr


def read_pgn(path: Path) -> list[chess.pgn.Game]:
    games: list[chess.pgn.Game] = []
    with open(path, encoding="utf-8") as handle:
        while True:
            game = chess.pgn.read_game(handle)
            if game is None:
                return games
            games.append(game)


def check_match(summary: dict[str, Any], pgn_path: Path) -> list[chess.pgn.Game]:
    """The PGN is valid, every game has a reason, and every count adds up."""
    games = read_pgn(pgn_path)
    assert len(games) == summary["games"]
    first, second = summary["engines"]
    wins = draws = losses = 0
    reasons: dict[str, int] = {}
    pair_scores: dict[str, list[float]] = {}
    pair_moves: dict[str, list[list[str]]] = {}
    for game in games:
        assert not game.errors, game.errors  # every move parsed and was legal
        headers = game.headers
        result = headers["Result"]
        assert result in ("1-0", "0-1", "1/2-1/2")
        assert headers["White"] in (first["name"], second["name"])
        assert {headers["White"], headers["Black"]} == {first["name"], second["name"]}
        assert headers["Reason"]
        assert headers["Reason"] in game.end().comment
        board = game.end().board()
        assert int(headers["PlyCount"]) == len(board.move_stack)
        if headers["Reason"] == "checkmate":
            assert board.is_checkmate()
            assert result == ("0-1" if board.turn == chess.WHITE else "1-0")
        if headers["Reason"] == "stalemate":
            assert board.is_stalemate() and result == "1/2-1/2"
        if result == "1/2-1/2":
            score = 0.5
        else:
            score = 1.0 if (result == "1-0") == (headers["White"] == first["name"]) else 0.0
        wins += score == 1.0
        draws += score == 0.5
        losses += score == 0.0
        category = headers["Reason"].split(" by ")[0].split(" (")[0]
        if headers["Termination"] in ("rules infraction",):
            category = "illegal move"
        reasons[category] = reasons.get(category, 0) + 1
        pair = headers["Round"].split(".")[0]
        pair_scores.setdefault(pair, []).append(score)
        pair_moves.setdefault(pair, []).append([move.uci() for move in game.mainline_moves()])
    assert (first["wins"], first["draws"], first["losses"]) == (wins, draws, losses)
    assert (second["wins"], second["draws"], second["losses"]) == (losses, draws, wins)
    assert sum(summary["reasons"].values()) == summary["games"]
    assert reasons == summary["reasons"]
    complete = [s for s in pair_scores.values() if len(s) == 2]
    assert summary["pairs"] == len(complete) == sum(summary["pentanomial"])
    penta = [0] * 5
    for scores in complete:
        penta[round(2 * sum(scores))] += 1
    assert penta == summary["pentanomial"]
    identical = sum(1 for moves in pair_moves.values() if len(moves) == 2 and moves[0] == moves[1])
    assert summary["pairs_identical"] == identical
    return games


# --------------------------------------------------------------------------- units


def test_parse_tc() -> None:
    assert parse_tc("10+0.1") == TimeControl(0, 10.0, 0.1)
    assert parse_tc("40/10") == TimeControl(40, 10.0, 0.0)
    assert parse_tc("40/60+0.5") == TimeControl(40, 60.0, 0.5)
    assert parse_tc(".5+.05") == TimeControl(0, 0.5, 0.05)
    assert parse_tc("40/10+0.1").pgn() == "40/10+0.1"
    for bad in ("10+", "abc", "0+1", "0/10", "10+0.1+2", "-5"):
        with pytest.raises(MatchError):
            parse_tc(bad)


def test_parse_engine_spec() -> None:
    defaults = Limits(depth=3)
    spec = parse_engine_spec(
        "cmd='/usr/bin/python3 -m engine' name=dev option.Hash=64 option.Move\\ Overhead=30 "
        "nodes=5000",
        defaults,
    )
    assert spec.command == ["/usr/bin/python3", "-m", "engine"]
    assert spec.name == "dev"
    assert spec.options == {"Hash": "64", "Move Overhead": "30"}
    assert spec.limits == Limits(depth=3, nodes=5000)
    bare = parse_engine_spec("/usr/games/stockfish", Limits(movetime_s=0.1))
    assert bare.command == ["/usr/games/stockfish"]
    assert bare.limits.movetime_s == 0.1
    override = parse_engine_spec("cmd=sf depth=1 tc=40/5", defaults)
    assert override.limits == Limits(tc=TimeControl(40, 5.0, 0.0), depth=1)
    for bad in ("cmd=sf colour=red", "cmd=sf depth=0", "cmd='unclosed", "cmd= name=x"):
        with pytest.raises(MatchError):
            parse_engine_spec(bad, defaults)
    with pytest.raises(MatchError):
        parse_engine_spec("cmd=sf", Limits())  # no limit at all


def _evals(*cps: Optional[int]) -> list[tuple[chess.Color, Optional[int]]]:
    """Scores of alternate moves, White first, each from the mover's view."""
    return [(chess.WHITE if i % 2 == 0 else chess.BLACK, cp) for i, cp in enumerate(cps)]


def test_adjudication_rules() -> None:
    board = chess.Board()
    board.fullmove_number = 40
    adj = Adjudication(draw_movenumber=30, draw_movecount=2, draw_score_cp=10)
    assert adjudicate(board, _evals(5, -5, 0, 8), adj) == ("1/2-1/2", "adjudication: draw")
    assert adjudicate(board, _evals(5, -5, 0, 11), adj) is None
    assert adjudicate(board, _evals(5, None, 0, 3), adj) is None
    board.fullmove_number = 20
    assert adjudicate(board, _evals(5, -5, 0, 8), adj) is None

    resign = Adjudication(resign_movecount=2, resign_score_cp=500)
    # Black says it is lost and White agrees: Black resigns.
    assert adjudicate(board, _evals(600, -700, 900, -800), resign) == (
        "1-0",
        "adjudication: Black resigns",
    )
    # White thinks it is lost and Black agrees (Black's own score is high).
    assert adjudicate(board, _evals(-600, 700, -900, 800), resign) == (
        "0-1",
        "adjudication: White resigns",
    )
    # Both engines think they are winning: no agreement, no resignation.
    assert adjudicate(board, _evals(600, 700, 900, 800), resign) is None

    longest = Adjudication(max_moves=2)
    assert adjudicate(board, _evals(0, 0, 0), longest) is None
    assert adjudicate(board, _evals(0, 0, 0, 0), longest) == (
        "1/2-1/2",
        "adjudication: max moves",
    )


def test_load_openings_epd_and_pgn(tmp_path: Path) -> None:
    shipped = load_openings(str(OPENINGS))
    assert len(shipped) == 500
    assert len({o.root_fen for o in shipped}) == 500
    assert all(o.board().turn == chess.WHITE for o in shipped)

    pgn = tmp_path / "book.pgn"
    pgn.write_text(
        '[Event "a"]\n\n1. e4 e5 2. Nf3 *\n\n'
        '[Event "b"]\n[FEN "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"]\n[SetUp "1"]\n\n1. e3 *\n'
    )
    book = load_openings(str(pgn))
    assert [len(o.moves) for o in book] == [3, 1]
    assert book[0].board().fen().startswith("rnbqkbnr/pppp1ppp/8/4p3/4P3/5N2/")
    assert book[1].root_fen == "4k3/8/8/8/8/8/4P3/4K3 w - - 0 1"

    epd = tmp_path / "mixed.epd"
    epd.write_text(
        "# comment\n\nrnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1\n"
        'rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - id "start";\n'
    )
    assert len(load_openings(str(epd))) == 2
    bad = tmp_path / "bad.epd"
    bad.write_text("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1\nnonsense\n")
    with pytest.raises(MatchError, match=r"bad\.epd:2"):
        load_openings(str(bad))


@pytest.mark.parametrize(
    ("name", "text", "where", "reason"),
    [
        ("mate.epd", f"{chess.STARTING_FEN}\n\n7k/5KQ1/8/8/8/8/8/8 b - -\n", ":3:", "checkmate"),
        ("stale.epd", "7k/5Q2/6K1/8/8/8/8/8 b - -\n", ":1:", "stalemate"),
        ("bare.epd", "7k/8/8/8/8/8/8/K7 w - - 0 1\n", ":1:", "insufficient material"),
        (
            "mate.pgn",
            '[Event "a"]\n\n1. e4 *\n\n\n[Event "b"]\n\n1. f3 e5 2. g4 Qh4# *\n',
            ":6: game 2:",
            "checkmate",
        ),
    ],
)
def test_opening_already_over_is_rejected(
    tmp_path: Path, name: str, text: str, where: str, reason: str
) -> None:
    # Such an opening used to be "played": scored at once, without a move.
    book = tmp_path / name
    book.write_text(text)
    args = ["--engine", "a", "--engine", "b", "--depth", "1", "--openings", str(book)]
    proc = subprocess.run(
        [*RUNNER, *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert proc.returncode == 1
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"cutoff-match: error: {book}{where} the game is already over")
    assert f"({reason})" in lines[0]


@pytest.mark.parametrize(
    "args",
    [
        ["--engine", "cmd=x", "--depth", "1"],
        ["--engine", "/nonexistent/engine", "--engine", "/nonexistent/engine", "--depth", "1"],
        ["--engine", "a", "--engine", "b"],
        ["--engine", "a", "--engine", "b", "--tc", "ten"],
        ["--engine", "a", "--engine", "b", "--depth", "x"],
        ["--engine", "a", "--engine", "b", "--depth", "1", "--sprt", "5", "0"],
        ["--engine", "a", "--engine", "b", "--depth", "1", "--openings", "/nonexistent.epd"],
        ["--engine", "a", "--engine", "b", "--depth", "1", "--alpha", "2", "--sprt", "0", "5"],
        ["--engine", "a", "--engine", "b", "--depth", "1", "--no-such-option"],
    ],
)
def test_bad_input_gives_one_line_error(args: list[str]) -> None:
    proc = subprocess.run(
        [*RUNNER, *args],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert proc.returncode == 1
    assert proc.stdout == ""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("cutoff-match: error:"), proc.stderr


def test_engine_option_errors_are_reported() -> None:
    code, _, err = run_match(
        "--engine", stub(), "--engine", stub() + " option.Hash=16", "--depth", "1"
    )
    assert code == 1
    assert "no option 'Hash'" in err


# --------------------------------------------------------------------------- real matches


def test_stub_match_pgn_and_counts(tmp_path: Path) -> None:
    pgn = tmp_path / "stub.pgn"
    code, summary, err = run_match(
        "--engine", stub(name="left"), "--engine", stub(name="right"),
        "--depth", "1", "--rounds", "3", "--concurrency", "2", "--maxmoves", "30",
        "--openings", str(OPENINGS), "--pgn", str(pgn),
    )  # fmt: skip
    assert code == 0, err
    assert summary["games"] == 6 and summary["pairs"] == 3
    games = check_match(summary, pgn)
    # Colours alternate within each pair and both games of a pair share the opening.
    by_round = {g.headers["Round"]: g for g in games}
    for pair in ("1", "2", "3"):
        one, two = by_round[f"{pair}.1"], by_round[f"{pair}.2"]
        assert one.headers["White"] == two.headers["Black"]
        assert one.headers["FEN"] == two.headers["FEN"]
    assert by_round["1.1"].headers["FEN"] == OPENINGS.read_text().splitlines()[0]
    assert summary["faults"] == {"left": {}, "right": {}}
    assert "[6/6]" in err  # the progress line


def test_progress_gives_the_elo_of_complete_pairs_only() -> None:
    """No running Elo before a whole pair is played, then how many pairs it is from.

    Before (issue 90.9): the first game's line read "Elo +0.0 +/- inf".
    """
    code, summary, err = run_match(
        "--engine", stub(name="left"), "--engine", stub(name="right"),
        "--depth", "1", "--rounds", "2", "--concurrency", "1", "--maxmoves", "20",
        "--openings", str(OPENINGS),
    )  # fmt: skip
    assert code == 0 and summary["pairs"] == 2, err
    lines = [line for line in err.splitlines() if line.startswith("[")]
    assert [line.split("]")[0] for line in lines] == ["[1/4", "[2/4", "[3/4", "[4/4"]
    assert "Elo" not in lines[0] and "inf" not in lines[0], lines[0]
    for line, pairs in zip(lines[1:], ("1 pair", "1 pair", "2 pairs")):
        assert f" after {pairs} | game " in line and " Elo " in line, line


@needs_stockfish
def test_stockfish_vs_stockfish(tmp_path: Path) -> None:
    pgn = tmp_path / "sf.pgn"
    code, summary, err = run_match(
        "--engine", f"cmd={STOCKFISH} name=sf-d1 depth=1",
        "--engine", f"cmd={STOCKFISH} name=sf-d2 option.Hash=16",
        "--depth", "2", "--rounds", "2", "--concurrency", "2",
        "--openings", str(OPENINGS), "--start", "10",
        "--draw", "30", "4", "10", "--resign", "3", "600", "--pgn", str(pgn),
    )  # fmt: skip
    assert code == 0, err
    assert summary["games"] == 4
    games = check_match(summary, pgn)
    assert summary["engines"][0]["limits"] == "depth 1"
    assert summary["engines"][1]["limits"] == "depth 2"
    assert all(sum(counts.values()) == 0 for counts in summary["faults"].values())
    assert games[0].headers["TimeControl"] == "-"
    lines = OPENINGS.read_text().splitlines()
    assert {g.headers["FEN"] for g in games} == {lines[9], lines[10]}


@needs_stockfish
def test_stockfish_time_control(tmp_path: Path) -> None:
    pgn = tmp_path / "tc.pgn"
    code, summary, err = run_match(
        "--engine", f"cmd={STOCKFISH} name=a", "--engine", f"cmd={STOCKFISH} name=b",
        "--tc", "40/1+0.01", "--rounds", "1", "--maxmoves", "25", "--pgn", str(pgn),
    )  # fmt: skip
    assert code == 0, err
    games = check_match(summary, pgn)
    assert games[0].headers["TimeControl"] == "40/1+0.01"
    assert summary["reasons"].get("time forfeit", 0) == 0


# --------------------------------------------------------------------------- faults


def test_illegal_move_is_detected(tmp_path: Path) -> None:
    pgn = tmp_path / "illegal.pgn"
    code, summary, err = run_match(
        "--engine", stub("illegal_move.py", "--after", "1", name="bad"),
        "--engine", stub(name="good"), "--depth", "1", "--rounds", "1", "--pgn", str(pgn),
    )  # fmt: skip
    assert code == 0, err
    games = check_match(summary, pgn)
    assert summary["faults"] == {"bad": {"illegal move": 2}, "good": {}}
    for game in games:
        assert game.headers["Termination"] == "rules infraction"
        assert game.headers["Reason"].startswith("illegal move ")
        assert game.headers["Reason"].endswith(" by bad")
        winner = "1-0" if game.headers["White"] == "good" else "0-1"
        assert game.headers["Result"] == winner
        # The bad engine made one legal move before its illegal one.
        colour = chess.WHITE if game.headers["White"] == "bad" else chess.BLACK
        assert game.end().board().turn == colour


def test_hang_is_detected_as_stall(tmp_path: Path) -> None:
    pgn = tmp_path / "hang.pgn"
    code, summary, err = run_match(
        "--engine", stub("hang.py", "--after", "1", name="hang"),
        "--engine", stub(name="good"), "--depth", "1", "--rounds", "1",
        "--stall-timeout", "1", "--pgn", str(pgn),
    )  # fmt: skip
    assert code == 0, err
    games = check_match(summary, pgn)
    assert summary["faults"] == {"hang": {"stall": 2}, "good": {}}
    assert all(g.headers["Termination"] == "stalled connection" for g in games)
    assert all(g.headers["Reason"].startswith("stall by hang") for g in games)


def test_exit_mid_game_stops_the_match_without_recover(tmp_path: Path) -> None:
    pgn = tmp_path / "exit.pgn"
    code, summary, err = run_match(
        "--engine", stub("exit_midgame.py", "--after", "2", name="quitter"),
        "--engine", stub(name="good"), "--depth", "1", "--rounds", "3", "--pgn", str(pgn),
    )  # fmt: skip
    assert code == 2, err
    games = check_match(summary, pgn)
    assert summary["games"] == 1 and summary["games_planned"] == 6
    assert summary["faults"]["quitter"] == {"crash": 1}
    assert summary["aborted"] and "--recover" in summary["stopped"]
    assert "exit code 3" in games[0].headers["Reason"]
    assert games[0].headers["Termination"] == "abandoned"


def test_exit_mid_game_with_recover_restarts(tmp_path: Path) -> None:
    pgn = tmp_path / "recover.pgn"
    code, summary, err = run_match(
        "--engine", stub("exit_midgame.py", "--after", "2", name="quitter"),
        "--engine", stub(name="good"), "--depth", "1", "--rounds", "2", "--recover",
        "--concurrency", "2", "--pgn", str(pgn),
    )  # fmt: skip
    assert code == 0, err
    check_match(summary, pgn)
    assert summary["games"] == 4
    assert summary["faults"] == {"quitter": {"crash": 4}, "good": {}}
    assert summary["engines"][1]["wins"] == 4


def test_slow_engine_loses_on_time(tmp_path: Path) -> None:
    pgn = tmp_path / "slow.pgn"
    code, summary, err = run_match(
        "--engine", stub("uci_stub.py", "--sleep", "0.3", name="slow"),
        "--engine", stub(name="fast"), "--movetime", "0.05", "--margin", "0.05",
        "--rounds", "1", "--pgn", str(pgn),
    )  # fmt: skip
    assert code == 0, err
    games = check_match(summary, pgn)
    assert summary["faults"] == {"slow": {"time forfeit": 2}, "fast": {}}
    assert all(g.headers["Termination"] == "time forfeit" for g in games)

    code, summary, err = run_match(
        "--engine", stub("uci_stub.py", "--sleep", "0.15", name="slow"),
        "--engine", stub(name="fast"), "--tc", "0.5+0", "--rounds", "1",
    )  # fmt: skip
    assert code == 0, err
    assert summary["faults"]["slow"] == {"time forfeit": 2}


def test_resign_adjudication_and_sprt_stop(tmp_path: Path) -> None:
    # The first engine always claims +5 pawns, the second -5: the second resigns every
    # game, so the first wins every pair and the SPRT must accept H1 early.
    pgn = tmp_path / "sprt.pgn"
    code, summary, err = run_match(
        "--engine", stub("uci_stub.py", "--score", "500", name="strong"),
        "--engine", stub("uci_stub.py", "--score", "-500", name="weak"),
        "--depth", "1", "--resign", "2", "400", "--rounds", "50", "--concurrency", "2",
        "--sprt", "0", "200", "--alpha", "0.1", "--beta", "0.1",
        "--openings", str(OPENINGS), "--pgn", str(pgn),
    )  # fmt: skip
    assert code == 0, err
    check_match(summary, pgn)
    sprt = summary["sprt"]
    assert sprt["result"] == "H1 accepted"
    assert sprt["llr"] >= sprt["upper"]
    assert summary["stopped"] == "SPRT: H1 accepted" and not summary["aborted"]
    assert summary["games"] % 2 == 0 and summary["games"] < 30
    assert summary["pentanomial"] == [0, 0, 0, 0, summary["pairs"]]
    assert summary["reasons"] == {"adjudication: Black resigns": summary["games"] // 2,
                                  "adjudication: White resigns": summary["games"] // 2}  # fmt: skip


def test_the_summary_names_the_openings_played(tmp_path: Path) -> None:
    """Two matches met the same openings exactly when their summaries say so."""
    epd = OPENINGS
    runs: dict[Path, list[int]] = {}
    for seed in ("3", "3", "4"):
        pgn = tmp_path / f"seed{seed}-{len(runs)}.pgn"
        status, summary, stderr = run_match(
            "--engine", stub(), "--engine", stub(), "--depth", "1", "--rounds", "3",
            "--maxmoves", "4", "--openings", str(epd), "--order", "random", "--seed", seed,
            "--pgn", str(pgn),
        )  # fmt: skip
        assert status == 0, stderr
        runs[pgn] = summary["opening_numbers"]
    first, again, other = runs.values()
    assert first == again and len(first) == 3 and first != other
    openings = load_openings(str(epd))
    played = {game.headers["Round"]: game.headers["FEN"] for game in read_pgn(next(iter(runs)))}
    assert played["1.1"] == played["1.2"] == openings[first[0] - 1].root_fen
    assert played["2.1"] == openings[first[1] - 1].root_fen
    status, summary, stderr = run_match("--engine", stub(), "--engine", stub(), "--depth", "1",
                                        "--games", "1", "--maxmoves", "2")  # fmt: skip
    assert status == 0 and summary["opening_numbers"] is None  # the start position


def test_sprt_script_runs_the_preset(tmp_path: Path) -> None:
    pgn = tmp_path / "preset.pgn"
    # A relative SPRT_PGN is where the caller is, though the runner starts from the root.
    env = dict(os.environ, PYTHON=sys.executable, SPRT_PGN=pgn.name)
    proc = subprocess.run(
        ["sh", str(MATCHES / "sprt.sh"), stub(name="cand"), stub(name="base"),
         "--rounds", "1", "--concurrency", "1", "--maxmoves", "10", "--json", "-"],
        capture_output=True, text=True, timeout=120, cwd=tmp_path, env=env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout)
    check_match(summary, pgn)
    assert summary["openings"].endswith("noob3_500.epd")
    assert summary["engines"][0]["limits"] == "tc 10+0.1"
    sprt = summary["sprt"]
    assert (sprt["elo0"], sprt["elo1"], sprt["alpha"], sprt["beta"]) == (0, 10, 0.05, 0.05)
    assert read_pgn(pgn)[0].headers["TimeControl"] == "10+0.1"


# --------------------------------------------------------------------------- Cutoff

_CUTOFF_STATE: dict[str, Optional[str]] = {}


def cutoff_problem() -> Optional[str]:
    """Why ``python -m engine`` cannot play yet (None when it answers uci and isready)."""
    if "problem" not in _CUTOFF_STATE:
        problem: Optional[str] = None
        try:
            # One command at a time, waiting for each answer, as match.py talks to it.
            engine = chess.engine.SimpleEngine.popen_uci(
                [sys.executable, "-m", "engine"], timeout=30, cwd=ROOT, stderr=subprocess.DEVNULL
            )
            try:
                engine.ping()
            finally:
                engine.quit()
        except (OSError, chess.engine.EngineError, TimeoutError) as err:
            problem = f"{type(err).__name__}: {err}"
        _CUTOFF_STATE["problem"] = problem
    return _CUTOFF_STATE["problem"]


def cutoff_spec(name: str) -> str:
    return f"cmd='{sys.executable} -m engine' dir={ROOT} name={name}"


@pytest.fixture
def cutoff() -> None:
    problem = cutoff_problem()
    if problem is not None:
        pytest.skip(f"Cutoff (python -m engine) cannot start yet: {problem}")


@pytest.mark.usefixtures("cutoff")
def test_cutoff_vs_cutoff(tmp_path: Path) -> None:
    pgn = tmp_path / "cutoff.pgn"
    code, summary, err = run_match(
        "--engine", cutoff_spec("cutoff-a"), "--engine", cutoff_spec("cutoff-b"),
        "--depth", "2", "--rounds", "2", "--concurrency", "2", "--maxmoves", "30",
        "--openings", str(OPENINGS), "--pgn", str(pgn),
    )  # fmt: skip
    assert code == 0, err
    assert summary["games"] == 4
    check_match(summary, pgn)
    assert summary["faults"] == {"cutoff-a": {}, "cutoff-b": {}}
    # One build at a fixed depth chooses alike with either colour: every pair is
    # two identical games, which the summary must count (such pairs measure nothing).
    assert summary["pairs_identical"] == 2
    assert "pairs of identical games: 2" in err


@needs_stockfish
@pytest.mark.usefixtures("cutoff")
def test_cutoff_vs_stockfish(tmp_path: Path) -> None:
    pgn = tmp_path / "cutoff-sf.pgn"
    code, summary, err = run_match(
        "--engine", cutoff_spec("cutoff"), "--engine", f"cmd={STOCKFISH} name=sf depth=1",
        "--depth", "2", "--rounds", "1", "--maxmoves", "60",
        "--openings", str(OPENINGS), "--start", "100", "--pgn", str(pgn),
    )  # fmt: skip
    assert code == 0, err
    assert summary["games"] == 2
    check_match(summary, pgn)
    assert summary["faults"] == {"cutoff": {}, "sf": {}}


# --------------------------------------------------------------------------- interruption


def interrupted_match(
    signum: int, wait_for: str, wait_file: Path, *args: str
) -> tuple[subprocess.CompletedProcess[str], float]:
    """Run match.py, send ``signum`` once ``wait_for`` is on its stderr and ``wait_file``
    exists, let it finish.

    Returns the finished process (stdout: the JSON summary) and the seconds it took
    to exit after the signal.
    """
    proc = subprocess.Popen(
        [*RUNNER, "--json", "-", *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        seen = []
        for line in proc.stderr:
            seen.append(line)
            if wait_for in line:
                break
        else:
            raise AssertionError(f"match.py ended before {wait_for!r}: {''.join(seen)}")
        deadline = time.monotonic() + 10
        while not wait_file.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert wait_file.exists(), f"{wait_file} never appeared"
        proc.send_signal(signum)
        sent = time.monotonic()
        out, err = proc.communicate(timeout=30)
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    done = subprocess.CompletedProcess(proc.args, proc.returncode, out, "".join(seen) + err)
    return done, took


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGTERM, 143), (signal.SIGINT, 130)])
def test_signal_ends_engines_and_prints_the_summary(
    tmp_path: Path, signum: int, status: int
) -> None:
    # "thinker" plays 5 moves in each of the first two games (--maxmoves 5), then
    # thinks for an hour on its 11th move without reading stdin, like a long search:
    # before the fix, SIGTERM left it running, orphaned, and printed no summary.
    pgn = tmp_path / "stopped.pgn"
    pids = tmp_path / "engines.pid"
    thinking = tmp_path / "thinking"
    done, took = interrupted_match(
        signum,
        "[2/6]",
        thinking,
        "--engine", stub("uci_stub.py", "--fault", "think", "--after", "10",
                         "--pid-file", str(pids), "--think-file", str(thinking),
                         name="thinker"),
        "--engine", stub("uci_stub.py", "--pid-file", str(pids), name="quick"),
        "--depth", "1", "--rounds", "3", "--maxmoves", "5", "--pgn", str(pgn),
    )  # fmt: skip
    engine_pids = [int(pid) for pid in pids.read_text().split()]
    assert len(engine_pids) == 2
    assert still_running(engine_pids) == []
    assert done.returncode == status, done.stderr
    assert "Traceback" not in done.stderr
    summary = json.loads(done.stdout)
    assert summary["games"] == 2 and summary["games_planned"] == 6
    name = signal.Signals(signum).name
    assert summary["interrupted"] == name and not summary["aborted"]
    assert summary["stopped"] == f"interrupted by {name} (1 unfinished game not counted)"
    assert f"Stopped: interrupted by {name}" in done.stderr  # the text summary
    check_match(summary, pgn)
    # quit, then a kill after engines.INTERRUPT_QUIT_TIMEOUT_S: not the usual 5 s.
    assert took < QUIT_TIMEOUT_S


@pytest.mark.usefixtures("cutoff")
def test_sigterm_ends_cutoff_in_a_long_search(tmp_path: Path) -> None:
    # The case: Cutoff searching to depth 40 when the runner gets SIGTERM.
    proc = subprocess.Popen(
        [*RUNNER, "--json", "-", "--rounds", "1",
         "--engine", cutoff_spec("cutoff") + " depth=40",
         "--engine", stub(name="quick"), "--depth", "1"],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    engines: list[int] = []
    try:
        deadline = time.monotonic() + 20
        while len(engines) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
            engines = child_pids(proc.pid)
        assert len(engines) == 2 and proc.poll() is None
        time.sleep(1.5)  # into Cutoff's first search (it has White)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
        left = still_running(engines)
    assert left == []
    assert proc.returncode == 143, err
    assert "Traceback" not in err
    summary = json.loads(out)
    assert summary["games"] == 0 and summary["interrupted"] == "SIGTERM"
