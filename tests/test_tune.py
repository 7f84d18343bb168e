"""scripts/tuning/tune.py through its command line, on the committed sample of tuning data."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import chess
import pytest

from engine.core import features
from engine.core.weights import WEIGHTS_FILE, load_weights
from scripts.training.dataset import append_member
from scripts.tuning import tune
from tests.conftest import REPO, run_repo_script

SAMPLE = REPO / "tests" / "data" / "tuning_sample.gz"


def run_tune(*args: str) -> subprocess.CompletedProcess[str]:
    return run_repo_script("tuning.tune", *args, timeout=300)


def load(path: Path) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The vectors of a written weights file, through the engine's own loader."""
    return load_weights(path)


def test_tuning_lowers_the_loss_and_is_reproducible(tmp_path: Path) -> None:
    outputs = []
    for name in ("a.json", "b.json"):
        out = tmp_path / name
        done = run_tune(
            str(SAMPLE), "--iterations", "60", "--pull", "1e-6", "--workers", "1",
            "--report", "0", "--out", str(out),
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        outputs.append(out.read_text())
    assert outputs[0] == outputs[1]

    before = re.search(r"loss before: train ([0-9.]+)", done.stdout)
    after = re.search(r"loss after:  train ([0-9.]+)", done.stdout)
    assert before and after, done.stdout
    assert float(after.group(1)) < float(before.group(1))

    mg, eg = load(tmp_path / "a.json")
    assert len(mg) == len(eg) == features.FEATURE_COUNT
    assert all(isinstance(w, int) for w in (*mg, *eg))


def test_start_weights_are_pesto_and_the_hand_values(tmp_path: Path) -> None:
    out = tmp_path / "start.json"
    done = run_tune("--write-start", "--out", str(out))
    assert done.returncode == 0, done.stderr
    mg, _ = load(out)
    base = features.OFFSET["psqt"]
    # PeSTO: a White knight on e4 is worth 337 + 28 in the middlegame.
    assert mg[base + 64 + 28] == 337 + 28


def test_bad_data_is_one_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.gz"
    append_member(bad, [f"{chess.STARTING_FEN};0;1-0", "not a fen at all"])
    done = run_tune(str(bad), "--out", str(tmp_path / "w.json"))
    assert done.returncode == 2
    assert done.stderr == (f"tune: {bad}:2: expected FEN;SCORE;RESULT, got 'not a fen at all'\n")
    assert not (tmp_path / "w.json").exists()
    # The old tuning format (FEN;RESULT in plain text) is not read: a clear line.
    old = tmp_path / "old.txt"
    old.write_text(f"{chess.STARTING_FEN};1-0\n")
    done = run_tune(str(old), "--out", str(tmp_path / "w.json"))
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    # A position without a game result cannot be fitted to one.
    unknown = tmp_path / "unknown.gz"
    append_member(unknown, [f"{chess.STARTING_FEN};0;*"])
    done = run_tune(str(unknown), "--out", str(tmp_path / "w.json"))
    assert done.returncode == 2
    assert done.stderr == f"tune: {unknown}:1: no game result ('*'): tune needs one\n"


def test_score_labels_are_blended_into_the_target(tmp_path: Path) -> None:
    scored = SAMPLE
    runs = {}
    for weight in ("0", "1"):
        out = tmp_path / f"w{weight}.json"
        done = run_tune(
            str(scored), "--iterations", "40", "--workers", "1", "--report", "0",
            "--score-weight", weight, "--out", str(out),
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        runs[weight] = (done.stdout, out.read_text())
    # Weight 0 ignores the score; weight 1 fits to the score alone, a different target.
    assert "target:" not in runs["0"][0]
    assert "target: 0 x result + 1 x score" in runs["1"][0]
    assert runs["0"][1] != runs["1"][1]
    before = re.search(r"loss before: train ([0-9.]+)", runs["1"][0])
    after = re.search(r"loss after:  train ([0-9.]+)", runs["1"][0])
    assert before and after and float(after.group(1)) < float(before.group(1))
    assert "against game results" in runs["1"][0]


def test_shipped_weights_are_written_only_when_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert tune.SHIPPED_WEIGHTS == WEIGHTS_FILE == REPO / "engine" / "core" / "weights.json"
    shipped = tmp_path / "engine_weights.json"  # stands in for engine/core/weights.json
    monkeypatch.setattr(tune, "SHIPPED_WEIGHTS", shipped)
    monkeypatch.chdir(tmp_path)

    # Without --out or --install: weights_tuned.json in the current directory.
    assert tune.main(["--write-start"]) == 0
    assert (tmp_path / "weights_tuned.json").is_file()
    assert not shipped.exists()

    assert tune.main(["--write-start", "--install"]) == 0
    assert shipped.read_text() == (tmp_path / "weights_tuned.json").read_text()

    # Both at once is a usage error, one line.
    capsys.readouterr()
    with pytest.raises(SystemExit) as stop:
        tune.main(["--write-start", "--install", "--out", str(tmp_path / "x.json")])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("tune: error: argument --out: not allowed with") and err.count("\n") == 1
    assert not (tmp_path / "x.json").exists()


def test_shipped_weights_file_is_what_the_writer_writes(tmp_path: Path) -> None:
    """engine/core/weights.json is in the writer's exact format (a refit diffs cleanly), and
    a file whose blocks do not match the feature layout is refused with its name."""
    import json

    import numpy as np

    data = json.loads(WEIGHTS_FILE.read_text())
    mg, eg = load_weights(WEIGHTS_FILE)
    text = tune.format_weights(np.array(mg, float), np.array(eg, float), data["provenance"])
    assert text == WEIGHTS_FILE.read_text()
    del data["eg"]["tempo"]
    broken = tmp_path / "broken.json"
    broken.write_text(json.dumps(data))
    with pytest.raises(ValueError, match=r"broken\.json: the eg blocks"):
        load_weights(broken)
