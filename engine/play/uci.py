"""The UCI session: the only module that reads stdin and writes stdout.

Three threads cooperate:

* the reader (the caller of ``UciSession.run``) reads lines, decodes them
  leniently and handles what must never wait: ``isready`` while a search runs
  or is about to, ``stop``, ``ponderhit``, ``debug`` and ``quit``/EOF;
* the command thread executes everything else in arrival order; commands that
  need an idle engine (``position``, ``setoption``, ``ucinewgame``, ``go``, ...)
  wait there for the running search to end, as Stockfish's do. A search that
  only ``stop`` can end (infinite or ponder) is stopped first when a newer
  ``go`` is waiting behind it, so a confused GUI cannot deadlock us;
* the controller's worker thread runs the search.

The UCI rule is that ``isready`` is answered at once and ``stop`` ends the
current search at once, whatever else is queued. So neither ever waits in the
queue: a ``stop`` (or ``ponderhit``) that arrives before its ``go`` has started
is attached to that ``go`` and applied the moment it starts, and a ``stop``
also ends the search that is running, so that a ``position`` queued behind it
cannot hold it up.

All output goes through one ``LineWriter``: whole lines, ASCII, flushed, under
a lock. Unknown commands are ignored silently, as the UCI text asks; bad arguments
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

from engine import ENGINE_AUTHOR, ENGINE_NAME, __version__
from engine.core.limits import parse_go
from engine.play.boards import PositionError, PositionParser
from engine.play.options import (
    UCI_SHOW_WDL,
    OptionError,
    Options,
    parse_setoption,
    uci_option_lines,
)
from engine.play.uci_text import TextOutput, board_lines, printable

if TYPE_CHECKING:
    from engine.play.controller import Controller

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


class LineWriter:
    """Serialised, flushed, whole-line output in ASCII.

    Lines from the search thread and the command thread must never interleave,
    and a GUI waits for a line that sits unflushed in a buffer: each write is one
    whole line, under a lock, flushed at once.
    """

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
    stop_requested: bool = False
    """``go`` only: a ``stop`` arrived before this search started."""
    ponderhit_at: Optional[float] = None
    """``go`` only: when a ``ponderhit`` arrived before this search started."""


def parse_command(text: str, received_at: float) -> Optional[Command]:
    """The first known command word in ``text`` and what follows it.

    The UCI text says to skip unknown tokens before a command ("joho debug on"
    is ``debug on``); a line starting with ``#`` is a comment, as in Stockfish.
    """
    for match in re.finditer(r"\S+", text):
        word = match.group().lower()
        if word in COMMANDS:
            rest = text[match.end() :]
            return Command(word, rest.split(), rest, received_at)
        if word.startswith("#"):
            return None  # a comment line (as Stockfish allows)
    return None


QUIT_DRAIN_SECONDS = 2.0
"""After ``quit`` or end of input, queued commands get this long before any search
is stopped (piped scripts still see a short search)."""
QUIT_FINISH_SECONDS = 8.0
"""Then the rest of the queue, every search stopped at once, gets at most this long:
on a loaded machine the first ``uci`` alone (the heavy imports) can take seconds, and
a queued ``go`` must still get its ``bestmove``."""


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
        self._positions = PositionParser()
        self._busy = False
        """The command thread is executing a command (under ``_cond``)."""
        self._waiting_for_search = False
        """The command thread waits for the running search to end (under ``_cond``)."""
        self._pending_gos: list[Command] = []
        """``go`` commands dispatched but not yet started (under ``_cond``)."""
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
                    # EOF: nobody will send stop, and a GUI that died must not leave
                    # a search running. What came before EOF gets a short grace.
                    self._finish()
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
                    self._finish()
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
        if name == "debug":
            self.debug = bool(command.args) and command.args[0].lower() == "on"
        elif name == "stop":
            self._signal_stop()
        elif name == "ponderhit":
            self._signal_ponderhit(command.received_at)
        else:
            with self._cond:
                if name == "isready" and (
                    self._queue_blocked_locked() or not (self._busy or self._queue)
                ):
                    # At once: nothing before it is running or it all waits
                    # for a search. Otherwise in turn, so that readyok still means
                    # that the commands before it (position, setoption) are done.
                    self.writer.write("readyok")
                    return
                if name == "go":
                    self._pending_gos.append(command)
                self._queue.append(command)
                self._cond.notify_all()

    def _queue_blocked_locked(self) -> bool:
        """True while the command thread waits for a search that is still working."""
        controller = self._controller
        return self._waiting_for_search and controller is not None and controller.is_working()

    def _answer_queued_isready_locked(self) -> None:
        """Answer every queued ``isready`` at once: the queue waits for a search."""
        waiting = [c for c in self._queue if c.name == "isready"]
        for command in waiting:
            self._queue.remove(command)
            self.writer.write("readyok")

    def _signal_stop(self) -> None:
        """``stop``: end the running search and every ``go`` dispatched before this."""
        with self._cond:
            for go in self._pending_gos:
                go.stop_requested = True
        if self._controller is not None:
            self._controller.stop()

    def _signal_ponderhit(self, received_at: float) -> None:
        """``ponderhit`` belongs to the latest ``go``, started or not."""
        with self._cond:
            if self._pending_gos:
                self._pending_gos[-1].ponderhit_at = received_at
                return
        if self._controller is not None:
            self._controller.ponderhit(received_at)

    def _finish(self) -> None:
        """``quit`` or EOF: let the command thread finish the queue.

        Searches only stop can end are stopped at once; others get
        ``QUIT_DRAIN_SECONDS``. Then every search, running or queued, is stopped as
        it starts, so each queued ``go`` still answers, within ``QUIT_FINISH_SECONDS``.
        """
        done = threading.Event()
        with self._cond:
            self._queue.append(Command("eof", [], "", time.monotonic()))
            self._eof_done = done
            self._cond.notify_all()
        if done.wait(QUIT_DRAIN_SECONDS):
            return
        with self._cond:
            for command in self._queue:
                if command.name == "go":
                    command.stop_requested = True
            for go in self._pending_gos:
                go.stop_requested = True
        if self._controller is not None:
            self._controller.stop()
        done.wait(QUIT_FINISH_SECONDS)

    def _shutdown(self) -> None:
        if self._controller is not None:
            self._controller.shutdown()
        self.writer.close()

    # ---------------------------------------------------------- command thread

    def _command_loop(self) -> None:
        while True:
            with self._cond:
                self._busy = False
                while not self._queue:
                    self._cond.wait()
                command = self._queue.popleft()
                self._busy = True
            try:
                self._execute(command)
            except Exception as exc:
                self.info_string(f"error in '{command.name}': {type(exc).__name__}: {exc}")
            finally:
                if command.name == "go":
                    self._started(command)

    def _started(self, go: Command) -> None:
        """``go`` has started (or failed to): apply the signals that came before."""
        with self._cond:
            self._pending_gos = [g for g in self._pending_gos if g is not go]
        controller = self._controller
        if controller is None:
            return
        if go.ponderhit_at is not None:
            controller.ponderhit(go.ponderhit_at)
        if go.stop_requested:
            controller.stop()

    def info_string(self, text: str) -> None:
        self.writer.write("info string " + printable(text, 200))

    def _ensure_controller(self) -> Controller:
        if self._controller is None:
            from engine.play.controller import Controller

            self._controller = Controller(
                TextOutput(self.writer.write, lambda: self.options.get_bool(UCI_SHOW_WDL)),
                self.options,
                lambda: self.debug,
            )
        return self._controller

    def _wait_idle(self, controller: Controller, is_go: bool) -> None:
        """Wait for the running search to end.

        A search that only stop/ponderhit can end must not block the queue for
        ever: a newer ``go`` (or EOF), executing or queued, ends it, as if
        ``stop`` had come.
        """
        if controller.wait_idle(0):
            return
        with self._cond:
            self._waiting_for_search = True
        try:
            while True:
                with self._cond:
                    if controller.is_working():
                        self._answer_queued_isready_locked()
                    newer = is_go or any(c.name in ("go", "eof") for c in self._queue)
                if newer and controller.is_awaiting_stop():
                    controller.stop()
                if controller.wait_idle(0.02):
                    break
        finally:
            with self._cond:
                self._waiting_for_search = False

    def _execute(self, command: Command) -> None:
        name = command.name
        if name == "uci":
            self._uci()
            self._ensure_controller()  # heavy imports after uciok, before readyok: GUIs time uci
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
        self._wait_idle(controller, is_go=name == "go")
        if name == "setoption":
            self._setoption(controller, command.raw_args)
        elif name == "ucinewgame":
            controller.new_game()
        elif name == "position":
            try:
                controller.set_board(self._positions.parse(command.args, controller.chess960))
            except PositionError as exc:
                self.info_string(f"{exc}; position unchanged")
        elif name == "go":
            self._go(controller, command)
        elif name == "bench":
            depth = _first_int(command.args)
            controller.bench(depth)
        elif name == "d":
            for line in board_lines(controller.board):
                self.writer.write(line)
        elif name == "eval":
            for line in controller.evaluation_lines():
                self.writer.write(line)

    def _uci(self) -> None:
        self.writer.write(f"id name {ENGINE_NAME} {__version__}")
        self.writer.write(f"id author {ENGINE_AUTHOR}")
        for line in uci_option_lines():
            self.writer.write(line)
        # Which build this is, for the records of matches (read before uciok, where
        # GUIs ignore it): the version alone does not change between commits.
        from engine.compiled import build_identity

        self.info_string(f"{ENGINE_NAME} {__version__}, {build_identity()}")
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
            return  # unknown options are ignored silently, as the UCI text asks
        try:
            controller.set_option(name, value)
        except OptionError as exc:
            self.info_string(str(exc))

    def _go(self, controller: Controller, command: Command) -> None:
        limits, warnings = parse_go(command.args)
        if warnings:
            # One line per go: a GUI log shows what was wrong with it at a glance.
            self.info_string("go: " + "; ".join(warnings))
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
