"""No tool overwrites what it reads: every output option checked against the inputs.

Through the real commands (``cutoff analyse``, ``cutoff annotate`` and the match tools
run as ``python -m scripts.matches.TOOL``): an output that is an input, by the same
name, a hard link or a symbolic link (or the file on stdin), is refused with one line
before anything is written, and the input is left as it was.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Optional

import pytest
from uci_harness import REPO, engine_command

from tests.conftest import run_repo_script

FEN = "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"
GAME = '[White "a"]\n[Black "b"]\n[Result "*"]\n\n1. e4 e5 *\n'


def cutoff(
    tmp_path: Path, *args: str, stdin: Optional[Path] = None
) -> subprocess.CompletedProcess[str]:
    with open(stdin if stdin is not None else os.devnull, encoding="utf-8") as handle:
        return subprocess.run(
            [*engine_command(), *args],
            cwd=str(tmp_path),
            stdin=handle,
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "PYTHONPATH": str(REPO)},
        )


def _named(tmp_path: Path, source: Path, how: str) -> Path:
    """The output's name for ``source``: the same name, a hard link or a symbolic link."""
    if how == "same":
        return source
    link = tmp_path / f"{how}-link{source.suffix}"
    if how == "hard":
        os.link(source, link)
    else:
        link.symlink_to(source.name)
    return link


def _refused(done: subprocess.CompletedProcess[str], prog: str, status: int) -> None:
    assert done.returncode == status, done.stderr
    assert "Traceback" not in done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"{prog}: ") and "is the same file as" in line, line


@pytest.mark.parametrize("how", ["same", "hard", "symbolic"])
def test_analyse_never_writes_over_its_input(tmp_path: Path, how: str) -> None:
    epd = tmp_path / "copy.epd"
    epd.write_text(FEN + "\n")
    output = _named(tmp_path, epd, how)
    done = cutoff(tmp_path, "analyse", "copy.epd", "--depth", "2", "--json", "-o", output.name)
    _refused(done, "cutoff analyse", 2)
    assert epd.read_text() == FEN + "\n"


def test_analyse_never_writes_over_the_file_on_stdin(tmp_path: Path) -> None:
    epd = tmp_path / "copy.epd"
    epd.write_text(FEN + "\n")
    done = cutoff(tmp_path, "analyse", "-", "--depth", "2", "--csv", "-o", "copy.epd", stdin=epd)
    _refused(done, "cutoff analyse", 2)
    assert epd.read_text() == FEN + "\n"


@pytest.mark.parametrize("option", ["-o", "--json", "--plot"])
@pytest.mark.parametrize("how", ["same", "symbolic"])
def test_annotate_never_writes_over_its_games(tmp_path: Path, option: str, how: str) -> None:
    if option == "--plot":
        pytest.importorskip("matplotlib")
    pgn = tmp_path / "game.pgn"
    pgn.write_text(GAME)
    output = _named(tmp_path, pgn, how)
    done = cutoff(tmp_path, "annotate", "game.pgn", "--depth", "2", option, output.name)
    _refused(done, "cutoff annotate", 2)
    assert pgn.read_text() == GAME


def test_annotate_refuses_two_outputs_in_one_file(tmp_path: Path) -> None:
    (tmp_path / "game.pgn").write_text(GAME)
    done = cutoff(
        tmp_path, "annotate", "game.pgn", "--depth", "2", "-o", "x.pgn", "--json", "x.pgn"
    )
    assert done.returncode == 2 and "is the same file as -o x.pgn" in done.stderr, done.stderr
    assert not (tmp_path / "x.pgn").exists()


NO_ENGINE = "cmd=/nonexistent/engine"
MATCH = ["--engine", NO_ENGINE, "--engine", NO_ENGINE, "--depth", "1", "--openings", "IN"]
TOOLS: list[tuple[str, str, int, list[str]]] = [
    # (tool, its name in messages, exit status, arguments: IN the input, OUT the output)
    ("match", "cutoff-match", 1, [*MATCH, "--pgn", "OUT"]),
    ("match", "cutoff-match", 1, [*MATCH, "--json", "OUT"]),
    # The ladder writes LEVEL.pgn and LEVEL.json into --out.
    ("ladder", "cutoff-ladder", 1, ["--engine", NO_ENGINE, "--openings", "IN", "--levels", "1"]),
    ("ladder", "cutoff-ladder", 1, ["--engine", NO_ENGINE, "--openings", "IN", "--plot", "OUT"]),
    ("pool", "cutoff-pool", 1, ["IN", "--plot", "OUT"]),
    ("opening_lines", "opening_lines", 2, ["IN", "-o", "OUT"]),
    ("polyglot_book", "polyglot_book", 2, ["IN", "-o", "OUT"]),
]


@pytest.mark.parametrize(("tool", "prog", "status", "arguments"), TOOLS)
@pytest.mark.parametrize("how", ["same", "hard", "symbolic"])
def test_match_tools_never_write_over_their_inputs(
    tmp_path: Path, tool: str, prog: str, status: int, arguments: list[str], how: str
) -> None:
    text = FEN + "\n" if tool == "opening_lines" else GAME
    output = tmp_path / "1.pgn"  # what the ladder writes for level 1 in --out
    source = output if how == "same" else tmp_path / "in.pgn"
    source.write_text(text)
    if how == "hard":
        os.link(source, output)
    elif how == "symbolic":
        output.symlink_to(source.name)
    words = [
        str(source) if word == "IN" else str(output) if word == "OUT" else word
        for word in arguments
    ]
    if tool == "ladder":
        words += ["--out", str(tmp_path / ("ladder" if "--plot" in words else ""))]
    done = run_repo_script(f"matches.{tool}", *words)
    _refused(done, prog, status)
    assert source.read_text() == text
