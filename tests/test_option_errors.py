"""Bad options: ``Analyser.configure`` refuses them as python-chess's ``configure`` does
(engine.analysis.api): ``InvalidOptionError``, a ``chess.engine.EngineError``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Union

import chess.engine
import pytest
from uci_harness import engine_command

from engine.analysis import Analyser, InvalidOptionError
from engine.play.options import MAX_THREADS

CHECKOUT_ENV = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
"""The engine process runs this checkout's code, not an installed one's."""

ConfigValue = Union[str, int, bool, None]

# What python-chess's own configure refuses, from the engine's `option` lines.
REFUSED_BY_BOTH: list[tuple[dict[str, ConfigValue], str]] = [
    ({"Hash": -5}, "Hash.*at least 1|Hash must be from 1"),
    ({"Hash": 10**9}, "Hash.*at most|Hash must be from 1"),
    ({"Threads": 999}, "Threads.*at most|Threads must be from 1"),
    ({"Hash": "lots"}, "Hash.*integer|Hash must be a whole number"),
    ({"Hsh": 64}, "Hsh"),
    ({"MultiPV": 3}, "MultiPV"),
]
REFUSED_HERE: list[tuple[dict[str, ConfigValue], str]] = [
    ({"Hash": 2.5}, "Hash must be a whole number"),  # type: ignore[dict-item]
    ({"Hash": True}, "Hash must be a whole number"),
    ({"Use NNUE": "yes"}, "Use NNUE must be True or False"),
    ({"Use NNUE": 1}, "Use NNUE must be True or False"),
    ({"SyzygyPath": 5}, "SyzygyPath must be a string"),
    ({"BookFile": "a\nb"}, "BookFile must be one line"),
    ({"Move Overhead": 100, "Threads": 999}, "Threads"),  # nothing set when one is bad
]


@pytest.fixture(scope="module")
def analyser() -> Iterator[Analyser]:
    with Analyser(use_nnue=False) as shared:
        yield shared


@pytest.mark.parametrize(("options", "words"), REFUSED_BY_BOTH + REFUSED_HERE)
def test_analyser_configure_refuses_bad_options_with_engine_error(
    analyser: Analyser, options: dict[str, ConfigValue], words: str
) -> None:
    before = (analyser.hash_mb, analyser.threads)
    with pytest.raises(InvalidOptionError, match=words) as raised:
        analyser.configure(options)
    # python-chess users catch EngineError; the other refusals are ValueErrors.
    assert isinstance(raised.value, chess.engine.EngineError)
    assert isinstance(raised.value, ValueError)
    assert (analyser.hash_mb, analyser.threads) == before
    assert analyser._options.get_int("Move Overhead") == 0  # not set either


def test_analyser_configure_takes_good_values(analyser: Analyser) -> None:
    analyser.configure({"Hash": 8, "Clear Hash": None, "Use NNUE": False, "Threads": 1})
    assert analyser.hash_mb == 8
    analyser.configure({"Hash": "32", "Skill Level": 20, "SyzygyPath": ""})
    assert analyser.hash_mb == 32
    analyser.configure({"Hash": 1, "Move Overhead": 0})  # the ends of the ranges
    assert analyser.hash_mb == 1


def test_python_chess_refuses_the_same_options() -> None:
    """The reference: SimpleEngine over the ``cutoff`` process raises EngineError for
    each of REFUSED_BY_BOTH, from the engine's own option declarations."""
    with chess.engine.SimpleEngine.popen_uci(engine_command(), env=CHECKOUT_ENV) as engine:
        assert engine.options["Threads"].max == MAX_THREADS
        for options, _ in REFUSED_BY_BOTH:
            with pytest.raises(chess.engine.EngineError):
                engine.configure(options)


def test_analyser_threads_argument_is_capped_at_the_cores() -> None:
    with Analyser(threads=MAX_THREADS + 8) as analyser:
        assert analyser.threads <= MAX_THREADS
