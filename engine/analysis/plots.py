"""Plotting's one shared rule: matplotlib is optional and draws without a screen.

Responsible for ``PlotUnavailableError`` (matplotlib is not installed: the ``plot``
extra), for selecting matplotlib's file-only backend before pyplot is imported, for
the graph formats Cutoff writes (``plot_formats``: those matplotlib writes that have
room for Cutoff's mark; ``plot_problem`` refuses the others, and a directory) and for
saving a graph with Cutoff's mark in its metadata (``save_figure``), by which a later
run knows the file is its own to replace (``outputs.PLOT``). The graphs themselves
belong to their modules (annotate, stats, the match tools); this module must not draw
or import the engine.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Optional, Union

from engine.analysis.outputs import MARK, SOFTWARE_TAG
from engine.extras import install_hint

if TYPE_CHECKING:
    from matplotlib.figure import Figure

METADATA = {
    "png": {"Software": MARK},
    "svg": {"Creator": MARK},
    "svgz": {"Creator": MARK},
    "pdf": {"Creator": MARK},
    "ps": {"Creator": MARK},
    "eps": {"Creator": MARK},
}
"""The mark of the formats matplotlib writes metadata into itself."""
PILLOW_EXIF = ("jpg", "jpeg", "tif", "tiff", "webp", "avif")
"""Formats matplotlib hands to Pillow, marked by their EXIF ``Software`` tag."""
PILLOW_COMMENT = ("gif",)
"""Formats matplotlib hands to Pillow, marked by their comment."""
# Not written: raw and rgba (bare pixels: no room for a mark, so a second run could
# not tell the file is its own) and pgf (drawing it needs a LaTeX installation).


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


def plot_formats() -> list[str]:
    """The file endings (without the dot) of the graphs Cutoff writes: those the
    installed matplotlib (and Pillow) can write and that hold Cutoff's mark;
    ``PlotUnavailableError`` without matplotlib."""
    use_file_backend()
    from matplotlib.backend_bases import FigureCanvasBase
    from PIL import Image

    pillow = {suffix[1:] for suffix in Image.registered_extensions()}
    written = FigureCanvasBase.get_supported_filetypes()
    return [
        form
        for form in written
        if form in METADATA or (form in PILLOW_EXIF + PILLOW_COMMENT and form in pillow)
    ]


def plot_form(path: Union[str, Path]) -> str:
    """The format a graph saved at ``path`` is written in: its ending, PNG without one."""
    return Path(path).suffix[1:].lower() or "png"


def plot_problem(path: Union[str, Path]) -> Optional[str]:
    """Why a graph cannot be written at ``path`` as given (``--plot PATH``): it is a
    directory, or its name ends with a format Cutoff does not write; one line, or None
    when it can. ``PlotUnavailableError`` without matplotlib."""
    if Path(path).is_dir():
        return f"{path}: is a directory"
    forms = plot_formats()
    if plot_form(path) in forms:
        return None
    return f"{path}: not a graph format Cutoff writes; end the name with ." + ", .".join(forms)


def plot_file(path: Union[str, Path]) -> Path:
    """The file ``save_figure`` writes for ``path``: matplotlib adds ``.png`` to a
    name without a suffix."""
    path = Path(path)
    # A name with no file part ("." or "dir/..") is left as it is, for the check
    # that refuses a directory to say so.
    if path.suffix or path.name in ("", ".", ".."):
        return path
    return path.with_name(path.name + ".png")


def _marked(form: str) -> dict[str, Any]:
    """The ``savefig`` arguments that put Cutoff's mark in a graph of ``form``."""
    if form in METADATA:
        return {"metadata": METADATA[form]}
    if form in PILLOW_COMMENT:
        return {"pil_kwargs": {"comment": MARK}}
    if form in PILLOW_EXIF:
        from PIL import Image

        exif = Image.Exif()
        exif[SOFTWARE_TAG] = MARK
        return {"pil_kwargs": {"exif": exif}}
    return {}


def save_figure(figure: Figure, path: Union[str, Path]) -> None:
    """Save ``figure`` at ``path`` in the format its name ends with (PNG without one),
    marked as Cutoff's (``plot_problem`` refuses the formats that cannot be)."""
    figure.savefig(path, **_marked(plot_form(path)))
