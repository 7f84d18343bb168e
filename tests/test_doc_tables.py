"""No table cell in the manuals is too long to read in a table.

README.md and docs/*.md keep their figures and ledgers in Markdown tables; a cell that
grows past ``MAX_CELL`` characters is a paragraph squeezed into a column, unreadable
on a narrow screen, and belongs in a note below its table. The test reads every table
(a row of cells followed by a ``| --- |`` delimiter row, outside code fences), splits
its rows as GitHub does (on ``|`` not escaped as ``\\|``) and fails naming the file,
the line and the length of every cell over the limit.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MAX_CELL = 250
"""The longest cell a table may hold, in characters of its Markdown source."""

DELIMITER = re.compile(r"^\|?\s*:?-+:?\s*(\|\s*:?-+:?\s*)*\|?$")
FENCE = re.compile(r"^\s*(```|~~~)")


def manuals() -> list[Path]:
    """README.md and every Markdown file in docs/."""
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def cells(row: str) -> list[str]:
    """The cells of one table row, split on unescaped pipes, stripped."""
    inner = row.strip()
    inner = inner.removeprefix("|")
    if inner.endswith("|") and not inner.endswith("\\|"):
        inner = inner[:-1]
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", inner)]


def table_rows(text: str) -> list[tuple[int, str]]:
    """(line number, line) of every row of every table in ``text``, the delimiter rows
    left out; lines inside code fences are no table."""
    lines = text.splitlines()
    rows: list[tuple[int, str]] = []
    fenced = False
    in_table = False
    for index, line in enumerate(lines):
        if FENCE.match(line):
            fenced = not fenced
            in_table = False
            continue
        stripped = line.strip()
        if fenced or not stripped.startswith("|"):
            in_table = False
            continue
        if DELIMITER.match(stripped):
            continue
        following = lines[index + 1].strip() if index + 1 < len(lines) else ""
        if in_table or DELIMITER.match(following):
            in_table = True
            rows.append((index + 1, line))
    return rows


def long_cells(path: Path) -> list[str]:
    """``FILE:LINE: a cell of N characters`` for every cell over ``MAX_CELL``."""
    name = path.relative_to(ROOT).as_posix()
    return [
        f"{name}:{number}: a cell of {len(cell)} characters (at most {MAX_CELL})"
        for number, row in table_rows(path.read_text(encoding="utf-8"))
        for cell in cells(row)
        if len(cell) > MAX_CELL
    ]


def test_the_reader_finds_tables_and_their_cells() -> None:
    text = "\n".join(
        [
            "```",
            "| not | a table |",
            "| --- | --- |",
            "```",
            "| a | b \\| c |",
            "| --- | ---: |",
            "| one | two |",
            "",
            "| a line that only starts with a pipe |",
        ]
    )
    rows = table_rows(text)
    assert [number for number, _ in rows] == [5, 7]
    assert cells(rows[0][1]) == ["a", "b \\| c"]


def test_no_table_cell_is_over_the_limit() -> None:
    found = [problem for path in manuals() for problem in long_cells(path)]
    assert not found, "cells too long for a table (move the detail into a note below it):\n" + (
        "\n".join(found)
    )
