"""Bad tablebase files, Gaviota tables alone, and a failing ``go``, through the real
``cutoff`` process (issue 65, items 1 to 3).

A table file that cannot be read (truncated, empty, garbage, a FIFO) is reported once
and then ignored; every ``go`` ends in exactly one legal ``bestmove``. Syzygy tests
need ../shared/data/syzygy, Gaviota tests Debian's gaviotatb tables; each skips
without them.
"""

from __future__ import annotations

import os
import random
import shutil
import sys
from pathlib import Path

import chess
import chess.gaviota
import chess.syzygy
import pytest
import uci_harness
from conftest import SHARED
from uci_harness import Engine, bestmove_of, field, info_lines

SYZYGY = SHARED / "data" / "syzygy"
GAVIOTA = Path("/usr/share/gaviotatb/gtb4")
needs_syzygy = pytest.mark.skipif(
    not (SYZYGY / "KQvKR.rtbw").exists(), reason="../shared/data/syzygy missing"
)
needs_gaviota = pytest.mark.skipif(
    not (GAVIOTA / "krk.gtb.cp4").exists(), reason="Debian's gaviotatb tables missing"
)
KQK = "8/8/8/4k3/8/8/8/KQ6 w - - 0 1"
KQKR = "8/8/8/3k4/8/8/2r5/KQ6 w - - 0 1"


def start(
    tmp_path: Path, *options: tuple[str, str], protocol_only: bool = True
) -> tuple[Engine, list[str]]:
    """A handshaken engine with ``options`` set; the lines they produced
    (``protocol_only=False``: the session may print tables, as ``eval`` does)."""
    engine = Engine(tmp_path, protocol_only=protocol_only)
    engine.handshake()
    for name, value in options:
        engine.send(f"setoption name {name} value {value}")
    engine.send("isready")
    _, _, seen = engine.expect("readyok", timeout=30)
    return engine, seen


def search_once(engine: Engine, fen: str, go: str) -> tuple[list[str], str]:
    """One ``go`` that must end in exactly one legal bestmove; (its lines, the move)."""
    engine.send(f"position fen {fen}")
    lines, best, _ = engine.search(go, timeout=60)
    engine.send("isready")
    _, _, after = engine.expect("readyok", timeout=30)
    assert not [line for line in after if line.startswith("bestmove")], after
    move = bestmove_of(best)
    assert chess.Move.from_uci(move) in chess.Board(fen).legal_moves, best
    return lines + after, move


def reports(lines: list[str], name: str) -> list[str]:
    return [line for line in lines if line.startswith("info string") and name in line]


def copy_tables(directory: Path, *names: str) -> None:
    directory.mkdir(exist_ok=True)
    for name in names:
        shutil.copy(SYZYGY / name, directory / name)


# ---------------------------------------------------------------- item 1: Syzygy


@needs_syzygy
@pytest.mark.parametrize(
    "size", [0, 200, 208, -1], ids=["empty", "truncated", "bad-inside", "fifo"]
)
def test_unreadable_syzygy_table_is_reported_once_and_ignored(tmp_path: Path, size: int) -> None:
    """200 bytes fails the size check when the path is set; 208 passes it (python-chess
    accepts sizes of 16 mod 64) and fails inside the first probe."""
    tables = tmp_path / "tb"
    copy_tables(tables, "KQvK.rtbz", "KRvK.rtbw", "KRvK.rtbz")
    if size < 0:
        os.mkfifo(tables / "KQvK.rtbw")
    else:
        (tables / "KQvK.rtbw").write_bytes((SYZYGY / "KQvK.rtbw").read_bytes()[:size])
    engine, seen = start(tmp_path, ("SyzygyPath", str(tables)))
    lines, _ = search_once(engine, KQK, "go depth 4")
    lines2, _ = search_once(engine, KQK, "go depth 4")
    engine.close()
    assert len(reports(seen + lines + lines2, "KQvK.rtbw")) == 1
    assert info_lines(lines), "the search played, not a fallback"


@needs_syzygy
def test_bad_table_in_the_tree_leaves_the_search_its_own_eval(tmp_path: Path) -> None:
    """KQvKR with a KQvK table that fails when probed: the root and tree probes that need
    it give up cleanly, and the move played still keeps the win (checked with the real
    tables)."""
    tables = tmp_path / "tb"
    copy_tables(tables, "KQvK.rtbz", "KQvKR.rtbw", "KQvKR.rtbz", "KRvK.rtbw", "KRvK.rtbz")
    (tables / "KQvK.rtbw").write_bytes((SYZYGY / "KQvK.rtbw").read_bytes()[:208])
    engine, seen = start(tmp_path, ("SyzygyPath", str(tables)))
    lines, move = search_once(engine, KQKR, "go depth 5")
    engine.close()
    assert len(reports(seen + lines, "KQvK.rtbw")) == 1
    board = chess.Board(KQKR)
    board.push_uci(move)
    with chess.syzygy.open_tablebase(str(SYZYGY)) as real:
        assert real.probe_wdl(board) == -2, f"{move} gives up the win"


# ---------------------------------------------------------------- item 2: Gaviota files


def _quits(engine: Engine) -> None:
    engine.send("quit")
    engine.proc.wait(10)  # raises TimeoutExpired if quit is ignored


def _peak_memory_mb(engine: Engine) -> float:
    with open(f"/proc/{engine.proc.pid}/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM")


@needs_syzygy
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="FIFOs and /proc")
def test_garbage_and_fifo_gaviota_files_are_refused(tmp_path: Path) -> None:
    gaviota = tmp_path / "gtb"
    gaviota.mkdir()
    os.mkfifo(gaviota / "kqk.gtb.cp4")
    (gaviota / "krk.gtb.cp4").write_bytes(random.Random(65).randbytes(4096))
    engine, seen = start(tmp_path, ("SyzygyPath", str(SYZYGY)), ("GaviotaTbPath", str(gaviota)))
    assert len(reports(seen, "kqk.gtb.cp4")) == 1 and len(reports(seen, "krk.gtb.cp4")) == 1
    for fen in (KQK, "8/8/8/4k3/8/8/8/KR6 w - - 0 1"):
        lines, _ = search_once(engine, fen, "go depth 4")
        assert "score cp" in info_lines(lines)[-1], "Syzygy's win, no Gaviota mate"
    assert _peak_memory_mb(engine) < 500
    _quits(engine)
    engine.close()


@needs_gaviota
def test_gaviota_table_corrupt_inside_is_dropped_when_probed(tmp_path: Path) -> None:
    """A valid header and block index over random blocks: refused at the first probe."""
    gaviota = tmp_path / "gtb"
    gaviota.mkdir()
    real = (GAVIOTA / "kqk.gtb.cp4").read_bytes()
    body = random.Random(65).randbytes(len(real) - 60)
    (gaviota / "kqk.gtb.cp4").write_bytes(real[:60] + body)  # 60: header and index
    engine, seen = start(tmp_path, ("GaviotaTbPath", str(gaviota)))
    assert any("Gaviota: 1 tables" in line for line in seen)
    lines, _ = search_once(engine, KQK, "go depth 4")
    lines2, _ = search_once(engine, KQK, "go depth 4")
    assert _peak_memory_mb(engine) < 500
    _quits(engine)
    engine.close()
    assert len(reports(lines + lines2, "kqk.gtb.cp4")) == 1
    assert " mate " not in " ".join(info_lines(lines2))


# ---------------------------------------------------------------- item 3: Gaviota alone


def _mate_in(fen: str) -> int:
    """The exact mate distance in moves by python-chess's own probe (negative: mated)."""
    with chess.gaviota.open_tablebase(str(GAVIOTA)) as tables:
        plies = tables.probe_dtm(chess.Board(fen))
    return (plies + 1) // 2 if plies > 0 else plies // 2


@needs_gaviota
@pytest.mark.parametrize(
    "fen",
    [
        "8/8/8/4k3/8/8/8/KR6 w - - 0 1",  # KRK, white mates
        "8/8/8/8/8/3k4/8/3KQ3 w - - 0 1",  # KQK
        "8/8/8/4k3/8/8/8/KR6 b - - 0 1",  # KRK, black is mated
    ],
)
def test_gaviota_alone_plays_and_reports_the_exact_mate(tmp_path: Path, fen: str) -> None:
    engine, seen = start(tmp_path, ("GaviotaTbPath", str(GAVIOTA)))
    assert any("Gaviota: 5 tables" in line for line in seen), seen
    lines, move = search_once(engine, fen, "go wtime 10000 btime 10000")
    engine.close()
    last = info_lines(lines)[-1]
    mate = _mate_in(fen)
    assert f" score mate {mate} " in last and int(field(last, "tbhits")) > 0, last
    board = chess.Board(fen)
    board.push_uci(move)
    if mate > 0:  # the move played keeps the shortest mate
        assert board.is_checkmate() or _mate_in(board.fen()) == -(mate - 1)


@needs_gaviota
def test_gaviota_alone_draws_and_tree_probes(tmp_path: Path) -> None:
    engine, _ = start(tmp_path, ("GaviotaTbPath", str(GAVIOTA)))
    lines, _ = search_once(engine, "8/8/8/4k3/8/8/4P3/4K3 w - - 0 1", "go depth 6")
    assert " score cp 0 " in info_lines(lines)[-1]  # KPK drawn, whatever the eval says
    # The queen takes the rook into KQK: looked up in the tree.
    lines, _ = search_once(engine, "8/8/8/8/3k4/8/3r4/3KQ3 w - - 0 1", "go depth 3")
    engine.close()
    assert int(field(info_lines(lines)[-1], "tbhits")) > 0


# ---------------------------------------------------------------- the safety net of go


FAULTY_PLAN = """
import sys
import engine.core.timeman

def plan(*args, **kwargs):
    raise RuntimeError("injected fault in the time plan")

engine.core.timeman.plan = plan
from engine.__main__ import main
sys.exit(main())
"""

FAULTY_TABLES = """
import sys
import engine.core.tablebase

def root(self, board):
    raise RuntimeError("injected fault in the tables")

engine.core.tablebase.Tablebases.root = root
from engine.__main__ import main
sys.exit(main())
"""


def test_failing_go_still_answers_with_a_legal_move(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fault injection: the time plan raises in a real cutoff process."""
    monkeypatch.setattr(uci_harness, "engine_command", lambda: [sys.executable, "-c", FAULTY_PLAN])
    engine, _ = start(tmp_path)
    lines, _ = search_once(engine, KQK, "go wtime 1000 btime 1000")
    assert len(reports(lines, "injected fault")) == 1
    # Waiting searches still wait: for stop, or for ponderhit.
    engine.send("go infinite")
    assert not [line for line in engine.quiet(0.5) if line.startswith("bestmove")]
    engine.send("stop")
    engine.expect("bestmove", timeout=10)
    engine.send("go ponder wtime 1000 btime 1000")
    assert not [line for line in engine.quiet(0.5) if line.startswith("bestmove")]
    engine.send("ponderhit")
    engine.expect("bestmove", timeout=10)
    engine.close()


def test_failing_tables_leave_the_search_to_play(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cmd = [sys.executable, "-c", FAULTY_TABLES]
    monkeypatch.setattr(uci_harness, "engine_command", lambda: cmd)
    engine, _ = start(tmp_path)
    lines, _ = search_once(engine, KQK, "go depth 3")
    engine.close()
    assert len(reports(lines, "injected fault")) == 1
    assert int(field(info_lines(lines)[-1], "depth")) == 3, "the search ran"
