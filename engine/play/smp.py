"""Lazy SMP: helper processes search the same root over one shared hash table.

Python runs one thread of Python at a time, so Cutoff's extra ``Threads`` are
processes. ``HelperPool`` puts the transposition table in shared memory
(``multiprocessing.shared_memory``, viewed as 64-bit words; engine.core.tt's slots are
safe to share without locks) with a small header before it:

    word 0          stop flag: nonzero ends every helper's search
    word 1          the depth the main search has completed in this search
    word 2          the search's node limit (0: none), for all threads together
    word 3          the main search's node count, published as it searches
    word 8 + 2i     helper i's node count, published as it searches
    word 9 + 2i     helper i's deepest completed iteration: depth, move, score

It starts ``threads - 1`` helper processes once (not per move; engine.processes, so
that a script without a main guard can search with helpers too) and keeps them
waiting. On ``go`` each helper searches the same root, always a ply or two
ahead of the main search (a helper that finishes an iteration skips to the main
search's current depth + 1, odd helpers + 2): searching the same depth as the
main search would mostly repeat its work, while the deeper helper fills the
shared table with the entries the main search's next iteration needs. The main
searcher alone reports and answers ``bestmove``; when a helper has completed a
deeper iteration than the main search by then, its move is played (see
``HelperPool.deepest``). Its ``info`` counts the helpers' nodes too. When the
main search ends, the stop flag ends the helpers.

A node limit (``go nodes N``) bounds the nodes of all the threads together, as in
Stockfish: every thread publishes its count whenever it polls its limits (every
``POLL_INTERVAL_NODES`` nodes, fewer for small limits), adds up the published
counts, and the first to see N reached raises the stop flag, which ends all the
others at their next poll. (Shares of the budget, N / Threads each, would stop a
thread early while another still had nodes to spend.) Each count is at most one
poll interval behind, so the whole search overshoots N by less than one interval
per thread: 64 nodes a thread, at most 128 for Threads 2.

The table must fit in /dev/shm, a tmpfs that a container may keep small (Docker:
64 MB), where a write to a page the filesystem has no room for is a SIGBUS. So the
pool checks the free space first (``fit_shared_mb``: a smaller table that fits,
with a note, or none: the caller searches alone) and has every page of the segment
backed at once (``posix_fallocate``), so that no later write can fail.

Nothing outlives the engine (or the ``Analyser`` closing its pool): the helpers
are told the segment's name before it is made, and the name is removed as soon as
every helper has attached (the memory lives on while mapped); a helper exits when
its parent is gone, quietly (no traceback), removing the name itself if the engine
was killed before it could. multiprocessing's resource tracker, a process that
would live as long as the engine, is not used. A helper that dies is dropped with
a note; the others go on. This module must not print: notes go to the caller.
"""

from __future__ import annotations

import contextlib
import errno
import importlib
import os
import secrets
import threading
import time
from array import array
from collections.abc import Iterator
from multiprocessing import resource_tracker, shared_memory
from multiprocessing.connection import Connection
from typing import Callable, Optional

import chess

from engine import processes
from engine.core.movepick import move_code
from engine.core.nnue import NetworkError
from engine.core.nnue import load as load_network
from engine.core.search import (
    IterationInfo,
    SearchAbortedError,
    SearchControl,
    Searcher,
    SearchParams,
)
from engine.core.tt import TranspositionTable, entries_for

SHM_DIR = "/dev/shm"
"""Where ``multiprocessing.shared_memory`` puts its segments on Linux (glibc's
``shm_open``): a tmpfs whose size bounds the shared table. Docker gives a container
64 MB; a write to a page of a segment that tmpfs has no room for kills the process
with SIGBUS. (Elsewhere, macOS say, there is no such folder and no such check.)"""
MB = 1 << 20
SHM_KEEP_FREE_SHARE = 8
"""The shared table leaves an eighth of the free shared memory (at least ``MB``) to
the other users of /dev/shm: multiprocessing's semaphores, another engine."""
MIN_SHARED_MB = 8
"""A shared table smaller than this (and than the Hash asked for) is not worth a
helper: the engine searches alone with its whole Hash in its own memory instead."""

HEADER_WORDS = 136
"""Words before the table: the flags and two words per helper (see the module doc)."""
STOP_WORD = 0
MAIN_DEPTH_WORD = 1
NODE_LIMIT_WORD = 2
MAIN_NODES_WORD = 3
HELPER_WORD = 8
WORDS_PER_HELPER = 2
MAX_HELPERS = (HEADER_WORDS - HELPER_WORD) // WORDS_PER_HELPER
_SCORE_OFFSET = 1 << 15
_RESULT_VALID = 1 << 40
"""Set in every published result, so that an empty word (0) is no result."""


def pack_result(depth: int, code: int, score: int) -> int:
    """One helper result as one word (written at once, so never read torn)."""
    return _RESULT_VALID | (depth & 0xFF) | (code & 0xFFFF) << 8 | (score + _SCORE_OFFSET) << 24


def unpack_result(word: int) -> Optional[tuple[int, int, int]]:
    """``(depth, move code, score)`` of a published result, or None for none."""
    if not word & _RESULT_VALID:
        return None
    return word & 0xFF, word >> 8 & 0xFFFF, (word >> 24 & 0xFFFF) - _SCORE_OFFSET


ATTACH_POLL_S = 0.01
"""How often a starting helper looks for the segment the engine is making."""
START_TIMEOUT_S = 60.0
"""How long the helpers may take to start (importing the engine, attaching)."""
STOP_TIMEOUT_S = 2.0
"""How long a stopped helper may take to report back before it is dropped."""
PARENT_CHECK_POLLS = 32
"""A searching helper checks every this many polls that its parent still lives."""


def helper_slot(index: int) -> int:
    """The header word of helper ``index``'s node count (its result is the next)."""
    return HELPER_WORD + WORDS_PER_HELPER * index


def total_nodes(header: memoryview, slots: int) -> int:
    """The nodes of the current search as published: the main search's and those
    of the first ``slots`` helpers."""
    total = header[MAIN_NODES_WORD]
    for index in range(slots):
        total += header[helper_slot(index)]
    return int(total)


def publish_nodes(header: memoryview, word: int, nodes: int, slots: int) -> None:
    """One thread's poll: publish its ``nodes`` at ``word``, and end its search
    (``SearchAbortedError``) when the stop flag is up or the threads together (the
    main search and ``slots`` helpers) have reached the node limit, raising the flag
    for the others."""
    header[word] = nodes
    if header[STOP_WORD]:
        raise SearchAbortedError
    limit = header[NODE_LIMIT_WORD]
    if limit and total_nodes(header, slots) >= limit:
        header[STOP_WORD] = 1  # the others stop at their next poll
        raise SearchAbortedError


def segment_bytes(size_mb: int) -> int:
    """Bytes of a pool's segment: the header and a table of ``size_mb``."""
    return (HEADER_WORDS + 2 * entries_for(size_mb)) * 8


def shm_free_bytes(path: str = SHM_DIR) -> Optional[int]:
    """Bytes free for shared memory (``statvfs`` of ``path``), None when unknown."""
    try:
        stats = os.statvfs(path)
    except (OSError, AttributeError):  # no such folder; no statvfs (Windows)
        return None
    return stats.f_bavail * stats.f_frsize


def fit_shared_mb(size_mb: int, free: Optional[int]) -> int:
    """The size of the shared table for a ``Hash`` of ``size_mb`` when ``free``
    bytes of shared memory are free: ``size_mb`` if it fits (or ``free`` is unknown)
    beside what is left to others, else the most that does; 0 when that is less
    than ``MIN_SHARED_MB`` and than ``size_mb``: no room to share a table."""
    if free is None:
        return size_mb
    room = free - max(MB, free // SHM_KEEP_FREE_SHARE) - HEADER_WORDS * 8
    fit = min(size_mb, max(0, room) // MB)
    return fit if fit >= min(size_mb, MIN_SHARED_MB) else 0


class SharedMemoryFullError(OSError):
    """Too little shared memory is free for a shared table (see ``fit_shared_mb``)."""


def _reserve(segment: shared_memory.SharedMemory, size: int) -> None:
    """Have the filesystem back every page of a new segment now, so that no later
    write can find it full (SIGBUS): ``ftruncate`` only sets the size. Raises
    SharedMemoryFullError when it cannot; where the call or the filesystem lacks
    this, the free-space check before is all there is."""
    fd = getattr(segment, "_fd", -1)  # POSIX: the segment's descriptor, kept open
    if fd < 0 or not hasattr(os, "posix_fallocate"):
        return
    try:
        os.posix_fallocate(fd, 0, size)
    except OSError as error:
        if error.errno in (errno.ENOSPC, errno.ENOMEM, errno.EFBIG):
            raise SharedMemoryFullError(
                error.errno, f"no room for a {size // MB} MB shared table in {SHM_DIR}"
            ) from error
        # EOPNOTSUPP, EINVAL...: the filesystem cannot reserve; go on unreserved.


@contextlib.contextmanager
def _stderr_relay() -> Iterator[Optional[int]]:
    """A pipe for the helpers' stdout and stderr, which a thread of the engine copies
    to its own stderr: once the engine is gone, what they write goes nowhere (nothing
    is printed after the engine's death), and nothing of theirs can reach the engine's
    stdout, the UCI protocol. Yields the pipe's end to hand to them (None where there
    is no stderr to copy to, or not POSIX: then they inherit the engine's)."""
    if os.name != "posix":
        yield None
        return
    try:
        original = os.dup(2)
    except OSError:
        yield None
        return
    source, sink = os.pipe()
    threading.Thread(
        target=_relay, args=(source, original), name="cutoff-helper-stderr", daemon=True
    ).start()
    try:
        yield sink
    finally:
        os.close(sink)  # the helpers hold it now: the relay ends when the last one does


def _relay(source: int, target: int) -> None:
    """Copy ``source`` to ``target`` until every writer has closed ``source``."""
    try:
        while chunk := os.read(source, 65536):
            with contextlib.suppress(OSError):  # a closed stderr: drain all the same
                while chunk:
                    chunk = chunk[os.write(target, chunk) :]
    except OSError:
        pass
    finally:
        os.close(source)
        os.close(target)


@contextlib.contextmanager
def _untracked() -> Iterator[None]:
    """``shared_memory`` without multiprocessing's resource tracker: registering or
    unregistering a segment would start the tracker, a process that lives as long as
    the engine (or the script whose ``Analyser`` searched with helpers). The engine and
    its helpers remove the segment's name themselves (see the module doc)."""
    register, unregister = resource_tracker.register, resource_tracker.unregister
    # shared_memory looks them up at each call
    resource_tracker.register = resource_tracker.unregister = _not_tracked
    try:
        yield
    finally:
        resource_tracker.register, resource_tracker.unregister = register, unregister


def _not_tracked(name: object, rtype: str) -> None:
    """``resource_tracker.register`` and ``unregister`` within ``_untracked``."""


def _segment_name() -> str:
    """A fresh name for a pool's segment (``psm_`` as shared_memory's own)."""
    return "psm_" + secrets.token_hex(8)


def _create(name: str, size: int) -> shared_memory.SharedMemory:
    with _untracked():
        return shared_memory.SharedMemory(name=name, create=True, size=size)


def _attach(name: str) -> shared_memory.SharedMemory:
    with _untracked():
        return shared_memory.SharedMemory(name=name)


def _remove_name(name: str) -> None:
    """Remove the segment's name from /dev/shm if it is there (the engine is gone
    before it could: killed while its helpers started). Only the first helper to try
    succeeds."""
    with contextlib.suppress(ImportError, OSError):
        # shared_memory's own call, without a segment to attach (it may be empty yet)
        importlib.import_module("_posixshmem").shm_unlink("/" + name)


def _attach_when_made(
    name: str, connection: Connection, parent: int
) -> Optional[shared_memory.SharedMemory]:
    """The pool's segment, which the engine makes after naming it to its helpers
    (``HelperPool``), once it is made; None when the engine is gone (or says more)
    first, and then its name is removed in case the engine made it just before."""
    while True:
        try:
            return _attach(name)
        except FileNotFoundError:
            pass  # not made yet
        except ValueError:
            pass  # made, not yet sized (mmap refuses an empty file)
        if os.getppid() != parent or connection.poll(ATTACH_POLL_S):
            _remove_name(name)
            return None


class _Helper:
    """A helper's searcher, hooked so that it publishes its node count and results,
    obeys the shared stop flag and keeps ahead of the main search. (Hooks, not a
    subclass: the compiled ``Searcher`` cannot be subclassed by interpreted code.)"""

    def __init__(self, tt: TranspositionTable, header: memoryview, index: int, parent: int) -> None:
        self.searcher = Searcher(tt)
        self.searcher.on_poll = self._poll
        self.searcher.skip_ahead = self._next_depth
        self._header = header
        self._slot = helper_slot(index)
        self._lead = 1 + index % 2
        self._parent = parent
        self._polls = 0
        self.slots = 0
        """Helper slots whose counts add up to this search's nodes (``HelperPool.start``)."""
        self.network: Optional[str] = None
        """The network file evaluating (the engine checked it loads); None: hand-written."""

    def use_network(self, path: Optional[str]) -> None:
        """Evaluate as the engine does: its network file, or the hand-written evaluation
        (also when the file fails here: it changed since the engine read it)."""
        self.network = path
        try:
            self.searcher.use_network(load_network(path) if path is not None else None)
        except NetworkError:
            self.searcher.use_network(None)

    def _next_depth(self, depth: int) -> int:
        return max(depth + 1, self._header[MAIN_DEPTH_WORD] + 1 + self._lead)

    def publish(self, info: IterationInfo) -> None:
        """Offer a completed iteration's move to the main searcher."""
        if info.multipv == 1 and info.pv:
            self._header[self._slot + 1] = pack_result(
                info.depth, move_code(info.pv[0]), info.score
            )

    def _poll(self, nodes: int) -> None:
        publish_nodes(self._header, self._slot, nodes, self.slots)
        self._polls += 1
        if not self._polls % PARENT_CHECK_POLLS and os.getppid() != self._parent:
            os._exit(0)  # the engine is gone: nobody needs this search


def _helper_main(connection: Connection, index: int, parent: int) -> None:
    """A helper process (started by engine.processes): wait for the segment's name,
    attach once the engine has made it, say ready, then search every root it is sent.

    ``parent`` is the engine's process id (``os.getppid()`` here could already be
    another's, were the engine killed while this process started). However the
    engine ends, a helper ends quietly: no traceback, no warning, no name left in
    /dev/shm."""
    try:
        message = connection.recv()  # sent before this process is even up
        if message[0] != "segment":
            return
        _, name, size_mb = message
        segment = _attach_when_made(name, connection, parent)
    except (EOFError, OSError):
        # The engine is gone before it named the segment: it made none.
        segment = None
    if segment is None:
        connection.close()
        return
    try:
        if os.getppid() != parent:
            _remove_name(name)
            return
        _serve(segment, index, size_mb, connection, parent)
    except (EOFError, OSError):
        # The engine is gone (a broken pipe): it may have died before removing the
        # name. After a normal start the name is gone already and this does nothing.
        # (Not only when os.getppid() says so: the pipe closes before that changes.)
        _remove_name(name)
    finally:
        connection.close()
        segment.close()


def _serve(
    segment: shared_memory.SharedMemory,
    index: int,
    size_mb: int,
    connection: Connection,
    parent: int,
) -> None:
    """The helper's loop over the attached segment; every view of the segment is
    released on the way out, so that the segment can close (else BufferError)."""
    assert segment.buf is not None
    words = segment.buf.cast("Q")
    header = words[:HEADER_WORDS]
    table = TranspositionTable(size_mb, words=words[HEADER_WORDS:])
    helper = _Helper(table, header, index, parent)
    searcher = helper.searcher
    try:
        connection.send(("ready", index))
        while True:
            if not connection.poll(1.0):
                if os.getppid() != parent:
                    return
                continue
            message = connection.recv()
            if message[0] != "go":
                return
            _, fen, moves, max_depth, age, start_depth, network, node_limit, slots = message
            helper.slots = slots
            if network != helper.network:
                helper.use_network(network)
            board = chess.Board(fen)
            for move in moves:
                board.push_uci(move)
            # The search starts a new generation itself: one before the main's.
            table.age = (age - 1) & 0xFF
            nodes = depth = 0
            try:
                result = searcher.search(
                    board,
                    # The limit is the whole search's (checked in ``_poll``); given
                    # here too, it makes this search poll as often as the main one.
                    SearchParams(max_depth, node_limit, start_depth=start_depth),
                    SearchControl(),
                    helper.publish,
                )
                nodes, depth = result.nodes, result.depth
            except Exception:
                nodes = searcher.nodes
            header[helper_slot(index)] = nodes  # the final count (HelperPool.wait_idle)
            connection.send(("done", nodes, depth))
    finally:
        # The hooks are bound methods of the helper, a cycle that would keep the
        # views of the segment alive past ``del``; the segment closes only without them.
        searcher.on_poll = searcher.skip_ahead = None
        table_words = table.words
        table.use(array("Q", bytes(16)))
        del header, table, searcher, helper
        if isinstance(table_words, memoryview):
            table_words.release()
        words.release()


class HelperPool:
    """``threads - 1`` helper processes around one shared table (see the module doc)."""

    def __init__(self, threads: int, size_mb: int, note: Callable[[str], None]) -> None:
        """The shared table is ``size_mb`` or, when /dev/shm has less room, smaller
        (with a note; ``self.size_mb`` says). Raises OSError when there is none:
        SharedMemoryFullError when too little shared memory is free."""
        self._note = note
        self.asked_mb = size_mb
        free = shm_free_bytes()
        self.size_mb = fit_shared_mb(size_mb, free)
        """The shared table's size: the Hash asked for, or what fits in /dev/shm."""
        if not self.size_mb:
            raise SharedMemoryFullError(
                errno.ENOSPC, f"{SHM_DIR} has {(free or 0) // MB} MB free, too little to share"
            )
        if self.size_mb < size_mb:
            note(
                f"Hash: {SHM_DIR} has {(free or 0) // MB} MB free: the shared table is "
                f"{self.size_mb} MB, not {size_mb}"
            )
        self._helpers: list[tuple[processes.Child, Connection, int]] = []
        self._busy: set[int] = set()
        self._slots = 0
        """Helper slots counted in this search's nodes (the live helpers' at ``start``)."""
        self._segment: Optional[shared_memory.SharedMemory] = None
        self._words = self._header = self.table_words = memoryview(array("Q"))
        """The segment as words, its header and its table (empty until it is made)."""
        name = _segment_name()
        try:
            # The helpers start first (importing the engine takes them a second) and
            # are told the segment's name before it exists; then it is made. However
            # the engine ends from then on, its helpers remove the name if it is
            # still there (``_helper_main``), and a killed engine leaves nothing.
            with _stderr_relay() as output:
                for index in range(min(threads - 1, MAX_HELPERS)):
                    child = processes.start(
                        "engine.play.smp:_helper_main",
                        (index, os.getpid()),
                        name=f"cutoff-helper-{index}",
                        stdout=output,
                        stderr=output,
                    )
                    self._helpers.append((child, child.connection, index))
                    try:
                        child.connection.send(("segment", name, self.size_mb))
                    except OSError:
                        self._drop(index, "did not start")
            size = segment_bytes(self.size_mb)
            self._segment = _create(name, size)
            _reserve(self._segment, size)
            assert self._segment.buf is not None
            self._words = self._segment.buf.cast("Q")
            self._header = self._words[:HEADER_WORDS]
            self.table_words = self._words[HEADER_WORDS:]
            deadline = time.monotonic() + START_TIMEOUT_S
            for _, connection, index in list(self._helpers):
                try:
                    started = connection.poll(max(0.0, deadline - time.monotonic()))
                    if started:
                        connection.recv()
                except (EOFError, OSError):
                    started = False  # it died on the way up
                if not started:
                    self._drop(index, "did not start")
        except BaseException:
            # Could not even start them: end what started and let go of the memory.
            self.close()
            raise
        finally:
            # Every helper has mapped the segment (or is gone): its name can go, so
            # that nothing is left in /dev/shm however the engine ends.
            if self._segment is not None:
                _remove_name(name)

    @property
    def helpers(self) -> int:
        return len(self._helpers)

    def start(
        self,
        board: chess.Board,
        max_depth: int,
        age: int,
        network: Optional[str] = None,
        node_limit: Optional[int] = None,
    ) -> None:
        """Every helper searches ``board`` (its last plies too, for repetitions), with
        the ``network`` file's evaluation (None: the hand-written one). ``node_limit``
        bounds the nodes of the main search and the helpers together: the main search
        must then call ``main_poll`` as it polls its limits."""
        self.wait_idle()
        header = self._header
        header[STOP_WORD] = 0
        moves = [move.uci() for move in board.move_stack]
        fen = board.root().fen()
        header[MAIN_DEPTH_WORD] = header[MAIN_NODES_WORD] = 0
        header[NODE_LIMIT_WORD] = node_limit or 0
        # Every slot, a dropped helper's too: the node limit sums the first ``_slots``.
        for index in range(MAX_HELPERS):
            header[helper_slot(index)] = header[helper_slot(index) + 1] = 0
        self._slots = 1 + max((index for _, _, index in self._helpers), default=-1)
        for process, connection, index in list(self._helpers):
            if not process.is_alive():
                self._drop(index, "died")
                continue
            try:
                # Up to two plies past max_depth, so as to stay ahead to the end.
                start_depth = 2 + index % 2
                message = (max_depth + 2, age, start_depth, network, node_limit, self._slots)
                connection.send(("go", fen, moves, *message))
                self._busy.add(index)
            except OSError:
                self._drop(index, "died")

    def stop(self) -> None:
        """End the helpers' searches (at once: they read the flag every 64 nodes)."""
        self._header[STOP_WORD] = 1

    def main_poll(self, nodes: int) -> None:
        """The main searcher's ``on_poll`` while helpers search with it: publish its
        count, and end its search (``SearchAbortedError``) when the stop flag is up or
        the threads together have reached the node limit (see the module doc)."""
        publish_nodes(self._header, MAIN_NODES_WORD, nodes, self._slots)

    def main_completed(self, depth: int) -> None:
        """The main search has completed ``depth``: helpers keep ahead of it."""
        self._header[MAIN_DEPTH_WORD] = depth

    def nodes(self) -> int:
        """Nodes the helpers have searched in the current search."""
        return sum(
            self._header[HELPER_WORD + WORDS_PER_HELPER * index] for _, _, index in self._helpers
        )

    def deepest(self) -> Optional[tuple[int, int, int]]:
        """The deepest iteration a helper completed in this search: ``(depth, move
        code, score)``, the first helper's on equal depths; None if none did."""
        found: Optional[tuple[int, int, int]] = None
        for _, _, index in self._helpers:
            result = unpack_result(self._header[HELPER_WORD + WORDS_PER_HELPER * index + 1])
            if result is not None and (found is None or result[0] > found[0]):
                found = result
        return found

    def wait_idle(self) -> None:
        """Stop the helpers and collect their reports; drop one that does not answer.
        Then ``nodes()`` is the helpers' final count."""
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
                process.kill()
                process.join(1.0)
                connection.close()
                self._note(f"helper {index} {why}: searching with {len(self._helpers) + 1}")

    def close(self) -> None:
        """Stop and end every helper and release the shared memory."""
        if len(self._header):
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
        if self._segment is not None:
            with contextlib.suppress(Exception):
                self._segment.close()


def make_pool(threads: int, size_mb: int, note: Callable[[str], None]) -> Optional[HelperPool]:
    """A pool for ``threads``; None for one thread (no helpers, no shared memory),
    and, with a note, when there is no room for the shared table."""
    if threads <= 1:
        return None
    try:
        return HelperPool(threads, size_mb, note)
    except OSError as error:
        note(f"Threads: cannot start helpers ({error.strerror or error}); searching alone")
        return None
