"""The UCI option table: declarations, current values, ``setoption`` parsing.

Each option has a name, a UCI type, a default and (for spins) a range. This
module prints the ``option`` lines for ``uci`` (in a form python-chess and Cute
Chess accept), splits a ``setoption`` line into name and value, and validates
and stores values. It must not act on a value (resizing the hash table or
clearing it is the controller's job), do I/O, or import heavy modules: the
``uci`` reply is built from it before anything else is loaded.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Optional, Union

Value = Union[int, bool, str]

HASH = "Hash"
CLEAR_HASH = "Clear Hash"
THREADS = "Threads"
MULTIPV = "MultiPV"
PONDER = "Ponder"
MOVE_OVERHEAD = "Move Overhead"
UCI_CHESS960 = "UCI_Chess960"
UCI_ANALYSE_MODE = "UCI_AnalyseMode"
UCI_SHOW_WDL = "UCI_ShowWDL"
OWN_BOOK = "OwnBook"
BOOK_FILE = "BookFile"
BOOK_VARIETY = "BookVariety"
SYZYGY_PATH = "SyzygyPath"
SYZYGY_PROBE_LIMIT = "SyzygyProbeLimit"
GAVIOTA_PATH = "GaviotaTbPath"
LIMIT_STRENGTH = "UCI_LimitStrength"
UCI_ELO = "UCI_Elo"
SKILL_LEVEL = "Skill Level"
USE_NNUE = "Use NNUE"
EVAL_FILE = "EvalFile"
DEFAULT_EVAL_FILE = "cutoff.nnue"
"""The network shipped in engine/core (a bare file name is looked for there too)."""

# The weakened-play range (engine.play.weakened, which is too heavy to import here):
# Stockfish's weakest UCI_Elo, and full strength as measured (the full-strength anchor
# of engine/play/calibration.json; tests/test_calibrate.py holds the two equal).
ELO_MIN = 1350
ELO_MAX = 2123

MAX_THREADS = max(1, min(os.cpu_count() or 1, 56))
"""One searcher per core (a Python searcher keeps a core busy), at most 56 (the
shared table's header has room for that many helpers)."""

HASH_MAX_MB = 1024
"""The table is two array('Q') of 8 bytes per slot each; allocation needs a
temporary copy, so 1 GB of Hash peaks near 1.5 GB. Python searches ~100k nodes
per second, so a long analysis fills well under this."""


@dataclass(frozen=True)
class OptionSpec:
    name: str
    kind: str  # "spin", "check", "button" or "string"
    default: Optional[Value] = None
    min: int = 0
    max: int = 0

    def uci_line(self) -> str:
        line = f"option name {self.name} type {self.kind}"
        if self.kind == "spin":
            line += f" default {self.default} min {self.min} max {self.max}"
        elif self.kind == "check":
            line += f" default {'true' if self.default else 'false'}"
        elif self.kind == "string":
            line += f" default {self.default or '<empty>'}"
        return line


OPTIONS: tuple[OptionSpec, ...] = (
    # Threads beyond 1 are helper processes (engine.play.smp), one per core at most.
    OptionSpec(THREADS, "spin", 1, 1, MAX_THREADS),
    OptionSpec(HASH, "spin", 16, 1, HASH_MAX_MB),
    OptionSpec(CLEAR_HASH, "button"),
    OptionSpec(PONDER, "check", False),
    OptionSpec(MULTIPV, "spin", 1, 1, 256),
    OptionSpec(MOVE_OVERHEAD, "spin", 50, 0, 5000),
    OptionSpec(UCI_CHESS960, "check", False),
    OptionSpec(UCI_ANALYSE_MODE, "check", False),
    OptionSpec(UCI_SHOW_WDL, "check", False),
    OptionSpec(OWN_BOOK, "check", False),
    OptionSpec(BOOK_FILE, "string", ""),
    OptionSpec(BOOK_VARIETY, "check", False),
    OptionSpec(SYZYGY_PATH, "string", ""),
    OptionSpec(SYZYGY_PROBE_LIMIT, "spin", 7, 0, 7),
    OptionSpec(GAVIOTA_PATH, "string", ""),
    OptionSpec(LIMIT_STRENGTH, "check", False),
    OptionSpec(UCI_ELO, "spin", ELO_MAX, ELO_MIN, ELO_MAX),
    OptionSpec(SKILL_LEVEL, "spin", 20, 0, 20),
    # The learned evaluation (engine.core.nnue): a correction of the hand-written one,
    # on by default since the shipped network passed its 10+0.1 match (docs/strength.md).
    OptionSpec(USE_NNUE, "check", True),
    OptionSpec(EVAL_FILE, "string", DEFAULT_EVAL_FILE),
)


def uci_option_lines() -> list[str]:
    return [spec.uci_line() for spec in OPTIONS]


def _normalise(name: str) -> str:
    return " ".join(name.split()).lower()


_SPECS: dict[str, OptionSpec] = {_normalise(spec.name): spec for spec in OPTIONS}


class OptionError(ValueError):
    """A ``setoption`` that cannot be applied; the message names the problem."""


def parse_setoption(text: str) -> tuple[str, Optional[str]]:
    """Split the text after ``setoption`` into (name, value).

    The name is every token between ``name`` and the first ``value`` (spaces
    allowed); the value is the rest of the line, or None when there is no
    ``value`` keyword (buttons). ``<empty>`` stands for the empty string.
    Raises OptionError when there is no name.
    """
    tokens = list(re.finditer(r"\S+", text))
    start = next((i for i, t in enumerate(tokens) if t.group().lower() == "name"), None)
    if start is None:
        raise OptionError("setoption: missing 'name'")
    value_at = next(
        (i for i in range(start + 1, len(tokens)) if tokens[i].group().lower() == "value"), None
    )
    name_tokens = tokens[start + 1 : value_at]
    name = " ".join(t.group() for t in name_tokens)
    if not name:
        raise OptionError("setoption: empty option name")
    if value_at is None:
        return name, None
    value = text[tokens[value_at].end() :].strip()
    if value == "<empty>":
        value = ""
    return name, value


class Options:
    """Current option values, keyed by the declared name."""

    def __init__(self) -> None:
        self._values: dict[str, Optional[Value]] = {spec.name: spec.default for spec in OPTIONS}

    @staticmethod
    def spec(name: str) -> Optional[OptionSpec]:
        """The option called ``name`` (case and spacing ignored), or None."""
        return _SPECS.get(_normalise(name))

    def get_int(self, name: str) -> int:
        value = self._values[name]
        assert isinstance(value, int)
        return int(value)

    def get_bool(self, name: str) -> bool:
        return bool(self._values[name])

    def get_str(self, name: str) -> str:
        value = self._values[name]
        return value if isinstance(value, str) else ""

    def set(self, name: str, raw: Optional[str]) -> tuple[OptionSpec, Optional[Value], str]:
        """Validate and store ``raw`` for option ``name``.

        Returns (spec, stored value, note); the note is non-empty when the
        value was adjusted (a spin clamped into range). Raises OptionError for
        an unknown option or a value of the wrong type; nothing is stored then.
        """
        spec = self.spec(name)
        if spec is None:
            raise OptionError(f"no such option: {name}")
        note = ""
        value: Optional[Value]
        if raw is None and spec.kind in ("check", "spin"):
            wanted = "true or false" if spec.kind == "check" else f"{spec.min}..{spec.max}"
            raise OptionError(
                f"{spec.name}: no value given (setoption name {spec.name} value {wanted})"
            )
        if spec.kind == "button":
            value = None
        elif spec.kind == "check":
            text = (raw or "").strip().lower()
            if text not in ("true", "false"):
                raise OptionError(f"{spec.name}: expected true or false, got '{raw}'")
            value = text == "true"
        elif spec.kind == "spin":
            try:
                number = int((raw or "").strip())
            except ValueError:
                raise OptionError(f"{spec.name}: expected an integer, got '{raw}'") from None
            value = max(spec.min, min(spec.max, number))
            if value != number:
                note = f"{spec.name}: {number} is outside {spec.min}..{spec.max}, using {value}"
        else:
            value = raw or ""
        if spec.kind != "button":
            self._values[spec.name] = value
        return spec, value, note
