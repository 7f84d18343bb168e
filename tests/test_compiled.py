"""The compiled build: `cutoff compile`, its manifest, and the guard that runs the
sources when they changed after the build.

The quick tests work on a copy of the package with stand-in extension files (never
imported: garbage bytes, so a guard that let one load would crash the process). The
slow test compiles for real with mypyc and checks the bench's node count.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import chess
import chess.polyglot
import pytest

from engine import compiled
from engine.core.nnue import SCRELU
from tests.networks import random_network

ROOT = Path(__file__).resolve().parent.parent
SUFFIX = importlib.machinery.EXTENSION_SUFFIXES[0]
MODULES = len(compiled.COMPILED_MODULES)
KIWIPETE = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1"


PACKAGE_PATH = compiled.COMPILED_PACKAGE.split(".")
"""The folders of the package that holds the compiled modules, from the top one."""


def _copy_package(tmp_path: Path) -> Path:
    """A copy of the engine package in tmp_path, without any build products; returns
    the copy's folder of the compiled modules' package."""
    shutil.copytree(
        ROOT / PACKAGE_PATH[0],
        tmp_path / PACKAGE_PATH[0],
        ignore=shutil.ignore_patterns(*compiled.NOT_SOURCES),
    )
    return tmp_path.joinpath(*PACKAGE_PATH)


def _fake_build(pkg: Path, hashes: dict[str, str] | None = None) -> None:
    """Stand-in extensions (garbage) and a manifest of the current sources' hashes."""
    for stem in (*compiled.COMPILED_MODULES, compiled.GROUP + "__mypyc"):
        (pkg / (stem + SUFFIX)).write_bytes(b"not an extension module")
    if hashes is None:
        hashes = {
            module: hashlib.sha256((pkg / f"{module}.py").read_bytes()).hexdigest()
            for module in compiled.COMPILED_MODULES
        }
    (pkg / compiled.MANIFEST).write_text(json.dumps({"sources": hashes}))


def _cutoff(cwd: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "engine", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def _uci(cwd: Path, commands: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """A UCI session of the engine in ``cwd``: ``commands`` on its stdin."""
    return subprocess.run(
        [sys.executable, "-m", "engine"],
        cwd=cwd,
        input=commands,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_no_build_is_none(tmp_path: Path) -> None:
    pkg = _copy_package(tmp_path)
    assert compiled.extension_files(str(pkg)) == []
    assert compiled.stale_modules(str(pkg)) is None


def test_no_package_folder_is_no_build(tmp_path: Path) -> None:
    """A frozen executable keeps its pure modules in an archive: no folder to list."""
    assert compiled.extension_files(str(tmp_path / "missing")) == []
    assert compiled.stale_modules(str(tmp_path / "missing")) is None


def test_modules_without_sources_are_not_stale(tmp_path: Path) -> None:
    pkg = _copy_package(tmp_path)
    _fake_build(pkg)
    (pkg / compiled.MANIFEST).unlink()
    for module in compiled.COMPILED_MODULES:
        (pkg / f"{module}.py").unlink()
    assert compiled.stale_modules(str(pkg)) == []


def test_current_build_is_not_stale(tmp_path: Path) -> None:
    pkg = _copy_package(tmp_path)
    _fake_build(pkg)
    assert len(compiled.extension_files(str(pkg))) == len(compiled.COMPILED_MODULES) + 2
    assert compiled.stale_modules(str(pkg)) == []


def test_edited_source_is_stale(tmp_path: Path) -> None:
    pkg = _copy_package(tmp_path)
    _fake_build(pkg)
    with open(pkg / "search.py", "a") as handle:
        handle.write("# edited after the build\n")
    assert compiled.stale_modules(str(pkg)) == ["search"]


def test_missing_or_broken_manifest_means_all_stale(tmp_path: Path) -> None:
    pkg = _copy_package(tmp_path)
    _fake_build(pkg)
    (pkg / compiled.MANIFEST).write_text("{not json")
    assert compiled.stale_modules(str(pkg)) == list(compiled.COMPILED_MODULES)
    (pkg / compiled.MANIFEST).unlink()
    assert compiled.stale_modules(str(pkg)) == list(compiled.COMPILED_MODULES)


def test_stale_build_runs_the_sources(tmp_path: Path) -> None:
    """Through the real entry point: the stand-in extensions would crash the import,
    so a bench that runs proves the guard loaded every compiled module from source."""
    pkg = _copy_package(tmp_path)
    _fake_build(pkg, hashes={"search": "0" * 64})
    result = _cutoff(tmp_path, "bench", "--depth", "2", "--positions", "2")
    assert result.returncode == 0, result.stderr
    assert "compiled modules are out of date" in result.stderr
    assert "board.py" in result.stderr and "search.py" in result.stderr
    assert "Build: interpreted (the compiled modules are out of date" in result.stdout
    assert re.search(r"Nodes searched\s*:\s*\d+", result.stdout)


def test_uci_runs_with_a_stale_build(tmp_path: Path) -> None:
    pkg = _copy_package(tmp_path)
    _fake_build(pkg, hashes={})
    result = _uci(tmp_path, "uci\nisready\nposition startpos\ngo depth 3\nquit\n")
    assert result.returncode == 0, result.stderr
    assert "uciok" in result.stdout and "bestmove " in result.stdout


def test_stats_runs_the_sources_of_a_current_build(tmp_path: Path) -> None:
    """`cutoff stats` observes the search through subclasses, which compiled classes
    refuse: with a build in place (current, so the guard leaves it loaded) it runs
    the sources. The stand-in extensions would crash the import if it did not."""
    pkg = _copy_package(tmp_path)
    _fake_build(pkg)
    result = _cutoff(tmp_path, "stats", "--depth", "1", "--minimax-depth", "1", "--json")
    assert result.returncode == 0, result.stderr
    assert "the search runs from its sources" in result.stderr
    assert "out of date" not in result.stderr
    assert json.loads(result.stdout)


def test_status_and_remove(tmp_path: Path) -> None:
    pkg = _copy_package(tmp_path)
    result = _cutoff(tmp_path, "compile", "--status")
    assert result.returncode == 0
    assert "interpreted" in result.stdout
    _fake_build(pkg)
    result = _cutoff(tmp_path, "compile", "--remove")
    assert result.returncode == 0, result.stderr
    assert f"removed {len(compiled.COMPILED_MODULES) + 2} files" in result.stdout
    assert compiled.extension_files(str(pkg)) == []
    assert (pkg / "search.py").exists()


def _older_full_build(pkg: Path) -> None:
    """What an older version's `cutoff compile` left beside the build: the search
    compiled with a patched python-chess in FULL_DIR (stand-ins: garbage extensions
    that crash any process that imports them) with a current-looking manifest."""
    full = pkg / compiled.FULL_DIR
    (full / "chess").mkdir(parents=True)
    (full / "engine-modules").mkdir()
    (full / ("cutoff_full__mypyc" + SUFFIX)).write_bytes(b"not an extension")
    (full / "chess" / ("__init__" + SUFFIX)).write_bytes(b"not an extension")
    hashes = {}
    for module in compiled.COMPILED_MODULES:
        (full / "engine-modules" / (module + SUFFIX)).write_bytes(b"not an extension")
        hashes[module] = hashlib.sha256((pkg / f"{module}.py").read_bytes()).hexdigest()
    manifest = {"sources": hashes, "chess": {}, "python": sys.version.split()[0]}
    (full / compiled.MANIFEST).write_text(json.dumps(manifest))


def test_an_older_build_with_python_chess_is_ignored_and_removed(tmp_path: Path) -> None:
    """python-chess is no longer compiled: after an upgrade, the folder an older
    version built it into is never loaded (the UCI session and the bench run on the
    installed python-chess, which the stand-ins would crash), and `cutoff compile
    --remove` deletes it."""
    pkg = _copy_package(tmp_path)
    _older_full_build(pkg)
    session = _uci(tmp_path, "uci\nisready\nposition startpos moves e2e4\ngo depth 3\nquit\n")
    assert session.returncode == 0, session.stderr
    assert "uciok" in session.stdout and "bestmove " in session.stdout
    assert session.stderr == ""
    bench = _cutoff(tmp_path, "bench", "--depth", "2", "--positions", "1")
    assert bench.returncode == 0, bench.stderr
    assert "Build: interpreted" in bench.stdout
    removed = _cutoff(tmp_path, "compile", "--remove")
    assert removed.returncode == 0, removed.stderr
    assert f"removed {len(compiled.COMPILED_MODULES) + 3} files" in removed.stdout
    assert not (pkg / compiled.FULL_DIR).exists()


def test_this_process_runs_interpreted_without_a_build() -> None:
    if compiled.stale_modules(compiled.package_dir()) is not None:
        pytest.skip("this checkout holds a compiled build")
    assert compiled.build_description().startswith("interpreted")


def _bench_nodes(output: str) -> int:
    match = re.search(r"Nodes searched\s*:\s*(\d+)", output)
    assert match, output
    return int(match.group(1))


SCORES_AGREE = """
import random, sys, chess
from engine.core import nnue, nnue_eval
from engine.core.board import Board
net = nnue.load(sys.argv[1])
evaluator = nnue_eval.NetworkEvaluator(net, cache_bits=0)
board = chess.Board()
native = Board.from_chess(board)
native.use_network(evaluator.incremental)
rng = random.Random(3)
buckets = set()
while not board.is_game_over() and board.ply() < 200:
    moves = list(board.legal_moves)
    captures = [m for m in moves if board.is_capture(m)]
    move = rng.choice(captures or moves)
    native.make(native.from_chess_move(move))
    board.push(move)
    assert evaluator.evaluate(native) == net.evaluate(board), board.fen()
    buckets.add(nnue.bucket(len(board.piece_map()), net.buckets))
assert len(buckets) >= 6, buckets
print("compiled" if nnue_eval.COMPILED else "interpreted", "agree")
"""


@pytest.mark.slow
@pytest.mark.timeout(2400)  # the compile's own limit (1800 s) first
@pytest.mark.skipif(compiled.missing_tools() != [], reason="needs mypy and setuptools")
@pytest.mark.skipif(shutil.which("gcc") is None and shutil.which("cc") is None, reason="no cc")
def test_compile_for_real(tmp_path: Path) -> None:
    """mypyc builds the modules; the compiled search finds the same tree, in the
    cutoff process and in a script that imports engine; an edit to a source
    afterwards brings back the interpreted search, with the same tree."""
    pkg = _copy_package(tmp_path)
    interpreted = _cutoff(tmp_path, "bench", "--depth", "5")
    assert interpreted.returncode == 0, interpreted.stderr
    # The network's accumulators (the board's) and output layer (nnue_eval) compiled too.
    random_network(64, seed=68).write(tmp_path / "random.nnue")
    nnue_bench = ("bench", "--depth", "4", "--nnue", "--eval-file", str(tmp_path / "random.nnue"))
    interpreted_nnue = _cutoff(tmp_path, *nnue_bench)
    assert interpreted_nnue.returncode == 0, interpreted_nnue.stderr
    # SCReLU with output buckets: the squared loop, in 64 bits, and the bucket choice.
    random_network(64, seed=69, activation=SCRELU, buckets=8).write(tmp_path / "screlu.nnue")
    screlu_bench = ("bench", "--depth", "4", "--nnue", "--eval-file", str(tmp_path / "screlu.nnue"))
    interpreted_screlu = _cutoff(tmp_path, *screlu_bench)
    assert interpreted_screlu.returncode == 0, interpreted_screlu.stderr
    result = _cutoff(tmp_path, "compile", timeout=1800)
    assert result.returncode == 0, result.stdout + result.stderr
    assert compiled.stale_modules(str(pkg)) == []
    assert not (pkg / compiled.FULL_DIR).exists()
    status = _cutoff(tmp_path, "compile", "--status")
    assert status.stdout == f"{pkg}: compiled by mypyc ({MODULES} modules)\n", status.stdout
    for module in compiled.COMPILED_MODULES:
        assert (pkg / (module + SUFFIX)).exists()
    # The native search board compiled: i64 wraps there, and it still counts right.
    board_check = subprocess.run(
        [
            sys.executable,
            "-c",
            "import chess, engine.core.board as b, engine.core.bitboards as w, "
            "engine.core.movegen as g; "
            f"n = b.Board.from_chess(chess.Board('{KIWIPETE}')); "
            "print(b.__file__.endswith('.py'), w._WRAPS, g.perft(n, 3), n.polyglot_key())",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    expected_key = chess.polyglot.zobrist_hash(chess.Board(KIWIPETE))
    assert board_check.stdout.split() == ["False", "True", "97862", str(expected_key)], (
        board_check.stdout + board_check.stderr
    )
    fast = _cutoff(tmp_path, "bench", "--depth", "5")
    assert fast.returncode == 0, fast.stderr
    assert f"Build: compiled by mypyc ({MODULES} modules); network" in fast.stdout, fast.stdout
    assert _bench_nodes(fast.stdout) == _bench_nodes(interpreted.stdout)
    fast_nnue = _cutoff(tmp_path, *nnue_bench)
    assert f"({MODULES} modules); network" in fast_nnue.stdout, fast_nnue.stdout
    assert _bench_nodes(fast_nnue.stdout) == _bench_nodes(interpreted_nnue.stdout)
    fast_screlu = _cutoff(tmp_path, *screlu_bench)
    assert _bench_nodes(fast_screlu.stdout) == _bench_nodes(interpreted_screlu.stdout)
    # And score by score: the compiled evaluator against the from-scratch reference
    # along a game that goes through every bucket's material.
    agree = subprocess.run(
        [sys.executable, "-c", SCORES_AGREE, str(tmp_path / "screlu.nnue")],
        cwd=tmp_path, capture_output=True, text=True,
    )  # fmt: skip
    assert agree.stdout.split() == ["compiled", "agree"], agree.stdout + agree.stderr
    # A script that imports engine runs the same build, on the installed python-chess.
    script = (
        "import chess, engine.core.search, engine.compiled as c; "
        "print(c.build_description(), chess.__file__)"
    )
    alone = subprocess.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True
    )
    assert alone.returncode == 0, alone.stderr
    assert alone.stdout.startswith(f"compiled by mypyc ({MODULES} modules) "), alone.stdout
    # The game's history reaches the compiled search: a repetition is a draw, as
    # interpreted.
    repeat = "uci\nposition startpos moves g1f3 g8f6 f3g1 f6g8 g1f3 g8f6 f3g1\n"
    repeat += "go depth 4 searchmoves f6g8\nquit\n"
    draw = _uci(tmp_path, repeat)
    depth4 = [line for line in draw.stdout.splitlines() if line.startswith("info depth 4 ")]
    assert depth4 and " score cp 0 " in depth4[-1], draw.stdout
    # The tools built on the compiled classes: Lazy SMP's helpers (Threads 2) and
    # `cutoff stats` (which runs the sources).
    threads = "uci\nsetoption name Threads value 2\nisready\nposition startpos\ngo depth 6\nquit\n"
    smp = _uci(tmp_path, threads, timeout=120)
    assert smp.returncode == 0 and "Traceback" not in smp.stderr, smp.stderr
    assert "bestmove " in smp.stdout and "helper" not in smp.stdout, smp.stdout
    stats = _cutoff(tmp_path, "stats", "--depth", "1", "--minimax-depth", "1")
    assert stats.returncode == 0 and "Traceback" not in stats.stderr, stats.stderr
    with open(pkg / "tt.py", "a") as handle:
        handle.write("# edited after the build\n")
    edited = _cutoff(tmp_path, "bench", "--depth", "5")
    assert edited.returncode == 0, edited.stderr
    assert "tt.py changed" in edited.stderr
    assert _bench_nodes(edited.stdout) == _bench_nodes(interpreted.stdout)
