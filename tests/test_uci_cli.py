"""The command line (``cutoff analyse``, ``cutoff bench``) and the Stockfish-style extras
inside UCI (``d``, ``eval``, ``go perft``, ``bench``)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import chess
import chess.polyglot
from uci_harness import REPO, Engine, engine_command

from tests.references import evaluate

KIWIPETE = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"


def run_cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*engine_command(), *args],
        cwd=str(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
    )


def test_analyse_default_and_fen(tmp_path: Path) -> None:
    done = run_cli(tmp_path, "analyse", "--depth", "3", "--json")
    assert done.returncode == 0, done.stderr
    (record,) = [json.loads(line) for line in done.stdout.splitlines()]
    assert record["depth"] == 3 and record["fen"] == chess.STARTING_FEN
    done = run_cli(tmp_path, "analyse", *KIWIPETE.split(), "--depth=2", "--multipv", "2", "--json")
    assert done.returncode == 0, done.stderr
    (record,) = [json.loads(line) for line in done.stdout.splitlines()]
    board = chess.Board(KIWIPETE)
    assert len(record["lines"]) == 2
    for line in record["lines"]:
        assert chess.Move.from_uci(line["pv"][0]) in board.legal_moves


def test_cli_errors_are_one_line(tmp_path: Path) -> None:
    for args in (["analyse", "--depth", "x"], ["frobnicate"], ["analyse", "--jobs", "0"]):
        done = run_cli(tmp_path, *args)
        assert done.returncode == 2
        assert done.stdout == ""
        assert len(done.stderr.splitlines()) == 1 and "Traceback" not in done.stderr
    done = run_cli(tmp_path, "analyse", "not", "a", "fen")
    # Each bad input is one line on stderr, and keeps its place in the results as an
    # error row (docs/analysis.md), so the output's numbering matches the input's.
    assert done.returncode == 1 and "error: position: missing FEN" in done.stdout
    assert len(done.stderr.splitlines()) == 3 and "Traceback" not in done.stderr
    done = run_cli(tmp_path, "--help")
    assert done.returncode == 0 and "analyse" in done.stdout
    done = run_cli(tmp_path, "--version")
    assert done.returncode == 0 and done.stdout.startswith("Cutoff ")
    assert "interpreted" in done.stdout or "compiled" in done.stdout
    for command in ("analyse", "annotate", "bench", "compile"):
        done = run_cli(tmp_path, command, "--help")
        assert done.returncode == 0 and done.stdout.startswith("usage: cutoff " + command)


def test_cli_bench(tmp_path: Path) -> None:
    done = run_cli(tmp_path, "bench", "--depth", "1")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[-2].startswith("Nodes searched") and lines[-1].startswith("Nodes/second")


def test_d_eval_perft_bench_in_uci(tmp_path: Path) -> None:
    eng = Engine(tmp_path, protocol_only=False)
    eng.handshake()
    eng.send(f"position fen {KIWIPETE}")
    eng.send("d")
    _, _, board_lines = eng.expect("Checkers:")
    board = chess.Board(KIWIPETE)
    assert f"Fen: {KIWIPETE}" in board_lines
    assert f"Key: {chess.polyglot.zobrist_hash(board):016X}" in board_lines
    assert any(line.startswith(" | r |   |   |   | k |") for line in board_lines)
    eng.send("eval")
    _, first, terms = eng.expect("Evaluation:")
    assert any(line.startswith("psqt ") for line in terms)
    assert any(line.startswith("mobility_knight ") for line in terms)
    _, second, _ = eng.expect("Evaluation:")
    assert "side to move" in first and "white" in second
    # The table's total is the search's entry point on the native board.
    assert first == f"Evaluation: {evaluate(board):+d} cp from the side to move (white)"
    _, using, _ = eng.expect("Searching with:")
    # The shipped network is the default evaluation (Use NNUE).
    assert using.startswith("Searching with: the network ") and using.endswith("cutoff.nnue")
    # Checkers, from the native board, as python-chess lists them (double check).
    checked = chess.Board("4k3/8/8/8/8/5n2/8/4K2r w - - 0 1")
    eng.send(f"position fen {checked.fen()}")
    eng.send("d")
    _, checkers, _ = eng.expect("Checkers:")
    assert checkers == "Checkers: " + " ".join(map(chess.square_name, checked.checkers()))
    assert checkers == "Checkers: h1 f3"
    eng.send(f"position fen {KIWIPETE}")
    eng.send("go perft 2")
    _, total, seen = eng.expect("Nodes searched:")
    assert total == "Nodes searched: 2039"
    divide = [line for line in seen if ": " in line and not line.startswith("Nodes")]
    assert len(divide) == 48 and seen[-2] == ""
    eng.send("go perft 6")  # long: stop must end it
    eng.send("stop")
    eng.expect("info string perft stopped", timeout=10)
    eng.send("bench 1")
    eng.expect("Nodes/second", timeout=60)
    eng.send("isready")
    eng.expect("readyok")
    eng.close()


def test_piped_script_with_quit_is_answered(tmp_path: Path) -> None:
    """`printf 'uci\\nisready\\n...quit\\n' | cutoff`: quit comes in the same burst as the
    commands before it, which must still be answered."""
    done = subprocess.run(
        engine_command(),
        input="uci\nisready\nposition startpos\ngo depth 2\nquit\n",
        cwd=str(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
    )
    assert done.returncode == 0
    words = [line.split()[0] for line in done.stdout.splitlines() if line.strip()]
    assert "uciok" in words
    assert "readyok" in words
    assert words[-1] == "bestmove"
