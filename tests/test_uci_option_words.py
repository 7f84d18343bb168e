"""What the UCI engine says about a bad option: a ``setoption`` without a value, and
``eval`` after an EvalFile that did not load (engine.play.options, controller).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from uci_harness import Engine


def _start(tmp_path: Path) -> Engine:
    eng = Engine(tmp_path, protocol_only=False)  # ``eval`` prints a table
    eng.handshake()
    return eng


@pytest.mark.parametrize(("name", "wanted"), [("Hash", "1..1024"), ("Ponder", "true or false")])
def test_setoption_without_a_value_says_so_and_names_the_option(
    tmp_path: Path, name: str, wanted: str
) -> None:
    eng = _start(tmp_path)
    eng.send(f"setoption name {name}")
    _, line, _ = eng.expect("info string", timeout=30)
    assert line == f"info string {name}: no value given (setoption name {name} value {wanted})"
    assert "None" not in line
    eng.close()


def test_eval_after_a_bad_eval_file_says_the_network_did_not_load(tmp_path: Path) -> None:
    bad = tmp_path / "bad.nnue"
    bad.write_bytes(b"not a network at all")
    eng = _start(tmp_path)
    eng.send(f"setoption name EvalFile value {bad}")
    eng.send("eval")
    _, line, _ = eng.expect("Searching with:", timeout=30)
    assert "Use NNUE is off" not in line
    assert line.startswith("Searching with: the hand-written evaluation (the network could not")
    assert str(bad) in line
    eng.send("setoption name Use NNUE value false")
    eng.send("eval")
    _, line, _ = eng.expect("Searching with:", timeout=30)
    assert line == "Searching with: the hand-written evaluation (Use NNUE is off)"
    eng.close()
