"""The learned evaluation's choice through the real entry points (issue 68): in the
``cutoff`` process, ``Use NNUE`` and ``EvalFile`` choose it, ``eval`` shows its score,
Lazy SMP helpers use it too, and a file that cannot be a network is one ``info string``
and the hand-written evaluation; the ``Analyser`` takes the same choice.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import chess
import chess.engine
import pytest
from test_cli_batch_faults import cutoff
from test_tablebase_faults import start as start_engine
from uci_harness import Engine, bestmove_of

from engine.core import nnue
from tests.networks import random_network
from tests.references import evaluate

FEN = "r1bqkb1r/pppp1ppp/2n2n2/4p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4"


def start(tmp_path: Path, *options: tuple[str, str]) -> tuple[Engine, list[str]]:
    return start_engine(tmp_path, *options, protocol_only=False)  # ``eval`` prints a table


def eval_lines(engine: Engine) -> list[str]:
    engine.send(f"position fen {FEN}")
    engine.send("eval")
    _, _, seen = engine.expect("Searching with:", timeout=30)
    return seen


def legal_bestmove(engine: Engine, go: str) -> str:
    _, best, _ = engine.search(go, timeout=60)
    move = chess.Move.from_uci(bestmove_of(best))
    assert move in chess.Board(FEN).legal_moves, best
    return best


@pytest.fixture
def network(tmp_path: Path) -> tuple[Path, nnue.Network]:
    net = random_network(32, seed=68)
    path = tmp_path / "random.nnue"
    net.write(path)
    return path, net


def test_uci_lists_the_options(tmp_path: Path) -> None:
    engine = Engine(tmp_path)
    engine.send("uci")
    _, _, seen = engine.expect("uciok")
    assert "option name Use NNUE type check default true" in seen
    assert f"option name EvalFile type string default {nnue.SHIPPED_NETWORK.name}" in seen
    engine.close()


def test_network_evaluates_and_searches(tmp_path: Path, network: tuple[Path, nnue.Network]) -> None:
    path, net = network
    engine, seen = start(tmp_path, ("EvalFile", str(path)), ("Use NNUE", "true"))
    assert not [line for line in seen if line.startswith("info string")], seen
    lines = eval_lines(engine)
    want = net.evaluate(chess.Board(FEN))
    assert f"NNUE evaluation: {want:+d} cp from the side to move (white)" in lines
    assert f"Searching with: the network {path}" in lines
    assert (
        f"Network: 768 -> {net.hidden} -> 1, CReLU, 1 output bucket, the whole evaluation" in lines
    )
    legal_bestmove(engine, "go depth 4")
    # Two threads: the helper loads the same network and searches with it.
    engine.send("setoption name Threads value 2")
    legal_bestmove(engine, "go depth 5")
    # Off again: the hand-written evaluation, and the same file back on by name.
    engine.send("setoption name Use NNUE value false")
    assert "Searching with: the hand-written evaluation (Use NNUE is off)" in eval_lines(engine)
    engine.close()


def test_network_changes_the_search(tmp_path: Path, network: tuple[Path, nnue.Network]) -> None:
    """The network's score is what the search reports at depth 1's quiet leaves: the
    same position searched with each evaluation gives different scores."""
    path, _ = network
    scores = []
    for use in ("false", "true"):
        engine, _ = start(tmp_path, ("EvalFile", str(path)), ("Use NNUE", use))
        engine.send(f"position fen {FEN}")
        seen, _, _ = engine.search("go depth 3", timeout=60)
        last = [line for line in seen if " score cp " in line][-1]
        scores.append(last.split(" score cp ")[1].split()[0])
        engine.close()
    assert scores[0] != scores[1], scores


def test_weakened_play_searches_with_the_hand_written_evaluation(
    tmp_path: Path, network: tuple[Path, nnue.Network]
) -> None:
    """UCI_LimitStrength's levels were measured with the hand-written evaluation: a
    weakened search reports its scores, the network's come back
    at full strength, and ``eval`` says which one searches."""
    path, _ = network

    def lines_at_depth_2(*options: tuple[str, str]) -> tuple[list[str], list[str]]:
        engine, _ = start(tmp_path, ("EvalFile", str(path)), *options)
        engine.send(f"position fen {FEN}")
        seen, _, _ = engine.search("go depth 2", timeout=60)
        # A weakened search reports the best line of each depth, then the one it
        # picked: the first line of each depth is the best line in every mode.
        scores = [
            next(line for line in seen if line.startswith(f"info depth {depth} "))
            .split(" score ")[1]
            .split(" nodes ")[0]
            for depth in (1, 2)
        ]
        told = eval_lines(engine)[-1]
        engine.close()
        return scores, [told]

    weak = (("UCI_LimitStrength", "true"), ("UCI_Elo", "1800"))
    weakened, told = lines_at_depth_2(("Use NNUE", "true"), *weak)
    hand, _ = lines_at_depth_2(("Use NNUE", "false"), ("MultiPV", "2"))
    net, told_full = lines_at_depth_2(("Use NNUE", "true"), ("MultiPV", "2"))
    assert weakened == hand, (weakened, hand)
    assert net != hand, (net, hand)
    assert told == [
        "Searching with: the hand-written evaluation (weakened play: its levels were"
        " calibrated with it)"
    ]
    assert told_full == [f"Searching with: the network {path}"]


def test_bad_network_files_fall_back(tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.nnue"
    garbage.write_bytes(os.urandom(5000))
    fifo = tmp_path / "fifo.nnue"
    os.mkfifo(fifo)
    for bad, why in (
        (tmp_path / "missing.nnue", "cannot read"),
        (garbage, "bad magic"),
        (fifo, "not a regular file"),
        (tmp_path, "not a regular file"),
    ):
        # Use NNUE is on by default: the file is read when EvalFile names it.
        engine, seen = start(tmp_path, ("EvalFile", str(bad)))
        notes = [line for line in seen if line.startswith("info string EvalFile:")]
        assert len(notes) == 1 and why in notes[0], seen
        assert "using the hand-written evaluation" in notes[0]
        assert "Searching with: the hand-written evaluation" in eval_lines(engine)[-1]
        legal_bestmove(engine, "go depth 3")
        engine.close()


def test_a_bad_network_is_reported_with_use_nnue_off(tmp_path: Path) -> None:
    """EvalFile is checked when it is set, also while Use NNUE is off: one info string,
    and the search goes on with the hand-written evaluation."""
    missing = tmp_path / "missing.nnue"
    engine, seen = start(tmp_path, ("Use NNUE", "false"), ("EvalFile", str(missing)))
    notes = [line for line in seen if line.startswith("info string")]
    assert len(notes) == 1 and "missing.nnue: cannot read" in notes[0], seen
    assert "Searching with: the hand-written evaluation" in eval_lines(engine)[-1]
    legal_bestmove(engine, "go depth 2")
    engine.close()


def test_analyser_chooses_the_evaluation(
    tmp_path: Path, network: tuple[Path, nnue.Network]
) -> None:
    from engine.analysis import Analyser

    path, _ = network
    board = chess.Board(FEN)
    limit = chess.engine.Limit(depth=3)
    with Analyser(use_nnue=True, eval_file=str(path)) as analyser:
        with_network = analyser.analyse(board, limit)["score"]
    with Analyser(use_nnue=False, eval_file=str(path)) as analyser:
        by_hand = analyser.analyse(board, limit)["score"]
    assert with_network != by_hand
    with pytest.raises(ValueError, match=r"EvalFile: .*missing\.nnue: cannot read"):
        Analyser(use_nnue=True, eval_file=str(tmp_path / "missing.nnue"))


def test_command_line_chooses_the_evaluation(
    tmp_path: Path, network: tuple[Path, nnue.Network]
) -> None:
    """``cutoff analyse``, ``annotate`` and ``bench`` take ``--nnue`` and ``--eval-file``;
    a file that is no network is one line and exit status 2, before any work."""
    path, _ = network
    (tmp_path / "p.epd").write_text(FEN + "\n")
    scores = []
    for extra in ((), ("--nnue", "--eval-file", str(path))):
        result = cutoff(tmp_path, "analyse", "p.epd", "--depth", "3", "--json", *extra)
        assert result.returncode == 0, result.stderr
        scores.append(json.loads(result.stdout)["score"])
    assert scores[0] != scores[1]
    (tmp_path / "g.pgn").write_text("1. e4 e5 2. Nf3 Nc6 *\n")
    annotated = cutoff(
        tmp_path, "annotate", "g.pgn", "--depth", "2", "--nnue", "--eval-file", str(path)
    )
    assert annotated.returncode == 0 and "Nc6" in annotated.stdout, annotated.stderr
    bench = cutoff(
        tmp_path, "bench", "--depth", "2", "--positions", "2", "--nnue", "--eval-file", str(path)
    )
    assert bench.returncode == 0 and f"network {path}" in bench.stdout, bench.stderr
    for command in ("analyse", "bench"):
        args = ("p.epd",) if command == "analyse" else ()
        bad = cutoff(tmp_path, command, *args, "--nnue", "--eval-file", "missing.nnue")
        assert bad.returncode == 2, bad.stderr
        why = "missing.nnue: cannot read: No such file or directory"
        assert bad.stderr == f"cutoff {command}: --eval-file: {why}\n"


@pytest.mark.parametrize("command", ["analyse", "annotate", "bench"])
def test_a_named_network_is_checked_with_no_nnue_too(tmp_path: Path, command: str) -> None:
    """One rule for ``--eval-file``: a named file is checked, also beside ``--no-nnue``
    (which then leaves it unused): one line and exit status 2, before any work."""
    (tmp_path / "p.epd").write_text(FEN + "\n")
    (tmp_path / "g.pgn").write_text("1. e4 e5 *\n")
    args = {"analyse": ("p.epd",), "annotate": ("g.pgn",), "bench": ()}[command]
    bad = cutoff(
        tmp_path, command, *args, "--depth", "1", "--no-nnue", "--eval-file", "missing.nnue"
    )
    assert bad.returncode == 2, bad.stdout + bad.stderr
    why = "missing.nnue: cannot read: No such file or directory"
    assert bad.stderr == f"cutoff {command}: --eval-file: {why}\n"
    assert bad.stdout == ""


def test_the_shipped_network_loads_by_default(tmp_path: Path) -> None:
    """``Use NNUE`` alone: the package's own network, read without a word; its score of
    a position and of the colour-flipped mirror are the same."""
    assert nnue.SHIPPED_NETWORK.is_file(), "the package ships engine/core/cutoff.nnue"
    net = nnue.load(nnue.SHIPPED_NETWORK)
    board = chess.Board(FEN)
    assert net.evaluate(board) == net.evaluate(board.mirror())
    engine, seen = start(tmp_path, ("Use NNUE", "true"))
    assert not [line for line in seen if line.startswith("info string")], seen
    lines = eval_lines(engine)
    assert lines[-1].startswith("Searching with: the network ")
    assert lines[-1].endswith("cutoff.nnue")
    # The shipped network may be a correction of the hand-written evaluation.
    score = net.evaluate(board) + (evaluate(board) if net.base == nnue.BASE_HAND else 0)
    assert f"NNUE evaluation: {score:+d} cp from the side to move (white)" in lines
    legal_bestmove(engine, "go depth 3")
    engine.close()


def test_a_correction_network_adds_the_hand_written_evaluation(
    tmp_path: Path, network: tuple[Path, nnue.Network]
) -> None:
    """A file whose header says BASE_HAND (``train --base hand``): ``eval`` shows the
    correction, the hand-written score and their sum, and the search plays with it."""
    net = dataclasses.replace(network[1], base=nnue.BASE_HAND)
    path = tmp_path / "correction.nnue"
    net.write(path)
    engine, seen = start(tmp_path, ("Use NNUE", "true"), ("EvalFile", str(path)))
    assert not [line for line in seen if line.startswith("info string")], seen
    lines = eval_lines(engine)
    board = chess.Board(FEN)
    correction, hand = net.evaluate(board), evaluate(board)
    assert (
        f"NNUE correction: {correction:+d} cp to the hand-written {hand:+d} cp (side to move)"
        in lines
    )
    assert f"NNUE evaluation: {correction + hand:+d} cp from the side to move (white)" in lines
    legal_bestmove(engine, "go depth 3")
    engine.close()
