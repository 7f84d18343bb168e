"""Plotting's one shared rule: matplotlib is optional and draws without a screen.

Responsible for ``PlotUnavailableError`` (matplotlib is not installed: the ``plot``
extra), for selecting matplotlib's file-only backend before pyplot is imported, and
for saving a graph with Cutoff's mark in its metadata (``save_figure``), by which a
later run knows the file is its own to replace (``outputs.PLOT``). The graphs
themselves belong to their modules (annotate, stats, the match tools); this module
must not draw or import the engine.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Union

from engine.analysis.outputs import MARK
from engine.extras import install_hint

if TYPE_CHECKING:
    from matplotlib.figure import Figure

METADATA = {
    "png": {"Software": MARK},
    "svg": {"Creator": MARK},
    "pdf": {"Creator": MARK},
    "ps": {"Creator": MARK},
    "eps": {"Creator": MARK},
}
"""The mark per format matplotlib can put it in (the others take no metadata)."""


class PlotUnavailableError(RuntimeError):
    """matplotlib is not installed (the ``plot`` extra)."""


def use_file_backend() -> None:
    """Select matplotlib's Agg backend (PNG files, no screen needed) before pyplot is
    imported; ``PlotUnavailableError`` when matplotlib is not installed."""
    try:
        import matplotlib
    except ImportError:
        raise PlotUnavailableError(f"plotting needs matplotlib: {install_hint('plot')}") from None
    matplotlib.use("Agg")


def plot_file(path: Union[str, Path]) -> Path:
    """The file ``save_figure`` writes for ``path``: matplotlib adds ``.png`` to a
    name without a suffix."""
    path = Path(path)
    # A name with no file part ("." or "dir/..") is left as it is, for the check
    # that refuses a directory to say so.
    if path.suffix or path.name in ("", ".", ".."):
        return path
    return path.with_name(path.name + ".png")


def save_figure(figure: Figure, path: Union[str, Path]) -> None:
    """Save ``figure`` at ``path`` in the format its name ends with (PNG without one),
    marked as Cutoff's where the format has room."""
    import matplotlib

    form = Path(path).suffix[1:].lower() or str(matplotlib.rcParams["savefig.format"])
    figure.savefig(path, metadata=METADATA.get(form))
