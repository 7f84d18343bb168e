"""Command line: ``cutoff`` / ``python -m engine``.

Without arguments: the UCI protocol on stdin/stdout, which is what GUIs start.
With arguments: the subcommands of engine.cli (``analyse``, ``annotate``,
``bench``; ``--help``, ``--version``). This module must stay cheap to import (GUIs
time the UCI handshake): argparse and the heavy modules are imported only when
there are arguments, and it holds no protocol or search logic of its own.
"""

from __future__ import annotations

import sys
from typing import Optional


def main(argv: Optional[list[str]] = None) -> int:
    """Entry point of the ``cutoff`` console script; returns the exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    if args:
        from engine.cli import main as cli_main

        return cli_main(args)
    import os
    import threading

    from engine.play.uci import run

    code = run()
    try:
        sys.stdout.flush()
    except OSError:
        os._exit(code)  # the GUI closed the pipe: nothing left to say
    if threading.active_count() > 1:
        # A daemon thread may still be inside python-chess; exiting through the
        # interpreter's shutdown while it runs can abort with a fatal error.
        os._exit(code)
    return code


if __name__ == "__main__":
    sys.exit(main())
