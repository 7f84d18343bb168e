"""A UCI engine that kills the Dask worker process running it, on its first ``go``.

Responsible for one fault of the distributed match tests: a pair whose worker dies
every time it is tried, so that Dask gives up on it and the runner must report it.
It kills its parent only when that is a worker process started by multiprocessing
(as a LocalCluster's are); started by anything else (a local match) it exits with
status 3 instead, so that it can never kill a test runner. It must not be used
outside tests.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path


def parent_is_a_worker() -> bool:
    try:
        command = Path(f"/proc/{os.getppid()}/cmdline").read_bytes()
    except OSError:
        return False
    return b"multiprocessing" in command or b"dask" in command


def main() -> int:
    for line in sys.stdin:
        command = line.split()[:1]
        if command == ["uci"]:
            print("id name killer\nid author Cutoff tests\nuciok", flush=True)
        elif command == ["isready"]:
            print("readyok", flush=True)
        elif command == ["go"]:
            if parent_is_a_worker():
                os.kill(os.getppid(), signal.SIGKILL)
            return 3
        elif command == ["quit"]:
            return 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
