"""Batch analysis: positions in, one result record per position out, as each finishes.

``analyse_chunk`` is the task function of the execution layer (engine.analysis.parallel):
it analyses a list of ``PositionTask``s with this process's ``Analyser`` (kept
between chunks; every position starts from an empty hash table, so a result never
depends on what ran before it, on ``--jobs`` or on ``--resume``) and returns one
record per position: a plain dict with the position (``fen``; with ``start_fen`` and
``moves`` when it was reached by moves, as in a game), the search figures, scores
from White's and from the side to move's view, and the PV in UCI and SAN.

The writers turn records into JSON Lines, CSV or a readable table, one flushed
line per record, so an interrupted run leaves a valid file; ``done_indexes``
reads such a file back for ``--resume``. This module must not parse command
lines (engine.cli does) nor search itself (engine.analysis.api does).
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, TextIO

import chess
import chess.engine

from engine.analysis.api import Analyser
from engine.analysis.inputs import PositionTask
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
    "bestmove",
    "pv",
    "pv_san",
    "error",
)


class Writer:
    """Records to a text stream in one format, one flushed line (or row) each."""

    def __init__(self, stream: TextIO, form: str, header: bool = True) -> None:
        self._stream = stream
        self._form = form
        self._csv = csv.writer(stream) if form == "csv" else None
        if header and form == "csv" and self._csv is not None:
            self._csv.writerow(CSV_FIELDS)
        elif header and form == "table":
            stream.write(
                f"{'#':>5}  {'position':<28} {'depth':>5} {'score':>7}  "
                f"{'best':<8} pv (score from White's view)\n"
            )
        stream.flush()

    def write(self, record: Record) -> None:
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
        "bestmove": (line.get("pv") or [""])[0],
        "pv": " ".join(line.get("pv", [])),
        "pv_san": line.get("pv_san", ""),
    }
    return [values[name] for name in CSV_FIELDS]


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


def done_indexes(path: Path, form: str) -> dict[int, str]:
    """``{index: fen}`` of the records already in an output file, for ``--resume``.

    A last line cut short (the run was killed while writing it) is removed from
    the file, so that appending goes on from a whole line.
    """
    if not path.exists():
        return {}
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        data = data[: data.rfind(b"\n") + 1]
        path.write_bytes(data)
    text = data.decode("utf-8", errors="replace")
    done: dict[int, str] = {}
    if form == "json":
        for line in text.splitlines():
            try:
                record = json.loads(line)
                done[int(record["index"])] = str(record["fen"])
            except (ValueError, KeyError, TypeError):
                continue
    elif form == "csv":
        for row in csv.DictReader(text.splitlines()):
            try:
                done[int(row["index"])] = row["fen"]
            except (ValueError, KeyError, TypeError):
                continue
    return done
