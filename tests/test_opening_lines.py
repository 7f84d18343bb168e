"""scripts/matches/opening_lines.py through its command line: openings as games, then a book."""

from __future__ import annotations

from pathlib import Path

import chess
import chess.pgn
import chess.polyglot

from tests.conftest import REPO, run_repo_script

OPENINGS = REPO / "scripts" / "matches" / "openings" / "noob3_500.epd"


def test_each_opening_becomes_a_game_that_reaches_it(tmp_path: Path) -> None:
    positions = OPENINGS.read_text().splitlines()[:8]
    source = tmp_path / "openings.epd"
    source.write_text(
        "\n".join(positions)
        + "\nnot a position\n"
        # The Ruy Lopez after 7 moves each: 14 plies, more than --plies 8.
        + "r1bqk2r/2p1bppp/p1np1n2/1p2p3/4P3/1B3N2/PPPP1PPP/RNBQR1K1 w kq - 0 8\n"
    )
    pgn = tmp_path / "openings.pgn"
    done = run_repo_script("matches.opening_lines", str(source), "-o", str(pgn))
    assert done.returncode == 1  # the two bad lines
    assert f"{source}:9: not a position" in done.stderr
    assert f"{source}:10: not reached within 8 plies" in done.stderr
    assert "wrote 8 games" in done.stdout
    reached = []
    with pgn.open() as handle:
        while (game := chess.pgn.read_game(handle)) is not None:
            assert not game.errors and game.headers["Result"] == "1/2-1/2"
            reached.append(game.end().board().epd())
    assert reached == [" ".join(line.split()[:4]) for line in positions]

    # The games make a Polyglot book whose moves lead into the openings.
    book = tmp_path / "book.bin"
    made = run_repo_script("matches.polyglot_book", str(pgn), "-o", str(book), "--plies", "8")
    assert made.returncode == 0, made.stderr
    with chess.polyglot.open_reader(book) as reader:
        first_moves = {entry.move for entry in reader.find_all(chess.Board())}
    with pgn.open() as handle:
        game = chess.pgn.read_game(handle)
    assert game is not None and game.next() is not None
    assert game.next().move in first_moves  # type: ignore[union-attr]


def test_the_book_skips_broken_games_with_one_line_each(tmp_path: Path) -> None:
    pgn = tmp_path / "games.pgn"
    good = '[Result "1-0"]\n\n1. e4 e5 2. Nf3 1-0\n\n'
    pgn.write_text(
        '[Event "bad FEN"]\n[SetUp "1"]\n[FEN "not a fen"]\n\n1. e4 *\n\n'
        + good
        + '[Event "illegal"]\n\n1. e4 e5 2. Qxe8 *\n\n'
        + good
    )
    book = tmp_path / "book.bin"
    made = run_repo_script("matches.polyglot_book", str(pgn), "-o", str(book), "--plies", "4")
    assert made.returncode == 1, made.stderr  # the book is written all the same
    errors = made.stderr.splitlines()
    assert len(errors) == 2, errors  # nothing from python-chess's own logging
    assert errors[0].endswith(f"{pgn}: game 1: bad FEN header: expected 'w' or 'b' "
                              "for turn part of fen: 'not a fen'; game skipped")  # fmt: skip
    assert f"{pgn}: game 3: illegal san: 'Qxe8'" in errors[1]
    with chess.polyglot.open_reader(book) as reader:
        entries = list(reader.find_all(chess.Board()))
    assert [(entry.move.uci(), entry.weight) for entry in entries] == [("e2e4", 4)]
