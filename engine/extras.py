"""How to install one of Cutoff's optional extras, said the one way that works.

``install_hint("plot")`` is the command every "needs matplotlib" (Dask, numba, mypy)
message gives. An extra is a name in brackets after what pip installs Cutoff from,
and Cutoff is installed from its checkout (README), not from a package index: the
hint names that checkout by its path when it is known, so it works from any
directory, and otherwise says to run it in the checkout. This module only builds the
text; it must not import the extras nor run pip.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Optional
from urllib.parse import unquote, urlparse

DISTRIBUTION = "cutoff-chess"
"""The name pip knows Cutoff by (pyproject.toml's ``project.name``)."""


def _is_checkout(path: Path) -> bool:
    return (path / "pyproject.toml").is_file() and (path / "engine").is_dir()


def _installed_from() -> Optional[Path]:
    """The checkout pip installed Cutoff from (``pip install .`` or ``-e .``, which
    record it in the distribution's ``direct_url.json``), if it is still there."""
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        text = distribution(DISTRIBUTION).read_text("direct_url.json")
    except (PackageNotFoundError, OSError):
        return None
    try:
        url = urlparse(str(json.loads(text or "null")["url"]))
    except (ValueError, TypeError, KeyError):
        return None
    if url.scheme != "file":
        return None
    path = Path(unquote(url.path))
    return path if _is_checkout(path) else None


def checkout() -> Optional[Path]:
    """Cutoff's checkout: where pip installed it from, or where the running sources
    are when they sit in one (an editable install, ``PYTHONPATH``); None if unknown."""
    source = Path(__file__).resolve().parent.parent
    return _installed_from() or (source if _is_checkout(source) else None)


def install_hint(extra: str) -> str:
    """The command that installs ``extra`` (``plot``, ``dask``, ``compile``, ``train``)
    into this Cutoff: ``pip install '/path/to/checkout[plot]'``, or, when the checkout
    is not known, ``pip install '.[plot]'`` to be run there."""
    where = checkout()
    if where is None:
        return f"pip install {shlex.quote(f'.[{extra}]')} in Cutoff's checkout"
    return f"pip install {shlex.quote(f'{where}[{extra}]')}"
