"""What the tools that play one ``cutoff-match`` after another share (``cutoff-ladder``,
``cutoff-tune`` and its report): the checks made before the first match or file.

Responsible for refusing match options the tool sets itself, finding the openings
files passed through to every match, and checking every file the tool will write into
its output folder (and its plot) before the first one is touched: none may be one of
the openings or another output, an existing one must be that tool's own file of
that kind, and each must be writable (not a directory, in a folder that may be
written). It must not start matches or write files.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Optional

from engine.analysis.outputs import (
    PLOT,
    Kind,
    StrPath,
    folder_problem,
    overwrite_problem,
    replace_problem,
    writable_problem,
)
from engine.analysis.plots import plot_file, plot_problem
from engine.extras import install_hint


def own_option_problem(passthrough: Sequence[str], own: Sequence[str], why: str) -> Optional[str]:
    """Why one of ``passthrough`` (options for every match) is one of ``own``, the
    options the tool sets itself (``why`` says how), or None."""
    for option in passthrough:
        name = option.split("=", 1)[0]
        if name in own:
            return f"{name} {why}"
    return None


def openings_passed(passthrough: Sequence[str]) -> list[str]:
    """The openings files named in the options passed to every match."""
    files = []
    for index, option in enumerate(passthrough):
        if option == "--openings" and index + 1 < len(passthrough):
            files.append(passthrough[index + 1])
        elif option.startswith("--openings="):
            files.append(option.split("=", 1)[1])
    return files


def files_problem(
    outputs: Sequence[tuple[str, Optional[StrPath], Kind]],
    plot: Optional[str],
    inputs: Sequence[StrPath],
    made: Optional[Path] = None,
) -> Optional[str]:
    """Why the tool cannot write ``outputs`` (each: its option, its path or None, its
    kind) and the plot (``--plot``, which needs matplotlib) without destroying one of
    ``inputs`` or a file that is not its own, or at all, as one line; None when it
    can. ``made`` is the folder the tool creates, which may be missing."""
    # The plot's name is checked as a file first: a plot that would destroy an input
    # is refused the same with or without matplotlib.
    written = [*outputs, ("--plot", None if plot is None else plot_file(plot), PLOT)]
    paths = [(option, path) for option, path, _ in written]
    problem = (
        overwrite_problem(paths, inputs)
        or replace_problem(written)
        or writable_problem(paths, made)
    )
    if problem or not plot:
        return problem
    if importlib.util.find_spec("matplotlib") is None:
        return f"--plot needs matplotlib: {install_hint('plot')}"
    problem = plot_problem(plot)
    return None if problem is None else f"--plot {problem}"


def outputs_problem(
    out: Path, kinds: Mapping[str, Kind], plot: Optional[str], passthrough: Sequence[str]
) -> Optional[str]:
    """Why the tool cannot write the files ``kinds`` names in ``out`` and the plot
    (``--plot``, which needs matplotlib), as one line; None when it can. The files
    in ``out`` are also replaced by renaming and deleted: ``out`` must be writable."""
    folder = folder_problem(out)
    if folder:
        return f"--out {out}: {folder}"
    return files_problem(
        [("--out", out / name, kind) for name, kind in kinds.items()],
        plot,
        openings_passed(passthrough),
        out,
    )
