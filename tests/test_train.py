"""scripts/training/train.py through its command line: a tiny network trained for a few
steps on a tiny dataset (text data, or stores of records), its file read back by
engine.core.nnue and scored as trained (CReLU and SCReLU, one output bucket and
several); checkpoints and resuming, the same network with one thread or two, the
benchmark."""

from __future__ import annotations

import gzip
import importlib.util
import lzma
import os
import subprocess
from pathlib import Path

import chess
import numpy as np
import pytest

from engine.core import nnue
from scripts.training import records, store
from scripts.training.dataset import Sample, append_member, format_sample, read_samples
from scripts.training.train import Data, quantised_cp
from tests.conftest import REPO, run_repo_script
from tests.test_kernel import varied_material_fens
from tests.test_records import random_fens

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("numba") is None, reason="numba (the [train] extra) is not installed"
)


@pytest.fixture(autouse=True, scope="module")
def compiled_kernels() -> None:
    """The kernels compiled once into numba's cache before the tests start trainers,
    so that each trainer loads them (about a second) instead of compiling them in
    every process at once (tens of seconds each on a busy machine)."""
    from scripts.training import kernel

    kernel.warm_up()


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
    assert net.hidden == 8 and out.stat().st_size == 8 + 36 + 2 * (768 * 8 + 8 + 16) + 4
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
    data = tmp_path / "tiny.gz"
    samples = tiny_data(data)
    out = tmp_path / "correction.bin"
    done = train_tiny(data, out, "--epochs", "2", "--weight-decay", "0.01", "--base", "hand")
    assert done.returncode == 0, done.stderr
    assert "added to the hand-written evaluation" in done.stdout
    assert "kept epoch" in done.stdout and "warning" not in done.stderr
    net = nnue.load(out)
    assert net.base == nnue.BASE_HAND and net.scale == 400
    engine_adds_the_correction(net, data, samples)

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


def engine_adds_the_correction(net: nnue.Network, data: Path, samples: list[Sample]) -> None:
    """The engine's score (the search's evaluator: the network plus the hand-written
    evaluation) is the trainer's quantised correction plus that evaluation, for every
    37th position and its colour-flipped mirror."""
    from engine.core.board import Board
    from engine.core.nnue_eval import NetworkEvaluator
    from tests.references import evaluate

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


def test_a_screlu_correction_with_buckets(tmp_path: Path) -> None:
    """--base hand with --activation screlu --buckets 4: the file says all three, and the
    engine adds the trainer's quantised correction, in every bucket the data reaches."""
    data = tmp_path / "tiny.gz"
    samples = tiny_data(data)
    out = tmp_path / "correction.bin"
    done = train_tiny(
        data, out, "--epochs", "1", "--base", "hand", "--activation", "screlu", "--buckets", "4"
    )
    assert done.returncode == 0, done.stderr
    assert "hidden 8, screlu, 4 output buckets, 400 cp per unit, added" in done.stdout
    net = nnue.load(out)
    assert (net.base, net.activation, net.buckets) == (nnue.BASE_HAND, nnue.SCRELU, 4)
    engine_adds_the_correction(net, data, samples)
    pieces = {len(chess.Board(s.fen).piece_map()) for s in samples[::37]}
    assert len({nnue.bucket(n, 4) for n in pieces}) >= 2


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
        np.zeros((1, 8), np.int16),
        np.zeros(1, np.int32),
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


# ---------------------------------------------------------------- stores

MATERIAL = {chess.PAWN: 100, chess.KNIGHT: 300, chess.BISHOP: 300, chess.ROOK: 500}


def white_material(board: chess.Board) -> int:
    return sum(
        value * (len(board.pieces(kind, chess.WHITE)) - len(board.pieces(kind, chess.BLACK)))
        for kind, value in MATERIAL.items()
    )


def make_store(
    folder: Path, fens: list[str], side: int = records.SCORE_WHITE, chunk: int = 150
) -> None:
    """A store of ``fens`` in chunks of ``chunk`` records, each scored by its material
    (from White's view, or the side to move's with ``side``), results by the score."""
    writer = store.Store.at(folder)
    encoded = []
    for fen in fens:
        board = chess.Board(fen)
        score = white_material(board)
        result = 1 if score > 200 else -1 if score < -200 else 0
        if side == records.SCORE_SIDE_TO_MOVE and board.turn == chess.BLACK:
            score = -score
        encoded.append(records.encode(board, score, result))
    for index, start in enumerate(range(0, len(encoded), chunk)):
        data = b"".join(encoded[start : start + chunk])
        writer.write_chunk(index, records.Header(side, "test"), data, {"test": True}, "test")


def stores(tmp_path: Path, side: int = records.SCORE_WHITE) -> tuple[Path, Path, list[str]]:
    """A training store of 600 positions of random games in 4 chunks, a validation
    store of 100 others (every seventh position: of the same games, so that a tiny
    network learns on the first what holds on the second); the validation positions."""
    fens = random_fens(700, seed=21, max_plies=60)
    valid = fens[::7]
    make_store(tmp_path / f"train{side}", [f for i, f in enumerate(fens) if i % 7], side)
    make_store(tmp_path / f"valid{side}", valid, side)
    return tmp_path / f"train{side}", tmp_path / f"valid{side}", valid


def train_store(
    train: Path, valid: Path, out: Path, *extra: str
) -> subprocess.CompletedProcess[str]:
    common = ["--hidden", "8", "--batch-size", "64", "--lr", "0.01", "--threads", "1"]
    return run_repo_script(
        "training.train", "--store", str(train), "--valid", str(valid), "--out", str(out),
        "--lam", "1.0", *common, *extra,
    )  # fmt: skip


def float_weights(checkpoint: Path, prefix: str = "best") -> dict[str, np.ndarray]:
    with np.load(checkpoint) as saved:
        return {name: saved[f"{prefix}_{name}"] for name in ("ft", "bias", "out_w", "out_b")}


def test_store_training_writes_the_network_the_engine_evaluates(tmp_path: Path) -> None:
    """--store/--valid: the losses fall, the peak memory is said, and the written file's
    integer evaluation (the engine's) is the trained float network's within the error
    of its rounding, position by position."""
    train, valid, valid_fens = stores(tmp_path)
    out = tmp_path / "net.nnue"
    done = train_store(train, valid, out, "--epochs", "4")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("positions 700 (train 600, validation 100)")
    epochs = [line.split() for line in lines if line.startswith("epoch ")]
    assert len(epochs) == 4 and float(epochs[-1][3]) < float(epochs[0][3])
    assert float(epochs[-1][5]) < float(lines[1].split()[-1])  # validation below untrained
    assert "positions/s)" in lines[2]
    peak = next(line for line in lines if line.startswith("peak memory "))
    assert 10 < float(peak.split()[2]) < 4000
    net = nnue.load(out)
    assert (net.hidden, net.scale, net.base) == (8, 400, nnue.BASE_NONE)

    # The float network of the kept epoch, from the checkpoint beside the file.
    w = float_weights(tmp_path / "net.nnue.ckpt")
    qa, qb = net.qa, net.qb
    out_q = net.out_weights[0] / qb
    apart = []
    for fen in valid_fens:
        board = chess.Board(fen)
        accs = []
        for perspective in (board.turn, not board.turn):
            active = nnue.features(board, perspective)
            exact = w["bias"] + w["ft"][active].sum(axis=0)
            rounded = (net.ft_bias + net.ft_weights[active].astype(np.int64).sum(axis=0)) / qa
            accs.append((np.clip(exact, 0, 1), np.clip(rounded, 0, 1)))
        h = np.concatenate([accs[0][0], accs[1][0]])
        hq = np.concatenate([accs[0][1], accs[1][1]])
        float_cp = (h @ w["out_w"][0] + w["out_b"][0]) * net.scale
        # The rounding's error: of the accumulators (through the rounded output
        # weights), of the output weights and of the output bias; then the floor.
        bound = net.scale * (
            np.abs(out_q) @ np.abs(h - hq)
            + h @ np.abs(w["out_w"][0] - out_q)
            + abs(w["out_b"][0] - net.out_bias[0] / (qa * qb))
        )
        engine_cp = net.evaluate(board)
        assert abs(float_cp - engine_cp) <= bound + 1, (fen, float_cp, engine_cp, bound)
        apart.append(abs(float_cp - engine_cp))
    # Not a constant network, and near its float form (about 400 / 64 cp a step).
    assert len({net.evaluate(chess.Board(f)) for f in valid_fens}) > 10
    assert sum(apart) / len(apart) < 10


def test_screlu_and_buckets_train_the_network_the_engine_evaluates(tmp_path: Path) -> None:
    """--activation screlu --buckets 8 on stores of every amount of material: the file
    (format 2) says both, and the engine's evaluation of each validation position is
    the trainer's quantised one (kernel.quantised_forward), the reported loss theirs."""
    from engine.core.board import Board
    from engine.core.nnue_eval import NetworkEvaluator
    from scripts.training.train import StoreSource, _quantised_cp, mse

    fens = varied_material_fens(700, seed=21)
    valid_fens = fens[::7]
    train, valid = tmp_path / "train", tmp_path / "valid"
    make_store(train, [f for i, f in enumerate(fens) if i % 7])
    make_store(valid, valid_fens)
    out = tmp_path / "net.nnue"
    done = train_store(
        train, valid, out, "--epochs", "2", "--activation", "screlu", "--buckets", "8"
    )
    assert done.returncode == 0, done.stderr
    assert "hidden 8, screlu, 8 output buckets, 400 cp per unit" in done.stdout
    assert out.read_bytes()[:8] == nnue.MAGIC
    net = nnue.load(out)
    assert (net.activation, net.buckets, net.hidden) == (nnue.SCRELU, 8, 8)
    pieces = [len(chess.Board(f).piece_map()) for f in valid_fens]
    assert {nnue.bucket(n, 8) for n in pieces} == set(range(8))

    source = StoreSource([valid], k=400, lam=1.0)
    index = np.arange(len(source))
    reported = _quantised_cp(net, source, index)
    engine = [net.evaluate(chess.Board(f)) for f in valid_fens]
    assert reported.tolist() == engine
    assert len(set(engine)) > 10
    loss = next(line for line in done.stdout.splitlines() if line.startswith("validation loss"))
    target = source.batch(index).target
    assert float(loss.split()[-1]) == pytest.approx(mse(engine, target, 400), abs=1e-6)
    # The search's evaluator (incremental accumulators) scores them the same.
    evaluator = NetworkEvaluator(net)
    for fen, cp in zip(valid_fens, engine):
        native = Board.from_chess(chess.Board(fen))
        native.use_network(evaluator.incremental)
        assert evaluator.evaluate(native) == cp


def test_a_checkpoint_of_other_buckets_or_activation_is_refused(tmp_path: Path) -> None:
    """--resume with other --buckets or --activation than the checkpoint's is refused in
    one line; a checkpoint of the trainer before these options is CReLU, one bucket."""
    import json

    train, valid, _ = stores(tmp_path)
    part = tmp_path / "part.nnue"
    checkpoint = tmp_path / "part.nnue.ckpt"
    common = ("--epochs", "2", "--buckets", "4")
    done = train_store(train, valid, part, *common, "--stop-after", "1")
    assert done.returncode == 0, done.stderr
    for extra, message in (
        (("--buckets", "8"), "made with --buckets 4, this run has 8"),
        (("--activation", "screlu"), "made with --activation crelu, this run has screlu"),
    ):
        done = train_store(train, valid, part, *common, "--resume", str(checkpoint), *extra)
        assert (done.returncode, done.stderr) == (2, f"train: {checkpoint}: {message}\n")
    with np.load(checkpoint) as saved:
        arrays = {name: saved[name] for name in saved.files}
    meta = json.loads(str(arrays["meta"]))
    del meta["settings"]["activation"], meta["settings"]["buckets"]
    arrays["meta"] = np.array(json.dumps(meta))
    with checkpoint.open("wb") as handle:
        np.savez(handle, **arrays)
    done = train_store(train, valid, part, *common, "--resume", str(checkpoint))
    assert done.stderr == f"train: {checkpoint}: made with --buckets 1, this run has 4\n"


def test_the_score_side_of_the_header_is_read(tmp_path: Path) -> None:
    """The same positions stored with White's-view scores and with the side to move's
    train the same network, byte for byte."""
    nets = []
    for side in (records.SCORE_WHITE, records.SCORE_SIDE_TO_MOVE):
        train, valid, _ = stores(tmp_path, side)
        out = tmp_path / f"net{side}.nnue"
        done = train_store(train, valid, out, "--epochs", "1")
        assert done.returncode == 0, done.stderr
        nets.append(out.read_bytes())
    assert nets[0] == nets[1]
    # Not the same files: the black-to-move positions' scores are stored negated.
    white = (tmp_path / "train0" / "chunk-000000.cpos").read_bytes()
    to_move = (tmp_path / "train1" / "chunk-000000.cpos").read_bytes()
    assert (white[14], to_move[14]) == (records.SCORE_WHITE, records.SCORE_SIDE_TO_MOVE)
    assert white[64:] != to_move[64:]


def test_resume_gives_the_uninterrupted_network(tmp_path: Path) -> None:
    """Stopped after epoch 1 (--stop-after) and resumed from its checkpoint, the run
    ends with the same file as one run of all three epochs."""
    train, valid, _ = stores(tmp_path)
    whole = tmp_path / "whole.nnue"
    done = train_store(train, valid, whole, "--epochs", "3")
    assert done.returncode == 0, done.stderr
    whole_epochs = [line for line in done.stdout.splitlines() if line.startswith("epoch ")]

    part = tmp_path / "part.nnue"
    done = train_store(train, valid, part, "--epochs", "3", "--stop-after", "1")
    assert done.returncode == 0, done.stderr
    assert f"stopped after epoch 1: continue with --resume {part}.ckpt" in done.stdout
    assert not part.exists()
    done = train_store(train, valid, part, "--epochs", "3", "--resume", f"{part}.ckpt")
    assert done.returncode == 0, done.stderr
    assert f"resumed after epoch 1 from {part}.ckpt" in done.stdout
    epochs = [line for line in done.stdout.splitlines() if line.startswith("epoch ")]
    # The same losses (the times and rates differ).
    assert [e.split()[:6] for e in epochs] == [e.split()[:6] for e in whole_epochs[1:]]
    assert part.read_bytes() == whole.read_bytes()

    # A checkpoint of other settings is refused in one line.
    done = train_store(
        train, valid, part, "--epochs", "3", "--resume", f"{part}.ckpt", "--lr", "0.02"
    )
    assert done.returncode == 2
    assert done.stderr == f"train: {part}.ckpt: made with --lr 0.01, this run has 0.02\n"


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="needs two CPUs")
def test_two_threads_train_the_same_network(tmp_path: Path) -> None:
    train, valid, _ = stores(tmp_path)
    nets = []
    for threads in ("1", "2"):
        out = tmp_path / f"net{threads}.nnue"
        done = train_store(train, valid, out, "--epochs", "1", "--threads", threads)
        assert done.returncode == 0, done.stderr
        assert f"{threads} threads" in done.stdout.splitlines()[0]
        nets.append(out.read_bytes())
    assert nets[0] == nets[1]


def test_store_records_are_gathered_across_chunks(tmp_path: Path) -> None:
    """A batch of any records of a store: the same records as the whole store's."""
    from scripts.training.train import StoreSource

    train, _, _ = stores(tmp_path)
    source = StoreSource([train], k=400, lam=1.0)
    whole = store.load([train])
    assert len(source) == len(whole) == 600 and len(source.chunks) == 4
    index = np.random.default_rng(1).permutation(600)[:200]
    assert source.records(index).tobytes() == whole[index].tobytes()


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--store", "S", "--out", "o"), "--store needs --valid DIR"),
        (("d.gz", "--valid", "V", "--out", "o"), "--valid goes with --store"),
        (("d.gz", "--store", "S", "--valid", "V", "--out", "o"), "give either data files or"),
        (("--store", "S", "--valid", "V", "--out", "o", "--base", "hand"), "--base hand reads"),
        (("--store", "S", "--valid", "V", "--out", "o", "--stop-after", "10"), "--stop-after"),
        (("--store", "S", "--valid", "V", "--out", "o", "--buckets", "33"), "--buckets must be"),
    ],
)
def test_bad_store_arguments_are_one_line(args: tuple[str, ...], message: str) -> None:
    done = run_repo_script("training.train", *args)
    assert done.returncode == 2 and message in done.stderr
    assert done.stderr.count("\n") == 1


def test_a_missing_store_is_one_line(tmp_path: Path) -> None:
    _, valid, _ = stores(tmp_path)
    done = train_store(tmp_path / "nowhere", valid, tmp_path / "o.nnue")
    assert (done.returncode, done.stderr) == (
        2,
        f"train: {tmp_path / 'nowhere'}: no such store folder\n",
    )


def test_bench_measures_training_steps() -> None:
    done = run_repo_script(
        "training.train", "--bench", "--hidden", "8", "--threads", "1", "--batch-size", "256",
        "--max-positions", "1000", "--bench-seconds", "0.2", "--activation", "screlu",
        "--buckets", "8",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (
        "bench: hidden 8, screlu, 8 output buckets, 1 threads, batch 256, 1000 synthetic records"
        in done.stdout
    )
    assert " positions/s (" in done.stdout and "positions per CPU second" in done.stdout


def test_an_interrupted_run_says_how_to_resume_and_resumes(tmp_path: Path) -> None:
    """Ctrl-C (SIGINT) after the first checkpoint: exit 130, one line naming the
    checkpoint, which --resume takes on to the uninterrupted run's file."""
    import signal
    import sys
    import time

    train, valid, _ = stores(tmp_path)
    out = tmp_path / "net.nnue"
    checkpoint = tmp_path / "net.nnue.ckpt"
    common = [
        *("--store", str(train), "--valid", str(valid), "--lam", "1.0"),
        *("--hidden", "8", "--batch-size", "16", "--lr", "0.01", "--threads", "1"),
        *("--epochs", "60"),
    ]
    process = subprocess.Popen(
        [sys.executable, "-m", "scripts.training.train", *common, "--out", str(out)],
        cwd=str(REPO),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 120
    while not checkpoint.exists() and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    process.send_signal(signal.SIGINT)
    stdout, stderr = process.communicate(timeout=120)
    if process.returncode == 0:
        pytest.skip("the run ended before the interrupt reached it")
    assert process.returncode == 130, stderr
    epochs = [line for line in stdout.splitlines() if line.startswith("epoch ")]
    # The epoch of the checkpoint: the last one printed (or the one before, if the
    # interrupt came between its line and its checkpoint).
    assert stderr.startswith("train: interrupted: continue after epoch ")
    done = int(stderr.split()[5])
    assert stderr == f"train: interrupted: continue after epoch {done} with --resume {checkpoint}\n"
    assert len(epochs) - 1 <= done <= len(epochs)
    assert not out.exists()
    resumed = run_repo_script(
        "training.train", *common, "--out", str(out), "--resume", str(checkpoint)
    )
    assert resumed.returncode == 0, resumed.stderr
    assert f"resumed after epoch {done} from" in resumed.stdout
    whole = tmp_path / "whole.nnue"
    done_whole = run_repo_script("training.train", *common, "--out", str(whole))
    assert done_whole.returncode == 0, done_whole.stderr
    assert out.read_bytes() == whole.read_bytes()


def test_an_interrupt_right_after_a_checkpoint_names_that_checkpoint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Ctrl-C between the checkpoint's rename and the loop's own bookkeeping (the window
    a CI run once hit): the message names the epoch the file holds."""
    from scripts.training import train as trainer

    train, valid, _ = stores(tmp_path)
    checkpoint = tmp_path / "net.nnue.ckpt"
    real_save = trainer.State.save

    def save_then_interrupt(self: trainer.State, path: Path, settings: dict[str, object]) -> None:
        real_save(self, path, settings)
        if self.epoch == 2:
            raise KeyboardInterrupt

    monkeypatch.setattr(trainer.State, "save", save_then_interrupt)
    code = trainer.main([
        *("--store", str(train), "--valid", str(valid), "--lam", "1.0", "--hidden", "8"),
        *("--batch-size", "64", "--threads", "1", "--epochs", "5"),
        *("--out", str(tmp_path / "net.nnue")),
    ])  # fmt: skip
    assert code == 130
    assert capsys.readouterr().err == (
        f"train: interrupted: continue after epoch 2 with --resume {checkpoint}\n"
    )
