"""Weakened play's calibration: the shipped anchors, the mapping built on them, the raw
settings a calibration plays (``CUTOFF_WEAKNESS``) and the command that remakes the
data (``python -m scripts.matches.calibrate``).

The command runs as users start it, with Cutoff against the tiny stub engine at
"levels" that only change its name and with games cut short: what is checked is the
plumbing (one ladder per anchor, the data file rewritten, resuming, checks), not
anyone's strength.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from uci_harness import Engine, field, info_lines

from engine.play import weakened
from engine.play.options import ELO_MAX, ELO_MIN
from tests.conftest import REPO

STUB = f"cmd='{sys.executable} {REPO / 'tests' / 'engines' / 'uci_stub.py'}'"
SHIPPED = REPO / "engine" / "play" / "calibration.json"


def test_the_shipped_anchors_are_all_measured_and_rise_to_full_strength() -> None:
    data = json.loads(SHIPPED.read_text())
    assert all(anchor["elo"] is not None for anchor in data["anchors"]), data["anchors"]
    assert len(weakened.ANCHORS) == len(data["anchors"])
    elos = [anchor[0] for anchor in weakened.ANCHORS]
    assert elos == sorted(set(elos))
    # The top of the UCI_Elo range is the measured full strength; the bottom is
    # Stockfish's weakest level, which the anchors reach down to.
    full = data["anchors"][-1]
    assert full["full_strength"] and full["elo"] == ELO_MAX == elos[-1]
    assert elos[0] <= ELO_MIN
    for anchor in data["anchors"][:-1]:
        assert anchor["games"] >= 40 and anchor["measured"]["clock"], anchor
    # Every UCI_Elo check recorded was played as users get the level.
    for check in data["checks"]:
        assert ELO_MIN <= check["uci_elo"] <= ELO_MAX and check["games"] > 0


def test_the_mapping_weakens_steadily_from_full_strength() -> None:
    assert weakened.weakness(ELO_MAX) is None
    settings = [weakened.weakness(elo) for elo in range(ELO_MIN, ELO_MAX)]
    assert all(s is not None for s in settings)
    nodes = [s.nodes or 10**12 for s in settings if s is not None]
    margins = [s.margin_cp for s in settings if s is not None]
    assert nodes == sorted(nodes) and margins == sorted(margins, reverse=True)
    # Skill Level 20 is full strength and 0 the weakest level.
    assert weakened.elo_for_skill(20) == ELO_MAX and weakened.elo_for_skill(0) == ELO_MIN


def test_anchors_that_do_not_rise_are_refused(tmp_path: Path) -> None:
    data = json.loads(SHIPPED.read_text())
    data["anchors"][1]["elo"] = data["anchors"][0]["elo"]
    path = tmp_path / "calibration.json"
    path.write_text(json.dumps(data))
    with pytest.raises(ValueError, match="does not measure above"):
        weakened.load_anchors(path)
    # An anchor not measured yet (a calibration under way) is left out.
    data = json.loads(SHIPPED.read_text())
    data["anchors"][1]["elo"] = None
    path.write_text(json.dumps(data))
    assert len(weakened.load_anchors(path)) == len(data["anchors"]) - 1


def test_cutoff_weakness_sets_the_raw_setting_of_weakened_play(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(weakened.OVERRIDE_ENV, "300,1,0")
    engine = Engine(tmp_path)
    try:
        engine.handshake()
        engine.send("setoption name UCI_LimitStrength value true")
        engine.send("position startpos")
        lines, _, _ = engine.search("go depth 30")
        # The node budget stops the search: ~300 nodes, not depth 30.
        assert int(field(info_lines(lines)[-1], "nodes")) < 600
        assert int(field(info_lines(lines)[-1], "depth")) < 30
    finally:
        engine.close()
    monkeypatch.setenv(weakened.OVERRIDE_ENV, "300,none")
    engine = Engine(tmp_path)
    try:
        engine.handshake()
        engine.send("setoption name UCI_LimitStrength value true")
        engine.send("position startpos")
        lines, _, _ = engine.search("go depth 2")
        said = [line for line in lines if line.startswith("info string")]
        assert any("CUTOFF_WEAKNESS='300,none': expected NODES,LINES,MARGIN" in s for s in said)
    finally:
        engine.close()


def test_full_strength_is_played_as_cutoff_ships() -> None:
    from scripts.matches.calibrate import engine_spec

    full = {"name": "full", "full_strength": True, "nodes": 0, "lines": 1, "margin_cp": 0}
    assert engine_spec("cutoff", full) == "cmd=cutoff name=Cutoff"
    assert engine_spec("cutoff", {"uci_elo": 1650}).endswith(
        "option.UCI_LimitStrength=true option.UCI_Elo=1650"
    )


def run_calibrate(*args: str) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(
        [sys.executable, "-m", "scripts.matches.calibrate", *args],
        capture_output=True, text=True, timeout=300, cwd=REPO,
    )  # fmt: skip
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def test_calibrate_plays_each_anchor_writes_the_data_and_resumes(tmp_path: Path) -> None:
    data = {
        "about": "test",
        "anchors": [
            {"name": "tiny", "nodes": 50, "lines": 2, "margin_cp": 40, "levels": [1400],
             "rounds": 1, "seed": 1, "elo": None, "error": None},
        ],
        "checks": [],
    }  # fmt: skip
    path = tmp_path / "calibration.json"
    path.write_text(json.dumps(data))
    out = tmp_path / "ladders"
    # Games cut short (depth 1, 12 moves) against the stub: the plumbing, not strength.
    short = ["--perft-rate", "480000", "--depth", "1", "--maxmoves", "12", "--quiet"]
    common = [str(out), "--data", str(path), "--opponent", f"{STUB} name=Level{{elo}}", *short]
    proc = run_calibrate(*common)
    assert proc.returncode == 0, proc.stderr
    written = json.loads(path.read_text())
    anchor = written["anchors"][0]
    assert anchor["games"] == 2 and anchor["results"][0]["level"] == 1400
    assert sum(anchor["results"][0][k] for k in ("wins", "draws", "losses")) == 2
    assert anchor["measured"]["clock"] == "5+0.05"  # 10+0.1 scaled by the rate
    # Against the stub Cutoff may win both games: a rating that is not finite is None.
    assert "elo" in anchor and "error" in anchor and anchor["measured"]["build"]
    assert anchor["measured"]["build"].startswith("Cutoff ")  # as it said in the games
    assert (out / "tiny" / "1400.pgn").exists()
    assert "option.UCI_LimitStrength=true env.CUTOFF_WEAKNESS=50,2,40" in proc.stderr
    pgn = (out / "tiny" / "1400.pgn").read_text()

    # Run again: every ladder is finished, so nothing is replayed; a check is added.
    proc = run_calibrate(*common, "--check", "1500", "--rounds", "1")
    assert proc.returncode == 0, proc.stderr
    assert (out / "tiny" / "1400.pgn").read_text() == pgn
    assert "level 1400" not in proc.stderr
    check = json.loads(path.read_text())["checks"]
    assert [c["uci_elo"] for c in check] == [1500] and check[0]["games"] == 2
    assert "option.UCI_Elo=1500" in proc.stderr

    # Bad input: an anchor the data does not have.
    proc = run_calibrate(*common, "--only", "nosuch")
    assert proc.returncode == 1 and "no anchor 'nosuch'" in proc.stderr
