"""Output files that must not destroy what a command reads: the one check every tool shares.

A tool that writes files (``cutoff analyse -o``, ``cutoff annotate -o/--json/--plot``,
the match tools' ``--pgn``, ``--json``, ``--plot``, ``-o``) calls ``overwrite_problem``
with its outputs and its inputs before it writes or truncates anything: an output
that is an input (the same file by name, by a hard link or by a symbolic link, or the
file on stdin), or two outputs that are one file, is refused with one line. This
module must not open files for writing nor know any one tool's options.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from typing import Optional, Union

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
