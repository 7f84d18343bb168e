"""The validated settings of one match, as the command line builds them.

Responsible for the ``Config`` type only: every value in it has been checked, and the
openings have been loaded. It must not parse arguments (``cli`` does) or act on them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from .adjudication import Adjudication
from .engines import EngineSpec
from .match_openings import Opening


@dataclass
class Config:
    specs: list[EngineSpec]
    openings: list[Opening]
    openings_path: Optional[str]
    opening_order: list[int]
    games: int
    concurrency: int
    adjudication: Adjudication
    margin_s: float
    stall_timeout_s: Optional[float]
    recover: bool
    sprt: Optional[tuple[float, float]]
    alpha: float
    beta: float
    pgn_path: Optional[str]
    json_path: Optional[str]
    event: str
    progress: bool
    # Where the pairs run: None for this process (``--concurrency`` games at a time),
    # else a Dask scheduler (tcp://HOST:PORT, or local:N for a LocalCluster).
    scheduler: Optional[str] = None
