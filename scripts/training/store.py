"""Chunked stores of position records, with a committed manifest per chunk.

A store is a folder of ``chunk-NNNNNN.cpos`` files (scripts.training.records' files)
and, per chunk, a small JSON manifest ``chunk-NNNNNN.json``: format version, record
count, the chunk's SHA-256, and what made it (inputs, teacher, settings, command line,
date, the command that remakes it; a converted chunk's ``first`` and ``last``, the
input number and line of its first and last record, a last line of 2**62 meaning the
inputs' end), beside the chunk and, with ``--manifests``,
copied to another folder: the manifests are small and committed
(scripts/training/data/manifests/), the chunks are not. The commands
(``python -m scripts.training.store COMMAND``):

* ``convert IN... --out DIR``: text data files (scripts.training.dataset's, gz or xz)
  as a store; bad lines are reported as ``file:line`` and skipped; a rerun skips the
  chunks already made;
* ``verify DIR [--manifests M]``: the chunks against their (committed) manifests
  (exit 1 when one is missing or differs, with the command that remakes them);
* ``dedup IN_DIR... --out DIR``: each position once (the first; by position, not by
  label: records' bytes 0-25);
* ``split IN_DIR --train DIR --valid DIR``: a validation set chosen by a hash of the
  position, so that a position never lands in both; with ``--by-chunk``, whole input
  chunks instead (every ``round(1 / fraction)``-th, shifted by ``--salt``), so that
  validation holds whole games of a datagen store (a chunk is whole games), and the
  training part drops every position the validation part holds;
* ``info DIR...``: counts, score and result histograms, the duplicate ratio.

Writes are atomic per chunk: the chunk is written under a temporary name, flushed and
renamed, then its manifest the same way, so a chunk with a manifest is complete.
Responsible for stores and these commands; the record format is records'. It must not
label positions or train.
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import shlex
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import numpy as np
import numpy.typing as npt

from ..common import EXIT_FAILED, REPORTED_FAILURES, ToolParser, UsageError, report_failure
from . import dataset, records
from .records import RECORD, RECORD_SIZE, Header, RecordError, Records

PROG = "store"
CHUNK_SUFFIX = ".cpos"
MANIFEST_FORMAT = "cutoff-position-chunk"
DEFAULT_CHUNK_SIZE = 1_000_000
MAX_SHOWN_ERRORS = 20
_HASH_BLOCK = 1 << 22
COPY_HELP = "also write each manifest to this folder (the committed copies)"


def chunk_name(index: int) -> str:
    return f"chunk-{index:06d}{CHUNK_SUFFIX}"


def manifest_name(index: int) -> str:
    return f"chunk-{index:06d}.json"


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(_HASH_BLOCK):
            digest.update(block)
    return digest.hexdigest()


def command_line(argv: Sequence[str]) -> str:
    return shlex.join(["python", "-m", "scripts.training.store", *argv])


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # not every platform opens folders
        return
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _write_atomically(path: Path, data: bytes) -> None:
    """``data`` as ``path``: written under a temporary name, flushed, renamed."""
    tmp = path.with_name(f".{path.name}.tmp")
    with tmp.open("wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)
    _fsync_dir(path.parent)


# ---------------------------------------------------------------- the store


@dataclass
class Store:
    """A store's folders: the chunks' and the manifests' it is read with (the same,
    or the committed copies); ``copies``: another folder that each manifest written
    is copied to (the committed folder)."""

    chunks: Path
    manifests: Path
    copies: Optional[Path] = None

    @staticmethod
    def at(chunks: Path, manifests: Optional[Path] = None) -> Store:
        return Store(chunks, manifests if manifests is not None else chunks)

    def manifest(self, index: int) -> Optional[dict[str, Any]]:
        """Chunk ``index``'s manifest, or None if there is none (or it is unreadable)."""
        path = self.manifests / manifest_name(index)
        try:
            value = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return value if isinstance(value, dict) else None

    def indices(self) -> list[int]:
        """The chunk numbers that have a manifest, in order."""
        found = []
        for path in self.manifests.glob("chunk-*.json"):
            number = path.stem[len("chunk-") :]
            if number.isdigit():
                found.append(int(number))
        return sorted(found)

    def is_complete(self, index: int) -> bool:
        """Whether chunk ``index`` is there and matches its manifest (count, checksum)."""
        return not chunk_problems(self, index)

    def write_chunk(
        self, index: int, header: Header, data: bytes, made_by: dict[str, Any], remake: str
    ) -> None:
        """Chunk ``index`` of the records ``data``, then its manifest (the chunk first:
        a manifest is the mark of a finished chunk). An existing manifest saying the
        same is left as it is, so that a remade store's manifests do not change."""
        self.chunks.mkdir(parents=True, exist_ok=True)
        content = header.pack() + data
        path = self.chunks / chunk_name(index)
        _write_atomically(path, content)
        manifest = {
            "format": MANIFEST_FORMAT,
            "version": header.version,
            "chunk": chunk_name(index),
            "records": len(data) // RECORD_SIZE,
            "bytes": len(content),
            "sha256": hashlib.sha256(content).hexdigest(),
            "score_side": "white" if header.score_side == records.SCORE_WHITE else "side to move",
            "source": header.source,
            "made_by": made_by,
            "remake": remake,
        }
        dated = {**manifest, "made_by": {**made_by, "date": _now()}}
        text = json.dumps(dated, indent=1, sort_keys=True) + "\n"
        for folder in (self.chunks, self.copies):
            if folder is None:
                continue
            folder.mkdir(parents=True, exist_ok=True)
            old = Store.at(folder).manifest(index)
            if old is None or not _same_manifest(old, manifest):
                _write_atomically(folder / manifest_name(index), text.encode("utf-8"))

    def read(self, index: int, warn: bool = True) -> tuple[Header, Records]:
        return records.read(self.chunks / chunk_name(index), warn=warn)


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def _same_manifest(old: dict[str, Any], new: dict[str, Any]) -> bool:
    # The same chunk from the same inputs and settings: the old manifest stays, even
    # if the command differs (another --out folder) or the date.
    def essentials(value: dict[str, Any]) -> list[Any]:
        made_by = value.get("made_by", {})
        return [value.get(key) for key in ("format", "version", "chunk", "records", "sha256")] + [
            made_by.get("settings"),
            made_by.get("first"),
            made_by.get("last"),
        ]

    return essentials(old) == essentials(new)


def chunk_problems(store: Store, index: int) -> list[str]:
    """What is wrong with chunk ``index`` against its manifest (nothing: it is good)."""
    manifest = store.manifest(index)
    path = store.chunks / chunk_name(index)
    if manifest is None:
        return [f"{store.manifests / manifest_name(index)}: no readable manifest"]
    if manifest.get("format") != MANIFEST_FORMAT:
        return [f"{store.manifests / manifest_name(index)}: not a chunk manifest"]
    if not path.exists():
        return [f"{path}: missing"]
    problems = []
    try:
        _, chunk = records.read(path, warn=False)
    except (OSError, RecordError) as error:
        return [f"{path}: {error}"]
    if len(chunk) != manifest.get("records"):
        problems.append(
            f"{path}: {len(chunk)} records, the manifest says {manifest.get('records')}"
        )
    if path.stat().st_size != manifest.get("bytes"):
        problems.append(
            f"{path}: {path.stat().st_size} bytes, the manifest says {manifest.get('bytes')}"
        )
    elif sha256_of(path) != manifest.get("sha256"):
        problems.append(f"{path}: checksum differs from the manifest's (corrupt)")
    return problems


def open_chunks(store: Store, warn: bool = True) -> list[tuple[Header, Records]]:
    """Every chunk of ``store`` that has a manifest, memory-mapped, in order;
    UsageError for a missing chunk or chunks of different score sides."""
    found = []
    for index in store.indices():
        path = store.chunks / chunk_name(index)
        if not path.exists():
            raise UsageError(
                f"{path}: missing (python -m scripts.training.store verify says how to remake it)"
            )
        found.append(store.read(index, warn=warn))
    sides = {header.score_side for header, _ in found}
    if len(sides) > 1:
        raise UsageError(f"{store.chunks}: chunks with different score sides")
    return found


def load(folders: Sequence[Path]) -> Records:
    """All records of the stores ``folders`` (their manifests beside the chunks) in
    memory, in order: what a trainer that fits in memory reads."""
    parts = [chunk for folder in folders for _, chunk in open_chunks(Store.at(folder))]
    return records.concatenate(np.asarray(part) for part in parts)


def batches(folders: Sequence[Path], size: int) -> Iterator[Records]:
    """The records of the stores ``folders`` in order, ``size`` at a time (the last
    batch may be smaller), read from the memory-mapped chunks."""
    pending: list[Records] = []
    count = 0
    for folder in folders:
        for _, chunk in open_chunks(Store.at(folder)):
            start = 0
            while start < len(chunk):
                take = min(size - count, len(chunk) - start)
                pending.append(np.asarray(chunk[start : start + take]))
                count += take
                start += take
                if count == size:
                    yield records.concatenate(pending)
                    pending, count = [], 0
    if count:
        yield records.concatenate(pending)


# ---------------------------------------------------------------- positions as keys


KeyColumns = tuple[npt.NDArray[np.unsignedinteger[Any]], ...]
"""The position bytes (records' ``POSITION_BYTES``) of records as four columns: bytes
0-7, 8-15, 16-23 as uint64, bytes 24-25 as uint16; contiguous, so that sorting does
not copy them."""


def position_keys(chunk: Records) -> KeyColumns:
    """The position key columns of ``chunk``'s records."""
    raw = np.ascontiguousarray(chunk).view(np.uint8).reshape(-1, RECORD_SIZE)
    words = [np.ascontiguousarray(raw[:, 8 * i : 8 * i + 8]).view("<u8")[:, 0] for i in range(3)]
    last = np.ascontiguousarray(raw[:, 24:26]).view("<u2")[:, 0]
    return (
        words[0].astype(np.uint64),
        words[1].astype(np.uint64),
        words[2].astype(np.uint64),
        last.astype(np.uint16),
    )


def first_of_each_key(keys: KeyColumns) -> npt.NDArray[np.bool_]:
    """Which rows of ``keys`` are the first of their position (equal keys), in order."""
    count = len(keys[0])
    if count == 0:
        return np.zeros(0, dtype=bool)
    # lexsort is stable: among equal positions the first record comes first.
    order = np.lexsort((keys[3], keys[2], keys[1], keys[0]))
    new_group = np.zeros(count - 1, dtype=bool)
    for column in keys:
        sorted_column = column[order]
        new_group |= sorted_column[1:] != sorted_column[:-1]
        del sorted_column
    starts = np.ones(count, dtype=bool)
    starts[1:] = new_group
    keep = np.zeros(count, dtype=bool)
    keep[order[starts]] = True
    return keep


_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def _mix(value: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    """splitmix64's finaliser (wrapping uint64 arithmetic)."""
    value = value ^ (value >> np.uint64(30))
    value = value * _MIX1
    value = value ^ (value >> np.uint64(27))
    value = value * _MIX2
    return value ^ (value >> np.uint64(31))


def position_hash(keys: KeyColumns, salt: int = 0) -> npt.NDArray[np.uint64]:
    """A 64-bit hash of each position (its key columns), the same on every host."""
    # Python ints, wrapped by hand: a numpy scalar product warns when it wraps.
    start = (salt * int(_GOLDEN)) % (1 << 64)
    value = np.full(len(keys[0]), start, dtype=np.uint64)
    for column in keys:
        value = _mix(value ^ (column.astype(np.uint64) + _GOLDEN))
    return value


def in_validation(keys: KeyColumns, fraction: float, salt: int = 0) -> npt.NDArray[np.bool_]:
    """Which positions go to the validation set: a hash below ``fraction`` of its range."""
    unit = (position_hash(keys, salt) >> np.uint64(11)).astype(np.float64) / float(1 << 53)
    return unit < fraction


class PositionIndex:
    """A growing set of positions by their ``position_hash``: a sorted array and a
    set of the recent ones, merged into it now and then, so that tens of millions of
    positions take 8 bytes each, not a Python set's 60 or more. What a writer that
    keeps each position once (datagen's store) asks before it writes a record."""

    MERGE_AT = 1 << 20

    def __init__(self, hashes: npt.NDArray[np.uint64]) -> None:
        self.sorted = _sorted_once(hashes)
        self.recent: set[int] = set()

    def __len__(self) -> int:
        return len(self.sorted) + len(self.recent)

    def known(self, hashes: npt.NDArray[np.uint64]) -> npt.NDArray[np.bool_]:
        """Which of ``hashes`` the index holds."""
        at = np.searchsorted(self.sorted, hashes)
        found = np.zeros(len(hashes), dtype=bool)
        inside = at < len(self.sorted)
        found[inside] = self.sorted[at[inside]] == hashes[inside]
        if self.recent:
            found |= np.fromiter((int(h) in self.recent for h in hashes), bool, len(hashes))
        return found

    def add(self, hashes: npt.NDArray[np.uint64]) -> None:
        self.recent.update(int(h) for h in hashes)
        if len(self.recent) >= self.MERGE_AT:
            fresh = np.fromiter(self.recent, np.uint64, len(self.recent))
            self.sorted = _sorted_once(np.concatenate([self.sorted, fresh]))
            self.recent = set()


def _sorted_once(values: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    """``values`` sorted, each once: a sort in place, not numpy's ``unique`` and
    ``union1d`` (numpy 2.4's took 233 s and 209 s for 30 M values here, the sort 2 s)."""
    values = np.array(values, dtype=np.uint64)
    values.sort()
    if len(values) < 2:
        return values
    keep = np.empty(len(values), dtype=bool)
    keep[0] = True
    np.not_equal(values[1:], values[:-1], out=keep[1:])
    return values[keep]


def record_hashes(chunk: Records) -> npt.NDArray[np.uint64]:
    """The ``position_hash`` of each record of ``chunk``."""
    return position_hash(position_keys(np.asarray(chunk)))


def stored_hashes(store: Store, indices: Sequence[int]) -> npt.NDArray[np.uint64]:
    """The position hashes of the records of chunks ``indices`` of ``store``."""
    parts = [record_hashes(store.read(index, warn=False)[1]) for index in indices]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint64)


EXACT_SLICE = 1 << 22
"""Records compared by their whole keys at a time (whole runs of one hash)."""


def _gather_keys(chunks: Sequence[Records], rows: npt.NDArray[np.int64]) -> KeyColumns:
    """The key columns of the records ``rows`` (indices over all ``chunks``), in order."""
    columns: KeyColumns = (
        np.empty(len(rows), dtype=np.uint64),
        np.empty(len(rows), dtype=np.uint64),
        np.empty(len(rows), dtype=np.uint64),
        np.empty(len(rows), dtype=np.uint16),
    )
    start = 0
    for chunk in chunks:
        inside = np.flatnonzero((rows >= start) & (rows < start + len(chunk)))
        if len(inside):
            part = position_keys(np.asarray(chunk)[rows[inside] - start])
            for column, values in zip(columns, part):
                column[inside] = values
        start += len(chunk)
    return columns


def first_of_each_position(chunks: Sequence[Records]) -> npt.NDArray[np.bool_]:
    """Which records of ``chunks`` (in order) are the first of their position.

    Sorted by a 64-bit hash of the position (8 bytes a record, not the keys' 26); only
    the records whose hash another shares (the duplicates, and any collision) are then
    compared by their whole keys, a slice of whole hash runs at a time, so that memory
    stays near 30 bytes a record even when most records are duplicates."""
    hashes = np.concatenate([position_hash(position_keys(np.asarray(c))) for c in chunks])
    count = len(hashes)
    keep = np.ones(count, dtype=bool)
    if count < 2:
        return keep
    # Stable: within one hash, records stay in store order, so the first is kept.
    order = np.argsort(hashes, kind="stable")
    sorted_hashes = hashes[order]
    del hashes
    same = sorted_hashes[1:] == sorted_hashes[:-1]
    shared = np.zeros(count, dtype=bool)
    shared[1:] |= same
    shared[:-1] |= same
    del same
    candidates = order[shared]
    candidate_hashes = sorted_hashes[shared]
    del order, sorted_hashes, shared
    run_starts = np.flatnonzero(candidate_hashes[1:] != candidate_hashes[:-1]) + 1
    del candidate_hashes
    start = 0
    while start < len(candidates):
        stop = start + EXACT_SLICE
        if stop < len(candidates):
            after = int(np.searchsorted(run_starts, stop))
            stop = int(run_starts[after]) if after < len(run_starts) else len(candidates)
        rows = candidates[start:stop]
        keep[rows] = first_of_each_key(_gather_keys(chunks, rows))
        start = stop
    return keep


# ---------------------------------------------------------------- writing stores


@dataclass
class ChunkWriter:
    """Records written to a store as chunks of ``size`` records, in order."""

    store: Store
    header: Header
    size: int
    made_by: dict[str, Any]
    remake: str
    index: int = 0
    written: int = 0
    pending: list[bytes] = field(default_factory=list)
    pending_count: int = 0

    def add(self, batch: Records) -> None:
        data = memoryview(np.ascontiguousarray(batch, dtype=RECORD).tobytes())
        while data:
            room = (self.size - self.pending_count) * RECORD_SIZE
            part = data[:room]
            self.pending.append(bytes(part))
            self.pending_count += len(part) // RECORD_SIZE
            data = data[room:]
            if self.pending_count == self.size:
                self.flush()

    def flush(self) -> None:
        if self.pending_count:
            data = b"".join(self.pending)
            self.store.write_chunk(self.index, self.header, data, self.made_by, self.remake)
            self.index += 1
            self.written += self.pending_count
            self.pending, self.pending_count = [], 0


def _stale_chunks(store: Store, first: int) -> list[int]:
    """The chunk numbers from ``first`` on that a store still has manifests for."""
    return [index for index in store.indices() if index >= first]


def _drop_chunks(store: Store, indices: list[int]) -> None:
    for index in indices:
        for folder in (store.manifests, store.copies):
            if folder is not None:
                (folder / manifest_name(index)).unlink(missing_ok=True)
        (store.chunks / chunk_name(index)).unlink(missing_ok=True)


# ---------------------------------------------------------------- convert


class Progress:
    """records and records/s on stderr, when it is a terminal, at most once a second."""

    def __init__(self) -> None:
        self.shown = sys.stderr.isatty()
        self.began = time.monotonic()
        self.last = self.began

    def update(self, count: int, force: bool = False) -> None:
        now = time.monotonic()
        if self.shown and (force or now - self.last >= 1.0):
            self.last = now
            rate = count / max(now - self.began, 1e-9)
            print(f"\r{count:,} records, {rate:,.0f}/s ", end="", file=sys.stderr, flush=True)

    def done(self) -> None:
        if self.shown:
            print(file=sys.stderr)


@dataclass
class Errors:
    """Bad input lines: each said in one line (the first few), all counted."""

    count: int = 0

    def report(self, message: str) -> None:
        self.count += 1
        if self.count <= MAX_SHOWN_ERRORS:
            print(f"error: {message}", file=sys.stderr)
        elif self.count == MAX_SHOWN_ERRORS + 1:
            print("error: more bad lines, not shown (counted)", file=sys.stderr)


def _inputs_of(paths: Sequence[Path]) -> list[dict[str, str]]:
    return [{"path": str(path), "sha256": sha256_of(path)} for path in paths]


def _resume_point(store: Store, settings: dict[str, Any]) -> tuple[int, Optional[dict[str, Any]]]:
    """(chunks already made by a run with ``settings``, the last one's manifest)."""
    index = 0
    last = None
    while True:
        manifest = store.manifest(index)
        if manifest is None or manifest.get("made_by", {}).get("settings") != settings:
            break
        if not store.is_complete(index):
            break
        last = manifest
        index += 1
    return index, last


def convert(args: argparse.Namespace, argv: Sequence[str]) -> int:
    paths: list[Path] = args.inputs
    for path in paths:
        if not path.is_file():
            raise UsageError(f"{path}: no such file")
    store = Store(args.out, args.out, args.manifests)
    settings = {
        "tool": "convert",
        "inputs": _inputs_of(paths),
        "chunk_size": args.chunk_size,
        "teacher": args.teacher,
    }
    done, last = _resume_point(store, settings)
    # Where the finished chunks end: (input number, line number) of their last record.
    skip_to = (-1, 0) if last is None else tuple(last["made_by"]["last"])
    made_by = {"settings": settings, "command": command_line(argv)}
    header = Header(records.SCORE_WHITE, args.teacher)
    writer = ChunkWriter(store, header, args.chunk_size, made_by, command_line(argv), index=done)
    if done:
        print(f"{PROG}: resuming after {done} finished chunks", file=sys.stderr)
    errors = Errors()
    progress = Progress()
    encoded: list[bytes] = []
    first: Optional[list[int]] = None
    converted = 0
    damaged = 0
    for number, path in enumerate(paths):
        if number < skip_to[0]:
            continue
        try:
            for where, line in dataset.read_lines(path):
                line_number = int(where.rsplit(":", 1)[1])
                if (number, line_number) <= skip_to:
                    continue
                if not line or line.startswith("#"):
                    continue
                try:
                    sample = dataset.parse_line(line, where)
                    board = dataset.board_of(sample, where)
                    data = records.encode(
                        board, dataset.clip(sample.score), records.RESULT_OF_TEXT[sample.result]
                    )
                except dataset.DataError as error:
                    errors.report(str(error))
                    continue
                except RecordError as error:
                    errors.report(f"{where}: {error}")
                    continue
                if first is None:
                    first = [number, line_number]
                encoded.append(data)
                converted += 1
                if len(encoded) == args.chunk_size:
                    writer.made_by = {**made_by, "first": first, "last": [number, line_number]}
                    writer.add(records.from_bytes(b"".join(encoded)))
                    encoded, first = [], None
                progress.update(converted)
        except dataset.DataError as error:
            # A damaged xz file: its lines so far are kept, the rest is lost (exit 1).
            errors.report(str(error))
            damaged += 1
    if encoded:
        writer.made_by = {**made_by, "first": first, "last": [len(paths) - 1, 1 << 62]}
        writer.add(records.from_bytes(b"".join(encoded)))
    writer.flush()
    _drop_chunks(store, _stale_chunks(store, writer.index))
    progress.update(converted, force=True)
    progress.done()
    seconds = time.monotonic() - progress.began
    print(
        f"converted {converted} records into {writer.index - done} new chunks "
        f"({writer.index} in all), bad lines {errors.count - damaged}, damaged files {damaged}, "
        f"seconds {seconds:.1f}, records/s {converted / max(seconds, 1e-9):.0f}"
    )
    return EXIT_FAILED if damaged else 0


# ---------------------------------------------------------------- verify, info


def verify(args: argparse.Namespace) -> int:
    store = Store.at(args.store, args.manifests)
    indices = store.indices()
    if not indices:
        print(f"error: {store.manifests}: no chunk manifests", file=sys.stderr)
        return EXIT_FAILED
    problems = []
    remakes = set()
    total = 0
    for index in indices:
        found = chunk_problems(store, index)
        problems.extend(found)
        manifest = store.manifest(index) or {}
        if found and manifest.get("remake"):
            remakes.add(str(manifest["remake"]))
        elif not found:
            total += int(manifest.get("records", 0))
    stray = sorted(
        path.name
        for path in store.chunks.glob(f"chunk-*{CHUNK_SUFFIX}")
        if not (store.manifests / path.with_suffix(".json").name).exists()
    )
    for name in stray:
        print(f"warning: {store.chunks / name}: no manifest (an unfinished chunk)", file=sys.stderr)
    for problem in problems:
        print(f"error: {problem}", file=sys.stderr)
    if problems:
        for remake in sorted(remakes):
            print(f"remake with: {remake}", file=sys.stderr)
        print(f"{len(problems)} problems in {len(indices)} chunks")
        return EXIT_FAILED
    print(f"{len(indices)} chunks, {total} records: all match their manifests")
    return 0


def info(args: argparse.Namespace) -> int:
    chunks = [chunk for folder in args.stores for _, chunk in open_chunks(Store.at(folder))]
    count = sum(len(chunk) for chunk in chunks)
    size = sum(
        (Store.at(folder).chunks / chunk_name(index)).stat().st_size
        for folder in args.stores
        for index in Store.at(folder).indices()
    )
    print(
        f"records {count}, chunks {len(chunks)}, bytes {size} ({size / max(count, 1):.2f} a record)"
    )
    if not count:
        return 0
    scores = np.concatenate([np.asarray(chunk["score"], dtype=np.int64) for chunk in chunks])
    results = np.concatenate([np.asarray(chunk["result"], dtype=np.int64) for chunk in chunks])
    edges = [-32768, -2000, -1000, -500, -200, -50, 50, 200, 500, 1000, 2000, 32768]
    histogram, _ = np.histogram(scores, bins=edges)
    labels = [f"{low}..{high - 1}" for low, high in zip(edges[:-1], edges[1:])]
    labels[0], labels[-1] = "..-2001", "2000.."
    print("scores (cp): " + ", ".join(f"{label} {n}" for label, n in zip(labels, histogram)))
    print(f"scores: mean {scores.mean():.1f}, mean |score| {np.abs(scores).mean():.1f}")
    names = {1: "1-0", 0: "1/2-1/2", -1: "0-1", records.RESULT_UNKNOWN: "*"}
    print(
        "results: "
        + ", ".join(f"{text} {int((results == value).sum())}" for value, text in names.items())
    )
    unique = int(first_of_each_position(chunks).sum())
    print(f"distinct positions {unique} ({unique / count:.4f} of the records)")
    return 0


# ---------------------------------------------------------------- dedup, split


def _all_chunks(
    folders: Sequence[Path],
) -> tuple[list[tuple[Header, Records]], list[dict[str, str]]]:
    chunks = []
    inputs = []
    for folder in folders:
        store = Store.at(folder)
        for index in store.indices():
            manifest = store.manifest(index) or {}
            inputs.append(
                {"chunk": str(folder / chunk_name(index)), "sha256": str(manifest.get("sha256"))}
            )
        chunks.extend(open_chunks(store))
    if not chunks:
        raise UsageError(f"{', '.join(map(str, folders))}: no chunks")
    sides = {header.score_side for header, _ in chunks}
    if len(sides) > 1:
        raise UsageError("the stores' scores are from different sides")
    return chunks, inputs


def _source_of(chunks: list[tuple[Header, Records]]) -> str:
    sources = sorted({header.source for header, _ in chunks})
    return "; ".join(sources)


def dedup(args: argparse.Namespace, argv: Sequence[str]) -> int:
    chunks, inputs = _all_chunks(args.inputs)
    keep = first_of_each_position([chunk for _, chunk in chunks])
    header = Header(chunks[0][0].score_side, _source_of(chunks))
    settings = {"tool": "dedup", "inputs": inputs, "chunk_size": args.chunk_size}
    made_by = {"settings": settings, "command": command_line(argv)}
    store = Store(args.out, args.out, args.manifests)
    writer = ChunkWriter(store, header, args.chunk_size, made_by, command_line(argv))
    start = 0
    for _, chunk in chunks:
        writer.add(np.asarray(chunk)[keep[start : start + len(chunk)]])
        start += len(chunk)
    writer.flush()
    _drop_chunks(store, _stale_chunks(store, writer.index))
    print(
        f"records {len(keep)}, distinct positions {writer.written} "
        f"({writer.written / max(len(keep), 1):.4f}), chunks {writer.index}"
    )
    return 0


def split(args: argparse.Namespace, argv: Sequence[str]) -> int:
    chunks, inputs = _all_chunks(args.inputs)
    header = Header(chunks[0][0].score_side, _source_of(chunks))
    settings = {
        "tool": "split",
        "inputs": inputs,
        "chunk_size": args.chunk_size,
        "valid_fraction": args.valid_fraction,
        "salt": args.salt,
    }
    if args.by_chunk:  # (only when given: earlier splits' settings stay as they were)
        settings["by_chunk"] = True
    writers = {
        part: ChunkWriter(
            Store.at(folder),
            header,
            args.chunk_size,
            {"settings": {**settings, "part": part}, "command": command_line(argv)},
            command_line(argv),
        )
        for part, folder in (("train", args.train), ("valid", args.valid))
    }
    dropped = 0
    if args.by_chunk:
        chosen = _validation_chunks(len(chunks), args.valid_fraction, args.salt)
        # A position of a validation game may recur in a training game (an opening, a
        # common ending): hashes of the validation side, to drop those (a collision of
        # 64-bit hashes would drop one training position more: harmless).
        seen = [position_hash(position_keys(np.asarray(chunks[i][1]))) for i in chosen]
        valid_hashes = np.unique(np.concatenate(seen)) if seen else np.zeros(0, np.uint64)
        for index, (_, chunk) in enumerate(chunks):
            array = np.asarray(chunk)
            if index in chosen:
                writers["valid"].add(array)
                continue
            repeated = np.isin(position_hash(position_keys(array)), valid_hashes)
            dropped += int(repeated.sum())
            writers["train"].add(array[~repeated])
    else:
        for _, chunk in chunks:
            array = np.asarray(chunk)
            valid = in_validation(position_keys(array), args.valid_fraction, args.salt)
            writers["train"].add(array[~valid])
            writers["valid"].add(array[valid])
    for writer in writers.values():
        writer.flush()
        _drop_chunks(writer.store, _stale_chunks(writer.store, writer.index))
    print(
        f"train {writers['train'].written} records in {writers['train'].index} chunks, "
        f"valid {writers['valid'].written} in {writers['valid'].index}"
        + (f" ({dropped} training records dropped: in validation games too)" if dropped else "")
    )
    return 0


def _validation_chunks(count: int, fraction: float, salt: int) -> set[int]:
    """``split --by-chunk``: which of ``count`` input chunks are validation, every
    ``round(1 / fraction)``-th from ``salt``'s offset (none for fraction 0)."""
    if fraction <= 0.0:
        return set()
    every = max(1, round(1.0 / fraction))
    return {index for index in range(count) if (index + salt) % every == 0}


# ---------------------------------------------------------------- command line


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = ToolParser(prog=PROG, description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True, parser_class=ToolParser)

    def chunk_size(sub: argparse.ArgumentParser) -> None:
        help_text = f"records a chunk (default {DEFAULT_CHUNK_SIZE})"
        sub.add_argument("--chunk-size", type=int, default=DEFAULT_CHUNK_SIZE, help=help_text)

    def manifests(sub: argparse.ArgumentParser, manifests_help: str) -> None:
        sub.add_argument(
            "--manifests", type=Path, help="the manifests' folder (default: the chunks')"
        )

    sub = commands.add_parser("convert", help="text data files as a store")
    sub.add_argument(
        "inputs", nargs="+", type=Path, metavar="IN", help="FEN;SCORE;RESULT files (.gz, .xz)"
    )
    sub.add_argument("--out", type=Path, required=True, help="the store's folder")
    sub.add_argument("--teacher", default="", help="who labelled the data (the header's source)")
    chunk_size(sub)
    manifests(sub, COPY_HELP)
    sub = commands.add_parser("verify", help="chunks against their manifests")
    sub.add_argument("store", type=Path)
    manifests(sub, "check against the manifests there (the committed ones)")
    sub = commands.add_parser("info", help="counts and histograms")
    sub.add_argument("stores", nargs="+", type=Path)
    sub = commands.add_parser("dedup", help="each position once")
    sub.add_argument("inputs", nargs="+", type=Path, metavar="IN_DIR")
    sub.add_argument("--out", type=Path, required=True)
    chunk_size(sub)
    manifests(sub, COPY_HELP)
    sub = commands.add_parser("split", help="a validation set by position hash")
    sub.add_argument("inputs", nargs="+", type=Path, metavar="IN_DIR")
    sub.add_argument("--train", type=Path, required=True)
    sub.add_argument("--valid", type=Path, required=True)
    sub.add_argument("--valid-fraction", type=float, default=0.05)
    sub.add_argument("--salt", type=int, default=0, help="another hash, another split")
    sub.add_argument(
        "--by-chunk",
        action="store_true",
        help="whole input chunks to validation (whole games of a datagen store)",
    )
    chunk_size(sub)
    args = parser.parse_args(argv)
    if getattr(args, "chunk_size", 1) <= 0:
        parser.error("--chunk-size must be positive")
    if args.command == "split" and not 0.0 <= args.valid_fraction <= 1.0:
        parser.error("--valid-fraction must be between 0 and 1")
    if args.command in ("dedup", "split"):
        outs = [args.out] if args.command == "dedup" else [args.train, args.valid]
        for out in outs:
            if any(out.resolve() == folder.resolve() for folder in args.inputs):
                parser.error(f"{out}: the output must not be an input")
    return args


def main(argv: Optional[Sequence[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv)
    try:
        if args.command == "convert":
            return convert(args, argv)
        if args.command == "verify":
            return verify(args)
        if args.command == "info":
            return info(args)
        if args.command == "dedup":
            return dedup(args, argv)
        return split(args, argv)
    except RecordError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return EXIT_FAILED
    except REPORTED_FAILURES as exc:
        return report_failure(PROG, exc)


if __name__ == "__main__":
    raise SystemExit(main())
