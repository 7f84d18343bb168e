"""``cutoff analyse`` and ``cutoff annotate`` through the real command.

Every input form (FEN words, quoted FEN, startpos/FEN with moves, EPD with its
operations, PGN with a move range, stdin as lines and as PGN) and every output
form (table, JSON Lines, CSV), ``--jobs``, ``--resume`` after a killed run,
Ctrl-C, bad input, the progress bar on a terminal, and annotated games checked
against the API.
"""

from __future__ import annotations

import csv
import fcntl
import io
import json
import os
import pty
import select
import signal
import struct
import subprocess
import termios
import time
from pathlib import Path
from typing import Optional

import chess
import chess.engine
import chess.pgn
import pytest
from uci_harness import REPO, engine_command

from engine.analysis.annotate import move_axis
from engine.analysis.api import Analyser, GamePosition
from tests.conftest import default_sigint, named_children, process_gone, two_cpus

OPERA = REPO / "tests" / "data" / "opera.pgn"
KIWIPETE = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"
EPD = """\
1k1r4/pp1b1R2/3q2pp/4p3/2B5/4Q3/PPP2B2/2K5 b - - bm Qd1+; id "BK.01";
3r1k2/4npp1/1ppr3p/p6P/P2PPPP1/1NR5/5K2/2R5 w - - bm d5; id "BK.02";
2q1rr1k/3bbnnp/p2p1pp1/2pPp3/PpP1P1P1/1P2BNNP/2BQ1PRK/7R b - - bm f5; id "BK.03";
rnbqkb1r/p3pppp/1p6/2ppP3/3N4/2P5/PPP1QPPP/R1B1KB1R w KQkq - bm e6; id "BK.04";
r1b2rk1/2q1b1pp/p2ppn2/1p6/3QP3/1BN1B3/PPP3PP/R4RK1 w - - bm Nd5 a4; id "BK.05";
2q1r1k1/1ppb4/r2p1Pp1/p4n1p/2P1n3/5NPP/PP3Q1K/2BRRB2 w - - bm g4; id "BK.06";
"""


def run(
    tmp_path: Path, *args: str, stdin: Optional[str] = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*engine_command(), *args],
        cwd=str(tmp_path),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )


def records(text: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in text.splitlines()]


def stable(record: dict[str, object]) -> dict[str, object]:
    """A record without the wall-clock fields."""
    return {key: value for key, value in record.items() if key not in ("time", "nps")}


def test_every_input_form(tmp_path: Path) -> None:
    epd = tmp_path / "suite.epd"
    epd.write_text(EPD + "\n# a comment\n")
    done = run(
        tmp_path, "analyse", "--depth", "2", "--json",
        *KIWIPETE.split(),                      # a FEN as its six words
        "8/8/3k4/8/8/3K4/2R5/8 w - - 0 1",      # a FEN as one word
        "startpos", "moves", "e2e4", "e7e5",    # startpos and moves
        f"fen {KIWIPETE} moves e1g1",           # fen ... moves as one word
        str(epd),                               # an EPD file
        str(OPERA), "--moves", "16-",           # a PGN file, moves 16 on
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = records(done.stdout)
    assert [r["index"] for r in out] == list(range(1, len(out) + 1))
    assert out[0]["fen"] == KIWIPETE and out[1]["fen"] == "8/8/3k4/8/8/3K4/2R5/8 w - - 0 1"
    assert out[2]["moves"] == ["e2e4", "e7e5"] and out[3]["moves"] == ["e1g1"]
    # fen: the position analysed; start_fen and moves: how it was reached.
    assert str(out[2]["fen"]).startswith("rnbqkbnr/pppp1ppp/8/4p3/4P3/8")
    assert out[2]["start_fen"] == chess.STARTING_FEN and out[3]["start_fen"] == KIWIPETE
    epd_records = out[4:10]
    assert [r["id"] for r in epd_records] == [f"BK.0{i}" for i in range(1, 7)]
    assert epd_records[0]["ops"] == {"bm": "Qd1+", "id": "BK.01"}
    assert epd_records[0]["source"] == "suite.epd:1"
    pgn_records = out[10:]
    assert [r["source"] for r in pgn_records] == [
        f"opera.pgn: game 1, ply {ply}" for ply in (30, 31, 32, 33)
    ]
    for record in out:
        board = chess.Board(str(record["fen"]))
        if "moves" in record:
            reached = chess.Board(str(record["start_fen"]))
            for move in record["moves"]:  # type: ignore[attr-defined]
                reached.push_uci(move)
            assert reached.fen() == board.fen()
        if board.is_checkmate():  # the game's final position
            assert record["bestmove"] is None and record["score"] == {"mate": 0}
            continue
        assert chess.Move.from_uci(str(record["bestmove"])) in board.legal_moves
        assert record["score_white"] == record["score"] or board.turn == chess.BLACK

    # stdin, as lines and as PGN
    done = run(tmp_path, "analyse", "-", "--depth", "2", "--json", stdin=EPD)
    assert done.returncode == 0 and len(records(done.stdout)) == 6
    done = run(tmp_path, "analyse", "-", "--depth", "1", "--json", stdin=OPERA.read_text())
    assert done.returncode == 0 and len(records(done.stdout)) == 34


def test_output_forms_and_scores_from_both_sides(tmp_path: Path) -> None:
    black_to_move = "1k1r4/pp1b1R2/3q2pp/4p3/2B5/4Q3/PPP2B2/2K5 b - - 0 1"
    done = run(tmp_path, "analyse", black_to_move, "--depth", "3", "--json", "--multipv", "2")
    (record,) = records(done.stdout)
    assert record["score_white"] != record["score"]
    score = record["score"]
    assert isinstance(score, dict) and record["score_white"] == {k: -v for k, v in score.items()}
    assert len(record["lines"]) == 2  # type: ignore[arg-type]

    done = run(tmp_path, "analyse", black_to_move, "--depth", "3", "--csv", "--multipv", "2")
    rows = list(csv.DictReader(io.StringIO(done.stdout)))
    assert [row["multipv"] for row in rows] == ["1", "2"]
    assert rows[0]["bestmove"] == record["bestmove"]
    assert rows[0]["score_cp"] == str(score.get("cp", "")) or rows[0]["score_mate"]
    # The win/draw/loss of every line, as in JSON (side to move's view, per mille).
    wdl = [[int(row[f"wdl_{part}"]) for part in ("win", "draw", "loss")] for row in rows]
    assert wdl == [line["wdl"] for line in record["lines"]]  # type: ignore[attr-defined]

    (single,) = records(run(tmp_path, "analyse", black_to_move, "--depth", "3", "--json").stdout)
    done = run(tmp_path, "analyse", black_to_move, "--depth", "3")
    header, row = done.stdout.splitlines()
    assert header.split()[:5] == ["#", "position", "depth", "score", "best"]
    assert f" {single['bestmove_san']} " in row and "1..." in row


def test_jobs_give_the_same_results(tmp_path: Path) -> None:
    epd = tmp_path / "suite.epd"
    epd.write_text(EPD)
    one = run(tmp_path, "analyse", str(epd), "--depth", "4", "--json", "--jobs", "1")
    two = run(tmp_path, "analyse", str(epd), "--depth", "4", "--json", "--jobs", "2")
    assert one.returncode == two.returncode == 0, two.stderr
    assert [stable(r) for r in records(one.stdout)] == [stable(r) for r in records(two.stdout)]


def _wait_for_lines(path: Path, count: int, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().count("\n") >= count:
            return
        time.sleep(0.05)
    raise AssertionError(f"{path} never reached {count} lines")


@pytest.mark.parametrize("form", ["json", "csv"])
def test_resume_after_a_killed_run(tmp_path: Path, form: str) -> None:
    epd = tmp_path / "suite.epd"
    epd.write_text(EPD)
    out = tmp_path / f"out.{form}"
    args = ["analyse", str(epd), "--depth", "5", f"--{form}", "-o", str(out)]
    process = subprocess.Popen(
        [*engine_command(), *args], cwd=str(tmp_path), env={**os.environ, "PYTHONPATH": str(REPO)}
    )
    _wait_for_lines(out, 2 if form == "json" else 3)
    process.kill()
    process.wait()
    with out.open("a") as handle:
        handle.write('{"index": 9, "fen": "cut sh' if form == "json" else "9,cut sh")
    done = run(tmp_path, *args, "--resume")
    assert done.returncode == 0, done.stderr
    full = run(tmp_path, "analyse", str(epd), "--depth", "5", f"--{form}")
    if form == "json":
        resumed = sorted((stable(r) for r in records(out.read_text())), key=lambda r: r["index"])  # type: ignore[arg-type,return-value]
        assert resumed == [stable(r) for r in records(full.stdout)]
    else:
        rows = list(csv.DictReader(out.open()))
        reference = list(csv.DictReader(io.StringIO(full.stdout)))
        assert sorted(int(r["index"]) for r in rows) == list(range(1, 7))
        key = ("index", "fen", "depth", "bestmove", "pv")
        assert sorted(tuple(r[k] for k in key) for r in rows) == sorted(
            tuple(r[k] for k in key) for r in reference
        )
    # A different input is refused instead of mixing two runs in one file.
    other = tmp_path / "other.epd"
    other.write_text(EPD.splitlines()[1] + "\n")
    done = run(tmp_path, "analyse", str(other), f"--{form}", "-o", str(out), "--resume")
    assert done.returncode == 2 and "input changed" in done.stderr


def _one_line(done: subprocess.CompletedProcess[str], *words: str) -> str:
    """The one line a refused run wrote on stderr (exit status 2), with ``words`` in it."""
    assert done.returncode == 2, done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith("cutoff analyse: ") and all(word in line for word in words), line
    return line


@pytest.mark.parametrize(
    ("name", "content", "args"),
    [
        # Another form of our own output: JSON Lines resumed as CSV, and back.
        ("keep.jsonl", "JSON", ("--csv", "--resume")),
        ("keep.csv", "CSV", ("--json", "--resume")),
        # Another program's files, with and without an end of line, resumed or not.
        ("notes.txt", "my notes\nsecond line\n", ("--json", "--resume")),
        ("notes.txt", "my notes", ("--json", "--resume")),
        ("notes.txt", "my notes\n", ("--csv", "--resume")),
        ("notes.txt", "index,source,fen\n1,x,y\n", ("--csv", "--resume")),
        ("notes.txt", "my notes\n", ("--json",)),
        ("notes.txt", "my notes\n", ("--csv",)),
    ],
)
def test_output_that_is_not_ours_is_never_written(
    tmp_path: Path, name: str, content: str, args: tuple[str, ...]
) -> None:
    epd = tmp_path / "suite.epd"
    epd.write_text(EPD)
    out = tmp_path / name
    if content in ("JSON", "CSV"):
        made = run(
            tmp_path, "analyse", str(epd), "--depth", "3", f"--{content.lower()}", "-o", name
        )
        assert made.returncode == 0, made.stderr
    else:
        out.write_text(content)
    before = out.read_bytes()
    done = run(tmp_path, "analyse", str(epd), "--depth", "2", "-o", name, *args)
    _one_line(done, name)
    if content in ("JSON", "CSV"):
        assert f"resume with --{content.lower()}" in done.stderr
    assert out.read_bytes() == before


@pytest.mark.parametrize("form", ["json", "csv"])
def test_resume_refuses_rows_of_other_settings(tmp_path: Path, form: str) -> None:
    epd = tmp_path / "suite.epd"
    epd.write_text(EPD)
    first = tmp_path / "first.epd"
    first.write_text("".join(EPD.splitlines(keepends=True)[:2]))
    out = tmp_path / f"out.{form}"
    made = run(tmp_path, "analyse", str(first), "--depth", "3", f"--{form}", "-o", out.name)
    assert made.returncode == 0, made.stderr
    before = out.read_bytes()
    for other, said in [
        (("--depth", "2"), ("--depth 3", "--depth 2")),
        ((), ("--depth 3", "--depth 8")),  # the default depth
        (("--depth", "3", "--no-nnue"), ("--nnue", "--no-nnue")),
        (("--depth", "3", "--multipv", "2"), ("--multipv 1", "--multipv 2")),
        (("--depth", "3", "--nodes", "500"), ("no --nodes", "--nodes 500")),
    ]:
        done = run(tmp_path, "analyse", str(epd), *other, f"--{form}", "-o", out.name, "--resume")
        _one_line(done, f"{out.name}:", *said, "--resume-any-settings")
        assert out.read_bytes() == before
    # The same settings add the rest; each row says what analysed it.
    done = run(
        tmp_path, "analyse", str(epd), "--depth", "3", f"--{form}", "-o", out.name, "--resume"
    )
    assert done.returncode == 0, done.stderr
    # Asked for, rows of other settings are added, and say so.
    more = tmp_path / "more.epd"
    more.write_text(EPD + KIWIPETE + "\n")
    done = run(
        tmp_path, "analyse", str(more), "--depth", "2", "--no-nnue", f"--{form}", "-o", out.name,
        "--resume", "--resume-any-settings",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    if form == "json":
        rows = [(r["index"], r["settings"]) for r in records(out.read_text())]
        depths = [(index, s["depth"], s["evaluation"]) for index, s in rows]  # type: ignore[index]
        network = [s["network_sha256"] for _, s in rows]  # type: ignore[index]
    else:
        table = list(csv.DictReader(out.open(newline="")))
        depths = [
            (int(r["index"]), int(r["settings_depth"]), r["settings_evaluation"]) for r in table
        ]
        network = [r["settings_network_sha256"] or None for r in table]
    assert depths == [(i, 3, "network") for i in range(1, 7)] + [(7, 2, "hand-written")]
    assert len(network[0] or "") == 16 and len(set(network[:6])) == 1 and network[6] is None


@pytest.mark.parametrize("form", ["json", "csv"])
def test_resume_with_nothing_left_says_so(tmp_path: Path, form: str) -> None:
    epd = tmp_path / "suite.epd"
    epd.write_text(EPD)
    args = ["analyse", str(epd), "--depth", "2", f"--{form}", "-o", f"out.{form}"]
    assert run(tmp_path, *args).returncode == 0
    before = (tmp_path / f"out.{form}").read_bytes()
    done = run(tmp_path, *args, "--resume")
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines() == [
        f"cutoff analyse: all 6 positions are already in out.{form}; nothing to do"
    ]
    assert (tmp_path / f"out.{form}").read_bytes() == before


def test_resume_refuses_rows_that_record_no_settings(tmp_path: Path) -> None:
    """A file of an older cutoff analyse: its settings are unknown, so not assumed."""
    out = tmp_path / "old.jsonl"
    out.write_text(
        json.dumps({"index": 1, "source": "argument 1", "fen": chess.STARTING_FEN}) + "\n"
    )
    done = run(
        tmp_path, "analyse", "startpos", "--depth", "2", "--json", "-o", out.name, "--resume"
    )
    _one_line(done, "old.jsonl:1:", "do not record their settings")
    done = run(
        tmp_path, "analyse", "startpos", KIWIPETE, "--depth", "2", "--json", "-o", out.name,
        "--resume", "--resume-any-settings",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert [r["index"] for r in records(out.read_text())] == [1, 2]


def test_ctrl_c_leaves_a_valid_file(tmp_path: Path) -> None:
    epd = tmp_path / "suite.epd"
    epd.write_text(EPD * 3)
    out = tmp_path / "out.jsonl"
    process = subprocess.Popen(
        [*engine_command(), "analyse", str(epd), "--depth", "6", "--json", "-o", str(out)],
        cwd=str(tmp_path),
        env={**os.environ, "PYTHONPATH": str(REPO)},
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=default_sigint,
    )
    _wait_for_lines(out, 1)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=30)
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr
    lines = out.read_text().splitlines()
    assert lines and all(json.loads(line)["index"] for line in lines)


def test_bad_input_is_reported_and_the_rest_goes_on(tmp_path: Path) -> None:
    lines = tmp_path / "mixed.epd"
    lines.write_bytes(
        EPD.splitlines()[0].encode() + b"\n"
        + b"not a fen at all\n"
        + b"8/8/8/8/8/8/8/8 w - - 0 1\n"
        + b"\xff\xfe broken bytes\n"
        + EPD.splitlines()[1].encode() + b"\n"
    )  # fmt: skip
    games = tmp_path / "games.pgn"
    games.write_text(OPERA.read_text() + '\n[Event "broken"]\n\n1. e4 e5 2. Qxe8 *\n')
    done = run(tmp_path, "analyse", str(lines), str(games), "missing.epd", "--depth", "1", "--json")
    assert done.returncode == 1
    errors = done.stderr.splitlines()
    assert any(e.startswith("cutoff analyse: mixed.epd:2: ") for e in errors), errors
    assert any(e.startswith("cutoff analyse: mixed.epd:3: impossible") for e in errors)
    assert any(e.startswith("cutoff analyse: mixed.epd:4: ") for e in errors)
    assert any("games.pgn: game 2" in e for e in errors)
    assert any("missing.epd" in e for e in errors)
    assert "Traceback" not in done.stderr
    out = records(done.stdout)
    # Every line keeps its place: the bad ones are written with the reason (67.4).
    assert [r["source"] for r in out[:5]] == [f"mixed.epd:{n}" for n in range(1, 6)]
    assert [r["index"] for r in out] == list(range(1, len(out) + 1))
    assert ["error" in r for r in out[:5]] == [False, True, True, True, False]
    assert (
        str(out[2]["error"]).startswith("impossible")
        and out[2]["fen"] == "8/8/8/8/8/8/8/8 w - - 0 1"
    )
    assert len(out) == 5 + 34 + 3  # and game 2's positions before its illegal move


def _run_on_a_terminal(tmp_path: Path, *args: str) -> str:
    """Run with stderr on a pseudo-terminal; what it wrote there."""
    leader, follower = pty.openpty()
    # A real terminal has a size; a fresh pseudo-terminal says 0 columns.
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    process = subprocess.Popen(
        [*engine_command(), *args],
        cwd=str(tmp_path),
        stdout=subprocess.DEVNULL,
        stderr=follower,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    os.close(follower)
    chunks = []
    while True:
        ready, _, _ = select.select([leader], [], [], 60)
        if not ready:
            break
        try:
            data = os.read(leader, 4096)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    process.wait(60)
    os.close(leader)
    return b"".join(chunks).decode(errors="replace")


def test_progress_bar_only_on_a_terminal(tmp_path: Path) -> None:
    epd = tmp_path / "suite.epd"
    epd.write_text(EPD)
    shown = _run_on_a_terminal(tmp_path, "analyse", str(epd), "--depth", "1")
    assert "6/6" in shown and "pos/s" in shown
    assert _run_on_a_terminal(tmp_path, "analyse", str(epd), "--depth", "1", "--quiet") == ""
    piped = run(tmp_path, "analyse", str(epd), "--depth", "1")
    assert piped.stderr == ""


def test_annotate_matches_the_api(tmp_path: Path) -> None:
    out = tmp_path / "annotated.pgn"
    done = run(tmp_path, "annotate", str(OPERA), "--depth", "4", "-o", str(out), "--quiet")
    assert done.returncode == 0, done.stderr
    with out.open() as handle:
        annotated = chess.pgn.read_game(handle)
    with OPERA.open() as handle:
        original = chess.pgn.read_game(handle)
    assert annotated is not None and original is not None
    assert list(annotated.mainline_moves()) == list(original.mainline_moves())
    assert "White: " in annotated.comment and "average centipawn loss" in annotated.comment
    with Analyser() as analyser:
        positions = analyser.analyse_game(original, chess.engine.Limit(depth=4))
    checked = 0
    for node, after in zip(annotated.mainline(), positions[1:]):
        score = node.eval()
        if score is None:  # the mating move: python-chess writes no [%eval #0]
            assert after.board.is_checkmate()
            continue
        expected = after.info["score"].white()
        if expected.is_mate():
            assert score.white() == expected
        else:
            assert score.white().score() == expected.score()
        checked += 1
    assert checked == len(positions) - 2
    judged = [node for node in annotated.mainline() if node.nags]
    for node in judged:
        assert node.parent is not None and len(node.parent.variations) == 2  # the better line
        assert node.comment.split(".")[0] in ("Inaccuracy", "Mistake", "Blunder")


def test_annotate_keeps_the_moves_before_an_illegal_one(tmp_path: Path) -> None:
    """A game with an illegal move is annotated up to it, as ``cutoff analyse`` reads it,
    with a comment where it stops; a bad FEN header still skips its game; both are one
    line on stderr and exit status 1, as for ``cutoff analyse`` on the same file.

    Before (issue 90.7): the game with 3. Ke3 was dropped ("... game skipped").
    """
    games = tmp_path / "mixed.pgn"
    games.write_text(
        '[Event "bad FEN"]\n[SetUp "1"]\n[FEN "not a fen"]\n\n1. e4 *\n\n'
        '[Event "illegal"]\n\n1. e4 e5 2. Nf3 Nc6 3. Ke3 Nf6 1-0\n\n'
        '[Event "good"]\n\n1. e4 e5 2. Nf3 *\n'
    )
    done = run(tmp_path, "annotate", str(games), "--depth", "1", "--quiet")
    analysed = run(tmp_path, "analyse", str(games), "--depth", "1", "--json")
    assert done.returncode == analysed.returncode == 1
    # One line per broken game, and nothing else (python-chess logs none of its own).
    first, second = done.stderr.splitlines()
    assert first == (
        f"cutoff annotate: {games}: game 1: bad FEN header: "
        "expected 'w' or 'b' for turn part of fen: 'not a fen'; game skipped"
    )
    assert second.startswith(f"cutoff annotate: {games}: game 2: after ply 4: illegal san: 'Ke3'")
    out = io.StringIO(done.stdout)
    cut = chess.pgn.read_game(out)
    assert cut is not None and cut.headers["Event"] == "illegal"
    kept = list(cut.mainline())
    assert [node.san() for node in kept] == ["e4", "e5", "Nf3", "Nc6"]
    assert all(node.eval() is not None for node in kept)
    assert kept[-1].comment.endswith("Cutoff: the game stops here: illegal move Ke3 in the source")
    assert "stops here" not in "".join(node.comment for node in kept[:-1])
    annotated = chess.pgn.read_game(out)
    assert annotated is not None and annotated.headers["Event"] == "good"
    assert [node.eval() is not None for node in annotated.mainline()] == [True] * 3
    assert "stops here" not in str(annotated)
    assert chess.pgn.read_game(out) is None


RUNAWAY = (
    '[Event "one"]\n\n1. e4 e5 *\n\n'
    "{unclosed comment, in the junk between two games\n\n"
    '[Event "two"]\n[White "w"]\n\n1. d4 d5 2. c4 e6 3. Nc3 Nf6 *\n\n'
    '[Event "three"]\n\n1. e4 {never closed c5 2. Nf3 *\n'
)


@pytest.mark.parametrize("command", ["analyse", "annotate"])
def test_an_unclosed_comment_does_not_swallow_the_games_after_it(
    tmp_path: Path, command: str
) -> None:
    """The line of a ``{`` never closed is reported, and the game after it is read from
    its tags. Before (issue 103.7): "game 2: not a PGN game ... skipped", and the real
    second game was never analysed nor mentioned."""
    games = tmp_path / "runaway.pgn"
    games.write_text(RUNAWAY)
    form = ["--json"] if command == "analyse" else []
    done = run(tmp_path, command, str(games), "--depth", "1", "--quiet", *form, "-o", "out")
    assert done.returncode == 1
    name = "runaway.pgn" if command == "analyse" else games  # as each names a file
    assert done.stderr.splitlines() == [
        f"cutoff {command}: {name}:5: a comment opened here with '{{' is not closed "
        "before the tags at line 7; it is taken to end there",
        f"cutoff {command}: {name}: game 2: not a PGN game (no tag pairs and no moves); skipped",
        f"cutoff {command}: {name}:14: a comment opened here with '{{' is never closed",
    ]
    output = (tmp_path / "out").read_text()
    if command == "annotate":
        annotated = io.StringIO(output)
        read = []
        while (game := chess.pgn.read_game(annotated)) is not None:
            read.append((game.headers["Event"], len(list(game.mainline_moves()))))
        assert read == [("one", 2), ("two", 6), ("three", 1)]
    else:
        sources = [str(record["source"]) for record in records(output)]
        assert [source.split(", ply")[0] for source in sources] == (
            ["runaway.pgn: game 1"] * 3 + ["runaway.pgn: game 3"] * 7 + ["runaway.pgn: game 4"] * 2
        )


def test_annotate_plot_and_bad_files(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    png = tmp_path / "eval.png"
    done = run(tmp_path, "annotate", str(OPERA), "--depth", "2", "--plot", str(png), "--quiet")
    assert done.returncode == 0, done.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    done = run(tmp_path, "annotate", "missing.pgn")
    assert done.returncode == 2 and done.stderr.count("\n") == 1


def _positions(pgn: str) -> list[GamePosition]:
    """A game's positions as ``Analyser.iter_game`` lists them, without searching."""
    game = chess.pgn.read_game(io.StringIO(pgn))
    assert game is not None
    board, positions = game.board(), []
    for ply, move in enumerate([*game.mainline_moves(), None]):
        positions.append(GamePosition(ply, board.copy(), move, {}))
        if move is not None:
            board.push(move)
    return positions


def test_evaluation_graph_puts_move_n_at_n(tmp_path: Path) -> None:
    """White's move N is drawn at N, Black's at N + 1/2, also from a FEN with Black to
    move; and ``cutoff annotate --plot`` draws such a game.

    Before (issue 90.8): the points sat at ply / 2, so 4. Nxe5 was drawn at 3.5.
    """
    italian = move_axis(_positions("1. e4 e5 2. Nf3 Nc6 3. Bc4 Nd4 4. Nxe5 *"))
    assert italian == [0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4]  # the start, then after each move
    fen = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R b KQkq - 3 12"
    from_fen = f'[SetUp "1"]\n[FEN "{fen}"]\n\n12... Nf6 13. Nc3 Bb4 *'
    assert move_axis(_positions(from_fen)) == [12, 12.5, 13, 13.5]
    pytest.importorskip("matplotlib")
    game, png = tmp_path / "black.pgn", tmp_path / "black.png"
    game.write_text(from_fen + "\n")
    done = run(tmp_path, "annotate", str(game), "--depth", "1", "--plot", str(png), "--quiet")
    assert done.returncode == 0, done.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_json_reports_the_whole_search(tmp_path: Path) -> None:
    """``nodes`` and ``time`` are the search's, not its last completed depth's.

    Before: ``--nodes 20000`` wrote 11,121 nodes (depth 8's) from the start position.
    """
    done = run(tmp_path, "analyse", "startpos", "--nodes", "20000", "--json", "--no-nnue")
    assert done.returncode == 0, done.stderr
    (record,) = records(done.stdout)
    assert 20000 <= int(record["nodes"]) <= 20000 + 512  # type: ignore[call-overload]
    assert record["depth"] == 8 and record["pv"][:2] == ["d2d4", "d7d5"]  # type: ignore[index]


@two_cpus
def test_threads_search_each_position_with_helpers(tmp_path: Path) -> None:
    """``--threads 2``: a helper process searches beside this one and ends with it."""
    process = subprocess.Popen(
        [*engine_command(), "analyse", KIWIPETE, "--depth", "7", "--threads", "2", "--json"],
        cwd=str(tmp_path),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    helpers: set[int] = set()
    while process.poll() is None:
        helpers.update(named_children(process.pid))
        time.sleep(0.05)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 0, err
    assert helpers, "no helper process searched"
    for pid in helpers:
        assert process_gone(pid), f"helper {pid} outlived cutoff analyse"
    (record,) = records(out)
    board = chess.Board(KIWIPETE)
    assert record["depth"] == 7
    assert chess.Move.from_uci(str(record["bestmove"])) in board.legal_moves
    board.push_uci(str(record["bestmove"]))  # and the PV goes on legally from there
    for move in record["pv"][1:]:  # type: ignore[index]
        board.push_uci(move)
