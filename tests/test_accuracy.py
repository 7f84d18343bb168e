"""Accuracy and ACPL (engine/analysis/accuracy.py) against figures worked out by hand from
lichess's published formulas, and through ``cutoff annotate --json``."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import chess
import chess.engine
import chess.pgn
import pytest
from uci_harness import REPO, engine_command

from engine.analysis.accuracy import (
    game_figures,
    move_accuracy,
    phases,
    volatility_weights,
    win_percent,
)
from engine.core.wdl import lichess_winning_chances

OPERA = REPO / "tests" / "data" / "opera.pgn"


def lichess_win_percent(cp: int) -> float:
    return win_percent(lichess_winning_chances(chess.engine.Cp(cp)))


def test_a_short_game_worked_out_by_hand() -> None:
    # White's view after each ply: White loses 70 cp, Black 130, White 20, Black 240,
    # White 20. By hand: win % 51.8402, 45.4104, 57.3114, 55.5008, 75.1126, 73.7106;
    # the movers' drops 6.43, 11.90, 1.81, 19.61, 1.40 give move accuracies 75.8062,
    # 59.2772, 93.1785, 41.7530, 94.8904; windows of 2 (5 moves // 10, at least 2)
    # give weights 3.2149, 5.9505, 0.9053, 9.8059, 0.7010 (population standard
    # deviations, at least 0.5). White: weighted 81.843, harmonic 87.0522, accuracy
    # 84.4476; Black: weighted 48.3711, harmonic 48.9953, accuracy 48.6832.
    cps = [20, -50, 80, 60, 300, 280]
    percents = [lichess_win_percent(cp) for cp in cps]
    assert [round(p, 4) for p in percents] == [51.8402, 45.4104, 57.3114, 55.5008, 75.1126, 73.7106]
    assert [round(w, 4) for w in volatility_weights(percents)] == [
        3.2149,
        5.9505,
        0.9053,
        9.8059,
        0.701,
    ]
    movers = [chess.WHITE, chess.BLACK] * 2 + [chess.WHITE]
    losses = [70, 130, 20, 240, 20]
    figures = game_figures(percents, losses, movers, ["opening"] * 3 + ["middlegame"] * 2)
    white, black = figures[chess.WHITE], figures[chess.BLACK]
    assert white["game"].accuracy == pytest.approx(84.4476, abs=1e-4)
    assert black["game"].accuracy == pytest.approx(48.6832, abs=1e-4)
    assert white["game"].acpl == pytest.approx(110 / 3)
    assert black["game"].acpl == pytest.approx(185)
    assert white["opening"].moves == 2 and white["middlegame"].moves == 1
    assert black["opening"].acpl == 130 and black["middlegame"].acpl == 240
    assert white["endgame"].accuracy is None and white["endgame"].moves == 0


def test_lichess_reference_cases() -> None:
    # lichess's own unit cases: a side that keeps its win % is 100 % accurate; White
    # throwing away 9 pawns on the first move scores about 10 %.
    start = lichess_win_percent(15)
    steady = game_figures([start] * 3, [0, 0], [chess.WHITE, chess.BLACK], ["opening"] * 2)
    assert steady[chess.WHITE]["game"].accuracy == 100
    blunder = [start, lichess_win_percent(-900), lichess_win_percent(-900)]
    figures = game_figures(blunder, [915, 0], [chess.WHITE, chess.BLACK], ["opening"] * 2)
    assert figures[chess.WHITE]["game"].accuracy == pytest.approx(10, abs=5)
    assert figures[chess.BLACK]["game"].accuracy == 100
    assert move_accuracy(60, 50) == pytest.approx(64.5798, abs=1e-3)


def test_phases_follow_the_material() -> None:
    start = chess.Board()
    middle = chess.Board("r3k2r/ppp2ppp/2n5/3q4/8/2N5/PPP2PPP/R2QK2R w KQkq - 0 12")
    ending = chess.Board("4k3/pp3ppp/8/8/8/8/PP3PPP/R3K2R w - - 0 30")
    back_to_many = chess.Board()  # a phase never goes back
    assert phases([start, middle, ending, back_to_many]) == [
        "opening",
        "middlegame",
        "endgame",
        "endgame",
    ]


@pytest.mark.parametrize("model", ["cutoff", "lichess"])
def test_annotate_reports_accuracy_in_pgn_and_json(tmp_path: Path, model: str) -> None:
    out, report = tmp_path / "annotated.pgn", tmp_path / "figures.jsonl"
    done = subprocess.run(
        [
            *engine_command(),
            "annotate",
            str(OPERA),
            "--depth",
            "3",
            "-o",
            str(out),
            "--json",
            str(report),
            "--win-model",
            model,
            "--quiet",
        ],
        cwd=str(tmp_path),
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert done.returncode == 0, done.stderr
    with out.open() as handle:
        annotated = chess.pgn.read_game(handle)
    assert annotated is not None
    (record,) = [json.loads(line) for line in report.read_text().splitlines()]
    assert record["win_model"] == model
    moves = len(list(annotated.mainline_moves()))
    assert len(record["moves"]) == moves
    for side, name in (("white", "White"), ("black", "Black")):
        figures = record["sides"][side]
        assert 0 <= figures["game"]["accuracy"] <= 100
        assert annotated.headers[f"{name}Accuracy"] == f"{figures['game']['accuracy']:.1f}"
        assert annotated.headers[f"{name}ACPL"] == f"{figures['game']['acpl']:.1f}"
        by_phase = sum(figures[phase]["moves"] for phase in ("opening", "middlegame", "endgame"))
        assert by_phase == figures["game"]["moves"]
    assert (
        record["sides"]["white"]["game"]["moves"] + record["sides"]["black"]["game"]["moves"]
        == moves
    )
    assert f"accuracy {round(record['sides']['white']['game']['accuracy'])} %" in (
        annotated.comment
    )
