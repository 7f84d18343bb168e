"""Labelled positions as fixed-size binary records: the format, its files, its features.

The compact form of the training data (issue 105; the text form is
scripts.training.dataset's): a file is a 64-byte header and then 32-byte records,
little-endian, read with numpy without a Python loop per record.

The header (64 bytes):

======  =====  ==================================================================
offset  bytes  content
======  =====  ==================================================================
0       8      magic ``b"CUTPOS\\r\\n"``
8       2      uint16 format version (``VERSION``); a reader refuses a newer one
10      2      uint16 header size (64)
12      2      uint16 record size (32)
14      1      uint8 score side: 0 White's view (``SCORE_WHITE``), 1 the side to move's
15      1      zero
16      48     the source or teacher, UTF-8, zero-padded (``stockfish nodes=5000``)
======  =====  ==================================================================

A record (``RECORD``, 32 bytes):

======  =====  ==================================================================
offset  bytes  content
======  =====  ==================================================================
0       8      uint64 occupancy, bit ``s`` for square ``s`` (a1 = 0, h8 = 63)
8       16     the occupied squares' pieces in ascending square order, 4 bits each,
               the low half of byte ``8 + k // 2`` for even ``k``: python-chess's
               piece type (1 pawn .. 6 king), plus 8 for Black (the engine's mailbox
               codes); 0 past the last piece
24      1      bit 0 Black to move; bits 1-4 castling rights K, Q, k, q
25      1      en passant square, only when a legal en passant capture exists (what
               ``chess.Board.fen()`` writes), else 64
26      1      halfmove clock, clamped to 255
27      2      uint16 fullmove number, clamped to 65535
29      2      int16 score in centipawns, from the header's score side
31      1      int8 result from White's view: 1, 0, -1, or -128 unknown
======  =====  ==================================================================

There is no spare byte: the source and teacher of a file are its header's (and a
store's manifests'), and a new field is a new version. Bytes 0-25 are the position
(``POSITION_BYTES``, what deduplication compares), the rest its clocks and labels.
Only standard chess: a Chess960 position is refused (``RecordError``).

Torn records: a file whose data is not a whole number of records (a writer stopped
mid-write) is read without the partial last record (said once on stderr), and
``append`` cuts it off before it appends.

This module owns the format: encoding and decoding a position (python-chess at the
edges), reading and appending files, and the network's input features of a batch of
records, computed with engine.core.nnue's ``feature`` so that they are the engine's.
It must not make, label or deduplicate positions, nor know about chunks and manifests
(scripts.training.store does).
"""

from __future__ import annotations

import os
import struct
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Final

import chess
import numpy as np
import numpy.typing as npt

from engine.core import nnue

MAGIC: Final = b"CUTPOS\r\n"
VERSION: Final = 1
HEADER_SIZE: Final = 64
RECORD_SIZE: Final = 32
SCORE_WHITE: Final = 0
"""The header's score side: scores are from White's view (as the text data's)."""
SCORE_SIDE_TO_MOVE: Final = 1
"""The header's score side: scores are from the side to move's view."""
SOURCE_BYTES: Final = 48
_HEADER: Final = struct.Struct(f"<8sHHHBB{SOURCE_BYTES}s")
NO_SQUARE: Final = 64
RESULT_UNKNOWN: Final = -128
RESULT_OF_TEXT: Final = {"1-0": 1, "1/2-1/2": 0, "0-1": -1, "*": RESULT_UNKNOWN}
TEXT_OF_RESULT: Final = {value: text for text, value in RESULT_OF_TEXT.items()}
POSITION_BYTES: Final = 26
BLACK_TO_MOVE: Final = 1
_CASTLING_BITS: Final = ((chess.BB_H1, 2), (chess.BB_A1, 4), (chess.BB_H8, 8), (chess.BB_A8, 16))

RECORD: Final = np.dtype(
    [
        ("occupancy", "<u8"),
        ("pieces", "u1", (16,)),
        ("flags", "u1"),
        ("ep", "u1"),
        ("halfmove", "u1"),
        ("fullmove", "<u2"),
        ("score", "<i2"),
        ("result", "i1"),
    ]
)
assert RECORD.itemsize == RECORD_SIZE
_RECORD: Final = struct.Struct("<Q16sBBBHhb")
assert _RECORD.size == RECORD_SIZE

Records = npt.NDArray[np.void]
"""An array of ``RECORD``."""


class RecordError(ValueError):
    """A position the format cannot hold, or a file that is not one of its files."""


@dataclass(frozen=True)
class Header:
    """What a file's header says about its records."""

    score_side: int = SCORE_WHITE
    source: str = ""
    version: int = VERSION

    def pack(self) -> bytes:
        source = self.source.encode("utf-8")[:SOURCE_BYTES]
        return _HEADER.pack(
            MAGIC, self.version, HEADER_SIZE, RECORD_SIZE, self.score_side, 0, source
        )


# ---------------------------------------------------------------- one record


def encode(board: chess.Board, score: int, result: int) -> bytes:
    """``board`` with its labels as one record's 32 bytes; RecordError for a position
    the format cannot hold (``np.frombuffer(data, RECORD)`` reads such bytes)."""
    if board.chess960:
        raise RecordError("Chess960 positions are not supported")
    occupied = board.occupied
    if chess.popcount(occupied) > 32:
        raise RecordError(f"{chess.popcount(occupied)} pieces: at most 32 fit a record")
    rights = board.clean_castling_rights()
    if rights & ~(chess.BB_A1 | chess.BB_H1 | chess.BB_A8 | chess.BB_H8):
        raise RecordError("castling rights of a Chess960 position are not supported")
    black = board.occupied_co[chess.BLACK]
    nibbles = bytearray(16)
    for k, square in enumerate(chess.scan_forward(occupied)):
        code = board.piece_type_at(square) or 0
        if black >> square & 1:
            code |= 8
        nibbles[k >> 1] |= code << (4 * (k & 1))
    flags = 0 if board.turn == chess.WHITE else BLACK_TO_MOVE
    for corner, bit in _CASTLING_BITS:
        if rights & corner:
            flags |= bit
    ep = board.ep_square if board.ep_square is not None and board.has_legal_en_passant() else None
    return _RECORD.pack(
        occupied,
        bytes(nibbles),
        flags,
        NO_SQUARE if ep is None else ep,
        min(board.halfmove_clock, 255),
        min(max(board.fullmove_number, 1), 65535),
        max(-32768, min(32767, score)),
        result,
    )


def from_bytes(data: bytes) -> Records:
    """The records of ``data`` (whole records, as ``encode`` writes them)."""
    return np.frombuffer(data, dtype=RECORD)


def decode(record: np.void) -> tuple[chess.Board, int, int]:
    """(board, score, result) of one record (its score from the file's score side)."""
    occupied = int(record["occupancy"])
    nibbles = bytes(record["pieces"])
    board = chess.Board.empty()
    for k, square in enumerate(chess.scan_forward(occupied)):
        code = nibbles[k >> 1] >> (4 * (k & 1)) & 15
        if not 1 <= code & 7 <= 6:
            raise RecordError(f"bad piece code {code} on {chess.square_name(square)}")
        board.set_piece_at(square, chess.Piece(code & 7, not code & 8))
    flags = int(record["flags"])
    board.turn = chess.BLACK if flags & BLACK_TO_MOVE else chess.WHITE
    rights = 0
    for corner, bit in _CASTLING_BITS:
        if flags & bit:
            rights |= corner
    board.castling_rights = rights
    ep = int(record["ep"])
    board.ep_square = None if ep == NO_SQUARE else ep
    board.halfmove_clock = int(record["halfmove"])
    board.fullmove_number = int(record["fullmove"])
    return board, int(record["score"]), int(record["result"])


# ---------------------------------------------------------------- files


def read_header(path: Path, data: bytes) -> Header:
    """The header at the start of ``data`` (``path``'s); RecordError if it is not one
    this reader can read."""
    if len(data) < 16 or data[:8] != MAGIC:
        raise RecordError(f"{path}: not a Cutoff position file (bad magic)")
    version, header_size, record_size = struct.unpack_from("<HHH", data, 8)
    if version > VERSION:
        raise RecordError(
            f"{path}: format version {version}, this reader knows up to {VERSION}: "
            "update Cutoff to read it"
        )
    if version < 1 or header_size != HEADER_SIZE or record_size != RECORD_SIZE:
        raise RecordError(
            f"{path}: bad header (version {version}, header {header_size} bytes, "
            f"records {record_size} bytes)"
        )
    if len(data) < HEADER_SIZE:
        raise RecordError(f"{path}: truncated header")
    _, _, _, _, score_side, _, source = _HEADER.unpack_from(data, 0)
    if score_side not in (SCORE_WHITE, SCORE_SIDE_TO_MOVE):
        raise RecordError(f"{path}: unknown score side {score_side}")
    return Header(score_side, source.rstrip(b"\0").decode("utf-8", "replace"), version)


def _whole_records(path: Path, size: int, warn: bool) -> int:
    """How many whole records a file of ``size`` bytes holds; the torn rest said once."""
    count, torn = divmod(size - HEADER_SIZE, RECORD_SIZE)
    if torn and warn:
        print(
            f"warning: {path}: ignoring a torn last record ({torn} of {RECORD_SIZE} bytes)",
            file=sys.stderr,
        )
    return count


def read(path: Path, mmap: bool = True, warn: bool = True) -> tuple[Header, Records]:
    """A file's header and records, memory-mapped (read-only) unless ``mmap`` is off;
    a torn last record is left out (and said on stderr once, if ``warn``)."""
    with path.open("rb") as handle:
        header = read_header(path, handle.read(HEADER_SIZE))
        size = os.fstat(handle.fileno()).st_size
    count = _whole_records(path, size, warn)
    if count == 0:
        return header, np.zeros(0, dtype=RECORD)
    if mmap:
        records: Records = np.memmap(
            path, dtype=RECORD, mode="r", offset=HEADER_SIZE, shape=(count,)
        )
        return header, records
    with path.open("rb") as handle:
        handle.seek(HEADER_SIZE)
        data = handle.read(count * RECORD_SIZE)
    return header, np.frombuffer(data, dtype=RECORD)


def write(path: Path, header: Header, records: Records) -> None:
    """A new file ``path`` of ``records``, flushed to disk (the caller renames it)."""
    with path.open("wb") as handle:
        handle.write(header.pack())
        handle.write(np.ascontiguousarray(records, dtype=RECORD).tobytes())
        handle.flush()
        os.fsync(handle.fileno())


def append(path: Path, header: Header, records: Records) -> None:
    """Append ``records`` to ``path`` (made with ``header`` if it does not exist),
    cutting off a torn last record first; RecordError if the file's header differs."""
    if not path.exists():
        write(path, header, records)
        return
    with path.open("r+b") as handle:
        found = read_header(path, handle.read(HEADER_SIZE))
        if (found.score_side, found.version) != (header.score_side, header.version):
            raise RecordError(f"{path}: its header differs from the records to append")
        size = os.fstat(handle.fileno()).st_size
        end = HEADER_SIZE + RECORD_SIZE * _whole_records(path, size, warn=False)
        if end < size:
            handle.truncate(end)
        handle.seek(end)
        handle.write(np.ascontiguousarray(records, dtype=RECORD).tobytes())
        handle.flush()
        os.fsync(handle.fileno())


def concatenate(parts: Iterable[Records]) -> Records:
    """One record array of ``parts`` (empty if there are none)."""
    arrays = list(parts)
    return np.concatenate(arrays) if arrays else np.zeros(0, dtype=RECORD)


# ---------------------------------------------------------------- features


def _feature_table() -> npt.NDArray[np.int16]:
    """``table[perspective, code, square]``: engine.core.nnue's feature index of the
    piece ``code`` (a record's 4-bit code) on ``square``, perspective 0 White, 1 Black;
    -1 for the codes that are no piece."""
    table = np.full((2, 16, 64), -1, dtype=np.int16)
    for index, perspective in enumerate((chess.WHITE, chess.BLACK)):
        for code in range(16):
            piece_type, colour = code & 7, not code & 8
            if 1 <= piece_type <= 6:
                for square in range(64):
                    table[index, code, square] = nnue.feature(
                        perspective, colour, piece_type, square
                    )
    return table


FEATURES: Final = _feature_table()


@dataclass(frozen=True)
class FeatureBatch:
    """The active network inputs of a batch of records, one entry per piece: record
    ``row[i]`` has input ``white[i]`` as White sees it and ``black[i]`` as Black does
    (entries in record order, each record's pieces in ascending square order);
    ``offsets[r]`` is where record ``r``'s entries begin (PyTorch's EmbeddingBag form)."""

    row: npt.NDArray[np.int64]
    white: npt.NDArray[np.int16]
    black: npt.NDArray[np.int16]
    offsets: npt.NDArray[np.int64]
    black_to_move: npt.NDArray[np.bool_]


def squares_and_codes(
    records: Records,
) -> tuple[
    npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.uint8], npt.NDArray[np.int64]
]:
    """(row, square, piece code, counts) of every piece of ``records``, vectorised."""
    occupancy = np.ascontiguousarray(records["occupancy"]).astype("<u8", copy=False)
    bits = np.unpackbits(occupancy.view(np.uint8), bitorder="little").view(np.bool_)
    # One flat pass: bit r * 64 + s is square s of record r, in record and square order.
    flat = np.flatnonzero(bits)
    row = flat >> 6
    square = flat & 63
    counts = np.bincount(row, minlength=len(records)).astype(np.int64)
    packed = np.asarray(records["pieces"])
    nibbles = np.empty((len(records), 32), dtype=np.uint8)
    nibbles[:, 0::2] = packed & 15
    nibbles[:, 1::2] = packed >> 4
    starts = np.zeros(len(records), dtype=np.int64)
    np.cumsum(counts[:-1], out=starts[1:])
    # The k-th piece of a record is its k-th occupied square's.
    k = np.arange(len(row), dtype=np.int64) - starts[row]
    codes = nibbles.ravel()[row * 32 + k]
    return row, square, codes, counts


def features(records: Records) -> FeatureBatch:
    """The network inputs of both perspectives for every record, as engine.core.nnue
    computes them (its ``feature``), without a Python loop per record."""
    row, square, codes, counts = squares_and_codes(records)
    if len(codes) and FEATURES[0, codes, square].min() < 0:
        raise RecordError("a record holds a piece code that is no piece")
    offsets = np.zeros(len(records), dtype=np.int64)
    np.cumsum(counts[:-1], out=offsets[1:])
    return FeatureBatch(
        row=row,
        white=FEATURES[0, codes, square],
        black=FEATURES[1, codes, square],
        offsets=offsets,
        black_to_move=(np.asarray(records["flags"]) & BLACK_TO_MOVE).astype(bool),
    )
