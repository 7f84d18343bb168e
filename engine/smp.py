"""Lazy SMP: helper processes search the same root over one shared hash table.

Python runs one thread of Python at a time, so Cutoff's extra ``Threads`` are
processes. ``HelperPool`` puts the transposition table in shared memory
(``multiprocessing.shared_memory``, viewed as 64-bit words; engine.tt's slots are
safe to share without locks) with a small header before it:

    word 0          stop flag: nonzero ends every helper's search
    word 8 + i      helper i's node count, published as it searches

It starts ``threads - 1`` helper processes once (``spawn``, not per move) and keeps
them waiting. On ``go`` each helper searches the same root, odd helpers starting a
ply deeper so that they spread over the depths; they write into the shared
table, which is how they help: the main search finds their results there. The
main searcher alone reports and answers ``bestmove``; its ``info`` counts the
helpers' nodes too. When the main search ends, the stop flag ends the helpers.

Nothing outlives the engine: the segment's name is removed as soon as every
helper has attached (the memory lives on while mapped, and a killed engine
leaves nothing in /dev/shm), and a helper exits when its parent is gone. A
helper that dies is dropped with a note; the others go on. This module must not
print: notes go to the caller.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import time
from multiprocessing import shared_memory
from multiprocessing.connection import Connection
from typing import Any, Callable, Optional

import chess

from engine.search import SearchAbortedError, SearchControl, Searcher, SearchParams
from engine.tt import TranspositionTable, entries_for

HEADER_WORDS = 64
"""Words before the table: the stop flag and one node counter per helper."""
STOP_WORD = 0
NODES_WORD = 8
MAX_HELPERS = HEADER_WORDS - NODES_WORD
START_TIMEOUT_S = 60.0
"""How long the helpers may take to start (importing the engine, attaching)."""
STOP_TIMEOUT_S = 2.0
"""How long a stopped helper may take to report back before it is dropped."""
PARENT_CHECK_POLLS = 32
"""A searching helper checks every this many polls that its parent still lives."""


def _attach(name: str) -> shared_memory.SharedMemory:
    """Attach to the pool's segment. (Python registers it with the resource tracker
    the engine shares with its helpers; that is harmless, since the creator removes
    the name, which also takes it off the tracker's list.)"""
    return shared_memory.SharedMemory(name=name)


class _HelperSearcher(Searcher):
    """A searcher that publishes its node count and obeys the shared stop flag."""

    def __init__(self, tt: TranspositionTable, header: memoryview, index: int) -> None:
        super().__init__(tt)
        self._header = header
        self._slot = NODES_WORD + index
        self._parent = os.getppid()
        self._polls = 0

    def _poll(self) -> None:
        header = self._header
        header[self._slot] = self.nodes
        if header[STOP_WORD]:
            raise SearchAbortedError
        self._polls += 1
        if not self._polls % PARENT_CHECK_POLLS and os.getppid() != self._parent:
            os._exit(0)  # the engine is gone: nobody needs this search


def _helper_main(name: str, index: int, size_mb: int, connection: Connection) -> None:
    """A helper process: attach, say ready, then search every root it is sent."""
    segment = _attach(name)
    assert segment.buf is not None
    words = segment.buf.cast("Q")
    header = words[:HEADER_WORDS]
    table = TranspositionTable(size_mb, words=words[HEADER_WORDS:])
    searcher = _HelperSearcher(table, header, index)
    parent = os.getppid()
    connection.send(("ready", index))
    try:
        while True:
            if not connection.poll(1.0):
                if os.getppid() != parent:
                    return
                continue
            message = connection.recv()
            if message[0] != "go":
                return
            _, fen, moves, max_depth, age, start_depth = message
            board = chess.Board(fen)
            for move in moves:
                board.push_uci(move)
            # The search starts a new generation itself: one before the main's.
            table.age = (age - 1) & 0xFF
            nodes = depth = 0
            try:
                result = searcher.search(
                    board,
                    SearchParams(max_depth=max_depth, start_depth=start_depth),
                    SearchControl(),
                )
                nodes, depth = result.nodes, result.depth
            except Exception:
                nodes = searcher.nodes
            connection.send(("done", nodes, depth))
    except (EOFError, OSError):
        return
    finally:
        del header, table, searcher
        words.release()
        segment.close()


class HelperPool:
    """``threads - 1`` helper processes around one shared table (see the module doc)."""

    def __init__(self, threads: int, size_mb: int, note: Callable[[str], None]) -> None:
        self._note = note
        self.size_mb = size_mb
        count = entries_for(size_mb)
        self._segment = shared_memory.SharedMemory(create=True, size=(HEADER_WORDS + 2 * count) * 8)
        assert self._segment.buf is not None
        self._words = self._segment.buf.cast("Q")
        self._header = self._words[:HEADER_WORDS]
        self.table_words: memoryview = self._words[HEADER_WORDS:]
        context = multiprocessing.get_context("spawn")
        self._helpers: list[tuple[Any, Connection, int]] = []
        self._busy: set[int] = set()
        try:
            for index in range(min(threads - 1, MAX_HELPERS)):
                mine, theirs = context.Pipe()
                process = context.Process(
                    target=_helper_main,
                    args=(self._segment.name, index, size_mb, theirs),
                    name=f"cutoff-helper-{index}",
                    daemon=True,
                )
                process.start()
                theirs.close()
                self._helpers.append((process, mine, index))
            deadline = time.monotonic() + START_TIMEOUT_S
            for _, connection, index in list(self._helpers):
                if not connection.poll(max(0.0, deadline - time.monotonic())):
                    self._drop(index, "did not start")
                    continue
                connection.recv()
        finally:
            # Every helper has mapped the segment (or is gone): its name can go, so
            # that nothing is left in /dev/shm however the engine ends.
            self._segment.unlink()

    @property
    def helpers(self) -> int:
        return len(self._helpers)

    def start(self, board: chess.Board, max_depth: int, age: int) -> None:
        """Every helper searches ``board`` (its last plies too, for repetitions)."""
        self.wait_idle()
        self._header[STOP_WORD] = 0
        moves = [move.uci() for move in board.move_stack]
        fen = board.root().fen()
        for process, connection, index in list(self._helpers):
            self._header[NODES_WORD + index] = 0
            if not process.is_alive():
                self._drop(index, "died")
                continue
            try:
                connection.send(("go", fen, moves, max_depth, age, 1 + index % 2))
                self._busy.add(index)
            except OSError:
                self._drop(index, "died")

    def stop(self) -> None:
        """End the helpers' searches (at once: they read the flag every 64 nodes)."""
        self._header[STOP_WORD] = 1

    def nodes(self) -> int:
        """Nodes the helpers have searched in the current search."""
        return sum(self._header[NODES_WORD + index] for _, _, index in self._helpers)

    def wait_idle(self) -> None:
        """Collect the stopped helpers' reports; drop one that does not answer."""
        if not self._busy:
            return
        self.stop()
        deadline = time.monotonic() + STOP_TIMEOUT_S
        for process, connection, index in list(self._helpers):
            if index not in self._busy:
                continue
            try:
                if connection.poll(max(0.0, deadline - time.monotonic())):
                    connection.recv()
                    self._busy.discard(index)
                    continue
            except (EOFError, OSError):
                pass
            self._drop(index, "did not stop" if process.is_alive() else "died")

    def _drop(self, index: int, why: str) -> None:
        for entry in list(self._helpers):
            process, connection, number = entry
            if number == index:
                self._helpers.remove(entry)
                self._busy.discard(index)
                with contextlib.suppress(Exception):
                    process.kill()
                connection.close()
                self._note(f"helper {index} {why}: searching with {len(self._helpers) + 1}")

    def close(self) -> None:
        """Stop and end every helper and release the shared memory."""
        self.stop()
        for _, connection, _ in self._helpers:
            with contextlib.suppress(Exception):
                connection.send(("quit",))
        for process, connection, _ in self._helpers:
            process.join(1.0)
            if process.is_alive():
                process.kill()
                process.join(1.0)
            connection.close()
        self._helpers = []
        self._busy.clear()
        self.table_words.release()
        self._header.release()
        self._words.release()
        with contextlib.suppress(Exception):
            self._segment.close()


def make_pool(threads: int, size_mb: int, note: Callable[[str], None]) -> Optional[HelperPool]:
    """A pool for ``threads`` (None for one thread: no helpers, no shared memory)."""
    if threads <= 1:
        return None
    return HelperPool(threads, size_mb, note)
