"""No tool overwrites what it reads, nor another program's file: every output checked.

Through the real commands (``cutoff analyse``, ``cutoff annotate`` and the match tools
run as ``python -m scripts.matches.TOOL``): an output that is an input, by the same
name, a hard link or a symbolic link (or the file on stdin), is refused with one line
before anything is written, and the input is left as it was. An output a tool
replaces that already holds something else than that tool's earlier output is
refused the same way, and a tool run again onto its own output replaces it.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
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
    if "--plot" in arguments:
        # Without the [plot] extra the ladder stops first with "--plot needs matplotlib".
        pytest.importorskip("matplotlib")
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


# An output a tool replaces (not appends to) that exists, is not empty and is not
# Cutoff's own output of that kind is refused with one line and left byte for byte.
NOTES = b"my notes\n"
FINISHED = GAME.replace("*", "1-0")  # a game the pool counts and the book enters
STUB = f"cmd='{sys.executable} {REPO / 'tests' / 'engines' / 'uci_stub.py'}'"
HAS_MATPLOTLIB = importlib.util.find_spec("matplotlib") is not None


def _kept(done: subprocess.CompletedProcess[str], prog: str, status: int, path: Path) -> None:
    assert done.returncode == status, done.stderr
    assert "Traceback" not in done.stderr
    (line,) = done.stderr.splitlines()
    assert line.startswith(f"{prog}: ") and f"{path.name} exists and is not" in line, line
    assert line.endswith("delete it or choose another name"), line
    assert path.read_bytes() == NOTES


@pytest.mark.parametrize("option", ["-o", "--json", "--plot"])
def test_annotate_replaces_only_its_own_output(tmp_path: Path, option: str) -> None:
    if option == "--plot":
        pytest.importorskip("matplotlib")
    (tmp_path / "game.pgn").write_text(GAME + "\n" + GAME)
    # Two games: the second one's graph is notes-2.png, checked before any is drawn.
    name = "notes-2.png" if option == "--plot" else "notes.txt"
    notes = tmp_path / name
    notes.write_bytes(NOTES)
    target = "notes.png" if option == "--plot" else name
    done = cutoff(tmp_path, "annotate", "game.pgn", "--depth", "1", option, target)
    _kept(done, "cutoff annotate", 2, notes)
    assert not (tmp_path / "notes.png").exists()


def test_annotate_runs_again_onto_its_own_output(tmp_path: Path) -> None:
    (tmp_path / "game.pgn").write_text(GAME + "\n" + GAME)
    outputs = ["-o", "out.pgn", "--json", "out.json"]
    if HAS_MATPLOTLIB:
        outputs += ["--plot", "out.png"]
    for _ in range(2):
        done = cutoff(tmp_path, "annotate", "game.pgn", "--depth", "1", "--quiet", *outputs)
        assert done.returncode == 0 and done.stderr == "", done.stderr
    assert (tmp_path / "out.pgn").read_text().count('[Annotator "Cutoff ') == 2
    if HAS_MATPLOTLIB:
        assert (tmp_path / "out-2.png").exists()


MATCH_TOOLS: list[tuple[str, str, int, list[str], str]] = [
    # (tool, its name in messages, exit status, arguments: OUT the output, its file)
    ("match", "cutoff-match", 1, [*MATCH[:-2], "--json", "OUT"], "out.json"),
    ("opening_lines", "opening_lines", 2, ["IN", "-o", "OUT"], "out.pgn"),
    ("polyglot_book", "polyglot_book", 2, ["IN", "-o", "OUT"], "out.bin"),
    # The ladder's files in --out: each level's games and summary, the ladder's.
    *(
        ("ladder", "cutoff-ladder", 1, ["--engine", NO_ENGINE, "--levels", "1", "--out", "."], name)
        for name in ("1.pgn", "1.json", "ladder.json", "ladder.md")
    ),
    ("ladder", "cutoff-ladder", 1, ["--engine", NO_ENGINE, "--out", ".", "--plot", "OUT"], "p.png"),
    ("pool", "cutoff-pool", 1, ["IN", "--plot", "OUT"], "out.png"),
]


@pytest.mark.parametrize(("tool", "prog", "status", "arguments", "name"), MATCH_TOOLS)
def test_match_tools_replace_only_their_own_output(
    tmp_path: Path, tool: str, prog: str, status: int, arguments: list[str], name: str
) -> None:
    if "--plot" in arguments:
        pytest.importorskip("matplotlib")
    source = tmp_path / "in.pgn"
    source.write_text(FEN + "\n" if tool == "opening_lines" else FINISHED)
    output = tmp_path / name
    output.write_bytes(NOTES)
    words = [str(source) if w == "IN" else str(output) if w == "OUT" else w for w in arguments]
    words = [str(tmp_path) if w == "." else w for w in words]
    _kept(run_repo_script(f"matches.{tool}", *words), prog, status, output)


def test_a_plot_without_cutoffs_mark_or_a_file_unlike_a_book_is_kept(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    games = tmp_path / "games.pgn"
    games.write_text(FINISHED)
    picture = tmp_path / "theirs.png"
    figure, _ = plt.subplots()
    figure.savefig(picture)  # matplotlib's own Software tag, not Cutoff's
    plt.close(figure)
    theirs = picture.read_bytes()
    done = run_repo_script("matches.pool", str(games), "--plot", str(picture))
    assert done.returncode == 1 and "theirs.png exists and is not" in done.stderr
    assert picture.read_bytes() == theirs
    # Whole 16-byte entries, but not sorted by key as every Polyglot book is.
    unsorted = tmp_path / "unsorted.bin"
    unsorted.write_bytes(b"\xff" * 16 + b"\x00" * 16)
    done = run_repo_script("matches.polyglot_book", str(games), "-o", str(unsorted))
    assert done.returncode == 2 and "unsorted.bin exists and is not" in done.stderr
    assert unsorted.read_bytes() == b"\xff" * 16 + b"\x00" * 16


def test_match_tools_run_again_onto_their_own_output(tmp_path: Path) -> None:
    epd, lines, book = tmp_path / "in.epd", tmp_path / "lines.pgn", tmp_path / "book.bin"
    epd.write_text(FEN + "\n")
    games, summary = tmp_path / "games.pgn", tmp_path / "summary.json"
    pictures = [tmp_path / "pool.png", tmp_path / "ladder.png"]
    match = [
        "--engine", f"{STUB} name=A", "--engine", f"{STUB} name=B", "--depth", "1",
        "--rounds", "1", "--maxmoves", "8", "--quiet",
    ]  # fmt: skip
    ladder = [*match[:2], "--opponent", f"{STUB} name=L{{elo}}", "--levels", "1", *match[4:]]
    for _ in range(2):
        runs = [
            ("opening_lines", [str(epd), "-o", str(lines)]),
            ("polyglot_book", [str(lines), "-o", str(book)]),
            ("match", [*match, "--pgn", str(games), "--json", str(summary)]),
            ("ladder", [*ladder, "--out", str(tmp_path / "ladder")]),
        ]
        if HAS_MATPLOTLIB:
            runs += [("pool", [str(games), "--plot", str(pictures[0])])]
            runs[3][1].extend(["--plot", str(pictures[1])])
        for tool, words in runs:
            done = run_repo_script(f"matches.{tool}", *words)
            assert done.returncode == 0, (tool, done.stderr)
            assert "exists and is not" not in done.stderr
    assert '[Annotator "Cutoff opening_lines"]' in lines.read_text()
    assert json.loads(summary.read_text())["games"] == 2
    assert all(picture.exists() for picture in pictures) == HAS_MATPLOTLIB
