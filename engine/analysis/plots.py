"""Plotting's one shared rule: matplotlib is optional and draws without a screen.

Responsible for ``PlotUnavailableError`` (matplotlib is not installed: the ``plot``
extra) and for selecting matplotlib's file-only backend before pyplot is imported.
The graphs themselves belong to their modules (annotate, stats); this module must not
draw or import the engine.
"""

from __future__ import annotations


class PlotUnavailableError(RuntimeError):
    """matplotlib is not installed (the ``plot`` extra)."""


def use_file_backend() -> None:
    """Select matplotlib's Agg backend (PNG files, no screen needed) before pyplot is
    imported; ``PlotUnavailableError`` when matplotlib is not installed."""
    try:
        import matplotlib
    except ImportError:
        raise PlotUnavailableError(
            "plotting needs matplotlib: pip install 'cutoff-chess[plot]'"
        ) from None
    matplotlib.use("Agg")
