"""scripts/training/records.py: positions as 32-byte records, their files and features.

Round trips through python-chess (castling, en passant, promotions, full and bare
boards), a newer version refused, the torn-record rule for the reader and the
appender, and the vectorised features against the engine's own: engine.core.nnue's
``features`` and the accumulator the search board keeps (Board.from_chess)."""

from __future__ import annotations

import random
from pathlib import Path

import chess
import numpy as np
import pytest

from engine.core import nnue
from engine.core.board import Board
from scripts.training import records
from scripts.training.records import Header, RecordError
from tests.networks import random_network

SPECIAL_FENS = [
    chess.STARTING_FEN,  # 32 pieces, every castling right
    "4k3/8/8/8/8/8/8/4K3 w - - 0 1",  # bare kings
    "7k/8/8/8/8/8/8/K7 b - - 99 300",
    "rnbqkbnr/ppp1p1pp/8/3pPp2/8/8/PPPP1PPP/RNBQKBNR w KQkq f6 0 3",  # legal en passant
    "rnbqkbnr/pppp1ppp/8/8/3Pp3/8/PPP1PPPP/RNBQKBNR b Kq d3 0 3",  # legal, Black takes
    "r3k2r/8/8/8/8/8/8/R3K2R w Qk - 5 40",  # some castling rights
    "1Q2k3/8/8/8/8/8/8/4K2n b - - 0 70",  # promoted pieces
    "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR b KQkq - 0 65535",
]


def random_fens(count: int, seed: int, max_plies: int = 300) -> list[str]:
    """Positions of seeded random games (promotions, captures, castling, en passant)."""
    rng = random.Random(seed)
    fens: list[str] = []
    while len(fens) < count:
        board = chess.Board()
        for _ in range(rng.randrange(1, max_plies)):
            moves = list(board.legal_moves)
            if not moves:
                break
            board.push(rng.choice(moves))
            fens.append(board.fen())
    return fens[:count]


def encode_all(fens: list[str], score: int = 17, result: int = 1) -> records.Records:
    return records.from_bytes(b"".join(records.encode(chess.Board(f), score, result) for f in fens))


def test_records_round_trip_every_position() -> None:
    fens = SPECIAL_FENS + random_fens(3000, seed=1)
    assert any(" w KQkq " in f for f in fens) and any(f.split()[3] != "-" for f in fens)
    assert any("Q" in f.split()[0] and f.count("Q") > 1 for f in fens)
    array = encode_all(fens, score=-1234, result=-1)
    assert array.dtype.itemsize == 32 and len(array) == len(fens)
    for fen, record in zip(fens, array):
        board, score, result = records.decode(record)
        assert board.fen() == fen
        assert (score, result) == (-1234, -1)


def test_en_passant_is_kept_only_when_a_capture_is_legal() -> None:
    # After 1. e4 python-chess keeps e3 as its ep square, but no capture is legal:
    # the record stores none, which is what the FEN writes.
    board = chess.Board()
    board.push_san("e4")
    assert board.ep_square == chess.E3
    (record,) = records.from_bytes(records.encode(board, 0, 0))
    assert record["ep"] == records.NO_SQUARE
    assert records.decode(record)[0].fen() == board.fen()
    (record,) = encode_all([SPECIAL_FENS[3]])
    assert record["ep"] == chess.F6


def test_labels_and_clocks_are_stored_as_documented() -> None:
    (record,) = records.from_bytes(
        records.encode(chess.Board("4k3/8/8/8/8/8/8/4K3 b - - 300 70000"), 40000, -128)
    )
    assert record["halfmove"] == 255 and record["fullmove"] == 65535
    assert record["score"] == 32767 and record["result"] == records.RESULT_UNKNOWN
    assert record["flags"] & records.BLACK_TO_MOVE


def test_chess960_positions_are_refused_with_a_clear_error() -> None:
    board = chess.Board(
        "bqnb1rkr/pp3ppp/3ppn2/2p5/5P2/P2P4/NPP1P1PP/BQ1BNRKR w HFhf - 2 9", chess960=True
    )
    with pytest.raises(RecordError, match="Chess960"):
        records.encode(board, 0, 0)


def test_a_newer_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "x.cpos"
    records.write(path, Header(source="test"), encode_all(SPECIAL_FENS))
    header, array = records.read(path)
    assert header.source == "test" and header.score_side == records.SCORE_WHITE
    assert len(array) == len(SPECIAL_FENS)
    data = bytearray(path.read_bytes())
    data[8:10] = (records.VERSION + 1).to_bytes(2, "little")
    path.write_bytes(bytes(data))
    with pytest.raises(
        RecordError, match=f"version {records.VERSION + 1}, this reader knows up to"
    ):
        records.read(path)
    path.write_bytes(b"not a position file at all, no, not at all, not at all, no no no no")
    with pytest.raises(RecordError, match="bad magic"):
        records.read(path)


def test_a_torn_last_record_is_ignored_by_the_reader_and_cut_by_the_appender(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "torn.cpos"
    first = encode_all(SPECIAL_FENS[:3])
    records.write(path, Header(), first)
    with path.open("ab") as handle:
        handle.write(encode_all(SPECIAL_FENS[3:4]).tobytes()[:13])  # a writer stopped here
    for mmap in (True, False):
        _, array = records.read(path, mmap=mmap)
        assert array.tobytes() == first.tobytes()
    assert capsys.readouterr().err.count("ignoring a torn last record (13 of 32 bytes)") == 2

    more = encode_all(SPECIAL_FENS[4:6])
    records.append(path, Header(), more)
    assert path.stat().st_size == records.HEADER_SIZE + 5 * records.RECORD_SIZE
    _, array = records.read(path)
    assert array.tobytes() == first.tobytes() + more.tobytes()
    assert capsys.readouterr().err == ""
    with pytest.raises(RecordError, match="header differs"):
        records.append(path, Header(score_side=records.SCORE_SIDE_TO_MOVE), more)


def test_features_are_the_engines_for_every_record() -> None:
    fens = SPECIAL_FENS + random_fens(400, seed=2)
    batch = records.features(encode_all(fens))
    assert list(np.diff(np.append(batch.offsets, len(batch.row)))) == [
        chess.popcount(chess.Board(f).occupied) for f in fens
    ]
    net = random_network(4, seed=5)
    incremental = nnue.Incremental(net)
    shift = nnue.LANE_BITS * net.hidden
    for row, fen in enumerate(fens):
        board = chess.Board(fen)
        mine = batch.row == row
        white = batch.white[mine].tolist()
        black = batch.black[mine].tolist()
        assert sorted(white) == sorted(nnue.features(board, chess.WHITE))
        assert sorted(black) == sorted(nnue.features(board, chess.BLACK))
        assert bool(batch.black_to_move[row]) == (board.turn == chess.BLACK)
        # The search board's accumulator is the sum of the same columns.
        engine_board = Board.from_chess(board)
        engine_board.use_network(incremental)
        expected = incremental.bias
        for w, b in zip(white, black):
            expected += nnue.pack(net.ft_weights[w].tolist())
            expected += nnue.pack(net.ft_weights[b].tolist()) << shift
        assert engine_board.acc == expected, fen


def test_features_refuse_a_code_that_is_no_piece() -> None:
    array = encode_all(SPECIAL_FENS[:1]).copy()
    array["pieces"][0, 0] = 0x77
    with pytest.raises(RecordError, match="no piece"):
        records.features(array)
