"""scripts/training/games.py through its command line: match games kept compactly in a
gzip'd PGN (main line and the tags the data needs), a game already kept skipped, a
bad input one line with the old file untouched."""

from __future__ import annotations

import gzip
import io
from pathlib import Path

import chess.pgn
import pytest

from tests.conftest import run_repo_script

OPERA = Path(__file__).parent / "data" / "opera.pgn"

MATCH_GAME = """[Event "Cutoff match"]
[Site "?"]
[Date "2026.12.02"]
[Round "1.2"]
[White "hand"]
[Black "r1n"]
[Result "0-1"]
[FEN "rnbqk1nr/ppp2ppp/3bp3/3p4/5B2/3P2P1/PPP1PP1P/RN1QKBNR w KQkq - 0 4"]
[SetUp "1"]
[TimeControl "10+0.1"]
[Termination "adjudication"]

4. Bxd6 { -0.13/7 0.174s } 4... Qxd6 { +0.28/7 0.251s } 5. Nf3 (5. e3 e5) 5... Nf6
{ +0.23/7 0.322s } 0-1

"""


def games_of(path: Path) -> list[chess.pgn.Game]:
    with gzip.open(path, "rt", encoding="utf-8") as handle:
        text = handle.read()
    stream, games = io.StringIO(text), []
    while (game := chess.pgn.read_game(stream)) is not None:
        games.append(game)
    return games


def test_games_are_kept_compactly_once(tmp_path: Path) -> None:
    match = tmp_path / "match.pgn"
    match.write_text(MATCH_GAME)
    out = tmp_path / "kept.pgn.gz"
    done = run_repo_script("training.games", str(out), str(match))
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"games: 1 games added to {out} (0 already there)\n"
    with gzip.open(out, "rt", encoding="utf-8") as handle:
        text = handle.read()
    assert "{" not in text and "(" not in text and "Termination" not in text
    (game,) = games_of(out)
    assert dict(game.headers) == {
        "Event": "Cutoff match",
        "Site": "?",  # python-chess fills in the roster's missing tags when it reads
        "Date": "2026.12.02",
        "Round": "?",
        "White": "hand",
        "Black": "r1n",
        "Result": "0-1",
        "TimeControl": "10+0.1",
        "SetUp": "1",
        "FEN": "rnbqk1nr/ppp2ppp/3bp3/3p4/5B2/3P2P1/PPP1PP1P/RN1QKBNR w KQkq - 0 4",
    }
    assert [m.uci() for m in game.mainline_moves()] == ["f4d6", "d8d6", "g1f3", "g8f6"]

    # The same match again, now with one more game: only that one is added.
    before = out.read_bytes()
    match.write_text(MATCH_GAME + OPERA.read_text())
    done = run_repo_script("training.games", str(out), str(match))
    assert done.stdout == f"games: 1 games added to {out} (1 already there)\n"
    assert out.read_bytes().startswith(before)
    kept = games_of(out)
    assert [g.headers["White"] for g in kept] == ["hand", "Paul Morphy"]
    assert len(list(kept[1].mainline_moves())) == 33
    done = run_repo_script("training.games", str(out), str(OPERA))
    assert done.stdout == f"games: 0 games added to {out} (1 already there)\n"


def test_bad_input_is_one_line_and_keeps_the_file(tmp_path: Path) -> None:
    out = tmp_path / "kept.pgn.gz"
    assert run_repo_script("training.games", str(out), str(OPERA)).returncode == 0
    before = out.read_bytes()
    done = run_repo_script("training.games", str(out), str(OPERA), "missing.pgn")
    assert done.returncode == 2
    assert done.stderr.startswith("games: cannot read 'missing.pgn'")
    assert len(done.stderr.splitlines()) == 1
    assert out.read_bytes() == before
    # A kept file cut short: nothing is appended after the damage.
    out.write_bytes(before[: len(before) // 2])
    done = run_repo_script("training.games", str(out), str(OPERA))
    assert done.returncode == 2 and len(done.stderr.splitlines()) == 1
    assert done.stderr.startswith(f"games: {out}: unreadable after some games")
    assert done.stderr.endswith(f"mend or move {out} first\n")
    assert out.read_bytes() == before[: len(before) // 2]
    done = run_repo_script("training.games", str(tmp_path / "kept.pgn"), str(OPERA))
    assert done.returncode == 2
    assert done.stderr == (
        f"games: error: {tmp_path / 'kept.pgn'}: the kept games are gzip'd: "
        "name the file *.pgn.gz\n"
    )


@pytest.mark.slow
def test_the_kept_games_of_the_repository_replay(tmp_path: Path) -> None:
    """scripts/training/data/cutoff-games.pgn.gz, Cutoff's match games kept for training
    (docs/training.md): every game reads and replays, none twice. Slow (about 16 s:
    replaying a thousand games); the tool itself is tested by the tests above."""
    kept = Path(__file__).parents[1] / "scripts" / "training" / "data" / "cutoff-games.pgn.gz"
    done = run_repo_script("training.games", str(tmp_path / "copy.pgn.gz"), str(kept))
    assert done.returncode == 0 and done.stderr == ""
    added = int(done.stdout.split()[1])
    assert added >= 988 and done.stdout.endswith("(0 already there)\n")
