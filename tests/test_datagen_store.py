"""``datagen --store``: labelled positions written as a chunked binary store through
the real command: the same positions as the text output, each once in the whole
store, chunks cut by the command line so that a torn or missing chunk is remade as
one uninterrupted run makes it, the same store with ``--jobs 2`` and on Dask, a rerun
with other settings refused; and the progress line on a terminal."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import shutil
import signal
import struct
import subprocess
import sys
import termios
import threading
import time
from pathlib import Path

import pytest

from scripts.training import records, store
from scripts.training.dataset import read_samples
from tests.conftest import REPO, run_repo_script
from tests.test_datagen import TUNING

STOCKFISH = shutil.which("stockfish") or shutil.which("/usr/games/stockfish")
pytestmark = pytest.mark.skipif(STOCKFISH is None, reason="stockfish is not installed")

OPENINGS = [
    "r1bqkbnr/1ppp1ppp/p1n5/1B2p3/4P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 0 4",
    "rnbqk2r/pppp1ppp/5n2/2b1p3/4P3/1B6/PPPP1PPP/RNBQK1NR w KQkq - 0 4",
    "rnbqkb1r/pp1p1ppp/2p2n2/4p3/4P3/3P4/PPPN1PPP/R1BQKBNR w KQkq - 0 4",
]


def openings(tmp_path: Path) -> Path:
    """Games 0 and 1 start from the same opening (no random plies: the same game, all
    its positions duplicates of game 0's), game 2 and 3 from others."""
    path = tmp_path / "openings.epd"
    path.write_text("\n".join([OPENINGS[0], OPENINGS[0], OPENINGS[1], OPENINGS[2]]) + "\n")
    return path


def settings(tmp_path: Path) -> list[str]:
    """The small self-play run every test makes: 100-node games from three openings,
    labelled by Stockfish's static evaluation."""
    return [
        "--engine",
        str(STOCKFISH),
        "--nodes",
        "100",
        "--openings",
        str(openings(tmp_path)),
        "--random-plies",
        "0",
        "--max-plies",
        "40",
        "--skip-plies",
        "2",
        "--teacher",
        str(STOCKFISH),
        "--label-static",
        "--quiet",
    ]


def datagen(
    tmp_path: Path, out: list[str], *args: str, code: int = 0
) -> subprocess.CompletedProcess[str]:
    done = run_repo_script(
        "training.datagen",
        *out,
        *settings(tmp_path),
        *args,
        timeout=300,
    )
    assert done.returncode == code, done.stderr
    return done


def contents(folder: Path) -> dict[str, object]:
    """A store's files: the chunks' bytes, the manifests but for their dates and the
    command that made them (which names the folder)."""
    found: dict[str, object] = {}
    for path in sorted(folder.iterdir()):
        if path.suffix == ".json":
            manifest = json.loads(path.read_text())
            for key in ("date", "command"):
                del manifest["made_by"][key]
            del manifest["remake"]
            found[path.name] = manifest
        else:
            found[path.name] = path.read_bytes()
    return found


def decoded(folder: Path) -> list[tuple[str, int, str]]:
    return [
        (board.fen(), score, records.TEXT_OF_RESULT[result])
        for board, score, result in map(records.decode, store.load([folder]))
    ]


def test_store_holds_the_text_outputs_positions_each_once_and_resumes(tmp_path: Path) -> None:
    whole = tmp_path / "whole"
    done = datagen(tmp_path, ["--store", str(whole)], "--games", "4", "--games-per-chunk", "1")
    assert "chunks 4 chunks-skipped 0 " in done.stdout
    text = tmp_path / "data.gz"
    datagen(tmp_path, [str(text)], "--games", "4")
    samples = [(s.fen, s.score, s.result) for s in read_samples(text)]
    # The same positions, labels and results, in the same order, as the text output.
    assert decoded(whole) == samples and len(samples) > 30
    # Game 1 is game 0 again: its chunk is there, empty, its positions counted as
    # duplicates of chunk 0's.
    manifests = [json.loads((whole / store.manifest_name(i)).read_text()) for i in range(4)]
    assert manifests[1]["records"] == 0
    assert manifests[1]["made_by"]["dropped"]["duplicates"] == manifests[0]["records"] > 10
    assert [m["made_by"]["first"] for m in manifests] == [f"game:1:{i}" for i in range(4)]
    assert manifests[0]["source"].endswith(" static")  # the teacher's id name, its label
    assert "--jobs" not in manifests[0]["remake"] and "--games 4" in manifests[0]["remake"]
    verified = run_repo_script("training.store", "verify", str(whole))
    assert verified.returncode == 0, verified.stderr
    chunks = [chunk for _, chunk in store.open_chunks(store.Store.at(whole))]
    assert store.first_of_each_position(chunks).all()


def test_a_torn_or_damaged_chunk_is_remade_as_one_run_makes_it(tmp_path: Path) -> None:
    # Interrupted: a run of the first three games (its last chunk game 2 alone) ...
    resumed = tmp_path / "resumed"
    datagen(tmp_path, ["--store", str(resumed)], "--games", "3", "--games-per-chunk", "2")
    # ... then a kill mid-chunk: chunk 1 written, its manifest not.
    (resumed / store.manifest_name(1)).unlink()
    data = (resumed / store.chunk_name(1)).read_bytes()
    (resumed / store.chunk_name(1)).write_bytes(data[: len(data) // 2])
    again = datagen(tmp_path, ["--store", str(resumed)], "--games", "4", "--games-per-chunk", "2")
    assert "tasks 2 " in again.stdout and "chunks 1 chunks-skipped 1 " in again.stdout
    uninterrupted = tmp_path / "uninterrupted"
    datagen(tmp_path, ["--store", str(uninterrupted)], "--games", "4", "--games-per-chunk", "2")
    assert contents(resumed) == contents(uninterrupted)
    # A chunk whose bytes were damaged is remade too; a complete store is left alone.
    chunk = resumed / store.chunk_name(0)
    damaged = bytearray(chunk.read_bytes())
    damaged[100] ^= 1
    chunk.write_bytes(bytes(damaged))
    again = datagen(tmp_path, ["--store", str(resumed)], "--games", "4", "--games-per-chunk", "2")
    assert "tasks 2 " in again.stdout and "chunks-skipped 1 " in again.stdout
    assert contents(resumed) == contents(uninterrupted)
    again = datagen(tmp_path, ["--store", str(resumed)], "--games", "4", "--games-per-chunk", "2")
    assert "tasks 0 " in again.stdout and "chunks 0 chunks-skipped 2 " in again.stdout


def test_store_is_the_same_with_jobs(tmp_path: Path) -> None:
    serial = tmp_path / "serial"
    datagen(tmp_path, ["--store", str(serial)], "--games", "4", "--games-per-chunk", "3")
    jobs = tmp_path / "jobs"
    copies = tmp_path / "committed"
    datagen(
        tmp_path,
        ["--store", str(jobs)],
        "--games",
        "4",
        "--games-per-chunk",
        "3",
        "--jobs",
        "2",
        "--manifests",
        str(copies),
    )
    assert contents(jobs) == contents(serial)
    assert sorted(path.name for path in copies.iterdir()) == [
        store.manifest_name(0),
        store.manifest_name(1),
    ]
    # The committed manifests check a remade store's chunks.
    verified = run_repo_script("training.store", "verify", str(jobs), "--manifests", str(copies))
    assert verified.returncode == 0, verified.stderr


@pytest.mark.slow
def test_store_is_the_same_on_dask(tmp_path: Path) -> None:
    pytest.importorskip("distributed")
    serial = tmp_path / "serial"
    datagen(tmp_path, ["--store", str(serial)], "--games", "4", "--games-per-chunk", "3")
    dask = tmp_path / "dask"
    datagen(
        tmp_path,
        ["--store", str(dask)],
        "--games",
        "4",
        "--games-per-chunk",
        "3",
        "--scheduler",
        "local:2",
    )
    assert contents(dask) == contents(serial)


def test_other_settings_into_a_store_are_refused(tmp_path: Path) -> None:
    out = tmp_path / "store"
    datagen(tmp_path, ["--store", str(out)], "--games", "2", "--games-per-chunk", "1")
    before = contents(out)
    args = ["--games", "3", "--games-per-chunk", "1", "--nodes", "150"]
    done = datagen(tmp_path, ["--store", str(out)], *args, code=2)
    assert done.stderr.count("\n") == 1
    assert f"datagen: {out}: its chunks were made by another command" in done.stderr
    assert "self_play: nodes: 100 there, 150 here" in done.stderr
    assert contents(out) == before
    # A store another tool made, a file for a folder: refused in one line.
    other = tmp_path / "converted"
    store.Store.at(other).write_chunk(0, records.Header(), b"", {"tool": "convert"}, "x")
    done = datagen(tmp_path, ["--store", str(other)], "--games", "1", code=2)
    assert done.stderr.count("\n") == 1 and "were not made by datagen" in done.stderr
    done = datagen(tmp_path, ["--store", str(other / "chunk-000000.json")], "--games", "1", code=2)
    assert done.stderr.count("\n") == 1 and "not a folder" in done.stderr
    # Neither an output file and a store, nor store options without a store.
    done = datagen(tmp_path, [str(tmp_path / "o.gz"), "--store", str(out)], "--games", "1", code=2)
    assert done.stderr.count("\n") == 1 and "not both" in done.stderr
    done = datagen(
        tmp_path, [str(tmp_path / "o.gz")], "--games", "1", "--games-per-chunk", "1", code=2
    )
    assert done.stderr.count("\n") == 1 and "go with --store" in done.stderr


@pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal")
def test_progress_shows_positions_rates_and_eta_on_a_terminal(tmp_path: Path) -> None:
    # The progress bar is drawn only on a terminal: stderr is a pseudo-terminal here.
    master, slave = pty.openpty()
    # A terminal 200 columns wide: tqdm draws nothing on one of no width.
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 200, 0, 0))
    shown: list[bytes] = []

    def read() -> None:
        while True:
            try:
                data = os.read(master, 4096)
            except OSError:
                return
            if not data:
                return
            shown.append(data)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "scripts.training.datagen",
            "--store",
            str(tmp_path / "store"),
            "--games",
            "2",
            "--engine",
            str(STOCKFISH),
            "--nodes",
            "100",
            "--max-plies",
            "30",
            "--teacher",
            str(STOCKFISH),
            "--label-static",
        ],
        cwd=str(REPO),
        stdout=subprocess.PIPE,
        stderr=slave,
        text=True,
        timeout=120,
    )
    os.close(slave)
    reader.join(10)
    os.close(master)
    assert done.returncode == 0
    text = b"".join(shown).decode("utf-8", "replace")
    assert "2/2" in text
    for part in ("positions ", "/s, ", " M/h, ", "ETA "):
        assert part in text, text
    written = int(done.stdout.split("positions ")[1].split()[0])
    assert f"positions {written:,}, " in text
    assert written > 0


FLAKY_TEACHER = """\
import os
import sys
fen = ""
for line in sys.stdin:
    words = line.split()
    if words == ["uci"]:
        print("id name flaky\\nuciok", flush=True)
    elif words == ["isready"]:
        print("readyok", flush=True)
    elif words[:2] == ["position", "fen"]:
        fen = " ".join(words[2:])
    elif words == ["eval"]:
        bad = os.path.exists(sys.argv[1]) and fen.startswith(sys.argv[2])
        print(f"Final evaluation {'+x' if bad else '+0.25'} (white side)", flush=True)
    elif words == ["quit"]:
        break
"""
"""A static teacher that cannot evaluate one position while a flag file exists."""


def test_a_chunk_with_a_failed_unit_is_made_by_the_rerun(tmp_path: Path) -> None:
    # Three units of a FEN file (200, 200 and 50 positions), a chunk each; the
    # teacher fails on a position of the second while the flag exists.
    fens = tmp_path / "f.txt"
    fens.write_text("\n".join(TUNING[:450]) + "\n")
    flag = tmp_path / "flag"
    flag.write_text("")
    script = tmp_path / "flaky.py"
    script.write_text(FLAKY_TEACHER)
    teacher = f"{sys.executable} {script} {flag} {TUNING[220].split()[0]}"

    def run(out: Path) -> subprocess.CompletedProcess[str]:
        return run_repo_script(
            "training.datagen",
            "--store",
            str(out),
            "--fens",
            str(fens),
            "--games-per-chunk",
            "1",
            "--no-qsearch-check",
            "--label-static",
            "--teacher",
            teacher,
            "--quiet",
        )

    out = tmp_path / "store"
    done = run(out)
    assert done.returncode == 1
    assert "fens:f.txt:201 failed" in done.stderr
    assert f"{store.chunk_name(1)} not written (a unit failed)" in done.stderr
    assert "chunks 2 chunks-skipped 0 chunks-failed 1 " in done.stdout
    assert sorted(path.name for path in out.glob("*.json")) == [
        store.manifest_name(0),
        store.manifest_name(2),
    ]
    flag.unlink()
    done = run(out)
    assert done.returncode == 0, done.stderr
    assert "tasks 1 " in done.stdout and "chunks 1 chunks-skipped 2 " in done.stdout
    whole = tmp_path / "whole"
    assert run(whole).returncode == 0
    assert contents(out) == contents(whole)
    assert len(store.load([out])) == 450


def test_a_run_killed_mid_store_resumes_to_the_same_store(tmp_path: Path) -> None:
    # The real thing: datagen killed (SIGKILL, with its engines) once two chunks are
    # written, wherever it was; the rerun makes the store an uninterrupted run makes.
    args = [
        "--games",
        "6",
        "--games-per-chunk",
        "1",
        *settings(tmp_path),
    ]
    killed = tmp_path / "killed"
    command = [sys.executable, "-m", "scripts.training.datagen", "--store", str(killed), *args]
    process = subprocess.Popen(
        command,
        cwd=str(REPO),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not (killed / store.manifest_name(1)).exists() and process.poll() is None:
            assert time.monotonic() < deadline, "no second chunk within 120 s"
            time.sleep(0.01)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
    finished = len(list(killed.glob("*.json")))
    assert 2 <= finished < 6  # killed mid-run
    again = run_repo_script("training.datagen", "--store", str(killed), *args, timeout=300)
    assert again.returncode == 0, again.stderr
    assert f"chunks-skipped {finished} " in again.stdout
    whole = tmp_path / "whole"
    done = run_repo_script("training.datagen", "--store", str(whole), *args, timeout=300)
    assert done.returncode == 0, done.stderr
    assert contents(killed) == contents(whole)
