"""The training data file: labelled positions as gzip'd ``FEN;SCORE;RESULT`` lines.

Format (documented in docs/training.md):

* a gzip file made of one or more gzip *members* (concatenated gzip streams read as
  one by ``gzip``/``zcat``); a writer appends a member per batch and never rewrites
  what is there, so an interrupted run loses at most the batch it was writing;
* each data line ``FEN;SCORE;RESULT``: SCORE the teacher's score in centipawns from
  White's view, an integer clipped to +-``SCORE_CLIP_CP`` (mates too); RESULT the
  game's result from White's view (``1-0``, ``1/2-1/2``, ``0-1``) or ``*`` when unknown;
* lines starting with ``#`` are bookkeeping, not data: ``#done TASK`` says the work
  unit ``TASK`` (a self-play game, a PGN game, a chunk of a FEN file) is complete, and
  comes after that unit's data lines in the same member.

A data file may also be xz-compressed (``.xz``: the same lines, from ``xz -9`` of the
decompressed gzip file), which takes about 30 % fewer bytes: the form the committed
datasets take. Such a file is read only: tools that append (datagen) write gzip.

It is the one text format of the project's labelled positions: the training tools'
and the evaluation tuner's (scripts.tuning) alike (the binary form, for data at scale,
is scripts.training.records', made from these files by scripts.training.store).
Responsible for writing, reading (``read_records``: the one reading loop every tool
uses) and recovering such files (a torn last member is cut off before appending). It
must not make or label positions (datagen and scripts.tuning do).
"""

from __future__ import annotations

import gzip
import lzma
import os
import zlib
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import NamedTuple, Union

import chess

SCORE_CLIP_CP = 2000
"""Scores beyond this (mates included) are stored as this."""
RESULTS = ("1-0", "1/2-1/2", "0-1", "*")
UNKNOWN = "*"
DONE = "#done "
_READ_BLOCK = 1 << 20


class Sample(NamedTuple):
    """One labelled position."""

    fen: str
    score: int  # cp, White's view, clipped
    result: str  # one of RESULTS


class DataError(ValueError):
    """A line of a data file that is not ``FEN;SCORE;RESULT``; the message names file:line."""


def clip(cp: int) -> int:
    return max(-SCORE_CLIP_CP, min(SCORE_CLIP_CP, cp))


def format_sample(sample: Sample) -> str:
    return f"{sample.fen};{sample.score};{sample.result}"


def parse_line(line: str, where: str) -> Sample:
    """A data line as a ``Sample`` (the FEN is not checked here: that costs a board)."""
    fields = line.split(";")
    if len(fields) != 3 or fields[2] not in RESULTS:
        raise DataError(f"{where}: expected FEN;SCORE;RESULT, got {line[:70]!r}")
    try:
        score = int(fields[1])
    except ValueError:
        raise DataError(f"{where}: score {fields[1]!r} is not an integer") from None
    return Sample(fields[0], score, fields[2])


def board_of(sample: Sample, where: str) -> chess.Board:
    """The board of a sample's FEN; DataError naming ``where`` (file:line) if it is bad."""
    try:
        return chess.Board(sample.fen)
    except ValueError as error:
        raise DataError(f"{where}: bad FEN {sample.fen!r} ({error})") from None


def _members(path: Path) -> Iterator[tuple[int, bytes]]:
    """(end offset, decompressed bytes) of each complete gzip member, in file order.

    Stops at the first member that is torn (the file ends inside it) or corrupt.
    """
    with path.open("rb") as handle:
        fed = 0  # bytes of the file handed to decoders so far
        pending = b""
        decoder = zlib.decompressobj(wbits=31)
        chunks: list[bytes] = []
        while True:
            if pending:
                block, pending = pending, b""
            else:
                block = handle.read(_READ_BLOCK)
                if not block:
                    return
                fed += len(block)
            try:
                chunks.append(decoder.decompress(block))
            except zlib.error:
                return
            if decoder.eof:
                pending = decoder.unused_data
                yield fed - len(pending), b"".join(chunks)
                chunks = []
                decoder = zlib.decompressobj(wbits=31)


def recover(path: Path) -> int:
    """Cut ``path`` back to its last complete gzip member; the bytes removed."""
    # Read as gzip, an xz file has no complete member: it would be cut to nothing.
    refuse_archive(path)
    if not path.exists():
        return 0
    size = path.stat().st_size
    end = max((member_end for member_end, _ in _members(path)), default=0)
    if end < size:
        with path.open("r+b") as handle:
            handle.truncate(end)
    return size - end


def is_archive(path: Path) -> bool:
    """Whether ``path`` is a read-only xz data file rather than an appendable gzip one."""
    return path.suffix == ".xz"


def refuse_archive(path: Path) -> None:
    """DataError if ``path`` is an xz data file: every tool that writes data appends."""
    if is_archive(path):
        raise DataError(f"{path}: xz data files are read only: write a .gz file")


def read_lines(path: Path) -> Iterator[tuple[str, str]]:
    """(``file:line`` for messages, line) for every line of the complete members."""
    number = 0
    if is_archive(path):
        # An xz file is written whole, never appended to, so there is no torn member
        # to stop at: a damaged one is an error, not a recovery.
        try:
            with lzma.open(path, "rt", encoding="utf-8") as handle:
                for line in handle:
                    number += 1
                    yield f"{path}:{number}", line.rstrip("\n")
        except (lzma.LZMAError, EOFError) as error:  # EOFError: the file was cut short
            raise DataError(f"{path}:{number + 1}: damaged xz data ({error})") from None
        return
    for _, data in _members(path):
        for line in data.decode("utf-8").splitlines():
            number += 1
            yield f"{path}:{number}", line


def read_records(path: Path) -> Iterator[tuple[str, Union[Sample, str]]]:
    """(``file:line``, record) for every sample of a data file and every work unit it
    records as complete: a ``Sample``, or the unit's name (a ``#done UNIT`` line), in
    file order; blank and other bookkeeping lines skipped, DataError on a bad line.

    The one reading loop of the data tools (train, tune, distill, fit, leaves): a unit
    ends where its ``#done`` comes, which is how train holds out whole games."""
    for where, line in read_lines(path):
        if line.startswith(DONE):
            yield where, line[len(DONE) :]
        elif line and not line.startswith("#"):
            yield where, parse_line(line, where)


def read_samples(path: Path) -> Iterator[Sample]:
    """The samples of a data file (bookkeeping lines skipped); DataError on a bad line."""
    for _, record in read_records(path):
        if isinstance(record, Sample):
            yield record


def done_tasks(path: Path) -> set[str]:
    """The work units a data file records as complete."""
    return {line[len(DONE) :] for _, line in read_lines(path) if line.startswith(DONE)}


def encode_member(lines: Iterable[str]) -> bytes:
    """``lines`` as one gzip member (empty if there are none): the same lines give the
    same bytes, and files of members concatenate to the file of all their lines."""
    data = "".join(f"{line}\n" for line in lines).encode("utf-8")
    return gzip.compress(data, compresslevel=6, mtime=0) if data else b""


def append_member(path: Path, lines: Iterable[str]) -> None:
    """Append ``lines`` to ``path`` as one gzip member, flushed to disk."""
    data = encode_member(lines)
    if not data:
        return
    with path.open("ab") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
