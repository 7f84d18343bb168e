"""cutoff-tune (scripts/tuning/spsa.py) and the constants it tunes (engine/core/tunables.py).

The tuner runs for real on a tiny run: two constants, Cutoff at depth 2 against Cutoff
at depth 1, one pair per side and iteration, then a resume. The constants' path into
the engine (``CUTOFF_TUNE``, the match's ``env.`` token) is checked through the real
entry points: ``cutoff bench`` and a started engine process.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from engine.core import tunables
from scripts.matches.engines import EngineProcess, parse_engine_spec
from scripts.matches.time_controls import Limits
from scripts.tuning import spsa, spsa_history

ROOT = Path(__file__).resolve().parent.parent
OPENINGS = ROOT / "scripts" / "matches" / "openings" / "noob3_500.epd"
HAS_MATPLOTLIB = importlib.util.find_spec("matplotlib") is not None


def test_defaults_are_the_engines_constants() -> None:
    """Without CUTOFF_TUNE every constant is its default, and the search's derived
    tables are the untuned ones (the bench signature depends on it)."""
    from engine.core import search, timeman

    assert search.FUTILITY_MARGIN_CP == (0, 130, 230, 330)
    assert search.LATE_MOVE_COUNT == (0, 5, 8, 13)
    assert search.LMR_BASE == 0.75 and search.REVERSE_FUTILITY_MARGIN_CP == 90
    assert timeman.OPENING_SHARE == 0.6 and timeman.INCREMENT_HORIZON_MOVES == 20
    for tunable in tunables.TUNABLES.values():
        assert tunable.low <= tunable.default <= tunable.high, tunable.name
        assert tunable.step > 0
        if tunable.integer:
            assert tunable.step >= 0.5, f"{tunable.name}: +c and -c would round alike"


def test_a_file_of_values_is_read_leniently(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text(
        json.dumps({"LMR_BASE": 9.0, "ASPIRATION_WINDOW_CP": 41.4, "NOPE": 1, "LMR_DIVISOR": "x"})
    )
    values, problems = tunables.read_values(str(path))
    assert values == {"LMR_BASE": 1.5, "ASPIRATION_WINDOW_CP": 41.0}  # clamped, rounded
    assert len(problems) == 2 and "'NOPE'" in problems[0] and "LMR_DIVISOR" in problems[1]
    path.write_text("[1, 2")
    values, problems = tunables.read_values(str(path))
    assert values == {} and "keeps its default" in problems[0]
    assert tunables.read_values(str(tmp_path / "missing.json"))[0] == {}


def _bench(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "engine", "bench", "--depth", "4", "--positions", "4"],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_engine_runs_with_the_file_it_is_given(tmp_path: Path) -> None:
    """`cutoff bench` with CUTOFF_TUNE: another tree, and it says why; a bad file is
    one line on stderr and the untuned tree."""
    plain = _bench({})
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"REVERSE_FUTILITY_MARGIN_CP": 150, "LMR_BASE": 1.2}))
    tuned = _bench({tunables.ENV: str(path)})
    assert plain.returncode == tuned.returncode == 0, plain.stderr + tuned.stderr
    assert "Tuned (CUTOFF_TUNE): LMR_BASE 1.2, REVERSE_FUTILITY_MARGIN_CP 150" in tuned.stdout
    assert _nodes(plain.stdout) != _nodes(tuned.stdout)
    path.write_text("{broken")
    broken = _bench({tunables.ENV: str(path)})
    assert broken.returncode == 0
    assert broken.stderr.startswith("cutoff: CUTOFF_TUNE: ")
    assert _nodes(broken.stdout) == _nodes(plain.stdout)


def _nodes(output: str) -> int:
    for line in output.splitlines():
        if line.startswith("Nodes searched"):
            return int(line.split(":")[1])
    raise AssertionError(output)


def test_an_engine_spec_sets_the_engines_environment(tmp_path: Path) -> None:
    """``env.NAME=value``: the started process sees it (a stub engine names itself
    after the variable)."""
    stub = tmp_path / "stub.py"
    stub.write_text(
        "import os, sys\n"
        "for line in sys.stdin:\n"
        "    if line.strip() == 'uci':\n"
        "        print('id name ' + os.environ.get('CUTOFF_PROBE', 'unset'))\n"
        "        print('uciok', flush=True)\n"
        "    elif line.strip() == 'isready':\n"
        "        print('readyok', flush=True)\n"
        "    elif line.strip() == 'quit':\n"
        "        break\n"
    )
    spec = parse_engine_spec(
        f"cmd='{sys.executable} {stub}' env.CUTOFF_PROBE='a b' depth=1", Limits()
    )
    assert spec.env == {"CUTOFF_PROBE": "a b"}

    async def identify() -> str:
        engine = EngineProcess(spec, "stub")
        await engine.start()
        try:
            return str(engine.proto().id.get("name"))
        finally:
            await engine.quit()

    assert asyncio.run(identify()) == "a b"


def test_an_iteration_moves_the_constants_towards_the_better_side() -> None:
    params = [tunables.TUNABLES["LMR_BASE"], tunables.TUNABLES["ASPIRATION_WINDOW_CP"]]
    theta = {"LMR_BASE": 0.75, "ASPIRATION_WINDOW_CP": 30.0}
    signs = [1, -1]
    a_k, c_factor = spsa.gains(0, 100, 1.0)
    assert a_k == pytest.approx(1.0) and c_factor == 1.0
    plus_minus = spsa.sides(theta, params, signs, c_factor)
    assert plus_minus["plus"] == {"LMR_BASE": 0.85, "ASPIRATION_WINDOW_CP": 24.0}
    assert plus_minus["minus"] == {"LMR_BASE": 0.65, "ASPIRATION_WINDOW_CP": 36.0}
    # The + side scored 0.25 more: each constant moves a quarter step its + way.
    new = spsa.updated(theta, params, signs, a_k, c_factor, 0.25)
    assert new == {"LMR_BASE": pytest.approx(0.775), "ASPIRATION_WINDOW_CP": pytest.approx(28.5)}
    assert spsa.updated(theta, params, signs, a_k, c_factor, 0.0) == theta
    # Never past the range.
    far = spsa.updated(theta, params, signs, 100.0, c_factor, 1.0)
    assert far == {"LMR_BASE": 1.5, "ASPIRATION_WINDOW_CP": 10.0}
    # Gains shrink; signs are reproducible for a resumed run.
    assert spsa.gains(50, 100, 1.0)[0] < a_k and spsa.gains(50, 100, 1.0)[1] < 1.0
    assert spsa.perturbation(3, 7, 5) == spsa.perturbation(3, 7, 5)
    # --step-scale perturbs (and moves) by that many steps.
    assert spsa.gains(0, 100, 1.0, 3.0) == (a_k, 3.0)


def _synthetic_run(iterations: int, scale: float, effect: float) -> dict[str, object]:
    """A run of two constants through the tuner's own update, where the + side's
    score advantage is ``effect`` times LMR_BASE's sign plus game noise; the other
    constant changes nothing."""
    import random

    params = [tunables.TUNABLES["LMR_BASE"], tunables.TUNABLES["ASPIRATION_WINDOW_CP"]]
    start = {t.name: t.default for t in params}
    state: dict[str, object] = {
        "settings": {"iterations": iterations, "step_scale": scale},
        "start": start,
        "theta": dict(start),
        "history": [],
    }
    noise = random.Random(5)
    history: list[dict[str, object]] = []
    theta = dict(start)
    for k in range(iterations):
        signs = spsa.perturbation(1, k, 2)
        a_k, c_factor = spsa.gains(k, iterations, 1.0, scale)
        difference = effect * signs[0] + noise.gauss(0.0, 0.3)
        plus = 0.6 + difference / 2
        theta = spsa.updated(theta, params, signs, a_k, c_factor, difference)
        history.append(
            {
                "iteration": k,
                "signs": signs,
                "a": a_k,
                "c_factor": c_factor,
                "plus": plus,
                "minus": plus - difference,
                "theta": theta,
            }
        )
    state["theta"], state["history"] = theta, history
    return state


def test_the_report_tells_a_constant_that_matters_from_noise() -> None:
    state = _synthetic_run(300, 1.0, 0.1)
    rows = {row.name: row for row in spsa_history.movements(state)}
    assert rows["LMR_BASE"].z > 2.5 and rows["LMR_BASE"].steps > 2
    assert abs(rows["ASPIRATION_WINDOW_CP"].z) < 2
    assert spsa_history.kept(state) == {"LMR_BASE": rows["LMR_BASE"].value}
    lines = spsa_history.report_lines(state)
    assert "beyond noise (|z| >= 2): LMR_BASE;" in lines[-2]
    # Nothing is beyond noise when nothing matters, and the run says what it could see.
    quiet = _synthetic_run(300, 1.0, 0.0)
    assert spsa_history.kept(quiet) == {}
    floor = spsa_history.detectable_elo_per_step(quiet)
    assert 5 < floor < 60
    # Three times the perturbation: the same games see a third of the effect per step.
    wide = _synthetic_run(300, 3.0, 0.0)
    assert spsa_history.detectable_elo_per_step(wide) == pytest.approx(floor / 3, rel=0.05)
    # A short run sees little, and before any game nothing.
    assert spsa_history.detectable_elo_per_step(_synthetic_run(30, 1.0, 0.0)) > floor
    assert spsa_history.detectable_elo_per_step(_synthetic_run(0, 1.0, 0.0)) == float("inf")


def _tune(out: Path, iterations: int, *extra: str) -> subprocess.CompletedProcess[str]:
    engine = f"cmd='{sys.executable} -m engine' dir={ROOT} depth=2"
    opponent = f"cmd='{sys.executable} -m engine' dir={ROOT} name=opp depth=1"
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "scripts.tuning.spsa",
            "--engine",
            engine,
            "--opponent",
            opponent,
            "--params",
            "LMR_BASE",
            "REVERSE_FUTILITY_MARGIN_CP",
            "--iterations",
            str(iterations),
            "--rounds",
            "1",
            "--openings",
            str(OPENINGS),
            "--maxmoves",
            "16",
            "--out",
            str(out),
            *extra,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_a_tiny_run_then_a_resume(tmp_path: Path) -> None:
    out = tmp_path / "spsa"
    plot = ("--plot", str(tmp_path / "spsa.png")) if HAS_MATPLOTLIB else ()
    first = _tune(out, 1, *plot)
    assert first.returncode == 0, first.stdout + first.stderr
    if HAS_MATPLOTLIB:
        assert (tmp_path / "spsa.png").read_bytes().startswith(b"\x89PNG")
    assert "[1/1] plus " in first.stdout
    state = json.loads((out / "spsa.json").read_text())
    assert [row["iteration"] for row in state["history"]] == [0]
    plus = json.loads((out / "plus-constants.json").read_text())
    minus = json.loads((out / "minus-constants.json").read_text())
    assert set(plus) == set(minus) == {"LMR_BASE", "REVERSE_FUTILITY_MARGIN_CP"}
    assert all(plus[name] != minus[name] for name in plus)
    # A second run without --resume would lose the first: refused.
    again = _tune(out, 2)
    assert again.returncode == 1 and "--resume" in again.stderr
    # A state from before --step-scale existed ran with 1: it resumes.
    state["settings"].pop("step_scale")
    (out / "spsa.json").write_text(json.dumps(state))
    # An interrupted second iteration had finished a game: it goes, and is played again.
    pgn = out / "plus.pgn"
    first_game = pgn.read_text().split("\n\n[Event ")[0] + "\n\n"
    pgn.write_text(pgn.read_text() + first_game.replace("iteration 1", "iteration 2"))
    resumed = _tune(out, 2, "--resume", "--concurrency", "1")  # where games run may change
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "dropped 1 game(s) of the interrupted iteration from plus.pgn" in resumed.stderr
    assert "[2/2] plus " in resumed.stdout and "[1/2]" not in resumed.stdout
    assert "beyond noise (|z| >= 2): " in resumed.stdout  # the report ends the run
    state = json.loads((out / "spsa.json").read_text())
    assert [row["iteration"] for row in state["history"]] == [0, 1]
    # Every game of every iteration is kept, each side against the opponent.
    games = (out / "plus.pgn").read_text()
    assert games.count('[Event "cutoff-tune iteration 1"]') == 2
    assert games.count('[Event "cutoff-tune iteration 2"]') == 2
    assert games.count("[Event ") == 4
    assert json.loads((out / "tuned.json").read_text()) == state["theta"]
    # Other constants than the run's: refused, nothing changed.
    other = subprocess.run(
        [
            *(sys.executable, "-m", "scripts.tuning.spsa", "--engine", "x"),
            *("--params", "LMR_BASE", "--iterations", "2", "--depth", "1"),
            *("--out", str(out), "--resume"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert other.returncode == 1 and "other settings" in other.stderr
    assert "(opponent, params, match)" in other.stderr  # not the engine: its place may change
    wider = _tune(out, 2, "--resume", "--step-scale", "2")
    assert wider.returncode == 1 and "(step_scale)" in wider.stderr
    # The report, through cutoff-tune's entry: the table, the JSON, the constants kept.
    keep = tmp_path / "kept.json"
    report = _report(out, "--keep", str(keep), "--json")
    assert report.returncode == 0, report.stderr
    table = json.loads(report.stdout)
    assert table["iterations"] == 2
    assert [row["name"] for row in table["constants"]] == ["LMR_BASE", "REVERSE_FUTILITY_MARGIN_CP"]
    kept = json.loads(keep.read_text())
    assert set(kept) <= {"LMR_BASE", "REVERSE_FUTILITY_MARGIN_CP"}
    # --keep never replaces a file that is not a file of constants.
    keep.write_text("my notes\n")
    refused = _report(out, "--keep", str(keep))
    assert refused.returncode == 1 and "is not a file of cutoff-tune's constants" in refused.stderr
    assert keep.read_text() == "my notes\n"
    missing = _report(tmp_path / "nothing")
    assert missing.returncode == 1 and "spsa.json" in missing.stderr


def _report(out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "scripts.tuning.spsa", "report", str(out), *extra],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_only_the_games_of_unfinished_iterations_are_dropped(tmp_path: Path) -> None:
    def game(event: str) -> str:
        return f'[Event "{event}"]\n[Result "1-0"]\n\n1. e4 {{ [Event "x"] }} 1-0\n\n'

    pgn = tmp_path / "plus.pgn"
    assert spsa.drop_unfinished_games(pgn, 3) == 0 and not pgn.exists()
    events = ["Cutoff match", *(spsa.EVENT.format(n) for n in (1, 2, 3, 3, 4))]
    pgn.write_text("".join(game(event) for event in events))
    assert spsa.drop_unfinished_games(pgn, 3) == 1
    # An untagged game (a run from before the tag) stays: nothing says when it was played.
    assert pgn.read_text() == "".join(game(event) for event in events[:-1])
    assert spsa.drop_unfinished_games(pgn, 3) == 0
