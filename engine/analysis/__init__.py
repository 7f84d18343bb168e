"""Analysis: the Python API and the tools built on it.

Owns the Python API (``Analyser``, results as python-chess InfoDicts), positions
from files, batch records and their writers, the execution layer (here, local
processes, or Dask), annotated games and their accuracy, ``cutoff stats`` and its
textbook searches, and the optional plotting. The modules, one line each: the map
in engine/__init__.py's docstring.

It imports the play layer and the search core, never the command line. It must not
read stdin as UCI or write the UCI protocol.

The Python API's names are importable from here, as documented
(``from engine.analysis import Analyser``); they load on first use, so the
layer's other modules do not import the search through this package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from engine.analysis.api import (
        BUSY,
        DEFAULT_HASH_MB,
        MANAGED_OPTIONS,
        POLL_S,
        Analyser,
        AnalyserBusyError,
        Analysis,
        AnalysisResult,
        ConfigValue,
        GamePosition,
        InvalidLimitError,
        InvalidOptionError,
        InvalidPositionError,
        check_position,
        info_dict,
        pov_score,
        search_limits,
    )

__all__ = [
    "BUSY",
    "DEFAULT_HASH_MB",
    "MANAGED_OPTIONS",
    "POLL_S",
    "Analyser",
    "AnalyserBusyError",
    "Analysis",
    "AnalysisResult",
    "ConfigValue",
    "GamePosition",
    "InvalidLimitError",
    "InvalidOptionError",
    "InvalidPositionError",
    "check_position",
    "info_dict",
    "pov_score",
    "search_limits",
]


def __getattr__(name: str) -> Any:
    """The API's names, imported from ``api`` when first asked for."""
    if name in __all__:
        from engine.analysis import api

        return getattr(api, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
