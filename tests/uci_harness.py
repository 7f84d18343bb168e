"""Test helper: drive ``cutoff`` as a subprocess through pipes, like a GUI does.

Not a test module. The engine is started from a working directory outside the
repository (an engine must not depend on the cwd a GUI starts it in). Every line
the engine writes is recorded with its arrival time; ``close`` checks output
hygiene over the whole transcript.
"""

from __future__ import annotations

import contextlib
import os
import queue
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Callable, Optional, Union

import chess

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"

ALLOWED_PREFIXES = ("id ", "uciok", "readyok", "bestmove ", "info ", "option ")
INFO_INT_FIELDS = ("depth", "seldepth", "multipv", "nodes", "nps", "hashfull", "time")
UCI_MOVE = re.compile(r"^[a-h][1-8][a-h][1-8][qrbn]?$")


def engine_command() -> list[str]:
    """The installed ``cutoff`` launcher beside this interpreter, else ``python -m engine``."""
    launcher = Path(sys.executable).with_name("cutoff")
    if launcher.exists():
        return [str(launcher)]
    return [sys.executable, "-m", "engine"]


class Engine:
    """A running engine process with a line reader and a transcript."""

    def __init__(self, cwd: Path, protocol_only: bool = True) -> None:
        env = dict(os.environ)
        # The repo must be importable even without the editable install.
        env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            engine_command(),
            cwd=str(cwd),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        self.protocol_only = protocol_only
        self.lines: list[tuple[float, str]] = []
        self._queue: queue.Queue[tuple[float, Optional[str]]] = queue.Queue()
        self.stderr = b""
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self._err_reader = threading.Thread(target=self._read_err, daemon=True)
        self._err_reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            now = time.monotonic()
            line = raw.decode("ascii").rstrip("\n")
            assert "\r" not in line
            self.lines.append((now, line))
            self._queue.put((now, line))
        self._queue.put((time.monotonic(), None))

    def _read_err(self) -> None:
        assert self.proc.stderr is not None
        self.stderr = self.proc.stderr.read()

    def send(self, line: Union[str, bytes], newline: bool = True) -> float:
        """Write a line; returns the time it was written."""
        data = line.encode() if isinstance(line, str) else line
        if newline:
            data += b"\n"
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()
        return time.monotonic()

    def next_line(self, timeout: float) -> tuple[float, str]:
        try:
            stamp, line = self._queue.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no output within {timeout} s; tail: {self.tail()}") from None
        if line is None:
            raise AssertionError(f"engine exited; tail: {self.tail()}; stderr: {self.stderr!r}")
        return stamp, line

    def expect(
        self, match: Union[str, Callable[[str], bool]], timeout: float = 10.0
    ) -> tuple[float, str, list[str]]:
        """Read until a line starts with ``match`` (or satisfies it).

        Returns (arrival time, that line, all lines read including it).
        """
        deadline = time.monotonic() + timeout
        seen: list[str] = []
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"timed out waiting for {match!r}; saw {seen[-5:]}")
            stamp, line = self.next_line(remaining)
            seen.append(line)
            ok = match(line) if callable(match) else line.startswith(match)
            if ok:
                return stamp, line, seen

    def quiet(self, seconds: float) -> list[str]:
        """Lines that arrive within ``seconds`` (the caller usually wants none)."""
        deadline = time.monotonic() + seconds
        got: list[str] = []
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return got
            try:
                _, line = self._queue.get(timeout=remaining)
            except queue.Empty:
                return got
            if line is None:
                return got
            got.append(line)

    def handshake(self) -> None:
        self.send("uci")
        self.expect("uciok")
        self.send("isready")
        self.expect("readyok")

    def search(self, go: str, timeout: float = 30.0) -> tuple[list[str], str, float]:
        """Send a ``go`` line and wait for bestmove; returns (lines, bestmove line, seconds)."""
        sent = self.send(go)
        stamp, best, seen = self.expect("bestmove", timeout)
        return seen, best, stamp - sent

    def tail(self, n: int = 8) -> list[str]:
        return [line for _, line in self.lines[-n:]]

    def close(self, check: bool = True) -> None:
        if self.proc.poll() is None:
            with contextlib.suppress(OSError):
                self.send("quit")
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._reader.join(2)
        self._err_reader.join(2)
        if check:
            check_hygiene([line for _, line in self.lines], self.protocol_only)
            assert b"Traceback" not in self.stderr, self.stderr.decode(errors="replace")


def check_hygiene(lines: list[str], protocol_only: bool = True) -> None:
    """known prefixes, ASCII, integer info fields, lowercase well-formed PV moves."""
    for line in lines:
        assert line.isascii(), line
        if protocol_only:
            assert line.startswith(ALLOWED_PREFIXES) or line in ("uciok", "readyok"), line
        if line.startswith("info ") and not line.startswith("info string"):
            tokens = line.split()
            for name in INFO_INT_FIELDS:
                if name in tokens:
                    value = tokens[tokens.index(name) + 1]
                    assert re.fullmatch(r"-?\d+", value), line
            if "score" in tokens:
                kind, value = tokens[tokens.index("score") + 1 : tokens.index("score") + 3]
                assert kind in ("cp", "mate") and re.fullmatch(r"-?\d+", value), line
            if "pv" in tokens:
                for move in tokens[tokens.index("pv") + 1 :]:
                    assert UCI_MOVE.match(move), line
        if line.startswith("bestmove "):
            tokens = line.split()
            assert tokens[1] == "(none)" or UCI_MOVE.match(tokens[1]), line


def info_lines(lines: list[str]) -> list[str]:
    return [line for line in lines if line.startswith("info ") and " score " in line]


def field(line: str, name: str) -> str:
    tokens = line.split()
    return tokens[tokens.index(name) + 1]


def pv_of(line: str) -> list[str]:
    tokens = line.split()
    return tokens[tokens.index("pv") + 1 :] if "pv" in tokens else []


def bestmove_of(line: str) -> str:
    return line.split()[1]


def ponder_of(line: str) -> Optional[str]:
    tokens = line.split()
    return tokens[3] if len(tokens) >= 4 and tokens[2] == "ponder" else None


def assert_pvs_legal(lines: list[str], board: chess.Board) -> None:
    """every PV is legal from the root (UCI notation of ``board.chess960``)."""
    for line in info_lines(lines):
        replay = board.copy()
        for text in pv_of(line):
            move = replay.parse_uci(text)
            assert replay.uci(move) == text, (line, text)
            replay.push(move)
