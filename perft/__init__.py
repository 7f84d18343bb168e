"""Perft: leaf counts of the legal move tree, to validate move generation and state.

The package does not search or evaluate; it counts, and checks the engine's
incremental state on the way. Its modules are mapped, one line each, in
engine/__init__.py's docstring. ``perft`` and ``divide`` are importable from here.
"""

from __future__ import annotations

from perft.core import divide, perft

__all__ = ["divide", "perft"]
