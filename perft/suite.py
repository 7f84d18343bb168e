"""Perft suites: find a suite file and parse its ``FEN ;D1 n ;D2 n ...`` lines.

Every problem in a line is a ``SuiteError`` naming the file and line; ``load_suite``
collects them and keeps the good lines, so the command line can print one line per
bad line and still check the rest. A file that cannot be read at all is a
``SuiteError`` of its own. This module does not run perft and prints nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import chess

from engine.play.boards import unplayable_problems

SUITES_DIR = Path(__file__).resolve().parent / "suites"

# Bare names accepted by ``--suite``; the file names themselves also work.
SUITE_ALIASES = {
    "cpw": "perft_cpw.epd",
    "perft_cpw": "perft_cpw.epd",
    "perftsuite": "perftsuite.epd",
}

_DEPTH_ENTRY = re.compile(r"D(\d+)\s+(\d+)")

MAX_DEPTH = 64
"""Deepest perft walk accepted: a walk recurses once per ply, so a depth in the
hundreds would hit Python's recursion limit (and any depth past ~15 never ends)."""

MAX_NUMBER_DIGITS = 30
"""Longest depth or count accepted. Real perft counts have at most ~25 digits;
checking the length first keeps ``int()`` from refusing a number (over 4,300
digits it raises ``ValueError``) or spending quadratic time on one."""


class SuiteError(Exception):
    """A suite that cannot be found or parsed; the message is one line."""


def parse_number(text: str, what: str) -> int:
    """``int(text)`` for a string of digits; ``ValueError`` naming ``what`` if too long."""
    if len(text) > MAX_NUMBER_DIGITS:
        raise ValueError(f"{what} has {len(text)} digits (at most {MAX_NUMBER_DIGITS})")
    return int(text)


@dataclass(frozen=True)
class SuiteEntry:
    """One position of a suite and its expected counts, deepest last."""

    line_number: int
    fen: str
    expected: tuple[tuple[int, int], ...]
    """(depth, leaf count) pairs in increasing depth."""


def resolve_suite(name: str) -> tuple[Path, str]:
    """Path of a suite given a file path or a shipped suite's bare name.

    Returns the path and the name to use in messages. An existing file wins over
    a shipped suite of the same name.
    """
    given = Path(name)
    if given.is_file():
        return given, name
    file_name = SUITE_ALIASES.get(name, name)
    if not file_name.endswith(".epd"):
        file_name += ".epd"
    shipped = SUITES_DIR / file_name
    if "/" not in name and shipped.is_file():
        return shipped, file_name
    known = ", ".join(sorted({*SUITE_ALIASES, *(p.name for p in SUITES_DIR.glob("*.epd"))}))
    raise SuiteError(f"no such suite file or shipped suite: {name!r} (shipped: {known})")


def parse_fen(fen: str) -> chess.Board:
    """A board from ``fen``; ``ValueError`` with a one-line reason if it is unusable.

    Besides syntax, the position needs both kings (one each), no pawns on the
    first or last rank, and the side not to move must not be in check.
    """
    try:
        board = chess.Board(fen)
    except ValueError as error:
        raise ValueError(f"invalid FEN {fen!r}: {error}") from None
    problems = unplayable_problems(board)
    if problems:
        raise ValueError(f"unusable position {fen!r}: {problems}")
    return board


def parse_suite_line(text: str, line_number: int, display_name: str) -> Optional[SuiteEntry]:
    """One suite line; ``None`` for blank lines and ``#`` comments.

    Error messages start with ``<display_name> line <line_number>``.
    """
    where = f"{display_name} line {line_number}"
    stripped = text.strip()
    if not stripped or stripped.startswith("#"):
        return None
    fen, *fields = (part.strip() for part in stripped.split(";"))
    try:
        parse_fen(fen)
    except ValueError as error:
        raise SuiteError(f"{where}: {error}") from None
    expected: dict[int, int] = {}
    for field in fields:
        if not field:
            continue
        match = _DEPTH_ENTRY.fullmatch(field)
        if match is None:
            raise SuiteError(f"{where}: malformed depth entry {';' + field!r} (want ';Dn count')")
        try:
            depth = parse_number(match.group(1), "a depth")
            count = parse_number(match.group(2), f"the count for D{depth}")
        except ValueError as error:
            raise SuiteError(f"{where}: {error}") from None
        if not 1 <= depth <= MAX_DEPTH:
            raise SuiteError(f"{where}: depth must be 1..{MAX_DEPTH} in {';' + field!r}")
        if depth in expected:
            raise SuiteError(f"{where}: depth {depth} given twice")
        expected[depth] = count
    if not expected:
        raise SuiteError(f"{where}: no ';Dn count' entries after the FEN")
    return SuiteEntry(line_number=line_number, fen=fen, expected=tuple(sorted(expected.items())))


@dataclass(frozen=True)
class Suite:
    """The good entries of a suite file and one message per bad line."""

    entries: tuple[SuiteEntry, ...]
    errors: tuple[str, ...]
    """``<display_name> line <n>: <reason>`` for each line that was skipped."""


def load_suite(path: Path, display_name: str) -> Suite:
    """The suite at ``path``; a bad line is skipped and its message kept in ``errors``.

    Raises ``SuiteError`` only when the file cannot be read or has no position
    lines at all (neither good nor bad).
    """
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise SuiteError(f"cannot read {display_name}: {error}") from None
    entries: list[SuiteEntry] = []
    errors: list[str] = []
    for line_number, line in enumerate(text.splitlines(), start=1):
        try:
            entry = parse_suite_line(line, line_number, display_name)
        except SuiteError as error:
            errors.append(str(error))
            continue
        if entry is not None:
            entries.append(entry)
    if not entries and not errors:
        raise SuiteError(f"{display_name}: no positions in the file")
    return Suite(tuple(entries), tuple(errors))
