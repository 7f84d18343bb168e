"""engine.play.options and the UCI text parsers: option lines, setoption, position, commands."""

from __future__ import annotations

import chess
import pytest

from engine.play.boards import PositionError, parse_position
from engine.play.options import MULTIPV, OptionError, Options, parse_setoption, uci_option_lines
from engine.play.uci import parse_command


def test_option_lines_are_valid_uci() -> None:
    lines = uci_option_lines()
    assert "option name Hash type spin default 16 min 1 max 1024" in lines
    assert "option name Clear Hash type button" in lines
    assert "option name Ponder type check default false" in lines
    assert "option name Move Overhead type spin default 50 min 0 max 5000" in lines
    for line in lines:
        name = line.split(" type ")[0][len("option name ") :]
        for word in ("name", "type", "default", "min", "max", "var", "value"):
            assert word not in name.split()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("name Move Overhead value 100", ("Move Overhead", "100")),
        ("name   move   overhead   value  1 2 ", ("move overhead", "1 2")),
        ("name Clear Hash", ("Clear Hash", None)),
        ("name Debug Log File value", ("Debug Log File", "")),
        ("name Debug Log File value <empty>", ("Debug Log File", "")),
        ("name Path value C:\\a value b", ("Path", "C:\\a value b")),
    ],
)
def test_parse_setoption(text: str, expected: tuple[str, object]) -> None:
    assert parse_setoption(text) == expected


@pytest.mark.parametrize("text", ["", "value 3", "name", "name value 3"])
def test_parse_setoption_errors(text: str) -> None:
    with pytest.raises(OptionError):
        parse_setoption(text)


def test_option_values() -> None:
    options = Options()
    spec, value, note = options.set("move   OVERHEAD", "120")
    assert spec.name == "Move Overhead" and value == 120 and note == ""
    _, value, note = options.set("Hash", "99999999")
    assert value == 1024 and "1024" in note
    _, value, _ = options.set("ponder", "TRUE")
    assert value is True and options.get_bool("Ponder")
    with pytest.raises(OptionError):
        options.set("Ponder", "yes")
    with pytest.raises(OptionError):
        options.set(MULTIPV, "9" * 5000)
    with pytest.raises(OptionError):
        options.set("Nope", "1")
    assert options.get_int(MULTIPV) == 1


def test_parse_command_lenient() -> None:
    command = parse_command("joho debug on", 1.0)
    assert command is not None and command.name == "debug" and command.args == ["on"]
    command = parse_command("\t setoption  name A B value  x y \r\n", 1.0)
    assert command is not None and command.raw_args.split() == ["name", "A", "B", "value", "x", "y"]
    assert parse_command("hello world", 1.0) is None
    assert parse_command("# go infinite", 1.0) is None


def test_parse_position() -> None:
    board = parse_position(["startpos", "moves", "e2e4", "E7E5", "e1e2"], chess960=False)
    assert board.fen().startswith("rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPPKPPP/RNBQ1BNR b kq")
    board = parse_position(["fen", "8/8/8/8/8/8/8/K6k", "w"], chess960=False)
    assert board.fen() == "8/8/8/8/8/8/8/K6k w - - 0 1"
    tokens = ["fen", "rk2r3/8/8/8/8/8/8/RK2R3", "w", "AEae", "-", "0", "1", "moves", "b1a1"]
    board = parse_position(tokens, chess960=True)
    assert board.king(chess.WHITE) == chess.C1
    for bad in (
        "",
        "moves e2e4",
        "fen",
        "fen xyz",
        "fen 8/8/8/8/8/8/8/8 w - - 0 1",
        "startpos moves e2e5",
        "startpos moves 0000",
        "startpos moves e2e4 e2e4",
    ):
        with pytest.raises(PositionError):
            parse_position(bad.split(), chess960=False)


def test_position_parser_is_incremental() -> None:
    """A command that extends the previous one's moves pushes only the new moves;
    anything else is parsed afresh, and an illegal extension keeps the old position."""
    from engine.play.boards import PositionParser

    parser = PositionParser()
    board = parser.parse(["startpos", "moves", "e2e4", "e7e5"], chess960=False)
    first = board
    board = parser.parse(["startpos", "moves", "e2e4", "e7e5", "g1f3"], chess960=False)
    assert board is first and [m.uci() for m in board.move_stack] == ["e2e4", "e7e5", "g1f3"]
    with pytest.raises(PositionError, match="ply 4"):
        parser.parse(["startpos", "moves", "e2e4", "e7e5", "g1f3", "e1e3"], chess960=False)
    assert [m.uci() for m in board.move_stack] == ["e2e4", "e7e5", "g1f3"]
    board = parser.parse(["startpos", "moves", "d2d4"], chess960=False)  # a takeback
    assert [m.uci() for m in board.move_stack] == ["d2d4"]
    fen = "4k3/8/8/8/8/8/8/4K2R w K - 0 1"
    board = parser.parse(["fen", *fen.split(), "moves", "e1g1"], chess960=False)
    assert board.fen().startswith("4k3/8/8/8/8/8/8/5RK1 b")
    board = parser.parse(["fen", *fen.split(), "moves", "e1h1"], chess960=True)
    assert board.chess960 and board.fen().startswith("4k3/8/8/8/8/8/8/5RK1 b")
