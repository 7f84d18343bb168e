"""The UCI session: the only module that reads stdin and writes stdout.

Three threads cooperate:

* the reader (the caller of ``UciSession.run``) reads lines, decodes them
  leniently and handles what must never wait: ``isready`` during a search,
  ``stop``, ``ponderhit``, ``debug`` and ``quit``/EOF;
* the command thread executes everything else in arrival order; commands that
  need an idle engine (``position``, ``setoption``, ``ucinewgame``, ``go``, ...)
  wait there for the running search to end, as Stockfish's do. A search that
  only ``stop`` can end (infinite or ponder) is stopped first when a newer
  ``go`` is waiting behind it, so a confused GUI cannot deadlock us;
* the controller's worker thread runs the search.

All output goes through one ``LineWriter``: whole lines, ASCII, flushed, under
a lock. Unknown commands are ignored silently (UCI T-04/T-05); bad arguments
give one ``info string``. The heavy modules (search, TT) are imported only
after the first ``uciok`` so the handshake is fast. This module must not
search, evaluate, or decide time budgets.
"""

from __future__ import annotations

import re
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, BinaryIO, Optional

import chess

from engine import ENGINE_AUTHOR, ENGINE_NAME, __version__
from engine.limits import parse_go
from engine.options import OptionError, Options, parse_setoption, uci_option_lines

if TYPE_CHECKING:
    from engine.controller import Controller

MAX_LINE_BYTES = 1 << 20
"""Longer input lines are discarded: a 6,000-ply move list is ~30 kB."""

COMMANDS = frozenset(
    {
        "uci",
        "debug",
        "isready",
        "setoption",
        "register",
        "ucinewgame",
        "position",
        "go",
        "stop",
        "ponderhit",
        "quit",
        "bench",
        "d",
        "eval",
    }
)

# position validity problems that would break the search's assumptions; other
# oddities (a bogus en-passant square, too many checkers) python-chess copes with.
_FATAL_STATUS = (
    chess.STATUS_EMPTY
    | chess.STATUS_NO_WHITE_KING
    | chess.STATUS_NO_BLACK_KING
    | chess.STATUS_TOO_MANY_KINGS
    | chess.STATUS_OPPOSITE_CHECK
    | chess.STATUS_PAWNS_ON_BACKRANK
)


class PositionError(ValueError):
    """A ``position`` command that cannot be applied; the message names the problem."""


def _clean(text: str, limit: int = 80) -> str:
    cleaned = "".join(c if " " <= c <= "~" else "?" for c in text)
    return cleaned if len(cleaned) <= limit else cleaned[: limit - 3] + "..."


def parse_position(tokens: list[str], chess960: bool) -> chess.Board:
    """Build the board of ``position startpos|fen <FEN> [moves ...]`` (tokens after it)."""
    lowered = [t.lower() for t in tokens]
    start = next((i for i, t in enumerate(lowered) if t in ("startpos", "fen")), None)
    if start is None:
        raise PositionError("position: expected 'startpos' or 'fen'")
    moves_at = lowered.index("moves", start) if "moves" in lowered[start:] else len(tokens)
    if lowered[start] == "startpos":
        board = chess.Board(chess960=chess960)
    else:
        fen = " ".join(tokens[start + 1 : moves_at])
        if not fen:
            raise PositionError("position: missing FEN")
        try:
            board = chess.Board(fen, chess960=chess960)
        except ValueError as exc:
            raise PositionError(f"invalid FEN '{_clean(fen)}': {_clean(str(exc))}") from None
        status = board.status()
        if status & _FATAL_STATUS:
            raise PositionError(f"impossible position in FEN '{_clean(fen)}'")
    for ply, text in enumerate(tokens[moves_at + 1 :], start=1):
        try:
            move = board.parse_uci(text.lower())
        except ValueError:
            move = chess.Move.null()
        if not move:
            raise PositionError(f"illegal move '{_clean(text)}' at ply {ply}")
        board.push(move)
    return board


class LineWriter:
    """Serialised, flushed, whole-line output (T-02, T-11); ASCII only (T-10)."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        self._lock = threading.Lock()
        self._closed = False

    def write(self, line: str) -> None:
        data = (line + "\n").encode("ascii", "replace")
        with self._lock:
            if self._closed:
                return
            try:
                self._stream.write(data)
                self._stream.flush()
            except (OSError, ValueError):
                # The GUI closed our stdout: nobody listens any more.
                self._closed = True

    def close(self) -> None:
        with self._lock:
            self._closed = True


@dataclass
class Command:
    name: str
    args: list[str]
    raw_args: str
    received_at: float


def parse_command(text: str, received_at: float) -> Optional[Command]:
    """The first known command word in ``text`` and what follows it (T-03, T-04)."""
    for match in re.finditer(r"\S+", text):
        word = match.group().lower()
        if word in COMMANDS:
            rest = text[match.end() :]
            return Command(word, rest.split(), rest, received_at)
        if word.startswith("#"):
            return None  # a comment line (as Stockfish allows)
    return None


QUIT_DRAIN_SECONDS = 2.0
"""After ``quit``, queued commands get this long before the process exits."""


class UciSession:
    """One UCI conversation over a pair of binary streams."""

    def __init__(self, stdin: BinaryIO, stdout: BinaryIO) -> None:
        self._in = stdin
        self.writer = LineWriter(stdout)
        self.options = Options()
        self.debug = False
        self._controller: Optional[Controller] = None
        self._queue: deque[Command] = deque()
        self._cond = threading.Condition()
        self._executing: Optional[Command] = None
        self._eof_done = threading.Event()
        self._worker = threading.Thread(target=self._command_loop, name="cutoff-commands")
        self._worker.daemon = True

    # ----------------------------------------------------------------- reader

    def run(self) -> int:
        """Read and dispatch until ``quit`` or end of input; returns the exit code."""
        self._worker.start()
        try:
            while True:
                raw = self._read_line()
                if raw is None:
                    self._drain()  # EOF is quit, after what came before it (T-13)
                    break
                received_at = time.monotonic()
                command = parse_command(raw.decode("utf-8", "replace"), received_at)
                if command is None:
                    continue
                if command.name == "quit":
                    # Exit promptly, but still answer what came before quit in the same
                    # burst (piped scripts): stop a search, give the queue a moment.
                    if self._controller is not None:
                        self._controller.stop()
                    self._drain(timeout=QUIT_DRAIN_SECONDS)
                    break
                self._dispatch(command)
        except KeyboardInterrupt:
            pass
        self._shutdown()
        return 0

    def _read_line(self) -> Optional[bytes]:
        line = self._in.readline(MAX_LINE_BYTES + 1)
        if not line:
            return None
        if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):
            while True:
                chunk = self._in.readline(MAX_LINE_BYTES)
                if not chunk or chunk.endswith(b"\n"):
                    break
            self.info_string(f"input line longer than {MAX_LINE_BYTES} bytes ignored")
            return b""
        return line

    def _dispatch(self, command: Command) -> None:
        name = command.name
        controller = self._controller
        if name == "isready" and controller is not None and controller.is_busy():
            self.writer.write("readyok")  # at once, the search goes on
        elif name == "debug":
            self.debug = bool(command.args) and command.args[0].lower() == "on"
        elif name in ("stop", "ponderhit"):
            with self._cond:
                if self._go_pending_locked():
                    # It belongs to a `go` that has not started yet: keep the order.
                    self._queue.append(command)
                    self._cond.notify_all()
                    return
            if controller is not None:
                if name == "stop":
                    controller.stop()
                else:
                    controller.ponderhit(command.received_at)
        else:
            with self._cond:
                self._queue.append(command)
                self._cond.notify_all()

    def _drain(self, timeout: Optional[float] = None) -> None:
        """Let the command thread finish the queue; searches only stop can end are stopped."""
        done = threading.Event()
        with self._cond:
            self._queue.append(Command("eof", [], "", time.monotonic()))
            self._eof_done = done
            self._cond.notify_all()
        done.wait(timeout)

    def _go_pending_locked(self) -> bool:
        executing = self._executing
        return (executing is not None and executing.name == "go") or any(
            c.name == "go" for c in self._queue
        )

    def _shutdown(self) -> None:
        if self._controller is not None:
            self._controller.shutdown()
        self.writer.close()

    # ---------------------------------------------------------- command thread

    def _command_loop(self) -> None:
        while True:
            with self._cond:
                while not self._queue:
                    self._cond.wait()
                command = self._queue.popleft()
                self._executing = command
            try:
                self._execute(command)
            except Exception as exc:
                self.info_string(f"error in '{command.name}': {type(exc).__name__}: {exc}")
            finally:
                with self._cond:
                    self._executing = None

    def info_string(self, text: str) -> None:
        self.writer.write("info string " + _clean(text, 200))

    def _ensure_controller(self) -> Controller:
        if self._controller is None:
            from engine.controller import Controller

            self._controller = Controller(self.writer.write, self.options, lambda: self.debug)
        return self._controller

    def _wait_idle(self, controller: Controller, is_go: bool) -> None:
        """Wait for the running search to end.

        A search that only stop/ponderhit can end must not block the queue for
        ever: a stop or ponderhit waiting in the queue (queued there because its
        go had not started when it arrived) is applied now, and a newer go (or
        EOF) ends the search, as if stop had come.
        """
        while not controller.wait_idle(0.05):
            if not controller.is_awaiting_stop():
                continue
            signal: Optional[Command] = None
            with self._cond:
                for queued in self._queue:
                    if queued.name in ("stop", "ponderhit", "go", "eof"):
                        signal = queued
                        break
                if signal is not None and signal.name in ("stop", "ponderhit"):
                    self._queue.remove(signal)
            if signal is not None and signal.name == "ponderhit":
                controller.ponderhit(signal.received_at)
            elif is_go or signal is not None:
                controller.stop()

    def _execute(self, command: Command) -> None:
        name = command.name
        if name == "uci":
            self._uci()
            self._ensure_controller()  # heavy imports after uciok, before readyok (T-07)
            return
        if name == "register":
            return
        if name == "eof":
            if self._controller is not None:
                self._wait_idle(self._controller, is_go=True)
            self._eof_done.set()
            return
        controller = self._ensure_controller()
        if name == "isready":
            self.writer.write("readyok")
            return
        if name in ("stop", "ponderhit"):
            # Queued behind its `go`, which has started by now.
            if name == "stop":
                controller.stop()
            else:
                controller.ponderhit(command.received_at)
            return
        self._wait_idle(controller, is_go=name == "go")
        if name == "setoption":
            self._setoption(controller, command.raw_args)
        elif name == "ucinewgame":
            controller.new_game()
        elif name == "position":
            try:
                controller.set_board(parse_position(command.args, controller.chess960))
            except PositionError as exc:
                self.info_string(f"{exc}; position unchanged")
        elif name == "go":
            self._go(controller, command)
        elif name == "bench":
            depth = _first_int(command.args)
            controller.bench(depth)
        elif name == "d":
            for line in controller.display():
                self.writer.write(line)
        elif name == "eval":
            for line in controller.evaluation():
                self.writer.write(line)

    def _uci(self) -> None:
        self.writer.write(f"id name {ENGINE_NAME} {__version__}")
        self.writer.write(f"id author {ENGINE_AUTHOR}")
        for line in uci_option_lines():
            self.writer.write(line)
        self.writer.write("uciok")

    def _setoption(self, controller: Controller, raw_args: str) -> None:
        try:
            name, value = parse_setoption(raw_args)
        except OptionError as exc:
            self.info_string(str(exc))
            return
        if self.options.spec(name) is None:
            if self.debug:
                self.info_string(f"no such option: {name}")
            return  # unknown options are ignored silently (TC-14)
        try:
            controller.set_option(name, value)
        except OptionError as exc:
            self.info_string(str(exc))

    def _go(self, controller: Controller, command: Command) -> None:
        limits, warnings = parse_go(command.args)
        for warning in warnings:
            self.info_string(warning)
        if limits.perft is not None:
            controller.perft(limits.perft)
        else:
            controller.go(limits, command.received_at)


def _first_int(args: list[str]) -> Optional[int]:
    for arg in args:
        try:
            return max(1, min(64, int(arg)))
        except ValueError:
            continue
    return None


def run(stdin: Optional[BinaryIO] = None, stdout: Optional[BinaryIO] = None) -> int:
    """Run a UCI session on the process's stdin/stdout (or the given streams)."""
    import sys

    session = UciSession(stdin or sys.stdin.buffer, stdout or sys.stdout.buffer)
    return session.run()
