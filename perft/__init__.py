"""Perft: leaf counts of the legal move tree, to validate move generation and state.

``perft.core`` has the walks (``perft``, ``divide``, and ``perft_checked``, which
also verifies the engine's incremental state at every node); ``perft.suite``
reads EPD perft suites, shipped in ``perft/suites``; ``perft.cli`` is
``python -m perft``. The package does not search or evaluate.
"""

from __future__ import annotations

from perft.core import divide, perft

__all__ = ["divide", "perft"]
