"""Engine-vs-engine match runner: two UCI engines, colour-swapped game pairs, Elo and SPRT.

Usage: python -m scripts.matches.match --engine SPEC --engine SPEC [--tc TC | --movetime S
       | --depth N | --nodes N] [--rounds N | --games N] [--openings FILE] [options]
       (installed: cutoff-match ...; --help lists every option)

This module is the entry point: it parses the command line, runs the match and prints
the summary (text, or JSON with ``--json``), and turns every outcome into the exit
status below. The work is split by concern: ``cli`` (options, presets, validation into
a ``Config``), ``limits``, ``engines`` (engine specs and processes), ``book`` (openings),
``games`` (one game: clocks, watchdogs, adjudication via ``adjudication``, PGN),
``runner`` (scheduling on concurrent workers, SPRT stop, faults, signals), ``tally``
(counts and the summary) and ``stats`` (the pure statistics). With ``--scheduler``
the pairs run on Dask instead: ``pairs`` (one pair as a task, on a worker) and
``dispatch`` (the client: tasks through ``engine.analysis.parallel``, results into the same
tally, PGN and SPRT).

It must not compute statistics itself, must not hide a fault (every one is counted and
reported), and must not print a traceback for bad input (one line and exit status 1).
It does not import the Cutoff engine: engines are only ever commands (``dispatch``
uses the execution layer ``engine.analysis.parallel``, which knows nothing about chess).

Ctrl-C (SIGINT) and SIGTERM end the engines (``quit``, then a kill after a second),
keep the PGN of the finished games and print the summary of those games; a game still
in progress is not counted. The engines run in their own process group, so that a
Ctrl-C in the terminal reaches only this runner and is not scored as engine crashes.

Exit status: 0 match finished (or stopped by the SPRT), 1 bad input (including an
opening whose game is already over, an output that cannot be written, ``--scheduler``
without Dask or with an address that answers nothing), an engine that cannot start or
an output that could not be written after all (a full disk: one line, ``no space left
writing FILE``; the PGN keeps the games before), 2 match stopped early by an
engine fault (a crash without ``--recover``, or an engine that cannot be restarted),
by a lost Dask scheduler, or with a pair that failed on every attempt on Dask, 130
interrupted by Ctrl-C (SIGINT), 143 terminated by SIGTERM.
"""

from __future__ import annotations

import asyncio
import json
import logging
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Optional

from engine.analysis.outputs import write_failure

from ..common import UsageError, atomic_output, print_stdout
from .errors import MatchError, MatchInterruptedError
from .match_args import PROG, build_config, build_parser
from .runner import run_match
from .tally import format_summary, summary_dict


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Run the match the arguments describe; the exit status (see the module docstring)."""
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.debug else logging.CRITICAL,
        format="%(asctime)s %(message)s",
        stream=sys.stderr,
    )
    try:
        cfg = build_config(args)
        if cfg.scheduler is not None:
            # Imported here: the local runner needs nothing of the execution layer.
            from .dispatch import run_pairs

            match = run_pairs(cfg)
        else:
            match = asyncio.run(run_match(cfg))
    except MatchError as err:
        print(f"{PROG}: error: {err}", file=sys.stderr)
        return 1
    except MatchInterruptedError as stop:
        print(f"{PROG}: interrupted by {stop.signal_name} before any game", file=sys.stderr)
        return 128 + signal.Signals[stop.signal_name].value
    except KeyboardInterrupt:
        print(f"{PROG}: interrupted", file=sys.stderr)
        return 128 + signal.SIGINT
    if match.output_error is not None:
        # The games before the one that could not be written are whole in the PGN.
        print(f"{PROG}: error: {match.output_error}", file=sys.stderr)
        return 1
    summary = summary_dict(match)
    text = format_summary(summary)
    problem = _write_summary(cfg.json_path, summary, text)
    if problem:
        print(f"{PROG}: error: {problem}", file=sys.stderr)
        return 1
    if match.interrupted is not None:
        return 128 + signal.Signals[match.interrupted].value
    return 2 if match.aborted or match.failed_pairs else 0


def _write_summary(json_path: Optional[str], summary: dict[str, Any], text: str) -> Optional[str]:
    """Print the summary (and write it to ``json_path``, whole or not at all); why
    it could not be written, or None."""
    if json_path == "-":
        print(text, file=sys.stderr)
        failed = print_stdout(json.dumps(summary, indent=2))
    else:
        failed = print_stdout(text)
    if failed is not None:
        return write_failure("stdout", failed)
    if json_path == "-":
        return None
    if json_path:
        try:
            with atomic_output(Path(json_path)) as handle:
                handle.write(json.dumps(summary, indent=2) + "\n")
        except UsageError as err:
            return str(err)
        except OSError as err:
            return write_failure(json_path, err)
    return None


if __name__ == "__main__":
    sys.exit(main())
