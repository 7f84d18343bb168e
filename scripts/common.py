"""What the tools of ``scripts`` share: argument parsing, ``--engine``, output, failures.

Responsible for the conventions every tool keeps, in one place:

* ``ToolParser``: argparse whose usage errors are one line, ``PROG: error: MESSAGE``,
  with exit status 2 (a tool may choose another status for its contract);
* ``engine_command``: an ``--engine`` value (a command line) split like a shell line,
  a ``UsageError`` when it is unusable;
* ``atomic_output``: an output file that appears only once it is complete;
* ``print_stdout``: a report on stdout whose failure (a full disk) is the tool's to say;
* ``report_failure`` / ``REPORTED_FAILURES``: bad input, an engine that fails and
  Ctrl-C turned into one line on stderr and an exit status, never a traceback;
* ``quit_engine``: ending a python-chess engine without hiding the error that
  brought us there;
* ``uci_option_values``: ``NAME=VALUE`` text from a command line as the values an
  engine's declared UCI options take.

It must not know any one tool (no options of its own, no chess logic) and must not
import the Cutoff engine: tools that need it import it themselves.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import contextlib
import gzip
import os
import shlex
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, NoReturn, Optional, TextIO

import chess.engine

# argparse's own status for a usage error; the tools keep it unless their documented
# contract says otherwise (the match runner: 1 for every kind of bad input).
EXIT_USAGE = 2
EXIT_FAILED = 1
EXIT_INTERRUPTED = 130

# python-chess raises these when an engine does not answer in time (they are distinct
# classes before Python 3.11).
TIMEOUT_ERRORS = (asyncio.TimeoutError, concurrent.futures.TimeoutError)


class ToolParser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line, ``PROG: error: MESSAGE``.

    ``prog`` should be given: run as ``python -m``, argparse would name the tool after
    its file (``match.py``), and as a console script after the script.
    """

    def __init__(self, *args: Any, usage_status: int = EXIT_USAGE, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.usage_status = usage_status

    def error(self, message: str) -> NoReturn:
        # argparse prints the usage block too; the tools' contract is one line.
        self.exit(self.usage_status, f"{self.prog}: error: {message}\n")

    def require_positive(self, args: Any, *names: str) -> None:
        """A usage error for the first of the options ``names`` (``args``' attribute
        names, ``max_plies`` for ``--max-plies``) whose value is not positive; an
        option left unset (None) is not checked."""
        for name in names:
            value = getattr(args, name)
            if value is not None and value <= 0:
                self.error(f"--{name.replace('_', '-')} must be positive")

    def require_non_negative(self, args: Any, *names: str) -> None:
        """As ``require_positive``, for options where zero is allowed."""
        for name in names:
            value = getattr(args, name)
            if value is not None and value < 0:
                self.error(f"--{name.replace('_', '-')} must not be negative")


class UsageError(Exception):
    """Bad input; ``report_failure`` makes its message one line with exit status 2."""


class EngineMoveError(Exception):
    """The engine misbehaved during a game or a search (no move, or it died)."""


def engine_command(text: str) -> list[str]:
    """The ``--engine`` value split into an argv (shlex rules); a UsageError if unusable."""
    try:
        argv = shlex.split(text)
    except ValueError as exc:
        raise UsageError(f"--engine {text!r}: {exc}") from None
    if not argv:
        raise UsageError("--engine is empty")
    return argv


REPORTED_FAILURES = (
    UsageError,
    EngineMoveError,
    chess.engine.EngineError,
    *TIMEOUT_ERRORS,
    OSError,
    KeyboardInterrupt,
)
"""What ``report_failure`` turns into a one-line message and an exit status."""


def report_failure(prog: str, exc: BaseException) -> int:
    """Print the one-line message for one of ``REPORTED_FAILURES``; its exit status."""
    if isinstance(exc, UsageError):
        print(f"{prog}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if isinstance(exc, KeyboardInterrupt):
        print(f"{prog}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    # Engine errors first: a timeout is also an OSError on Python 3.11.
    if isinstance(exc, (EngineMoveError, chess.engine.EngineError, *TIMEOUT_ERRORS)):
        print(f"{prog}: engine failed: {exc}", file=sys.stderr)
    else:
        print(f"{prog}: {exc}", file=sys.stderr)
    return EXIT_FAILED


def quit_engine(engine: chess.engine.SimpleEngine) -> None:
    """Ask the engine to quit; it may already be gone (Ctrl-C reaches it too)."""
    # Closing is cleanup and must not hide the error that brought us here.
    with contextlib.suppress(chess.engine.EngineError, OSError, *TIMEOUT_ERRORS):
        engine.quit()


def uci_option_values(
    raw: Mapping[str, str], declared: Mapping[str, chess.engine.Option]
) -> dict[str, chess.engine.ConfigValue]:
    """Command-line option values (text) as python-chess configures them; ``ValueError``
    naming the option and the engine's options if one is not declared."""
    values: dict[str, chess.engine.ConfigValue] = {}
    for name, text in raw.items():
        option = declared.get(name)
        if option is None:
            known = ", ".join(declared) or "none"
            raise ValueError(f"no option {name!r} (options: {known})")
        if option.type == "check":
            # python-chess treats any non-empty string but "false" as true.
            values[name] = text.strip().lower() in ("true", "1", "yes", "on")
        else:
            values[name] = text
    return values


@contextlib.contextmanager
def atomic_output(out_path: Path, compressed: bool = False) -> Iterator[TextIO]:
    """A text file written under a temporary name and renamed to ``out_path`` at the end,
    gzip-compressed if ``compressed``.

    A run that fails (a full disk included: the ``OSError`` goes on) leaves no file
    that looks complete, and the previous file as it was. A symbolic link's target is
    replaced (the link stays); a device or pipe (``/dev/null``) is written in place,
    as nothing can be renamed over it.
    """
    target = Path(os.path.realpath(out_path))
    in_place = target.exists() and not target.is_file()
    tmp_path = target if in_place else target.with_name(target.name + ".tmp")
    try:
        if compressed:
            handle: TextIO = gzip.open(tmp_path, "wt", encoding="utf-8", newline="\n")  # noqa: SIM115
        else:
            handle = open(tmp_path, "w", encoding="utf-8", newline="\n")  # noqa: SIM115
    except OSError as exc:
        raise UsageError(f"cannot write {str(out_path)!r}: {exc.strerror or exc}") from None
    try:
        with handle:
            yield handle
        if not in_place:
            os.replace(tmp_path, target)
    except BaseException:
        if not in_place:
            tmp_path.unlink(missing_ok=True)
        raise


def print_stdout(text: str) -> Optional[OSError]:
    """Print ``text`` on stdout, flushed; the error when it could not be written (a
    full disk), for the tool to say in one line, or None. After a failure stdout goes
    to the null device: what is left in its buffer would fail again at exit, as a
    traceback."""
    try:
        print(text, flush=True)
    except OSError as err:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return err
    return None
