"""Output files that must not destroy what a command reads, nor another program's file:
the two checks every tool shares.

A tool that writes files (``cutoff analyse -o``, ``cutoff annotate -o/--json/--plot``,
the match tools' ``--pgn``, ``--json``, ``--plot``, ``-o``) calls ``overwrite_problem``
with its outputs and its inputs before it writes or truncates anything: an output
that is an input (the same file by name, by a hard link or by a symbolic link, or the
file on stdin), or two outputs that are one file, is refused with one line. It then
calls ``replace_problem`` with the outputs it replaces: one that exists, is a regular
file and is not empty must be recognisably Cutoff's own output of its ``Kind`` (the
marker Cutoff writes: the PGN ``Annotator`` tag, a plot's metadata, a summary's
keys...), else it is refused with one line and left as it was; and with those it
appends to, of the kind it may append to (``cutoff-match --pgn``: any PGN).
``writable_problem`` (and ``folder_problem`` for an output folder) then refuses an
output that cannot be written at all (a directory, a missing or read-only folder),
so that no tool finds it out after its work; ``write_failure`` is the one line for
a write that failed all the same (``no space left writing FILE``).
This module owns the recognising; it must not open files for writing nor know any
one tool's options.

While a tool writes, ``GuardedOutput`` wraps each output stream: a write that fails
(a full disk: ``/dev/full`` stands in for one in tests) raises ``OutputWriteError``,
whose message is the one line to show ("no space left writing FILE"), and nothing
more goes to that output, so what was written before stays as it was (a line cut
short at the end, as by a killed run, is what ``--resume`` expects).
"""

from __future__ import annotations

import errno
import gzip
import json
import os
import re
import stat
import struct
import sys
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Optional, Protocol, TextIO, Union

StrPath = Union[str, "os.PathLike[str]"]

STDIN = "-"
"""An input named so is the standard input (the file behind it, if it is one)."""


def _status(path: StrPath) -> Optional[os.stat_result]:
    """The file's status after following links (what ``os.path.samefile`` compares),
    or None when there is no such file."""
    try:
        if os.fspath(path) == STDIN:
            return os.fstat(sys.stdin.fileno())
        return os.stat(path)
    except (OSError, ValueError, AttributeError):
        return None


def overwrite_problem(
    outputs: Iterable[tuple[str, Optional[StrPath]]], inputs: Iterable[StrPath]
) -> Optional[str]:
    """Why writing ``outputs`` (each: the option that names it, and its path, or None
    when not given) would overwrite one of ``inputs`` or another output, as one line;
    None when it would not. Paths named ``-`` (stdout) are not files and are skipped."""
    given = [(option, path) for option, path in outputs if path is not None]
    given = [(option, path) for option, path in given if os.fspath(path) != STDIN]
    read = [(path, _status(path)) for path in inputs]
    seen: list[tuple[str, StrPath, Optional[os.stat_result], str]] = []
    for option, path in given:
        status = _status(path)
        if status is not None:
            for source, source_status in read:
                if source_status is not None and os.path.samestat(status, source_status):
                    where = "stdin" if os.fspath(source) == STDIN else f"the input {source}"
                    return (
                        f"{option} {path} is the same file as {where}: writing would destroy "
                        "it; choose another output file"
                    )
        # Two outputs are one file: the same existing file, or the same new name.
        real = os.path.realpath(path)
        for other_option, other, other_status, other_real in seen:
            if (
                status is not None
                and other_status is not None
                and os.path.samestat(status, other_status)
            ) or real == other_real:
                return (
                    f"{option} {path} is the same file as {other_option} {other}: "
                    "name two different files"
                )
        seen.append((option, path, status, real))
    return None


MARK = "Cutoff"
"""What Cutoff writes as the author of its files: the PGN ``Annotator`` tag's first
word, a plot's ``Software`` (PNG, and EXIF in JPEG, TIFF, WebP, AVIF), ``Creator``
(SVG, PDF, PostScript) or comment (GIF) metadata."""

HEAD_BYTES = 1 << 16
"""How much of a file is read to find a marker at its start."""


@dataclass(frozen=True)
class Kind:
    """One kind of output: ``what`` it is, for the message (``a plot written by
    Cutoff``), and ``ours``, whether an existing file is one (it may raise OSError)."""

    what: str
    ours: Callable[[Path], bool]


def replace_problem(outputs: Iterable[tuple[str, Optional[StrPath], Kind]]) -> Optional[str]:
    """Why replacing one of ``outputs`` (each: the option that names it, its path or
    None, its kind) would destroy a file that is not Cutoff's output of that kind, as
    one line; None when none would. A missing or empty file, ``-`` (stdout) and what
    is not a regular file (``/dev/null``) may be written."""
    for option, path, kind in outputs:
        if path is None or os.fspath(path) == STDIN:
            continue
        try:
            status = os.stat(path)
        except OSError:
            continue  # no such file: writing it will say why it cannot, if it cannot
        if not stat.S_ISREG(status.st_mode) or status.st_size == 0:
            continue
        try:
            ours = kind.ours(Path(path))
        except OSError as exc:
            return f"{option} {path}: cannot read it to check it is {kind.what}: {exc.strerror}"
        if not ours:
            return (
                f"{option} {path} exists and is not {kind.what}; delete it or choose another name"
            )
    return None


def _head(path: Path, size: int = HEAD_BYTES) -> bytes:
    with path.open("rb") as handle:
        return handle.read(size)


_TAG = re.compile(r'\[\s*(\w+)\s+"((?:[^"\\]|\\.)*)"\s*\]\s*$')


def pgn_tags(path: Path) -> dict[str, str]:
    """The tags of the first game of the PGN at ``path`` (blank and ``%`` lines
    before it skipped); empty when the file does not start with a tag."""
    text = _head(path).decode("utf-8", errors="replace").lstrip("\ufeff")
    tags: dict[str, str] = {}
    for line in text.splitlines():
        if not tags and (not line.strip() or line.startswith("%")):
            continue
        match = _TAG.match(line.strip())
        if match is None:
            break
        tags[match.group(1)] = match.group(2)
    return tags


def pgn_kind(what: str, ours: Callable[[dict[str, str]], bool]) -> Kind:
    """PGN whose first game's tags pass ``ours``."""
    return Kind(what, lambda path: ours(pgn_tags(path)))


CUTOFF_PGN = pgn_kind(
    "a PGN written by Cutoff",
    lambda tags: tags.get("Annotator", "").split(" ", 1)[0].rstrip(",") == MARK,
)
"""Games Cutoff writes itself (``cutoff annotate``, ``opening_lines``): their
``Annotator`` tag starts with ``Cutoff``."""


def json_kind(what: str, keys: tuple[str, ...]) -> Kind:
    """A JSON file holding one object with all of ``keys``."""

    def ours(path: Path) -> bool:
        try:
            data = json.loads(path.read_bytes())
        except ValueError:
            return False
        return isinstance(data, dict) and all(key in data for key in keys)

    return Kind(what, ours)


def json_lines_kind(what: str, keys: tuple[str, ...]) -> Kind:
    """JSON lines whose first is an object with all of ``keys``, the first of them
    written first (so that a first line cut short by a killed run is known too)."""
    start = b'{"' + keys[0].encode() + b'": '

    def ours(path: Path) -> bool:
        head = _head(path)
        line, ended, _ = head.partition(b"\n")
        try:
            data = json.loads(line)
        except ValueError:
            return not ended and len(head) < HEAD_BYTES and head.startswith(start)
        return isinstance(data, dict) and all(key in data for key in keys)

    return Kind(what, ours)


def text_kind(what: str, first: str) -> Kind:
    """Text whose first line starts with ``first``."""
    return Kind(what, lambda path: _head(path, 4096).startswith(first.encode()))


PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _png_text(path: Path) -> dict[str, str]:
    """The ``tEXt`` chunks before the image data of the PNG at ``path``."""
    found: dict[str, str] = {}
    with path.open("rb") as handle:
        if handle.read(8) != PNG_SIGNATURE:
            return found
        while True:
            header = handle.read(8)
            if len(header) < 8:
                return found
            length, name = struct.unpack(">I4s", header)
            if name in (b"IDAT", b"IEND") or length > HEAD_BYTES:
                return found
            data = handle.read(length + 4)[:length]  # and the CRC, not checked
            if name == b"tEXt":
                key, _, value = data.partition(b"\0")
                found[key.decode("latin-1")] = value.decode("latin-1")


SOFTWARE_TAG = 0x0131
"""The EXIF (and TIFF) tag naming the program that wrote an image: Cutoff's mark in the
formats matplotlib hands to Pillow (JPEG, TIFF, WebP, AVIF)."""


def _svg_is_ours(head: bytes) -> bool:
    return (
        head.lstrip().startswith(b"<?xml")
        and b"<svg" in head
        and b"<dc:title>" + MARK.encode() in head
    )


def _pillow_is_ours(path: Path) -> bool:
    """Whether the image at ``path`` (JPEG, TIFF, WebP, AVIF, GIF) names Cutoff as
    its writer: the EXIF ``Software`` tag, or a GIF's comment."""
    try:
        from PIL import Image
    except ImportError:  # without Pillow no plot is written either: keep the file
        return False
    with path.open("rb") as handle:  # a file that cannot be read says so (OSError)
        try:
            with Image.open(handle) as image:
                software = image.getexif().get(SOFTWARE_TAG)
                comment = image.info.get("comment")
        except Exception:  # Pillow has many errors for a damaged image
            return False
    if isinstance(comment, bytes) and comment.startswith(MARK.encode()):
        return True
    return isinstance(software, str) and software.startswith(MARK)


_PILLOW_SIGNATURES = (b"\xff\xd8\xff", b"GIF8", b"II*\x00", b"MM\x00*")


def _plot_is_ours(path: Path) -> bool:
    head = _head(path)
    if head.startswith(PNG_SIGNATURE):
        return _png_text(path).get("Software", "").startswith(MARK)
    mark = MARK.encode()
    if head.startswith(b"%PDF"):
        return b"/Creator (" + mark in path.read_bytes()
    if head.startswith(b"%!PS"):
        return b"%%Creator: " + mark in head
    if head.startswith(b"\x1f\x8b"):  # gzip: SVGZ
        try:
            with gzip.open(path) as unpacked:
                return _svg_is_ours(unpacked.read(HEAD_BYTES))
        except (EOFError, gzip.BadGzipFile, zlib.error):
            return False
    if (
        head.startswith(_PILLOW_SIGNATURES)
        or (head[:4] == b"RIFF" and head[8:12] == b"WEBP")
        or head[4:12] == b"ftypavif"
    ):
        return _pillow_is_ours(path)
    return _svg_is_ours(head)


PLOT = Kind("a plot written by Cutoff", _plot_is_ours)
"""Graphs saved by ``engine.analysis.plots.save_figure``, in every format it writes
(each carries Cutoff's mark: PNG text, SVG/PDF/PostScript creator, EXIF software, GIF
comment)."""

POLYGLOT_ENTRY = 16


def _polyglot_book(path: Path) -> bool:
    # A Polyglot book has no room for a mark; every one is whole 16-byte entries
    # sorted by their 64-bit key, which another program's file almost never is.
    if path.stat().st_size % POLYGLOT_ENTRY:
        return False
    last = 0
    with path.open("rb") as handle:
        while block := handle.read(POLYGLOT_ENTRY * 4096):
            for (key,) in struct.iter_unpack(">Q8x", block):
                if key < last:
                    return False
                last = key
    return True


POLYGLOT_BOOK = Kind("a Polyglot book", _polyglot_book)


def writable_problem(
    outputs: Iterable[tuple[str, Optional[StrPath]]], made: Optional[StrPath] = None
) -> Optional[str]:
    """Why one of ``outputs`` (each: the option that names it, and its path or None)
    cannot be written, as one line; None when all can. Found from the file system
    alone (nothing is opened or created): an output that is a directory, a file that
    may not be written, or a new file whose folder is missing, is not a folder or may
    not be written. The folder ``made`` (the tool creates it) may be missing when
    the nearest existing folder above it may be written. ``-`` (stdout) is skipped."""
    for option, path in outputs:
        if path is None or os.fspath(path) == STDIN:
            continue
        name = os.fspath(path)
        if os.path.isdir(name):
            return f"{option} {name} is a directory; name a file"
        if os.path.exists(name):
            if not os.access(name, os.W_OK):
                return f"{option} {name}: cannot write it: permission denied"
            continue
        if os.path.islink(name):
            return f"{option} {name} is a link to nothing; delete it or choose another name"
        folder = os.path.dirname(os.path.abspath(name))
        if not os.path.exists(folder) and not (
            made is not None and folder == os.path.abspath(made)
        ):
            return f"{option} {name}: no folder {os.path.dirname(name)}"
        problem = folder_problem(folder)
        if problem:
            return f"{option} {name}: {problem}"
    return None


def folder_problem(folder: StrPath) -> Optional[str]:
    """Why files cannot be created (nor replaced, renamed or deleted) in ``folder``,
    which the tool creates if it is missing; None when they can."""
    current = os.path.abspath(folder)
    while not os.path.exists(current):
        parent = os.path.dirname(current)
        if parent == current:
            break
        current = parent
    if not os.path.isdir(current):
        return f"{current} is not a folder"
    if not os.access(current, os.W_OK | os.X_OK):
        return f"cannot create files in {current}: permission denied"
    return None


FULL_DISK = frozenset({errno.ENOSPC, errno.EDQUOT})
"""The disk or the user's quota is full."""


def write_failure(path: StrPath, error: OSError) -> str:
    """One line for an output that could not be written: ``no space left writing
    FILE`` for a full disk or quota, else ``cannot write FILE: REASON``."""
    if error.errno in FULL_DISK:
        return f"no space left writing {os.fspath(path)}"
    return f"cannot write {os.fspath(path)}: {error.strerror or error}"


class TextOutput(Protocol):
    """Where a writer writes: a text file, stdout, or a ``GuardedOutput`` around one."""

    def write(self, text: str, /) -> int: ...

    def flush(self) -> None: ...


class OutputWriteError(Exception):
    """Writing an output failed; the message is the one line to show."""


class GuardedOutput:
    """A text stream (a file, or stdout named ``stdout``) whose ``write``, ``flush``
    and ``close`` raise ``OutputWriteError`` instead of ``OSError`` (but
    ``BrokenPipeError`` as it is: the reader went away, ``| head``, which is no
    fault to report). After a failure every write raises the same error at once,
    writing nothing, and ``close`` drops what is still buffered: the file ends where
    the failure left it. Works with ``csv.writer`` and ``print(file=...)``."""

    def __init__(self, stream: TextIO, name: StrPath) -> None:
        self.stream = stream
        self.name = name
        self.failure: Optional[Exception] = None

    def _fail(self, error: OSError) -> Exception:
        if isinstance(error, BrokenPipeError):
            self.failure = error
        else:
            self.failure = OutputWriteError(write_failure(self.name, error))
        if self.stream is sys.stdout:
            # The interpreter flushes stdout once more at exit, and would print a
            # second error: what is left goes to /dev/null instead.
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, self.stream.fileno())
            os.close(null)
        return self.failure

    def write(self, text: str) -> int:
        if self.failure is not None:
            raise self.failure
        try:
            return self.stream.write(text)
        except OSError as exc:
            raise self._fail(exc) from None

    def flush(self) -> None:
        if self.failure is not None:
            raise self.failure
        try:
            self.stream.flush()
        except OSError as exc:
            raise self._fail(exc) from None

    def close(self) -> None:
        """Close the file (stdout stays open, flushed)."""
        try:
            if self.stream is sys.stdout:
                if self.failure is None:
                    self.stream.flush()
            else:
                self.stream.close()
        except OSError as exc:
            if self.failure is None:
                raise self._fail(exc) from None
            # The same failure again, on the buffered rest: the file is closed anyway.
