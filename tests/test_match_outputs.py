"""The match tools' outputs: checked before the first game, never lost to a full disk,
and traced to the builds that played them.

Through the console scripts (``cutoff-match``, ``cutoff-ladder``, ``cutoff-tune``,
``cutoff-pool``; ``python -m`` when they are not installed), run as processes:

* an output that cannot be written (a directory, a missing folder, a read-only one)
  is refused with one line before the first game, and nothing is written;
* ``--pgn`` appends only to a PGN (a file of notes is refused, left byte for byte);
* a write that fails all the same (``/dev/full`` stands in for a full disk, a file
  size limit for a disk that fills mid-match) is one line and exit status 1, and what
  was written before stays whole: a ``--resume`` goes on from it;
* every game records each engine's build (Cutoff's: version, sources' digest, commit,
  interpreted or compiled) and settings (UCI options, limits).

The games are a tiny stub engine's at depth 1 (tests/engines/uci_stub.py) and a few
of Cutoff's at a handful of nodes: the machine is shared.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import resource
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Optional

import chess.pgn
import pytest
from uci_harness import engine_command

from tests.conftest import REPO

STUB = f"cmd='{sys.executable} {REPO / 'tests' / 'engines' / 'uci_stub.py'}'"
MODULES = {
    "cutoff-match": "matches.match",
    "cutoff-ladder": "matches.ladder",
    "cutoff-tune": "tuning.spsa",
    "cutoff-pool": "matches.pool",
}
MATCH = [
    "--engine", f"{STUB} name=A", "--engine", f"{STUB} name=B", "--depth", "1",
    "--rounds", "1", "--maxmoves", "8", "--quiet",
]  # fmt: skip
LADDER = [
    "--engine", f"{STUB} name=A", "--opponent", f"{STUB} name=L{{elo}}", "--levels", "1",
    "--depth", "1", "--rounds", "1", "--maxmoves", "8", "--quiet", "--perft-rate", "240000",
]  # fmt: skip
TUNE = [
    "--engine", STUB, "--opponent", f"{STUB} name=opp", "--params", "LMR_BASE",
    "--iterations", "1", "--depth", "1", "--rounds", "1", "--maxmoves", "8",
]  # fmt: skip
NOTES = b"my notes\n"
HAS_FULL = os.path.exists("/dev/full")
needs_full = pytest.mark.skipif(not HAS_FULL, reason="no /dev/full to stand in for a full disk")
HAS_MATPLOTLIB = importlib.util.find_spec("matplotlib") is not None


def run(
    tool: str, *args: str, cwd: Path, file_limit: Optional[int] = None, full_stdout: bool = False
) -> subprocess.CompletedProcess[str]:
    """The tool's console script beside this interpreter (else ``python -m``), in
    ``cwd``; with ``file_limit``, no file it writes may grow beyond that many bytes;
    with ``full_stdout``, its stdout is ``/dev/full``."""
    script = Path(sys.executable).with_name(tool)
    command = (
        [str(script)] if script.exists() else [sys.executable, "-m", f"scripts.{MODULES[tool]}"]
    )

    def limit() -> None:
        if file_limit is not None:
            resource.setrlimit(resource.RLIMIT_FSIZE, (file_limit, file_limit))

    with open("/dev/full" if full_stdout else os.devnull, "w") as full:
        return subprocess.run(
            [*command, *args],
            cwd=cwd,
            stdout=full if full_stdout else subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            timeout=300,
            env={**os.environ, "PYTHONPATH": str(REPO)},
            preexec_fn=limit,
        )


def one_line(done: subprocess.CompletedProcess[str], prog: str) -> str:
    """The one error line of a tool that failed with exit status 1."""
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"{prog}: error: "), lines[0]
    return lines[0]


def games(path: Path) -> list[chess.pgn.Game]:
    found = []
    with open(path, encoding="utf-8") as handle:
        while (game := chess.pgn.read_game(handle)) is not None:
            assert not game.errors, game.errors
            found.append(game)
    return found


# ---------------------------------------------------------------- checked first


@pytest.mark.parametrize(
    ("option", "target", "says"),
    [
        ("--json", "folder", "is a directory"),
        ("--json", "missing/summary.json", "no folder missing"),
        ("--pgn", "folder", "is a directory"),
        ("--pgn", "missing/games.pgn", "no folder missing"),
    ],
)
def test_match_refuses_an_unwritable_output_before_any_game(
    tmp_path: Path, option: str, target: str, says: str
) -> None:
    (tmp_path / "folder").mkdir()
    other = ["--json", "summary.json"] if option == "--pgn" else ["--pgn", "games.pgn"]
    done = run("cutoff-match", *MATCH, option, target, *other, cwd=tmp_path)
    line = one_line(done, "cutoff-match")
    assert f"{option} {target}" in line and says in line, line
    # Not a game played: the other output was not even started.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["folder"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write into a read-only folder")
def test_match_refuses_an_output_in_a_read_only_folder(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        done = run(
            "cutoff-match", *MATCH, "--json", "locked/s.json", "--pgn", "g.pgn", cwd=tmp_path
        )
    finally:
        locked.chmod(0o755)
    assert "permission denied" in one_line(done, "cutoff-match")
    assert not (tmp_path / "g.pgn").exists()


def test_ladder_and_tune_refuse_an_unwritable_output_before_any_game(tmp_path: Path) -> None:
    # A folder where the ladder's table goes, and where the tuner's constants go.
    (tmp_path / "ladder" / "ladder.md").mkdir(parents=True)
    done = run("cutoff-ladder", *LADDER, "--out", "ladder", cwd=tmp_path)
    assert "ladder.md is a directory" in one_line(done, "cutoff-ladder")
    assert sorted(p.name for p in (tmp_path / "ladder").iterdir()) == ["ladder.md"]
    (tmp_path / "spsa" / "tuned.json").mkdir(parents=True)
    done = run("cutoff-tune", *TUNE, "--out", "spsa", cwd=tmp_path)
    assert "tuned.json is a directory" in one_line(done, "cutoff-tune")
    assert sorted(p.name for p in (tmp_path / "spsa").iterdir()) == ["tuned.json"]


@pytest.mark.skipif(not HAS_MATPLOTLIB, reason="--plot needs matplotlib")
def test_a_plot_in_a_missing_folder_is_refused_before_any_work(tmp_path: Path) -> None:
    done = run("cutoff-ladder", *LADDER, "--out", "ladder", "--plot", "no/p.png", cwd=tmp_path)
    assert "--plot no/p.png: no folder no" in one_line(done, "cutoff-ladder")
    assert not (tmp_path / "ladder").exists()
    match = run("cutoff-match", *MATCH, "--pgn", "g.pgn", cwd=tmp_path)
    assert match.returncode == 0, match.stderr
    done = run("cutoff-pool", "g.pgn", "--plot", "no/p.png", cwd=tmp_path)
    assert "--plot no/p.png: no folder no" in one_line(done, "cutoff-pool")
    assert done.stdout == ""  # refused before the report


# ---------------------------------------------------------------- appends to a PGN only


def test_match_appends_only_to_a_pgn(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_bytes(NOTES)
    done = run("cutoff-match", *MATCH, "--pgn", "notes.txt", cwd=tmp_path)
    line = one_line(done, "cutoff-match")
    assert "--pgn notes.txt exists and is not a PGN file" in line, line
    assert notes.read_bytes() == NOTES
    # Another program's games (no tag of Cutoff's) are a PGN: appended to, kept whole.
    theirs = tmp_path / "theirs.pgn"
    text = '[Event "x"]\n[White "a"]\n[Black "b"]\n[Result "1-0"]\n\n1. e4 e5 1-0'  # no newline
    theirs.write_text(text)
    done = run("cutoff-match", *MATCH, "--pgn", "theirs.pgn", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert theirs.read_text().startswith(text + "\n")
    assert [g.headers["White"] for g in games(theirs)] == ["a", "A", "B"]


# ---------------------------------------------------------------- a full disk


@needs_full
@pytest.mark.parametrize("option", ["--pgn", "--json"])
def test_match_on_a_full_disk_is_one_line(tmp_path: Path, option: str) -> None:
    done = run("cutoff-match", *MATCH, option, "/dev/full", cwd=tmp_path)
    assert one_line(done, "cutoff-match") == "cutoff-match: error: no space left writing /dev/full"


@needs_full
@pytest.mark.parametrize("summary", [[], ["--json", "-"]])
def test_a_report_on_a_full_stdout_is_one_line(tmp_path: Path, summary: list[str]) -> None:
    done = run("cutoff-match", *MATCH, "--pgn", "g.pgn", *summary, cwd=tmp_path, full_stdout=True)
    line = done.stderr.splitlines()[-1]
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert line == "cutoff-match: error: no space left writing stdout", line
    assert len(games(tmp_path / "g.pgn")) == 2  # the games are kept
    done = run("cutoff-pool", "g.pgn", *summary[:1], cwd=tmp_path, full_stdout=True)
    assert one_line(done, "cutoff-pool") == "cutoff-pool: error: no space left writing stdout"


@needs_full
def test_a_full_disk_stops_a_match_on_dask(tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    done = run("cutoff-match", *MATCH, "--scheduler", "local:1", "--pgn", "/dev/full", cwd=tmp_path)
    line = done.stderr.splitlines()[-1]
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert line == "cutoff-match: error: no space left writing /dev/full", line


def test_a_game_that_does_not_fit_is_taken_back(tmp_path: Path) -> None:
    """The disk fills in the middle of a game's record: the games before it stay whole,
    and the match stops with one line."""
    pgn = tmp_path / "g.pgn"
    first = run("cutoff-match", *MATCH, "--pgn", "g.pgn", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    before = pgn.read_bytes()
    # Room for a part of one more game only (each is several hundred bytes).
    done = run("cutoff-match", *MATCH, "--pgn", "g.pgn", cwd=tmp_path, file_limit=len(before) + 100)
    line = one_line(done, "cutoff-match")
    assert line == "cutoff-match: error: cannot write g.pgn: File too large", line
    assert pgn.read_bytes() == before
    assert len(games(pgn)) == 2


@needs_full
def test_ladder_on_a_full_disk_keeps_its_levels_for_resume(tmp_path: Path) -> None:
    out = tmp_path / "ladder"
    out.mkdir()
    (out / "ladder.md").symlink_to("/dev/full")
    done = run("cutoff-ladder", *LADDER, "--out", "ladder", cwd=tmp_path)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.splitlines()[-1] == (
        "cutoff-ladder: error: no space left writing ladder/ladder.md"
    )
    level = (out / "1.pgn").read_bytes()
    assert len(games(out / "1.pgn")) == 2
    assert json.loads((out / "1.json").read_text())["games"] == 2
    (out / "ladder.md").unlink()
    done = run("cutoff-ladder", *LADDER, "--out", "ladder", "--resume", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "level 1:" not in done.stderr  # kept, not played again
    assert (out / "1.pgn").read_bytes() == level
    assert (out / "ladder.md").read_text().startswith("| opponent level |")


@needs_full
def test_tune_on_a_full_disk_keeps_its_state_for_resume(tmp_path: Path) -> None:
    out = tmp_path / "spsa"
    out.mkdir()
    (out / "tuned.json").symlink_to("/dev/full")
    done = run("cutoff-tune", *TUNE, "--out", "spsa", cwd=tmp_path)
    assert (
        one_line(done, "cutoff-tune") == "cutoff-tune: error: no space left writing spsa/tuned.json"
    )
    state = json.loads((out / "spsa.json").read_text())
    assert state["history"] == []
    (out / "tuned.json").unlink()
    done = run("cutoff-tune", *TUNE, "--out", "spsa", "--resume", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert len(json.loads((out / "spsa.json").read_text())["history"]) == 1
    # The report's kept constants, too.
    done = run("cutoff-tune", "report", "spsa", "--keep", "/dev/full", cwd=tmp_path)
    line = one_line(done, "cutoff-tune report")
    assert line == "cutoff-tune report: error: no space left writing /dev/full", line


# ---------------------------------------------------------------- traced to the build


def _cutoff_source_digest() -> str:
    """What ``engine.compiled.source_digest`` computes, computed here independently."""
    top = REPO / "engine"
    digest = hashlib.sha256()
    for folder, subfolders, files in os.walk(top):
        subfolders[:] = sorted(d for d in subfolders if d not in ("__pycache__", "_full"))
        for name in sorted(files):
            if name.endswith((".py", ".nnue", ".json")) and name != "_compiled.json":
                path = Path(folder) / name
                digest.update(str(path.relative_to(top)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:12]


def _checkout_commit() -> Optional[str]:
    git = shutil.which("git")
    if git is None or not (REPO / ".git").exists():
        return None
    done = subprocess.run([git, "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True)
    return done.stdout.strip()[:12] if done.returncode == 0 else None


def test_every_game_records_each_engines_build_and_settings(tmp_path: Path) -> None:
    cutoff = f"cmd='{' '.join(engine_command())}' name=dev option.Hash=8 nodes=40"
    stub_path = REPO / "tests" / "engines" / "uci_stub.py"
    stub = f"cmd='{sys.executable} {stub_path} --name stubby' name=stub option.Pick=first"
    done = run(
        "cutoff-match", "--engine", cutoff, "--engine", stub, "--depth", "1", "--rounds", "1",
        "--maxmoves", "4", "--quiet", "--pgn", "g.pgn", cwd=tmp_path,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    played = games(tmp_path / "g.pgn")
    assert len(played) == 2
    pattern = re.compile(
        r"Cutoff \S+, source (?P<source>[0-9a-f]{12})(, commit (?P<commit>[0-9a-f]{12}))?, "
        r"(?P<build>interpreted|compiled|partly compiled).*"
    )
    for game in played:
        side = "White" if game.headers["White"] == "dev" else "Black"
        other = "Black" if side == "White" else "White"
        found = pattern.fullmatch(game.headers[f"{side}Engine"])
        assert found, game.headers
        assert found["source"] == _cutoff_source_digest()
        commit = _checkout_commit()
        if commit is not None:
            assert found["commit"] == commit
        # The global --depth 1 holds for both, with its own nodes for Cutoff.
        assert game.headers[f"{side}Settings"] == "option.Hash=8 depth=1 nodes=40"
        # The stub says no more than its name; its option and limit are recorded.
        assert game.headers[f"{other}Engine"] == "stubby"
        assert game.headers[f"{other}Settings"] == "option.Pick=first depth=1"
