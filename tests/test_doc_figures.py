"""Search figures the docs quote are this build's.

docs/uci.md and docs/analysis.md show what a node-limited search from the start
position reports (its closing totals and its last completed depth's own count). Each
test reads the sentence from the doc itself, runs the command it documents (``go
nodes N`` through the ``cutoff`` process, ``Limit(nodes=N)`` through ``Analyser``)
and compares: a change to the search or the evaluation that moves the figures fails
here, and the message gives the figures to write into the doc instead.
"""

from __future__ import annotations

import re
from pathlib import Path

import chess
import chess.engine
from uci_harness import Engine, field, info_lines

from engine.analysis import Analyser

DOCS = Path(__file__).resolve().parents[1] / "docs"

UCI_SENTENCE = re.compile(
    r"`go nodes (?P<limit>\d+)` from the start position ends on `depth (?P<depth>\d+) \.\.\. "
    r"nodes (?P<nodes>\d+)`, where it said `nodes (?P<completed>\d+)`, depth (?P<again>\d+)'s "
    r"own count"
)
ANALYSIS_SENTENCE = re.compile(
    r"`Limit\(nodes=(?P<limit>\d+)\)` from the start position reports (?P<nodes>[\d,]+) nodes "
    r"at depth (?P<depth>\d+) \(where it said (?P<completed>[\d,]+), the count when depth "
    r"(?P<again>\d+) completed\b"
)


def _quoted(doc: str, sentence: re.Pattern[str]) -> dict[str, int]:
    """The figures of ``sentence`` in ``doc`` (its lines joined, as Markdown reads)."""
    text = " ".join((DOCS / doc).read_text(encoding="utf-8").split())
    found = sentence.search(text)
    assert found is not None, f"docs/{doc}: the sentence with the figures is gone"
    figures = {key: int(value.replace(",", "")) for key, value in found.groupdict().items()}
    assert figures["again"] == figures["depth"], f"docs/{doc}: two depths in one sentence"
    return figures


def test_uci_md_quotes_what_go_nodes_reports(tmp_path: Path) -> None:
    quoted = _quoted("uci.md", UCI_SENTENCE)
    eng = Engine(tmp_path)
    eng.handshake()
    eng.send("position startpos")
    lines, _, _ = eng.search(f"go nodes {quoted['limit']}", timeout=120)
    eng.close()
    infos = info_lines(lines)
    depth = int(field(infos[-1], "depth"))
    completed = [int(field(line, "nodes")) for line in infos if field(line, "depth") == str(depth)]
    ran = {
        "limit": quoted["limit"],
        "depth": depth,
        "nodes": int(field(infos[-1], "nodes")),
        "completed": completed[0],
        "again": depth,
    }
    assert ran == quoted, f"docs/uci.md quotes {quoted}; this build reports {ran}"


def test_analysis_md_quotes_what_limit_nodes_reports() -> None:
    quoted = _quoted("analysis.md", ANALYSIS_SENTENCE)
    board = chess.Board()
    limit = chess.engine.Limit(nodes=quoted["limit"])
    with Analyser() as analyser:
        final = analyser.analyse(board, limit)
        analyser.clear()  # the same search again, streamed
        infos = list(analyser.analysis(board, limit))
    assert isinstance(final, dict)
    same = ("depth", "nodes", "score", "pv")
    assert {key: final.get(key) for key in same} == {key: infos[-1].get(key) for key in same}
    completed = [info["nodes"] for info in infos if info["depth"] == final["depth"]]
    ran = {
        "limit": quoted["limit"],
        "nodes": final["nodes"],
        "depth": final["depth"],
        "completed": completed[0],
        "again": final["depth"],
    }
    assert ran == quoted, f"docs/analysis.md quotes {quoted}; this build reports {ran}"
