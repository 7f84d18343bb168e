"""xboard users: Cutoff behind Debian's ``polyglot`` UCI-to-xboard adapter.

Skips when /usr/games/polyglot is absent. The test speaks xboard protocol to
polyglot (which speaks UCI to Cutoff), with a running clock, and plays a game
from a mate-in-2 position to its end: polyglot must announce the result.
"""

from __future__ import annotations

import queue
import subprocess
import threading
import time
from pathlib import Path

import chess
import pytest
from uci_harness import REPO, engine_command

POLYGLOT = Path("/usr/games/polyglot")
START = "r2qkb1r/pp2nppp/3p4/2pNN1B1/2BnP3/3P4/PPP2PPP/R2bK2R w KQkq - 1 1"

INI = """[PolyGlot]
EngineName = Cutoff
EngineDir = {engine_dir}
EngineCommand = {command}
Book = false
Log = false
Resign = false

[Engine]
Hash = 16
Move Overhead = 50
"""


@pytest.mark.skipif(not POLYGLOT.exists(), reason="polyglot is not installed")
def test_xboard_game_through_polyglot(tmp_path: Path) -> None:
    command = " ".join(engine_command())
    ini = tmp_path / "cutoff.ini"
    ini.write_text(INI.format(engine_dir=tmp_path, command=command))
    env = {"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"}
    proc = subprocess.Popen(
        [str(POLYGLOT), str(ini)],
        cwd=str(tmp_path),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env,
    )
    lines: queue.Queue[str] = queue.Queue()

    def read() -> None:
        assert proc.stdout is not None
        for raw in proc.stdout:
            lines.put(raw.decode(errors="replace").strip())

    threading.Thread(target=read, daemon=True).start()

    def send(text: str) -> None:
        assert proc.stdin is not None
        proc.stdin.write((text + "\n").encode())
        proc.stdin.flush()

    def wait_for(prefixes: tuple[str, ...], timeout: float = 15.0) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                line = lines.get(timeout=0.2)
            except queue.Empty:
                continue
            if line.startswith(prefixes):
                return line
        raise AssertionError(f"polyglot did not send {prefixes}")

    try:
        send("xboard")
        send("protover 2")
        wait_for(("feature done=1",))
        send("new")
        send("force")
        send(f"setboard {START}")
        send("level 0 1 0")
        send("time 6000")
        send("otim 6000")
        send("go")
        board = chess.Board(START)
        result = ""
        for _ in range(10):
            line = wait_for(("move ", "1-0", "0-1", "1/2-1/2"))
            if not line.startswith("move "):
                result = line
                break
            board.push_uci(line.split()[1])
            if board.is_game_over():
                result = wait_for(("1-0", "0-1", "1/2-1/2"))
                break
            reply = sorted(board.legal_moves, key=lambda m: m.uci())[0]
            board.push(reply)
            send("time 5000")
            send("otim 5000")
            send(f"usermove {reply.uci()}")
        assert result.startswith("1-0"), result
        assert board.is_checkmate()
        send("quit")
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
