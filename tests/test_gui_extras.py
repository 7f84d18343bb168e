"""What GUI users look for in the options dialog, through the real ``cutoff`` process:
an opening book, endgame tablebases, weakened play, and clock safety in repeating
time controls. Tablebase tests need ../shared/data/syzygy (and Debian's gaviotatb
for mate distances) and skip without them.
"""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import chess
import chess.engine
import chess.pgn
import chess.polyglot
import pytest
from conftest import SHARED
from uci_harness import REPO, Engine, bestmove_of, engine_command, field, info_lines, pv_of

SYZYGY = SHARED / "data" / "syzygy"
GAVIOTA = Path("/usr/share/gaviotatb/gtb4")
NEW_OPTIONS = {
    "OwnBook": "check",
    "BookFile": "string",
    "BookVariety": "check",
    "SyzygyPath": "string",
    "SyzygyProbeLimit": "spin",
    "GaviotaTbPath": "string",
    "UCI_LimitStrength": "check",
    "UCI_Elo": "spin",
    "Skill Level": "spin",
}
ITALIAN = ["e2e4", "e7e5", "g1f3", "b8c6", "f1c4"]


def write_book(path: Path, lines: list[list[str]], weights: int = 1) -> None:
    """A Polyglot book in the documented format: sorted (key, move, weight, learn)."""
    entries = set()
    for line in lines:
        board = chess.Board()
        for text in line:
            move = chess.Move.from_uci(text)
            raw = move.to_square | (move.from_square << 6)
            entries.add((chess.polyglot.zobrist_hash(board), raw, weights))
            board.push(move)
    path.write_bytes(
        b"".join(struct.pack(">QHHI", key, raw, weight, 0) for key, raw, weight in sorted(entries))
    )


def test_options_are_declared_and_python_chess_configures_them(tmp_path: Path) -> None:
    eng = Engine(tmp_path)
    eng.send("uci")
    _, _, lines = eng.expect("uciok")
    declared = {
        line.split(" type ")[0][len("option name ") :]: line.split(" type ")[1].split()[0]
        for line in lines
        if line.startswith("option name ")
    }
    for name, kind in NEW_OPTIONS.items():
        assert declared.get(name) == kind, name
    eng.close()
    book = tmp_path / "book.bin"
    write_book(book, [ITALIAN])
    with chess.engine.SimpleEngine.popen_uci(engine_command()) as uci:
        uci.configure({
            "OwnBook": True, "BookFile": str(book), "BookVariety": True,
            "SyzygyPath": str(SYZYGY), "SyzygyProbeLimit": 5, "GaviotaTbPath": str(GAVIOTA),
            "UCI_LimitStrength": True, "UCI_Elo": 1500, "Skill Level": 10,
        })  # fmt: skip
        result = uci.play(chess.Board(), chess.engine.Limit(time=0.2))
        assert result.move == chess.Move.from_uci("e2e4")


def test_book_moves_are_played_and_left(engine: Engine, tmp_path: Path) -> None:
    book = tmp_path / "book.bin"
    write_book(book, [ITALIAN])
    engine.send("setoption name OwnBook value true")
    engine.send(f"setoption name BookFile value {book}")
    board = chess.Board()
    for expected in ITALIAN:
        engine.send(f"position startpos moves {' '.join(m.uci() for m in board.move_stack)}")
        lines, best, _ = engine.search("go wtime 10000 btime 10000")
        assert bestmove_of(best) == expected
        assert f"info string book move {expected}" in lines  # no search: depth 1 alone
        assert pv_of(info_lines(lines)[-1]) == [expected]
        assert {field(line, "depth") for line in info_lines(lines)} == {"1"}
        board.push_uci(expected)
    # Out of the book: a normal search.
    engine.send(f"position startpos moves {' '.join(ITALIAN)}")
    lines, best, _ = engine.search("go depth 3")
    assert not any("book move" in line for line in lines)
    assert chess.Move.from_uci(bestmove_of(best)) in board.legal_moves
    # Analysis is not played from the book.
    engine.send("position startpos")
    engine.send("go infinite")
    engine.send("stop")
    _, _, seen = engine.expect("bestmove")
    assert not any("book move" in line for line in seen)


def test_weighted_book_choice_varies(engine: Engine, tmp_path: Path) -> None:
    book = tmp_path / "book.bin"
    write_book(book, [["e2e4"], ["d2d4"], ["c2c4"]])
    engine.send("setoption name OwnBook value true")
    engine.send(f"setoption name BookFile value {book}")
    engine.send("setoption name BookVariety value true")
    engine.send("position startpos")
    seen = {bestmove_of(engine.search("go wtime 10000 btime 10000")[1]) for _ in range(24)}
    assert seen == {"e2e4", "d2d4", "c2c4"}


@pytest.mark.skipif(shutil.which("polyglot") is None, reason="Debian's polyglot is not installed")
def test_book_made_by_polyglot(engine: Engine, tmp_path: Path) -> None:
    pgn = tmp_path / "games.pgn"
    pgn.write_text(
        '[Result "1-0"]\n\n1. d4 d5 2. c4 e6 1-0\n\n[Result "1-0"]\n\n1. d4 d5 2. c4 c6 1-0\n'
    )
    book = tmp_path / "made.bin"
    subprocess.run(
        ["polyglot", "make-book", "-pgn", str(pgn), "-bin", str(book), "-min-game", "1"],
        cwd=str(tmp_path), check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    engine.send("setoption name OwnBook value true")
    engine.send(f"setoption name BookFile value {book}")
    engine.send("position startpos moves d2d4 d7d5")
    _, best, _ = engine.search("go wtime 10000 btime 10000")
    assert bestmove_of(best) == "c2c4"


@pytest.mark.parametrize(
    ("content", "reason"),
    [(None, "cannot read"), (b"", "not a Polyglot book"), (b"x" * 17, "not a Polyglot book"),
     (struct.pack(">QHHI", 9, 0, 1, 0) + struct.pack(">QHHI", 3, 0, 1, 0), "out of order")],
)  # fmt: skip
def test_bad_book_files_are_one_info_string(
    engine: Engine, tmp_path: Path, content: bytes | None, reason: str
) -> None:
    book = tmp_path / "bad.bin"
    if content is not None:
        book.write_bytes(content)
    engine.send("setoption name OwnBook value true")
    engine.send(f"setoption name BookFile value {book}")
    _, line, _ = engine.expect("info string", timeout=5)
    assert reason in line and "without a book" in line
    engine.send("position startpos")
    _, best, _ = engine.search("go depth 2")
    assert chess.Move.from_uci(bestmove_of(best)) in chess.Board().legal_moves


needs_syzygy = pytest.mark.skipif(not SYZYGY.is_dir(), reason="../shared/data/syzygy missing")


@needs_syzygy
def test_tablebase_wins_mates_and_draws(engine: Engine) -> None:
    paths = f"{SYZYGY}:{GAVIOTA}" if GAVIOTA.is_dir() else str(SYZYGY)
    engine.send(f"setoption name SyzygyPath value {paths}")
    if GAVIOTA.is_dir():
        engine.send(f"setoption name GaviotaTbPath value {GAVIOTA}")
    engine.send("isready")
    _, _, seen = engine.expect("readyok")
    assert any("Syzygy: " in line and "up to 4 pieces" in line for line in seen)
    # KQK: the tables' move at once, with a mate score (DTM) or a tablebase win (DTZ).
    engine.send("position fen 8/8/8/8/8/3k4/8/3KQ3 w - - 0 1")
    lines, _, _ = engine.search("go wtime 10000 btime 10000")
    score_line = info_lines(lines)[-1]
    assert int(field(score_line, "tbhits")) > 0
    if GAVIOTA.is_dir():
        assert " score mate 5 " in score_line
    else:
        assert int(field(score_line, "cp")) > 19000
    # KPK drawn: reported as a draw whatever the evaluation says.
    engine.send("position fen 8/8/8/4k3/8/8/4P3/4K3 w - - 0 1")
    lines, _, _ = engine.search("go depth 6")
    assert " score cp 0 " in info_lines(lines)[-1]
    # In the tree: a capture into a tablebase position is looked up.
    engine.send("position fen 8/8/8/8/3k4/8/3r4/3KQ3 w - - 0 1")
    lines, _, _ = engine.search("go depth 3")
    assert "tbhits" in info_lines(lines)[-1]


def test_bad_tablebase_paths_are_notes(engine: Engine, tmp_path: Path) -> None:
    engine.send(f"setoption name SyzygyPath value {tmp_path / 'none'};{tmp_path}")
    _, line, _ = engine.expect("info string", timeout=5)
    assert "no such directory" in line
    engine.send("setoption name GaviotaTbPath value /nonexistent")
    engine.expect(lambda text: "GaviotaTbPath" in text, timeout=5)
    engine.send("position fen 8/8/8/8/8/3k4/8/3KQ3 w - - 0 1")
    _, best, _ = engine.search("go depth 3")
    assert bestmove_of(best) != "(none)"


def _match(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scripts.matches.match", *args],
        cwd=str(REPO), capture_output=True, text=True, timeout=600,
    )  # fmt: skip


@needs_syzygy
@pytest.mark.skipif(shutil.which("stockfish") is None, reason="stockfish is not installed")
@pytest.mark.slow
def test_tablebase_endgames_are_converted_in_games(tmp_path: Path) -> None:
    """KQK, KRK and KPK wins converted, a KPK draw held, against Stockfish."""
    openings = tmp_path / "endings.epd"
    openings.write_text(
        "8/8/8/4k3/8/8/8/KQ6 w - - 0 1\n"          # KQK
        "8/8/8/4k3/8/8/8/KR6 w - - 0 1\n"          # KRK
        "8/8/4k3/8/8/8/1P6/1K6 w - - 0 1\n"        # KPK, won
        "8/8/8/4k3/8/8/4P3/4K3 w - - 0 1\n"        # KPK, drawn
    )  # fmt: skip
    cutoff = " ".join(engine_command())
    pgn = tmp_path / "games.pgn"
    done = _match(
        tmp_path,
        "--engine", f"cmd='{cutoff}' name=cutoff option.SyzygyPath={SYZYGY}",
        "--engine", "cmd=stockfish name=sf",
        "--tc", "4+0.1", "--rounds", "4", "--openings", str(openings),
        "--pgn", str(pgn), "--maxmoves", "120",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    results = {}
    with pgn.open() as handle:
        while (game := chess.pgn.read_game(handle)) is not None:
            cutoff_white = game.headers["White"] == "cutoff"
            results[(game.headers["FEN"], cutoff_white)] = game.headers["Result"]
    for fen in openings.read_text().splitlines()[:3]:
        assert results[(fen, True)] == "1-0", (fen, results)
    drawn = openings.read_text().splitlines()[3]
    assert results[(drawn, False)] == "1/2-1/2"  # Cutoff defends the drawn pawn ending
    assert "Faults: none" in done.stdout


def test_weakened_play_is_legal_fast_and_keeps_wins(engine: Engine) -> None:
    engine.send("setoption name UCI_LimitStrength value true")
    engine.send("setoption name UCI_Elo value 1350")
    board = chess.Board()
    board.push_uci("e2e4")
    engine.send("position startpos moves e2e4")
    lines, best, _ = engine.search("go wtime 60000 btime 60000")  # (no wall-clock check)
    assert chess.Move.from_uci(bestmove_of(best)) in board.legal_moves
    final = info_lines(lines)[-1]
    assert pv_of(final)[0] == bestmove_of(best) and int(field(final, "depth")) >= 1
    # A hanging queen: every weakened choice still takes it (a won position is kept won).
    fen = "4k3/8/8/3q4/8/8/8/3QK3 w - - 0 1"
    engine.send(f"position fen {fen}")
    chosen = {bestmove_of(engine.search("go wtime 60000 btime 60000")[1]) for _ in range(12)}
    assert chosen == {"d1d5"}
    engine.send("setoption name UCI_LimitStrength value false")
    engine.send("setoption name Skill Level value 0")
    engine.send("position startpos")
    _, best, _ = engine.search("go wtime 60000 btime 60000")
    assert chess.Move.from_uci(bestmove_of(best)) in chess.Board().legal_moves


@pytest.mark.slow
def test_repeating_time_control_games_keep_the_clock(tmp_path: Path) -> None:
    """5 moves in 3 s, repeating: no time loss, and no move over half the clock left
    while another move is due before the control."""
    cutoff = " ".join(engine_command())
    pgn = tmp_path / "games.pgn"
    done = _match(
        tmp_path,
        "--engine", f"cmd='{cutoff}' name=a", "--engine", f"cmd='{cutoff}' name=b",
        "--tc", "5/3", "--rounds", "1", "--maxmoves", "40", "--pgn", str(pgn),
        "--openings", str(REPO / "scripts" / "matches" / "openings" / "noob3_500.epd"),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Faults: none" in done.stdout
    with pgn.open() as handle:
        while (game := chess.pgn.read_game(handle)) is not None:
            clocks = {chess.WHITE: 3.0, chess.BLACK: 3.0}
            moves = {chess.WHITE: 0, chess.BLACK: 0}
            for node in game.mainline():
                mover = not node.board().turn
                found = re.search(r"(\d+\.\d+)s\b", node.comment)
                spent = float(found.group(1)) if found else 0.0
                left_in_control = 5 - moves[mover] % 5
                if left_in_control > 1:
                    assert spent <= clocks[mover] / 2 + 0.05, (spent, clocks[mover], node)
                clocks[mover] -= spent
                moves[mover] += 1
                if moves[mover] % 5 == 0:
                    clocks[mover] += 3.0
                assert clocks[mover] > 0


def test_polyglot_book_from_games(tmp_path: Path) -> None:
    """scripts.matches.polyglot_book writes a book python-chess and Cutoff read."""
    pgn = tmp_path / "games.pgn"
    pgn.write_text(
        '[Result "1-0"]\n\n1. e4 e5 2. Nf3 Nc6 3. Bc4 Nf6 4. O-O 1-0\n\n'
        '[Result "0-1"]\n\n1. d4 d5 0-1\n\n'
        '[FEN "4k3/8/8/8/8/8/4P3/4K2R w K - 0 1"]\n[SetUp "1"]\n[Result "1/2-1/2"]\n\n'
        "1. O-O Kd7 1/2-1/2\n\n"
        '[Result "*"]\n\n1. e4 Qxe4 *\n'
    )
    book = tmp_path / "book.bin"
    done = subprocess.run(
        [sys.executable, "-m", "scripts.matches.polyglot_book", str(pgn), "-o", str(book)],
        cwd=str(REPO), capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 1 and "game 4" in done.stderr  # the broken game is reported
    with chess.polyglot.open_reader(book) as reader:
        assert reader.find(chess.Board()).move == chess.Move.from_uci("e2e4")  # won: weight 2
        after = chess.Board()
        for move in ("e2e4", "e7e5", "g1f3", "b8c6", "f1c4", "g8f6"):
            after.push_uci(move)
        assert reader.find(after).move == chess.Move.from_uci("e1g1")  # castling read back
        start = chess.Board("4k3/8/8/8/8/8/4P3/4K2R w K - 0 1")
        assert reader.find(start).move == chess.Move.from_uci("e1g1")
    with chess.engine.SimpleEngine.popen_uci(engine_command()) as uci:
        uci.configure({"OwnBook": True, "BookFile": str(book)})
        assert uci.play(after, chess.engine.Limit(time=1)).move == chess.Move.from_uci("e1g1")
