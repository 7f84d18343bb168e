"""Endgame tablebases: Syzygy (WDL and DTZ) and Gaviota (DTM), read with python-chess.

``Tablebases`` holds the tables named by the ``SyzygyPath`` and ``GaviotaTbPath``
options (several directories separated by ``:``, or by ``;`` as on Windows) and
answers two questions:

* in the tree, ``wdl(board)``: win, draw or loss with best play for a position
  with few enough pieces (``SyzygyProbeLimit``) and no castling rights, or None;
  the search asks only right after a capture or pawn move, as engines do, since
  that is where a position first enters the tables. Syzygy answers where it has
  the table, else Gaviota (a WDL derived from its DTM, blind to the fifty-move
  rule);
* at the root, ``root(board)``: what to play. A won position plays the move that
  keeps the win and makes progress (the shortest distance to the next capture or
  pawn move by DTZ, or to mate by Gaviota's DTM; a win that the fifty-move rule
  would turn into a draw does not count), a lost one the move that resists
  longest; a drawn one lets the search choose among the moves that keep the draw.
  Without Syzygy's table, Gaviota's DTM alone ranks the moves.

Scores: a tablebase win is ``TB_WIN_CP`` minus the distance in plies (below every
mate score), reported as a large centipawn score; with Gaviota's tables the root
reports the exact ``mate N``.

Bad files never reach a probe unchecked: table files are validated when a path is
set (a regular file, its size and header; Gaviota's block index is read here, so
a garbage header cannot make python-chess allocate gigabytes), and a table that
still fails while probed (truncated or corrupt inside) is dropped: reported once
through ``on_fault`` and then treated as missing, so the search goes on from its
own evaluation. This module must not search, and must not let a table's error out
of a probe; a missing or unreadable directory is a note, never an error.
"""

from __future__ import annotations

import lzma
import os
import stat
import struct
from dataclasses import dataclass, field
from typing import BinaryIO, Callable, Optional

import chess
import chess.gaviota
import chess.syzygy

from engine.core.score import MATE

TB_WIN_CP = 20000
"""A tablebase win, minus its distance: far above any evaluation, below any mate."""
DEFAULT_PROBE_LIMIT = 7

GAVIOTA_SUFFIX = ".gtb.cp4"
"""The only Gaviota compression python-chess reads (LZMA); cp1..cp3 are skipped."""
_GAVIOTA_HEADER = struct.Struct("<10I")
_GAVIOTA_BLOCK = chess.gaviota.ENTRIES_PER_BLOCK
_GAVIOTA_MAX_ZIPPED = 2 * _GAVIOTA_BLOCK + 64
"""A compressed block of 16,384 one-byte entries is smaller than this (LZMA grows
random data by a few bytes); a larger one in the index is corruption, and a probe
never reads more than this from a file."""
_GAVIOTA_LZMA_MEMLIMIT = 64 << 20
"""What decompressing one block may take: a garbage LZMA header can ask for a
4 GB dictionary; the tables' blocks need kilobytes."""
_GAVIOTA_CACHE_BLOCKS = 128
"""Decompressed blocks kept (as python-chess does): 128 x 16,384 entries."""


def split_paths(text: str) -> list[str]:
    """Directories of a path option: ``;``-separated if there is a ``;``, else ``:``."""
    if not text or text == "<empty>":
        return []
    parts = text.split(";") if ";" in text else text.split(":")
    return [part.strip() for part in parts if part.strip()]


class UnreadableTableError(Exception):
    """A table file failed while probed; ``path`` names it."""

    def __init__(self, path: str, cause: object) -> None:
        self.detail = (
            f"{type(cause).__name__}: {cause}" if isinstance(cause, BaseException) else str(cause)
        )
        super().__init__(f"{path}: {self.detail}")
        self.path = path


# ---------------------------------------------------------------- Syzygy


class _GuardedWdlTable(chess.syzygy.WdlTable):
    """A WDL table whose every failure names its file (python-chess raises bare errors)."""

    def probe_wdl_table(self, board: chess.Board) -> int:
        try:
            return super().probe_wdl_table(board)
        except Exception as exc:  # no error inside one table is a missing table
            raise UnreadableTableError(self.path, exc) from exc


class _GuardedDtzTable(chess.syzygy.DtzTable):
    """A DTZ table whose every failure names its file."""

    def probe_dtz_table(self, board: chess.Board, wdl: int) -> tuple[int, int]:
        try:
            return super().probe_dtz_table(board, wdl)
        except Exception as exc:
            raise UnreadableTableError(self.path, exc) from exc


class _SyzygyTables(chess.syzygy.Tablebase):
    """python-chess's Syzygy tables with guarded table files, and a way to drop one."""

    def _open_table(
        self,
        hashtable: dict[str, chess.syzygy.Table],
        Table: type[chess.syzygy.Table],  # noqa: N803 (python-chess's name)
        path: str,
    ) -> int:
        guarded: type[chess.syzygy.Table] = (
            _GuardedDtzTable if issubclass(Table, chess.syzygy.DtzTable) else _GuardedWdlTable
        )
        return super()._open_table(hashtable, guarded, path)

    def files(self) -> list[tuple[chess.syzygy.Table, bool]]:
        """Each table once, with whether it is a WDL table."""
        seen: dict[int, tuple[chess.syzygy.Table, bool]] = {}
        for table in self.wdl.values():
            seen[id(table)] = (table, True)
        for table in self.dtz.values():
            seen[id(table)] = (table, False)
        return list(seen.values())

    def drop(self, path: str) -> None:
        """Forget (and close) the table read from ``path``: from now on it is missing."""
        for tables in (self.wdl, self.dtz):
            for key, table in list(tables.items()):
                if table.path == path:
                    del tables[key]
                    with self.lru_lock:
                        if table in self.lru:
                            self.lru.remove(table)
                    table.close()


def _syzygy_problem(path: str, wdl: bool) -> Optional[str]:
    """Why ``path`` cannot be a Syzygy table (python-chess's own checks), or None."""
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            return "not a regular file"
        if info.st_size % 64 != 16:
            return f"invalid size ({info.st_size} bytes)"
        with open(path, "rb") as stream:
            magic = stream.read(4)
    except OSError as exc:
        return f"cannot read it: {exc.strerror or exc}"
    expected = chess.Board.tbw_magic if wdl else chess.Board.tbz_magic
    if magic != expected:
        return "not a Syzygy table (bad magic number)"
    return None


def _syzygy_non_files(directory: str) -> list[str]:
    """Notes on what is named like a table but is no file (python-chess skips it)."""
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return []
    notes = []
    for name in names:
        stem, ext = os.path.splitext(name)
        path = os.path.join(os.path.abspath(directory), name)
        if (
            ext in (chess.Board.tbw_suffix, chess.Board.tbz_suffix)
            and chess.syzygy.is_tablename(stem)
            and not os.path.isfile(path)
        ):
            notes.append(f"SyzygyPath: ignoring {path}: not a regular file")
    return notes


# ---------------------------------------------------------------- Gaviota


def _gaviota_index(path: str, egkey: str) -> chess.gaviota.ZipInfo:
    """The block index of a Gaviota table file, checked; ValueError says what is wrong.

    The layout is python-chess's (chess.gaviota.PythonTablebase.egtb_loadindexes):
    a header of ten little-endian words, the ninth the offset of the data, then the
    offsets of the compressed blocks (two sides' blocks, plus the end).
    """
    if egkey not in chess.gaviota.EGKEY:
        raise ValueError("not a Gaviota table name")
    try:
        info = os.stat(path)
    except OSError as exc:
        raise ValueError(f"cannot read it: {exc.strerror or exc}") from None
    if not stat.S_ISREG(info.st_mode):
        raise ValueError("not a regular file")
    size = info.st_size
    if size < _GAVIOTA_HEADER.size:
        raise ValueError(f"too short ({size} bytes)")
    blocks_per_side = 1 + (chess.gaviota.EGKEY[egkey].maxindex - 1) // _GAVIOTA_BLOCK
    entries = 2 * blocks_per_side + 1
    try:
        with open(path, "rb") as stream:
            header = _GAVIOTA_HEADER.unpack(stream.read(_GAVIOTA_HEADER.size))
            if header[2] != _GAVIOTA_BLOCK or header[8] != _GAVIOTA_HEADER.size + 4 * entries:
                raise ValueError("bad header")
            raw = stream.read(4 * entries)
    except OSError as exc:
        raise ValueError(f"cannot read it: {exc.strerror or exc}") from None
    if len(raw) != 4 * entries:
        raise ValueError(f"truncated ({size} bytes)")
    index = list(struct.unpack(f"<{entries}I", raw))
    if index[0] != header[8] or any(
        not 0 <= end - start <= _GAVIOTA_MAX_ZIPPED for start, end in zip(index, index[1:])
    ):
        raise ValueError("bad block index")
    if index[-1] > size:
        raise ValueError(f"truncated ({size} bytes, its index needs {index[-1]})")
    return chess.gaviota.ZipInfo(extraoffset=0, totalblocks=entries, blockindex=index)


class _GaviotaTables(chess.gaviota.PythonTablebase):
    """python-chess's pure-Python Gaviota probe, bounded and read-only.

    Only tables whose index was checked (``add_table``) are probed; files are opened
    read-only (python-chess opens them ``rb+``, which fails on a system's read-only
    tables and does not block on a FIFO); a block is read and decompressed to at
    most its known size; any failure inside a table names its file.
    """

    def add_table(self, egkey: str, path: str, zipinfo: chess.gaviota.ZipInfo) -> None:
        self.available_tables[egkey] = path
        self.zipinfo[egkey] = zipinfo

    def drop(self, path: str) -> None:
        """Forget the table read from ``path``: from now on it is missing."""
        for egkey, known in list(self.available_tables.items()):
            if known == path:
                del self.available_tables[egkey]
                self.zipinfo.pop(egkey, None)
                stream = self.streams.pop(egkey, None)
                if stream is not None:
                    stream.close()
                for cached in [k for k in self.block_cache if k[0] == egkey]:
                    del self.block_cache[cached]

    def _open_tablebase(self, req: chess.gaviota.Request) -> BinaryIO:
        stream = self.streams.get(req.egkey)
        if stream is None:
            stream = open(self.available_tables[req.egkey], "rb")  # noqa: SIM115 (closed by close)
            self.streams[req.egkey] = stream
        return stream

    def _tb_probe(self, req: chess.gaviota.Request) -> int:
        try:
            return self._bounded_probe(req, self._setup_tablebase(req))
        except chess.gaviota.MissingTableError:
            raise  # no such table: the probe's answer is "unknown"
        except Exception as exc:
            raise UnreadableTableError(self.available_tables[req.egkey], exc) from exc

    def _bounded_probe(self, req: chess.gaviota.Request, stream: BinaryIO) -> int:
        """python-chess's ``_tb_probe``, reading and decompressing within known sizes."""
        idx = chess.gaviota.EGKEY[req.egkey].pctoi(req)
        offset, remainder = chess.gaviota.split_index(idx)
        cached = self.block_cache.get((req.egkey, offset, req.side))
        if cached is None:
            cached = chess.gaviota.TableBlock(req.egkey, req.side, offset, self.block_age)
            block = self.egtb_block_getnumber(req, idx)
            n = self.egtb_block_getsize(req, idx)
            zipped_size = self.egtb_block_getsize_zipped(req.egkey, block)
            self.egtb_block_park(req.egkey, block, stream)
            zipped = stream.read(min(zipped_size, _GAVIOTA_MAX_ZIPPED))
            if len(zipped) < 16:
                raise ValueError("block past the end of the file")
            if zipped[0] == 0:
                zipped = zipped[2:]  # plain LZMA follows
            else:
                # LZMA86: python-chess's fake header (lc 3, lp 0, pb 2, 4 KB dictionary).
                properties = bytearray(13)
                properties[0] = (2 * 5 + 0) * 9 + 3
                properties[1:5] = (4096).to_bytes(4, "little")
                properties[5:13] = n.to_bytes(8, "little")
                zipped = bytes(properties) + zipped[15:]
            packed = lzma.LZMADecompressor(memlimit=_GAVIOTA_LZMA_MEMLIMIT).decompress(
                zipped, max_length=n
            )
            if len(packed) < n:
                raise ValueError(f"block decompresses to {len(packed)} of {n} entries")
            cached.pcache = chess.gaviota.egtb_block_unpack(req.side, n, packed)
            self.block_cache[(req.egkey, offset, req.side)] = cached
            if len(self.block_cache) > _GAVIOTA_CACHE_BLOCKS:
                oldest = min(self.block_cache, key=lambda key: self.block_cache[key].age)
                del self.block_cache[oldest]
        else:
            cached.age = self.block_age
        self.block_age += 1
        return cached.pcache[remainder]


# ---------------------------------------------------------------- the engine's view


@dataclass(frozen=True)
class RootProbe:
    """What the tables say at the root."""

    move: Optional[chess.Move]
    """The move to play (won or lost positions), or None: search ``keep``."""
    keep: list[chess.Move]
    """The moves that keep the best result the tables promise."""
    score: int
    """Side to move's view, engine.core.score units (a TB win, a mate, or 0)."""


def _ignore(note: str) -> None:
    """The default ``on_fault``: nobody to tell."""


@dataclass
class Tablebases:
    """The tables from the path options, and the probes the engine makes of them."""

    probe_limit: int = DEFAULT_PROBE_LIMIT
    syzygy: Optional[_SyzygyTables] = None
    syzygy_pieces: int = 0
    gaviota: Optional[_GaviotaTables] = None
    gaviota_pieces: int = 0
    hits: int = field(default=0)
    on_fault: Callable[[str], None] = _ignore
    """Told once about each table dropped while probing (the controller: info string)."""

    def set_syzygy_path(self, text: str) -> list[str]:
        """Open the Syzygy tables in ``text``'s directories; notes about what failed."""
        if self.syzygy is not None:
            self.syzygy.close()
        self.syzygy, self.syzygy_pieces = None, 0
        notes = []
        tables = _SyzygyTables()
        for directory in split_paths(text):
            if not os.path.isdir(directory):
                notes.append(f"SyzygyPath: no such directory: {directory}")
                continue
            try:
                tables.add_directory(directory)
            except OSError as exc:
                notes.append(f"SyzygyPath: cannot read {directory}: {exc}")
            notes.extend(_syzygy_non_files(directory))
        for table, is_wdl in tables.files():
            problem = _syzygy_problem(table.path, is_wdl)
            if problem is not None:
                notes.append(f"SyzygyPath: ignoring {table.path}: {problem}")
                tables.drop(table.path)
        names = list(tables.wdl)
        if names:
            self.syzygy = tables
            self.syzygy_pieces = max(len(name) - 1 for name in names)  # "KQvK": 3 pieces
            notes.append(f"Syzygy: {len(names)} tables, up to {self.syzygy_pieces} pieces")
        elif split_paths(text):
            notes.append("SyzygyPath: no Syzygy tables found")
        return notes

    def set_gaviota_path(self, text: str) -> list[str]:
        """Open the Gaviota tables in ``text``'s directories; notes about what failed."""
        if self.gaviota is not None:
            self.gaviota.close()
        self.gaviota, self.gaviota_pieces = None, 0
        notes = []
        tables = _GaviotaTables()
        other_compressions = 0
        for directory in split_paths(text):
            try:
                names = sorted(os.listdir(directory))
            except OSError as exc:
                reason = "no such directory" if not os.path.isdir(directory) else exc.strerror
                notes.append(f"GaviotaTbPath: {reason}: {directory}")
                continue
            for name in names:
                if not name.endswith(GAVIOTA_SUFFIX):
                    other_compressions += ".gtb.cp" in name
                    continue
                path = os.path.join(os.path.abspath(directory), name)
                egkey = name[: -len(GAVIOTA_SUFFIX)]
                try:
                    zipinfo = _gaviota_index(path, egkey)
                except ValueError as exc:
                    notes.append(f"GaviotaTbPath: ignoring {path}: {exc}")
                    continue
                tables.add_table(egkey, path, zipinfo)
        if tables.available_tables:
            self.gaviota = tables
            self.gaviota_pieces = max(len(key) for key in tables.available_tables)
            notes.append(
                f"Gaviota: {len(tables.available_tables)} tables,"
                f" up to {self.gaviota_pieces} pieces"
            )
        elif split_paths(text):
            extra = f" ({other_compressions} of other compressions)" if other_compressions else ""
            notes.append(f"GaviotaTbPath: no Gaviota tables (.gtb.cp4) found{extra}")
        return notes

    @property
    def max_pieces(self) -> int:
        """Positions with at most this many pieces may be probed in the tree (0: none)."""
        return min(self.probe_limit, max(self.syzygy_pieces, self.gaviota_pieces))

    def _in_tables(self, board: chess.Board) -> bool:
        pieces = board.occupied.bit_count()
        return pieces <= self.max_pieces and not board.castling_rights

    # -- guarded probes: a table that fails is dropped, reported once, and missing

    def _dropped(self, exc: UnreadableTableError) -> None:
        if self.syzygy is not None:
            self.syzygy.drop(exc.path)
        if self.gaviota is not None:
            self.gaviota.drop(exc.path)
        self.on_fault(f"tablebase {exc.path} cannot be read, ignoring it ({exc.detail})")

    def _syzygy_wdl(self, board: chess.Board) -> Optional[int]:
        if self.syzygy is None or board.occupied.bit_count() > self.syzygy_pieces:
            return None
        try:
            return self.syzygy.get_wdl(board)
        except UnreadableTableError as exc:
            self._dropped(exc)
            return None

    def _syzygy_dtz(self, board: chess.Board) -> Optional[int]:
        if self.syzygy is None:
            return None
        try:
            return self.syzygy.get_dtz(board)
        except UnreadableTableError as exc:
            self._dropped(exc)
            return None

    def _gaviota_dtm(self, board: chess.Board) -> Optional[int]:
        """Plies to mate (positive: the side to move mates; 0: draw or mated), or None."""
        if self.gaviota is None or board.occupied.bit_count() > self.gaviota_pieces:
            return None
        try:
            return self.gaviota.get_dtm(board)
        except UnreadableTableError as exc:
            self._dropped(exc)
            return None

    def _gaviota_wdl(self, board: chess.Board) -> Optional[int]:
        dtm = self._gaviota_dtm(board)
        if dtm is None:
            return None
        if dtm == 0:
            return -2 if board.is_check() and board.is_checkmate() else 0
        return 2 if dtm > 0 else -2

    # -- the engine's questions

    def wdl(self, board: chess.Board) -> Optional[int]:
        """-2..2 (loss, blessed loss, draw, cursed win, win) for the side to move, or None."""
        if not self._in_tables(board):
            return None
        value = self._syzygy_wdl(board)
        if value is None:
            value = self._gaviota_wdl(board)
        if value is not None:
            self.hits += 1
        return value

    def root(self, board: chess.Board) -> Optional[RootProbe]:
        """The tables' verdict at the root (see the module docstring), or None."""
        if not self._in_tables(board):
            return None
        probe = self._syzygy_root(board)
        if probe is None:
            probe = self._gaviota_root(board)
        return probe

    def _syzygy_root(self, board: chess.Board) -> Optional[RootProbe]:
        if self.syzygy is None or board.occupied.bit_count() > self.syzygy_pieces:
            return None
        ranked = []
        for move in board.legal_moves:
            zeroing = board.is_zeroing(move)
            board.push(move)
            try:
                wdl = self._syzygy_wdl(board)
                dtz = self._syzygy_dtz(board) if wdl is not None else None
                dtm = self._gaviota_dtm(board) if dtz is not None else None
            finally:
                board.pop()
            if wdl is None or dtz is None:
                return None  # a table is missing: let the search decide
            self.hits += 1
            value = -wdl
            # A win that the fifty-move rule would turn into a draw is a draw.
            if value == 2 and not zeroing and abs(dtz) + board.halfmove_clock + 1 > 100:
                value = 1
            ranked.append((move, value, 0 if zeroing else abs(dtz), dtm))
        if not ranked:
            return None
        best = max(value for _, value, _, _ in ranked)
        keep = [entry for entry in ranked if entry[1] == best]
        if best in (2, -2):
            if any(dtm is None for _, _, _, dtm in keep):
                # DTM for some moves only: rank by DTZ alone (distances do not mix).
                keep = [(move, value, distance, None) for move, value, distance, _ in keep]
            choose = min if best == 2 else max
            move, _, distance, dtm = choose(keep, key=_progress)
            sign = 1 if best == 2 else -1
            if dtm is not None:
                return RootProbe(move, [move], sign * (MATE - (abs(dtm) + 1)))
            return RootProbe(move, [move], sign * (TB_WIN_CP - distance - 1))
        return RootProbe(None, [move for move, _, _, _ in keep], 0)

    def _gaviota_root(self, board: chess.Board) -> Optional[RootProbe]:
        """Gaviota alone: the move to the shortest mate (or the longest defence)."""
        if self.gaviota is None or board.occupied.bit_count() > self.gaviota_pieces:
            return None
        ranked: list[tuple[chess.Move, int, int]] = []  # move, -1/0/1 for us, plies to mate
        for move in board.legal_moves:
            board.push(move)
            try:
                mated = board.is_checkmate()
                dtm = 0 if mated else self._gaviota_dtm(board)
            finally:
                board.pop()
            if dtm is None:
                return None  # a table is missing: let the search decide
            self.hits += 1
            if mated:
                ranked.append((move, 1, 1))
            else:
                ranked.append((move, (dtm < 0) - (dtm > 0), abs(dtm) + 1))
        if not ranked:
            return None
        best = max(value for _, value, _ in ranked)
        keep = [entry for entry in ranked if entry[1] == best]
        if best == 1:
            move, _, plies = min(keep, key=lambda entry: entry[2])
            return RootProbe(move, [move], MATE - plies)
        if best == -1:
            move, _, plies = max(keep, key=lambda entry: entry[2])
            return RootProbe(move, [move], -(MATE - plies))
        return RootProbe(None, [move for move, _, _ in keep], 0)


def _progress(entry: tuple[chess.Move, int, int, Optional[int]]) -> tuple[int, int]:
    """Sort key: distance to mate when known, then distance to the next zeroing move."""
    _, _, distance, dtm = entry
    return (abs(dtm) if dtm is not None else 0, distance)
