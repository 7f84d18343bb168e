"""scripts/training/train.py through its command line: a tiny network trained for a few
steps on a tiny dataset, its file read back by engine.core.nnue and scored as trained."""

from __future__ import annotations

import gzip
import importlib.util
import lzma
import subprocess
from pathlib import Path

import chess
import numpy as np
import pytest

from engine.core import nnue
from scripts.training.dataset import Sample, append_member, format_sample, read_samples
from scripts.training.train import Data, quantised_cp
from tests.conftest import REPO, run_repo_script

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("torch") is None, reason="PyTorch is not installed"
)

SCORED = REPO / "tests" / "data" / "tuning_sample.gz"
HAS_MATPLOTLIB = importlib.util.find_spec("matplotlib") is not None
"""The loss plot needs the [plot] extra; with only [train,test] the training is tested
without it."""


def tiny_data(path: Path, count: int = 400) -> list[Sample]:
    samples = list(read_samples(SCORED))[:count]
    append_member(path, [format_sample(s) for s in samples[: count // 2]])
    append_member(path, [format_sample(s) for s in samples[count // 2 :]])
    return samples


def train_tiny(data: Path, out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    """The trainer's command line on the tiny data: width 8, small batches, one thread."""
    common = ["--hidden", "8", "--batch-size", "64", "--lr", "0.01", "--threads", "1"]
    return run_repo_script("training.train", str(data), "--out", str(out), *common, *extra)


def test_trains_writes_and_reads_back(tmp_path: Path) -> None:
    data = tmp_path / "tiny.gz"
    samples = tiny_data(data)
    out = tmp_path / "net.bin"
    plot = tmp_path / "loss.png"
    plotting = ["--plot", str(plot)] if HAS_MATPLOTLIB else []
    done = train_tiny(data, out, "--epochs", "3", *plotting, "--scale", "hand")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    # --scale hand: the file's cp per unit is the hand-written evaluation's best K.
    hand_line = next(line for line in lines if "at its best K" in line)
    hand_k = int(float(hand_line.split("at its best K ")[1]))
    # "epoch E train LOSS validation LOSS (S s)"
    epochs = [line.split() for line in lines if line.startswith("epoch ")]
    train = [float(words[3]) for words in epochs]
    assert len(epochs) == 3 and train[-1] < train[0]
    assert any("hand-written evaluation" in line for line in lines)
    if HAS_MATPLOTLIB:
        assert plot.stat().st_size > 1000

    net = nnue.load(out)
    assert net.scale == hand_k and f"{hand_k} cp per unit" in done.stdout
    assert net.hidden == 8 and out.stat().st_size == 8 + 24 + 2 * (768 * 8 + 8 + 16) + 4
    # The engine's integer evaluation is the trainer's quantised one, position by position.
    arrays = Data([data], None)
    index = np.arange(0, len(samples), 37)
    expected = quantised_cp(net, arrays, index)
    for i, cp in zip(index, expected):
        assert net.evaluate(chess.Board(samples[i].fen)) == cp
    # Not a constant: positions of different games score differently.
    assert len(set(expected.tolist())) > 3


def test_xz_data_trains_the_same_network(tmp_path: Path) -> None:
    # The committed datasets are xz files: the same lines, fewer bytes, the same network.
    data = tmp_path / "tiny.gz"
    tiny_data(data)
    packed = tmp_path / "tiny.xz"
    packed.write_bytes(lzma.compress(gzip.decompress(data.read_bytes())))
    nets = []
    for path in (data, packed):
        out = tmp_path / f"{path.suffix[1:]}.nnue"
        done = train_tiny(path, out, "--epochs", "1")
        assert done.returncode == 0, done.stderr
        nets.append(out.read_bytes())
    assert nets[0] == nets[1]
    # A damaged one is a one-line error naming the file, not a traceback.
    packed.write_bytes(packed.read_bytes()[:-40])
    done = train_tiny(packed, tmp_path / "bad.nnue", "--epochs", "1")
    assert done.returncode != 0 and f"{packed}:" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_bad_network_file_is_named(tmp_path: Path) -> None:
    bad = tmp_path / "bad.bin"
    bad.write_bytes(b"CUTNNUE1" + b"\0" * 10)
    with pytest.raises(nnue.NetworkError, match=r"bad\.bin: truncated header"):
        nnue.load(bad)
    with pytest.raises(nnue.NetworkError, match="bad magic"):
        bad.write_bytes(b"x" * 100)
        nnue.load(bad)


def test_missing_data_is_one_line(tmp_path: Path) -> None:
    done = run_repo_script("training.train", str(tmp_path / "none.gz"), "--out", "x.bin")
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "none.gz" in done.stderr


def test_validation_holds_out_whole_games(tmp_path: Path) -> None:
    data = tmp_path / "games.gz"
    samples = list(read_samples(SCORED))[:200]
    for game in range(20):
        chunk = samples[game * 10 : game * 10 + 10]
        append_member(data, [*map(format_sample, chunk), f"#done game:1:{game}"])
    arrays = Data([data], None)
    assert arrays.unit.tolist() == [game for game in range(20) for _ in range(10)]
    val, trn = arrays.split(0.1, seed=1)
    assert len(val) == 20 and len(trn) == 180
    assert not set(arrays.unit[val].tolist()) & set(arrays.unit[trn].tolist())
    assert arrays.split(0.1, seed=1)[0].tolist() == val.tolist()


def test_correction_of_the_hand_written_evaluation(tmp_path: Path) -> None:
    """--base hand: the file says so, and the engine's score (network plus the hand-written
    evaluation, through the search's evaluator) is the trainer's, position by position."""
    from engine.core.board import Board
    from engine.core.nnue_eval import NetworkEvaluator
    from tests.references import evaluate

    data = tmp_path / "tiny.gz"
    samples = tiny_data(data)
    out = tmp_path / "correction.bin"
    done = train_tiny(data, out, "--epochs", "2", "--weight-decay", "0.01", "--base", "hand")
    assert done.returncode == 0, done.stderr
    assert "added to the hand-written evaluation" in done.stdout
    assert "kept epoch" in done.stdout and "warning" not in done.stderr
    net = nnue.load(out)
    assert net.base == nnue.BASE_HAND and net.scale == 400
    evaluator = NetworkEvaluator(net)
    arrays = Data([data], None)
    index = np.arange(0, len(samples), 37)
    expected = quantised_cp(net, arrays, index)
    for i, cp in zip(index, expected):
        board = chess.Board(samples[i].fen)
        hand = evaluate(board)
        for seen in (board, board.mirror()):
            native = Board.from_chess(seen)
            native.use_network(evaluator.incremental)
            assert evaluator.evaluate(native) == cp + hand

    # --correction-scale: the same training, the correction written at half its size.
    half = tmp_path / "half.bin"
    done = train_tiny(
        data, half, "--epochs", "2", "--weight-decay", "0.01", "--base", "hand",
        "--correction-scale", "0.5",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "200 cp per unit, added to the hand-written evaluation at 0.5" in done.stdout
    damped = nnue.load(half)
    assert damped.scale == 200 and damped.base == nnue.BASE_HAND
    assert np.array_equal(damped.ft_weights, net.ft_weights)
    assert np.array_equal(damped.out_weights, net.out_weights)


def test_bad_base_settings_are_refused(tmp_path: Path) -> None:
    """A correction keeps the labels' K (no --scale hand); a file with a base the engine
    does not know is refused by name."""
    good = tmp_path / "good.bin"
    done = run_repo_script(
        "training.train", "x.gz", "--out", str(good), "--base", "hand", "--scale", "hand"
    )
    assert done.returncode == 2 and "--scale must be 'k'" in done.stderr
    for wrong, message in (
        (["--correction-scale", "0.5"], "--correction-scale needs --base hand"),
        (["--base", "hand", "--correction-scale", "0"], "--correction-scale must be positive"),
    ):
        done = run_repo_script("training.train", "x.gz", "--out", str(good), *wrong)
        assert done.returncode == 2 and message in done.stderr
    net = nnue.Network(
        4,
        255,
        64,
        400,
        np.zeros((768, 4), np.int16),
        np.zeros(4, np.int16),
        np.zeros(8, np.int16),
        0,
        base=7,
    )
    net.write(good)
    with pytest.raises(nnue.NetworkError, match="unknown base evaluation 7"):
        nnue.load(good)


def test_a_training_that_never_beats_its_start_says_so(tmp_path: Path) -> None:
    """A learning rate far too high: every epoch is worse on the held-out games than the
    untrained correction, which is kept, written and named on stderr."""
    data = tmp_path / "tiny.gz"
    tiny_data(data)
    out = tmp_path / "net.bin"
    done = train_tiny(data, out, "--epochs", "2", "--base", "hand", "--lr", "1")
    assert done.returncode == 0, done.stderr
    assert "kept epoch 0 " in done.stdout
    assert done.stderr == (
        "train: warning: no epoch did better on the held-out games than before training: "
        "the file is the untrained network (the hand-written evaluation plus a near-zero "
        "correction)\n"
    )
    assert nnue.load(out).base == nnue.BASE_HAND
