"""Broken UCI engine for the match-runner tests: stops answering go (never sends bestmove).

Plays legal moves for its first `--after` moves (default 2), then misbehaves. All the
UCI handling lives in uci_stub.py beside it; this file only picks the fault.
"""

from __future__ import annotations

import sys

from uci_stub import main

if __name__ == "__main__":
    sys.exit(main(fault="hang"))
