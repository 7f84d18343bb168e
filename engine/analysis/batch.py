"""Batch analysis: positions in, one result record per position out, as each finishes.

``analyse_chunk`` is the task function of the execution layer (engine.analysis.parallel):
it analyses a list of ``PositionTask``s with this process's ``Analyser`` (kept
between chunks; every position starts from an empty hash table, so a result never
depends on what ran before it, on ``--jobs`` or on ``--resume``) and returns one
record per position: a plain dict with the position (``fen``; with ``start_fen`` and
``moves`` when it was reached by moves, as in a game), the search figures, scores
from White's and from the side to move's view, and the PV in UCI and SAN.

The writers turn records into JSON Lines, CSV or a readable table, one flushed
line per record, so an interrupted run leaves a valid file. In JSON and CSV every
record also says what analysed it (``settings_fields``: the limits, ``--multipv``,
the evaluation and the network file with its digest; a ``settings`` object in JSON,
``settings_*`` columns in CSV, so any CSV reader takes them as plain columns).
``read_output`` reads such a file back for ``--resume`` and refuses, with one line,
a file that is not one it wrote (nothing is written to it until it has been read
whole); ``settings_problem`` finds rows written with other settings. This module
must not parse command lines (engine.cli does) nor search itself
(engine.analysis.api does).
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import chess
import chess.engine

from engine.analysis.api import Analyser
from engine.analysis.inputs import PositionTask
from engine.analysis.outputs import Kind, TextOutput
from engine.analysis.parallel import worker_state

Record = dict[str, Any]


@dataclass(frozen=True)
class BatchSettings:
    """What every position of a batch is analysed with."""

    limit: chess.engine.Limit
    multipv: int = 1
    hash_mb: int = 16
    threads: int = 1
    """Lazy SMP processes per position (engine.play.smp), in every worker."""
    network: Optional[str] = None
    """The network file evaluating (engine.core.nnue); None: the hand-written evaluation."""


SETTINGS_KEYS = (
    "depth",
    "nodes",
    "movetime",
    "mate",
    "multipv",
    "evaluation",
    "network",
    "network_sha256",
)
"""What a record says of how it was analysed: the search limits (None: not set;
``movetime`` in ms), the lines asked for, ``evaluation`` ("network" or
"hand-written"), the network file and the first 16 hex digits of its SHA-256."""
COMPARED_KEYS = tuple(key for key in SETTINGS_KEYS if key != "network")
"""The settings a resumed run must share: the network by its content (its digest),
so that the same network found under another path (a new checkout) still matches."""


def settings_fields(settings: BatchSettings) -> Record:
    """The ``settings`` of every record of a batch (see ``SETTINGS_KEYS``)."""
    limit = settings.limit
    digest = None
    if settings.network is not None:
        with open(settings.network, "rb") as handle:
            digest = hashlib.sha256(handle.read()).hexdigest()[:16]
    return {
        "depth": limit.depth,
        "nodes": limit.nodes,
        "movetime": round(limit.time * 1000) if limit.time is not None else None,
        "mate": limit.mate,
        "multipv": settings.multipv,
        "evaluation": "network" if settings.network is not None else "hand-written",
        "network": settings.network,
        "network_sha256": digest,
    }


def score_fields(score: chess.engine.PovScore, turn: chess.Color) -> tuple[Record, Record]:
    """(side to move's view, White's view) as ``{"cp": n}`` or ``{"mate": n}``."""
    views = []
    for pov in (score.pov(turn), score.white()):
        mate = pov.mate()
        views.append({"mate": mate} if mate is not None else {"cp": pov.score()})
    return views[0], views[1]


def _line(board: chess.Board, info: chess.engine.InfoDict) -> Record:
    pv = info.get("pv", [])
    score, score_white = score_fields(info["score"], board.turn)
    return {
        "multipv": info.get("multipv", 1),
        "depth": info.get("depth", 0),
        "seldepth": info.get("seldepth", 0),
        "score": score,
        "score_white": score_white,
        "wdl": list(wdl.pov(board.turn)) if (wdl := info.get("wdl")) is not None else None,
        "pv": [move.uci() for move in pv],
        "pv_san": board.variation_san(pv) if pv else "",
        "bestmove_san": board.san(pv[0]) if pv else None,
    }


def analyse_task(analyser: Analyser, task: PositionTask, settings: BatchSettings) -> Record:
    """The record of one position (an ``error`` field if it is not one that can be
    analysed: bad input, an illegal position)."""
    record: Record = {"index": task.index, "source": task.source, "fen": task.fen}
    if task.moves:
        record["start_fen"] = task.start_fen
        record["moves"] = list(task.moves)
    if task.ops:
        record["ops"] = dict(task.ops)
        if "id" in task.ops:
            record["id"] = task.ops["id"]
    if task.error is not None:
        record["error"] = task.error
        return record
    try:
        board = task.board()
        analyser.clear()
        result = analyser.analyse(board, settings.limit, multipv=settings.multipv)
    except (ValueError, AssertionError) as exc:
        record["error"] = f"{type(exc).__name__}: {exc}"
        return record
    infos = result if isinstance(result, list) else [result]
    lines = [_line(board, info) for info in infos]
    first, main = lines[0], infos[0]
    record.update(
        depth=first["depth"],
        seldepth=first["seldepth"],
        nodes=main.get("nodes", 0),
        time=round(main.get("time", 0.0), 3),
        nps=main.get("nps", 0),
        score=first["score"],
        score_white=first["score_white"],
        wdl=first["wdl"],
        bestmove=first["pv"][0] if first["pv"] else None,
        bestmove_san=first["bestmove_san"],
        pv=first["pv"],
        pv_san=first["pv_san"],
    )
    if len(lines) > 1:
        record["lines"] = lines
    return record


def analyse_chunk(settings: BatchSettings, tasks: list[PositionTask]) -> list[Record]:
    """The execution layer's task: a chunk of positions, with this process's analyser."""
    state = worker_state()
    key = f"analyser:{settings.hash_mb}:{settings.threads}:{settings.network}"
    analyser = state.get(key)
    if analyser is None:
        analyser = state[key] = Analyser(
            settings.hash_mb,
            threads=settings.threads,
            use_nnue=settings.network is not None,
            eval_file=settings.network,
        )
    return [analyse_task(analyser, task, settings) for task in tasks]


def failed_records(tasks: list[PositionTask], error: BaseException) -> list[Record]:
    """Error records for a chunk the execution layer could not get analysed."""
    reason = f"task failed: {type(error).__name__}: {error}"
    return [
        {"index": task.index, "source": task.source, "fen": task.fen, "error": reason}
        for task in tasks
    ]


# ------------------------------------------------------------------ writers


def format_score(score: Record) -> str:
    """A score field as GUIs show it: pawns with a sign, or ``#n`` for a mate."""
    if "mate" in score:
        return f"#{score['mate']}"
    return f"{score['cp'] / 100:+.2f}"


CSV_FIELDS = (
    "index",
    "source",
    "id",
    "fen",
    "start_fen",
    "moves",
    "multipv",
    "depth",
    "seldepth",
    "nodes",
    "time",
    "score_cp",
    "score_mate",
    "score_white_cp",
    "score_white_mate",
    "wdl_win",
    "wdl_draw",
    "wdl_loss",
    "bestmove",
    "pv",
    "pv_san",
    "error",
    *(f"settings_{key}" for key in SETTINGS_KEYS),
)


TABLE_HEADER = f"{'#':>5}  {'position':<28} {'depth':>5} {'score':>7}  {'best':<8} pv"
"""How a table written by ``Writer`` starts (what recognises one)."""


class Writer:
    """Records to a text stream in one format, one flushed line (or row) each; in JSON
    and CSV each record with ``settings`` (``settings_fields``), when given."""

    def __init__(
        self, stream: TextOutput, form: str, header: bool = True, settings: Optional[Record] = None
    ) -> None:
        self._stream = stream
        self._form = form
        self._settings = settings
        self._csv = csv.writer(stream) if form == "csv" else None
        if header and form == "csv" and self._csv is not None:
            self._csv.writerow(CSV_FIELDS)
        elif header and form == "table":
            stream.write(f"{TABLE_HEADER} (score from White's view)\n")
        stream.flush()

    def write(self, record: Record) -> None:
        if self._settings is not None and self._form != "table":
            record = {**record, "settings": self._settings}
        if self._form == "json":
            self._stream.write(json.dumps(record, separators=(",", ":")) + "\n")
        elif self._form == "csv":
            assert self._csv is not None
            for line in record.get("lines") or [record]:
                self._csv.writerow(_csv_row(record, line))
        else:
            self._stream.write(_table_rows(record))
        self._stream.flush()


def _csv_row(record: Record, line: Record) -> list[object]:
    score = line.get("score", {})
    white = line.get("score_white", {})
    values = {
        **{
            name: record.get(name, "")
            for name in ("index", "source", "id", "fen", "start_fen", "error")
        },
        "moves": " ".join(record.get("moves", [])),
        "multipv": line.get("multipv", 1 if "error" not in record else ""),
        "depth": line.get("depth", ""),
        "seldepth": line.get("seldepth", ""),
        "nodes": record.get("nodes", ""),
        "time": record.get("time", ""),
        "score_cp": score.get("cp", ""),
        "score_mate": score.get("mate", ""),
        "score_white_cp": white.get("cp", ""),
        "score_white_mate": white.get("mate", ""),
        **dict(zip(("wdl_win", "wdl_draw", "wdl_loss"), line.get("wdl") or ("", "", ""))),
        "bestmove": (line.get("pv") or [""])[0],
        "pv": " ".join(line.get("pv", [])),
        "pv_san": line.get("pv_san", ""),
        **{f"settings_{key}": _text(value) for key, value in record.get("settings", {}).items()},
    }
    return [values.get(name, "") for name in CSV_FIELDS]


def _text(value: object) -> str:
    """A value as a CSV cell (and as settings are compared): None is empty."""
    return "" if value is None else str(value)


def _table_rows(record: Record) -> str:
    label = str(record.get("id") or record["source"])
    if len(label) > 28:
        label = "..." + label[-25:]
    if "error" in record:
        return f"{record['index']:>5}  {label:<28} error: {record['error']}\n"
    rows = []
    for line in record.get("lines") or [record]:
        rows.append(
            f"{record['index']:>5}  {label:<28} {line['depth']:>5} "
            f"{format_score(line['score_white']):>7}  {line['bestmove_san'] or '-':<8} "
            f"{line.get('pv_san', '')}\n"
        )
    return "".join(rows)


FORM_NAMES = {"json": "JSON Lines", "csv": "CSV", "table": "a table"}


class OutputFileError(ValueError):
    """An existing output file that a run must not write to, said in one line."""


@dataclass
class ExistingOutput:
    """What an output file holds already, read for ``--resume``."""

    path: Path
    done: dict[int, str] = field(default_factory=dict)
    """``{index: fen}`` of the records in it."""
    settings: dict[tuple[str, ...], tuple[int, Optional[Record]]] = field(default_factory=dict)
    """Each set of settings found (compared fields as text; ``()`` for rows that record
    none: an older Cutoff's), with the first line that has it and the settings."""
    whole: int = 0
    """Bytes up to the end of its last whole line: where appending goes on."""
    size: int = 0

    def cut_partial_line(self) -> None:
        """Remove a last line cut short (a run killed while writing it), so that
        appending goes on from a whole line."""
        if self.size > self.whole:
            os.truncate(self.path, self.whole)
            self.size = self.whole


def form_of_first_line(line: str) -> Optional[str]:
    """Which of ``Writer``'s forms a file starting with ``line`` is in ("json", "csv",
    "table"; "csv-columns" for a CSV header of another version), or None if none."""
    if line.startswith(TABLE_HEADER):
        return "table"
    try:
        first = json.loads(line)
    except ValueError:
        first = None
    if isinstance(first, dict) and "index" in first and "fen" in first:
        return "json"
    header = next(csv.reader([line]), [])
    if header == list(CSV_FIELDS):
        return "csv"
    if header[:4] == ["index", "source", "id", "fen"]:
        return "csv-columns"
    return None


def _is_analysis_output(path: Path) -> bool:
    """Whether ``path`` starts as an output of ``Writer`` does (any form)."""
    with path.open("rb") as handle:
        first = handle.readline(1 << 20).decode("utf-8", errors="replace")
    return form_of_first_line(first.rstrip("\r\n")) is not None


ANALYSIS_OUTPUT = Kind("cutoff analyse's output", _is_analysis_output)
"""What ``-o`` may write afresh over: an earlier output of ``Writer``, in any form
(``engine.analysis.outputs.replace_problem`` decides, as for every tool's outputs)."""


def read_output(path: Path, form: str) -> ExistingOutput:
    """What ``path``, an earlier output of ``Writer`` in ``form``, holds; nothing for a
    missing or empty file. ``OutputFileError`` if it is not one (another form,
    another program's file, another version's CSV columns): ``--resume`` must then
    leave it alone. The file is only read."""
    existing = ExistingOutput(path)
    if not path.exists():
        return existing
    data = path.read_bytes()
    existing.size = len(data)
    existing.whole = data.rfind(b"\n") + 1
    text = data[: existing.whole].decode("utf-8", errors="replace")
    tail = data[existing.whole :]
    first = text.split("\n", 1)[0].rstrip("\r") if text else ""
    found = form_of_first_line(first) if text else form
    if found != form:
        if found in FORM_NAMES:
            hint = f" (resume with --{found})" if found != "table" else ""
            raise OutputFileError(
                f"{path}: holds {FORM_NAMES[found]} from cutoff analyse, not "
                f"{FORM_NAMES[form]}{hint}; not adding to it"
            )
        if found == "csv-columns":
            raise OutputFileError(
                f"{path}: its CSV columns are not this version's (an older cutoff analyse); "
                "not adding to it: write to a new file"
            )
        raise _not_ours(path, 1, form)
    if form == "json":
        _read_json(existing, text)
    else:
        _read_csv(existing, text)
    if tail and not _may_be_cut_short(tail, form, bool(text)):
        raise _not_ours(path, text.count("\n") + 1, form)
    return existing


def _may_be_cut_short(tail: bytes, form: str, after_lines: bool) -> bool:
    """Whether ``tail``, a last line without its end, is how a line of ``form``
    starts (a run killed while writing it) rather than another program's text."""
    if form == "json":
        return tail.startswith(b'{"index"')
    if not after_lines:  # the header itself was cut short
        return tail.startswith(b"index,") and ",".join(CSV_FIELDS).encode().startswith(tail)
    return tail[:1].isdigit()


def _not_ours(path: Path, line: int, form: str) -> OutputFileError:
    return OutputFileError(
        f"{path}:{line}: not cutoff analyse's {FORM_NAMES[form]}; not adding to it"
    )


def _note(existing: ExistingOutput, line: int, settings: Optional[Record]) -> None:
    key = () if settings is None else tuple(_text(settings.get(k)) for k in COMPARED_KEYS)
    existing.settings.setdefault(key, (line, settings))


def _read_json(existing: ExistingOutput, text: str) -> None:
    for number, line in enumerate(text.splitlines(), 1):
        try:
            record = json.loads(line)
            index, fen = int(record["index"]), str(record["fen"])
        except (ValueError, KeyError, TypeError):
            raise _not_ours(existing.path, number, "json") from None
        settings = record.get("settings")
        if not isinstance(settings, dict):
            settings = None
        existing.done[index] = fen
        _note(existing, number, settings)


def _read_csv(existing: ExistingOutput, text: str) -> None:
    reader = csv.reader(io.StringIO(text, newline=""))
    next(reader, None)  # the header, checked already
    width = len(CSV_FIELDS)
    for row in reader:
        if len(row) != width:
            raise _not_ours(existing.path, reader.line_num, "csv")
        values = dict(zip(CSV_FIELDS, row))
        try:
            index = int(values["index"])
        except ValueError:
            raise _not_ours(existing.path, reader.line_num, "csv") from None
        existing.done[index] = values["fen"]
        settings = {key: values[f"settings_{key}"] for key in SETTINGS_KEYS}
        _note(existing, reader.line_num, settings)


_OPTIONS = {
    "depth": "--depth",
    "nodes": "--nodes",
    "movetime": "--movetime",
    "mate": "--mate",
    "multipv": "--multipv",
}


def _describe(settings: Record, keys: list[str]) -> str:
    """The settings ``keys`` of ``settings`` as the options that give them."""
    parts = []
    for key in keys:
        value = _text(settings.get(key))
        if key in _OPTIONS:
            parts.append(f"{_OPTIONS[key]} {value}" if value else f"no {_OPTIONS[key]}")
        elif key == "evaluation":
            parts.append("--no-nnue" if value == "hand-written" else "--nnue")
        else:
            name = _text(settings.get("network")) or "?"
            parts.append(f"the network {name} (sha256 {value or '?'})")
    return ", ".join(parts)


def settings_problem(existing: ExistingOutput, current: Record) -> Optional[str]:
    """Why the rows already in a file were not analysed as ``current`` would, as one
    line naming the first row that differs; None when every row matches."""
    for _, (line, settings) in sorted(existing.settings.items(), key=lambda item: item[1][0]):
        where = f"{existing.path}:{line}"
        if settings is None:
            return (
                f"{where}: the rows do not record their settings (an older cutoff analyse); "
                "--resume-any-settings adds to them anyway"
            )
        differ = [k for k in COMPARED_KEYS if _text(settings.get(k)) != _text(current.get(k))]
        if "evaluation" in differ:
            differ = [k for k in differ if k != "network_sha256"]
        if differ:
            return (
                f"{where}: written with {_describe(settings, differ)}, not "
                f"{_describe(current, differ)} as this run; resume with the same settings, "
                "or --resume-any-settings to mix them"
            )
    return None
