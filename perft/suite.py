"""Perft suites: find a suite file and parse its ``FEN ;D1 n ;D2 n ...`` lines.

Every problem in a file is reported as a ``SuiteError`` naming the file and line,
so the command line can print one line and exit. This module does not run perft
and prints nothing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Optional

import chess

SUITES_DIR = Path(__file__).resolve().parent / "suites"

# Bare names accepted by ``--suite``; the file names themselves also work.
SUITE_ALIASES = {
    "cpw": "perft_cpw.epd",
    "perft_cpw": "perft_cpw.epd",
    "perftsuite": "perftsuite.epd",
}

_DEPTH_ENTRY = re.compile(r"D(\d+)\s+(\d+)")


class SuiteError(Exception):
    """A suite that cannot be found or parsed; the message is one line."""


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


# Positions the move generator cannot walk meaningfully: without both kings, or
# with the side not to move in check (its king could be captured). Other odd
# statuses (e.g. the geometrically impossible double check in perftsuite.epd line
# 51) still have well-defined, published perft counts, so they are accepted.
_UNUSABLE = (
    chess.STATUS_EMPTY
    | chess.STATUS_NO_WHITE_KING
    | chess.STATUS_NO_BLACK_KING
    | chess.STATUS_TOO_MANY_KINGS
    | chess.STATUS_OPPOSITE_CHECK
    | chess.STATUS_PAWNS_ON_BACKRANK
)


def parse_fen(fen: str) -> chess.Board:
    """A board from ``fen``; ``ValueError`` with a one-line reason if it is unusable.

    Besides syntax, the position needs both kings (one each), no pawns on the
    first or last rank, and the side not to move must not be in check.
    """
    try:
        board = chess.Board(fen)
    except ValueError as error:
        raise ValueError(f"invalid FEN {fen!r}: {error}") from None
    status = board.status() & _UNUSABLE
    if status:
        problems = [
            (flag.name or "").removeprefix("STATUS_").lower().replace("_", " ")
            for flag in chess.Status
            if flag & status
        ]
        raise ValueError(f"unusable position {fen!r}: {', '.join(problems)}")
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
        depth, count = int(match.group(1)), int(match.group(2))
        if depth < 1:
            raise SuiteError(f"{where}: depth must be >= 1 in {';' + field!r}")
        if depth in expected:
            raise SuiteError(f"{where}: depth {depth} given twice")
        expected[depth] = count
    if not expected:
        raise SuiteError(f"{where}: no ';Dn count' entries after the FEN")
    return SuiteEntry(line_number=line_number, fen=fen, expected=tuple(sorted(expected.items())))


def load_suite(path: Path, display_name: str) -> list[SuiteEntry]:
    """All entries of the suite at ``path``; ``SuiteError`` on the first bad line."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise SuiteError(f"cannot read {display_name}: {error}") from None
    entries: list[SuiteEntry] = []
    for line_number, line in enumerate(text.splitlines(), start=1):
        entry = parse_suite_line(line, line_number, display_name)
        if entry is not None:
            entries.append(entry)
    if not entries:
        raise SuiteError(f"{display_name}: no positions in the file")
    return entries
