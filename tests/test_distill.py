"""scripts/training/distill.py through its command line: positions relabelled with
Cutoff's own static evaluation, which ``fit`` then finds that evaluation to fit
exactly."""

from __future__ import annotations

import re
from pathlib import Path

import chess

from scripts.training.dataset import append_member, done_tasks, read_samples
from tests.conftest import run_repo_script
from tests.networks import random_network
from tests.references import evaluate

FENS = [
    "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3",
    "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R b KQkq - 4 4",
    "8/5k2/8/3K4/8/8/2R5/8 b - - 0 60",
    "4k3/8/8/8/8/8/3PP3/4K3 w - - 0 1",
    "rnb1kbnr/pppp1ppp/8/4p3/6Pq/5P2/PPPPP2P/RNBQKBNR w KQkq - 1 3",  # mate: left out
]


def loss(output: str, name: str) -> float:
    match = re.search(rf"^{re.escape(name)}\s+(\d\.\d+) ±", output, re.MULTILINE)
    assert match, output
    return float(match.group(1))


def test_distill_relabels_with_the_search_evaluation(tmp_path: Path) -> None:
    data = tmp_path / "data.gz"
    results = ["1-0", "0-1", "1/2-1/2", "*", "0-1"]
    append_member(data, [f"{fen};17;{r}" for fen, r in zip(FENS, results)] + ["#done all"])

    # The hand-written evaluation: White's view, the results kept, the mate left out.
    hand = tmp_path / "hand.gz"
    done = run_repo_script("training.distill", str(data), "--out", str(hand), "--quiet")
    assert done.returncode == 0, done.stderr
    assert f"wrote 4 positions to {hand} (children: 0; skipped, game over: 1)" in done.stdout
    samples = list(read_samples(hand))
    assert done_tasks(hand) == {"all"}
    assert [s.fen for s in samples] == FENS[:4]
    assert [s.result for s in samples] == results[:4]
    for sample in samples:
        board = chess.Board(sample.fen)
        white = evaluate(board) * (1 if board.turn == chess.WHITE else -1)
        assert sample.score == white

    # A network: its labels are what the search reads, so fit finds its loss zero
    # and the hand-written evaluation's not.
    net = tmp_path / "random.nnue"
    random_network(16, seed=5).write(net)
    netted = tmp_path / "net.gz"
    done = run_repo_script(
        "training.distill", str(data), "--out", str(netted), "--eval-file", str(net)
    )
    assert done.returncode == 0, done.stderr
    assert [s.score for s in read_samples(netted)] != [s.score for s in samples]
    fitted = run_repo_script("training.fit", str(netted), "--eval-file", str(net), "--quiet")
    assert fitted.returncode == 0, fitted.stderr
    assert loss(fitted.stdout, str(net)) == 0.0
    assert loss(fitted.stdout, "hand-written") > 0.0


def after(board: chess.Board, move: chess.Move) -> chess.Board:
    """``board`` after ``move``, a copy."""
    copy = board.copy(stack=False)
    copy.push(move)
    return copy


def reachable(parent: chess.Board, fen: str) -> bool:
    """Whether ``fen`` is one or two legal moves after ``parent``."""
    for move in parent.legal_moves:
        one = after(parent, move)
        if one.fen() == fen or any(after(one, reply).fen() == fen for reply in one.legal_moves):
            return True
    return False


def test_distill_children_follow_their_parent(tmp_path: Path) -> None:
    data = tmp_path / "data.gz"
    append_member(data, [f"{fen};17;1-0" for fen in FENS] + ["#done all"])
    out = tmp_path / "kids.gz"
    args = ["training.distill", str(data), "--out", str(out), "--children", "3", "--quiet"]
    done = run_repo_script(*args, "--seed", "4")
    assert done.returncode == 0, done.stderr
    samples = list(read_samples(out))
    kids = len(samples) - 4
    assert 0 < kids <= 12
    assert f"wrote {len(samples)} positions to {out} (children: {kids};" in done.stdout
    assert done_tasks(out) == {"all"}
    # Each child comes after its parent, one or two moves from it, labelled as the
    # parents are, with the parent's result.
    parent = None
    for sample in samples:
        board = chess.Board(sample.fen)
        white = evaluate(board) * (1 if board.turn == chess.WHITE else -1)
        assert sample.score == white and sample.result == "1-0"
        if sample.fen in FENS:
            parent = chess.Board(sample.fen)
        else:
            assert parent is not None and reachable(parent, sample.fen), sample.fen
            assert not board.is_game_over()
    assert [s.fen for s in samples if s.fen in FENS] == FENS[:4]
    # The seed decides the children: the same seed gives the same file, another not.
    again = tmp_path / "again.gz"
    run_repo_script(
        "training.distill",
        str(data),
        "--out",
        str(again),
        "--children",
        "3",
        "--quiet",
        "--seed",
        "4",
    )
    assert list(read_samples(again)) == samples
    other = tmp_path / "other.gz"
    run_repo_script(
        "training.distill",
        str(data),
        "--out",
        str(other),
        "--children",
        "3",
        "--quiet",
        "--seed",
        "5",
    )
    assert list(read_samples(other)) != samples


def test_distill_bad_input_is_one_line(tmp_path: Path) -> None:
    missing = run_repo_script("training.distill", str(tmp_path / "none.gz"), "--out", "x.gz")
    assert missing.returncode == 2
    assert missing.stderr.strip().splitlines() == [
        f"distill: error: cannot read {str(tmp_path / 'none.gz')!r}: no such file"
    ]
    bad = tmp_path / "bad.gz"
    append_member(bad, ["4k3/8/8/8/8/8/8/4K2R w K - 0 1;3;*", "not a position;1;*"])
    out = tmp_path / "out.gz"
    broken = run_repo_script("training.distill", str(bad), "--out", str(out))
    assert broken.returncode == 1
    lines = broken.stderr.strip().splitlines()
    assert len(lines) == 1 and f"{bad}:2" in lines[0], broken.stderr
    assert not out.exists() and not (tmp_path / "out.gz.tmp").exists()
